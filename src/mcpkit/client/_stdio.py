"""stdio client transport: start a server subprocess and talk over its stdin/stdout."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mcpkit._exceptions import ConnectionClosedError
from mcpkit.protocol._framing import OVERSIZED, LineFramer
from mcpkit.protocol._jsonrpc import DEFAULT_MAX_MESSAGE_BYTES
from mcpkit.transports._pipes import DEFAULT_WRITE_HIGH_WATER, DEFAULT_WRITE_LOW_WATER

logger = logging.getLogger("mcpkit.client.stdio")

#: Seconds a closing server gets to exit after its stdin closes, before it is terminated.
DEFAULT_SHUTDOWN_TIMEOUT = 2.0
#: Seconds the end of a server's stdout waits for its exit, so that the error can name its
#: exit code; past it the connection ends without.
EXIT_CODE_WAIT = 0.5
#: Seconds a killed server gets to be reaped, so that closing leaves no process behind
#: (nor a zombie): SIGKILL cannot be ignored, only a process stuck in the kernel outlasts it.
KILLED_EXIT_WAIT = 2.0


@dataclass(slots=True)
class StdioClientTransportOptions:
    """How to start a stdio server.

    ``inherit_environment_variables`` passes this process's environment on;
    ``environment_variables`` are added on top.
    """

    command: str
    arguments: list[str] = field(default_factory=list)
    name: str = ""
    working_directory: str = ""
    inherit_environment_variables: bool = True
    environment_variables: dict[str, str] = field(default_factory=dict)
    max_message_bytes: int | None = DEFAULT_MAX_MESSAGE_BYTES
    shutdown_timeout: float = DEFAULT_SHUTDOWN_TIMEOUT

    def __post_init__(self) -> None:
        # A string here would be split into characters (or fail far from the mistake).
        if not isinstance(self.command, str):
            raise TypeError(f"command must be a string (the program to run), not {self.command!r}")
        if isinstance(self.arguments, str):
            raise TypeError(
                f"arguments must be a list of strings, not the string {self.arguments!r}:"
                f" arguments={self.arguments.split()!r}"
            )

    @property
    def display_name(self) -> str:
        """The name in logs and errors: ``name``, else ``stdio``."""
        return self.name or "stdio"


class _ProcessProtocol(asyncio.SubprocessProtocol):
    def __init__(self, owner: StdioClientTransport) -> None:
        self.owner = owner
        self.framer = LineFramer(owner.options.max_message_bytes)

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        if fd != 1:
            return
        for frame in self.framer.feed(data):
            if frame is OVERSIZED:
                # Its request cannot be told from the rest of the line: it waits its timeout.
                logger.warning(
                    "%s: dropped a message from the server longer than max_message_bytes"
                    " (%d bytes)",
                    self.owner.options.display_name,
                    self.framer.max_line_bytes,
                )
            else:
                self.owner._deliver(frame)

    def pipe_connection_lost(self, fd: int, exc: BaseException | None) -> None:
        if fd == 1:
            self.owner._stdout_closed()

    def process_exited(self) -> None:
        self.owner._closed()

    def pause_writing(self) -> None:
        self.owner._set_reading(False)

    def resume_writing(self) -> None:
        self.owner._set_reading(True)


class StdioClientTransport:
    """A push-style stream to a server process it starts and stops.

    ``bind(on_frame, on_close)`` delivers frames straight from the pipe; without a binding
    ``receive()`` reads them from a bounded queue.
    """

    def __init__(self, options: StdioClientTransportOptions) -> None:
        self.options = options
        self._transport: asyncio.SubprocessTransport | None = None
        self._on_frame: Callable[[bytes], None] | None = None
        self._on_close: Callable[..., None] | None = None
        self._queue: asyncio.Queue[bytes | None] = asyncio.Queue(1024)
        self._is_closed = False
        self._exit_wait: asyncio.TimerHandle | None = None

    async def start(self) -> None:
        """Start the server process and read its stdout."""
        opts = self.options
        env = dict(os.environ) if opts.inherit_environment_variables else {}
        env.update(opts.environment_variables)
        loop = asyncio.get_running_loop()
        self._transport, _ = await loop.subprocess_exec(
            lambda: _ProcessProtocol(self),
            opts.command,
            *opts.arguments,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=None,
            cwd=opts.working_directory or None,
            env=env,
        )
        stdin = self._transport.get_pipe_transport(0)
        stdin.set_write_buffer_limits(DEFAULT_WRITE_HIGH_WATER, DEFAULT_WRITE_LOW_WATER)  # type: ignore[union-attr]

    @property
    def pid(self) -> int | None:
        """The server process's id, None before start."""
        return self._transport.get_pid() if self._transport is not None else None

    def bind(self, on_frame: Callable[[bytes], None], on_close: Callable[..., None]) -> None:
        """Push inbound frames to ``on_frame`` (and the end to ``on_close``, given why)
        instead of ``receive``."""
        self._on_frame, self._on_close = on_frame, on_close

    def _deliver(self, frame: bytes) -> None:
        if self._on_frame is not None:
            self._on_frame(frame)
        else:
            self._queue.put_nowait(frame)

    def _stdout_closed(self) -> None:
        if self._is_closed:
            return
        if self._transport is not None and self._transport.get_returncode() is None:
            # Its exit usually follows at once: wait a moment, to say how it ended.
            self._exit_wait = asyncio.get_running_loop().call_later(EXIT_CODE_WAIT, self._closed)
            return
        self._closed()

    def _closed(self) -> None:
        if self._is_closed:
            return
        self._is_closed = True
        if self._exit_wait is not None:
            self._exit_wait.cancel()
        if self._on_close is not None:
            self._on_close(self._end())
        else:
            self._queue.put_nowait(None)

    def _end(self) -> ConnectionClosedError:
        """Why the connection ended, with the process's exit code when it has one."""
        code = self._transport.get_returncode() if self._transport is not None else None
        if code is None:
            return ConnectionClosedError("server closed the connection")
        if code < 0:
            return ConnectionClosedError(f"server process ended by signal {-code}")
        return ConnectionClosedError(f"server process exited with code {code}")

    def _set_reading(self, on: bool) -> None:
        if self._transport is None:
            return
        stdout: Any = self._transport.get_pipe_transport(1)
        if stdout is None or stdout.is_closing():
            return
        if on and not stdout.is_reading():
            stdout.resume_reading()
        elif not on and stdout.is_reading():
            stdout.pause_reading()

    async def send(self, frame: bytes) -> None:
        """Write one frame (a line) to the server's stdin."""
        if self._transport is None:
            raise ConnectionClosedError("server process is not running")
        if self._is_closed:
            raise self._end()
        stdin: Any = self._transport.get_pipe_transport(0)
        if stdin is None or stdin.is_closing():
            raise ConnectionClosedError("server process closed its input")
        stdin.write(frame + b"\n")

    async def receive(self) -> bytes | None:
        """The next frame from the server's stdout, None at its end."""
        return await self._queue.get()

    async def aclose(self) -> None:
        """Close stdin, then end the process (terminate, kill) if it does not exit."""
        transport = self._transport
        if transport is None:
            return
        stdin: Any = transport.get_pipe_transport(0)
        if stdin is not None and not stdin.is_closing():
            stdin.close()
        try:
            await asyncio.wait_for(self._wait_exit(), self.options.shutdown_timeout)
        except TimeoutError:
            transport.terminate()
            try:
                await asyncio.wait_for(self._wait_exit(), self.options.shutdown_timeout)
            except TimeoutError:
                transport.kill()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wait_exit(), KILLED_EXIT_WAIT)
        transport.close()

    async def _wait_exit(self) -> None:
        assert self._transport is not None
        # The subprocess transport has no awaitable for its exit: poll it.
        while self._transport.get_returncode() is None:  # noqa: ASYNC110
            await asyncio.sleep(0.01)

"""stdio client transport: start a server subprocess and talk over its stdin/stdout."""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass, field

from mcpkit.protocol._jsonrpc import DEFAULT_MAX_MESSAGE_BYTES
from mcpkit.transports._stdio import PipeStream

#: Seconds a closing server gets to exit after its stdin closes, before it is terminated.
DEFAULT_SHUTDOWN_TIMEOUT = 2.0


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

    @property
    def display_name(self) -> str:
        return self.name or "stdio"


class StdioClientTransport:
    """A ``MessageStream`` to a server process it starts and stops."""

    def __init__(self, options: StdioClientTransportOptions) -> None:
        self.options = options
        self.process: asyncio.subprocess.Process | None = None
        self._stream: PipeStream | None = None

    async def start(self) -> None:
        opts = self.options
        env = dict(os.environ) if opts.inherit_environment_variables else {}
        env.update(opts.environment_variables)
        self.process = await asyncio.create_subprocess_exec(
            opts.command,
            *opts.arguments,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            cwd=opts.working_directory or None,
            env=env,
            limit=2**31 - 1,
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        self._stream = PipeStream(
            self.process.stdout, self.process.stdin, max_message_bytes=opts.max_message_bytes
        )

    async def send(self, frame: bytes) -> None:
        assert self._stream is not None, "start() first"
        await self._stream.send(frame)

    async def receive(self) -> bytes | None:
        assert self._stream is not None, "start() first"
        return await self._stream.receive()

    async def aclose(self) -> None:
        process = self.process
        if process is None:
            return
        if process.stdin is not None and not process.stdin.is_closing():
            process.stdin.close()
        try:
            await asyncio.wait_for(process.wait(), self.options.shutdown_timeout)
        except TimeoutError:
            process.terminate()
            try:
                await asyncio.wait_for(process.wait(), self.options.shutdown_timeout)
            except TimeoutError:
                process.kill()
                await process.wait()

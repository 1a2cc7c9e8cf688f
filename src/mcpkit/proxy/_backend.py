"""Backend connections of a proxy: how one is made (a command, a URL, a factory), and the
bounded set of them a proxy keeps (one per front session, one shared)."""

from __future__ import annotations

import asyncio
import contextlib
import shlex
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from mcpkit._exceptions import ConnectionClosedError, InternalError, TransportError
from mcpkit.client import McpClient, StdioClientTransportOptions

#: Backend connections kept for front sessions at once (the least recently used is closed).
DEFAULT_MAX_BACKEND_SESSIONS = 32
#: Seconds a per-session backend connection may sit unused before it is closed.
DEFAULT_BACKEND_IDLE_TIMEOUT = 300.0
#: Seconds a backend gets to answer one forwarded request.
DEFAULT_BACKEND_REQUEST_TIMEOUT = 300.0

#: Makes a fresh, unconnected ``McpClient`` for the backend; given the handlers to install.
ClientFactory = Callable[..., McpClient]
BackendSpec = StdioClientTransportOptions | str | Sequence[str] | ClientFactory


class BackendUnavailableError(InternalError):
    """The backend could not be reached or went away (-32603); the next request reconnects."""


@dataclass(slots=True)
class HttpBackend:
    """A remote backend: ``url``, its ``headers``, and ``transport`` ("auto", "http",
    "sse" or "ws")."""

    url: str
    headers: dict[str, str] = field(default_factory=dict)
    transport: str = "auto"


_BACKEND_KINDS = (
    "a URL, a command line (a list of strings), StdioClientTransportOptions, "
    "HttpClientTransportOptions, WebSocketClientTransportOptions, an HttpBackend, or a "
    "function returning an unconnected McpClient"
)


def client_factory(spec: BackendSpec | HttpBackend) -> ClientFactory:
    """A function making a backend ``McpClient`` from a spec: ``StdioClientTransportOptions``,
    a command line (list of strings), a URL string (``http(s)://`` or ``ws(s)://``), an
    ``HttpBackend``, the client's HTTP or WebSocket options, or a factory already (called
    with the client's keyword arguments)."""
    from mcpkit.client import HttpClientTransportOptions, WebSocketClientTransportOptions
    from mcpkit.server._app import McpServerApp

    if isinstance(spec, str):
        if spec.startswith(("http://", "https://", "ws://", "wss://")):
            spec = HttpBackend(spec)
        else:
            raise ValueError(
                f"a backend string must be an http(s):// or ws(s):// URL, not {spec!r}; "
                f"a command line is a list: {shlex.split(spec)!r}"
            )
    if isinstance(spec, HttpBackend):
        return _http_factory(spec)
    if isinstance(spec, StdioClientTransportOptions):
        options = spec
        return lambda **kwargs: McpClient.stdio(options, **kwargs)
    if isinstance(spec, HttpClientTransportOptions):
        http = spec
        return lambda **kwargs: McpClient.http(http, **kwargs)
    if isinstance(spec, WebSocketClientTransportOptions):
        ws = spec
        return lambda **kwargs: McpClient.websocket(ws, **kwargs)
    # Each of these was taken for a command line (its items, or its keys) or failed as one.
    if isinstance(spec, McpServerApp):
        raise TypeError(
            "an McpServerApp needs no proxy: serve it in another with "
            "parent.mount(app, prefix) (docs/composition.md)"
        )
    if isinstance(spec, dict):
        raise TypeError(
            "a servers config is proxy_servers(config)'s (mcpkit.proxy), not McpProxy's"
        )
    if callable(spec):
        return spec
    if not isinstance(spec, (list, tuple)):
        raise TypeError(f"a backend is {_BACKEND_KINDS}; not {type(spec).__name__}")
    command = list(spec)
    if not command or not all(isinstance(part, str) for part in command):
        raise ValueError("a backend command line must be a non-empty list of strings")
    options = StdioClientTransportOptions(command=command[0], arguments=command[1:])
    return lambda **kwargs: McpClient.stdio(options, **kwargs)


def describe_backend(spec: Any) -> str:
    """What a backend is, for its errors: the command line or the URL."""
    from mcpkit.client import HttpClientTransportOptions

    if isinstance(spec, HttpBackend):
        return spec.url
    if isinstance(spec, StdioClientTransportOptions):
        return shlex.join([spec.command, *spec.arguments])
    if isinstance(spec, HttpClientTransportOptions):
        return str(spec.endpoint)
    if isinstance(spec, str):
        return spec
    if isinstance(spec, (list, tuple)):
        return shlex.join(str(part) for part in spec)
    return str(getattr(spec, "url", "") or getattr(spec, "__name__", "") or "")


def _http_factory(spec: HttpBackend) -> ClientFactory:
    from mcpkit.client import (
        EndpointMemory,
        HttpClientTransportOptions,
        HttpTransportMode,
        WebSocketClientTransportOptions,
    )

    if spec.transport not in ("auto", "http", "sse", "ws"):
        raise ValueError(f"backend transport must be auto, http, sse or ws, not {spec.transport!r}")
    if spec.transport == "ws" or spec.url.startswith(("ws://", "wss://")):
        ws = WebSocketClientTransportOptions(url=spec.url, additional_headers=dict(spec.headers))
        return lambda **kwargs: McpClient.websocket(ws, **kwargs)
    mode = {
        "auto": HttpTransportMode.AUTO_DETECT,
        "http": HttpTransportMode.STREAMABLE_HTTP,
        "sse": HttpTransportMode.SSE,
    }[spec.transport]
    # The clients remade for this backend send the same headers: they may share what
    # detection found, so a remade client does not probe again.
    http = HttpClientTransportOptions(
        endpoint=spec.url,
        transport_mode=mode,
        additional_headers=dict(spec.headers),
        endpoint_memory=EndpointMemory(),
    )
    return lambda **kwargs: McpClient.http(http, **kwargs)


class BackendConnection:
    """One connected backend client, made on first use and remade after it dies."""

    def __init__(self, make: Callable[[BackendConnection], McpClient], label: str = "") -> None:
        self._make = make
        #: What the backend is (a command line, a URL), named in its errors.
        self.label = label
        self._client: McpClient | None = None
        self._lock = asyncio.Lock()
        self.last_used = time.monotonic()
        #: The front calls running on this connection, newest last: the backend's own
        #: requests (sampling, elicitation, roots) are put to the newest one's client.
        self.active: list[Any] = []
        #: The capabilities (``sampling``, ``elicitation``, ``roots``) of the front client
        #: this connection serves, declared to the backend as the proxy's own; None: all
        #: (the shared connection serves every front client).
        self.front_capabilities: frozenset[str] | None = None

    @property
    def connected(self) -> bool:
        return self._client is not None and not self._client.session.closed

    async def client(self) -> McpClient:
        """The connected client; connects (again) when there is none or it died."""
        self.last_used = time.monotonic()
        if self.connected:
            assert self._client is not None
            return self._client
        async with self._lock:
            if self.connected:
                assert self._client is not None
                return self._client
            await self._discard()
            client = self._make(self)
            try:
                await client.connect()
            except BaseException as exc:
                with contextlib.suppress(Exception):
                    await client.aclose()
                if isinstance(exc, Exception):
                    raise BackendUnavailableError(self._unavailable(exc)) from exc
                raise
            self._client = client
            return client

    def _unavailable(self, exc: BaseException) -> str:
        # uvloop's FileNotFoundError for a missing command does not name it: the label does.
        named = f" ({self.label})" if self.label else ""
        return f"Backend server unavailable{named}: {type(exc).__name__}: {exc}"

    async def _discard(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            with contextlib.suppress(Exception):
                await client.aclose()

    async def run(self, call: Callable[[McpClient], Awaitable[Any]]) -> Any:
        """``call(client)``; a dead backend becomes ``BackendUnavailableError``."""
        client = await self.client()
        try:
            return await call(client)
        except (ConnectionClosedError, TransportError, OSError) as exc:
            await self._discard()
            raise BackendUnavailableError(self._unavailable(exc)) from exc
        finally:
            self.last_used = time.monotonic()

    async def aclose(self) -> None:
        await self._discard()


class BackendPool:
    """The shared connection (catalog, stateless front traffic) and one per front session,
    at most ``max_sessions`` of those, each closed after ``idle_timeout`` unused seconds."""

    def __init__(
        self,
        make: Callable[[BackendConnection], McpClient],
        *,
        max_sessions: int = DEFAULT_MAX_BACKEND_SESSIONS,
        idle_timeout: float = DEFAULT_BACKEND_IDLE_TIMEOUT,
        label: str = "",
    ) -> None:
        if max_sessions < 1:
            raise ValueError("max_backend_sessions must be at least 1")
        if idle_timeout <= 0:
            raise ValueError("backend_idle_timeout must be positive")
        self._make = make
        self.max_sessions = max_sessions
        self.idle_timeout = idle_timeout
        self.label = label
        self.shared = BackendConnection(make, label)
        self._sessions: dict[str, BackendConnection] = {}

    def __len__(self) -> int:
        return len(self._sessions)

    def existing(self, key: str) -> BackendConnection | None:
        """The connection of front session ``key``, if it has one now."""
        return self._sessions.get(key)

    async def for_session(
        self, key: str | None, capabilities: Iterable[str] | None = None
    ) -> BackendConnection:
        """The connection of front session ``key`` (the shared one for None); a new one
        declares the front client's ``capabilities`` to the backend."""
        if key is None:
            return self.shared
        await self._close_idle()
        connection = self._sessions.pop(key, None)
        if connection is None:
            connection = BackendConnection(self._make, self.label)
            if capabilities is not None:
                connection.front_capabilities = frozenset(capabilities)
            while len(self._sessions) >= self.max_sessions:
                oldest = next(iter(self._sessions))
                await self._sessions.pop(oldest).aclose()
        self._sessions[key] = connection  # most recently used last
        return connection

    async def _close_idle(self) -> None:
        cutoff = time.monotonic() - self.idle_timeout
        for key, connection in list(self._sessions.items()):
            if connection.last_used < cutoff and not connection.active:
                del self._sessions[key]
                await connection.aclose()

    async def aclose(self) -> None:
        connections = [self.shared, *self._sessions.values()]
        self._sessions.clear()
        for connection in connections:
            await connection.aclose()

"""Backend connections of a proxy: how one is made (a command, a URL, a factory) and how
it connects (within ``connect_timeout``), is remade after it dies, and whose calls it runs.
The bounded set of them a proxy keeps is ``_pool.BackendPool``."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import shlex
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from mcpkit._exceptions import (
    ConnectionClosedError,
    InternalError,
    RequestTimeoutError,
    TransportError,
)
from mcpkit.client import McpClient, StdioClientTransportOptions
from mcpkit.proxy._environment import with_minimal_environment

#: Backend connections (of a stdio backend: processes) a proxy keeps at once besides the
#: shared one; past it an idle one is closed, and when none is idle the front call fails.
DEFAULT_MAX_BACKEND_SESSIONS = 32
#: Seconds a backend connection other than the shared one may sit unused before it is closed.
DEFAULT_BACKEND_IDLE_TIMEOUT = 300.0
#: Seconds a backend gets to answer one forwarded request.
DEFAULT_BACKEND_REQUEST_TIMEOUT = 300.0
#: Seconds a backend gets to start and answer ``initialize`` (or ``server/discover``).
DEFAULT_BACKEND_CONNECT_TIMEOUT = 30.0

#: Makes a fresh, unconnected ``McpClient`` for the backend; given the handlers to install.
ClientFactory = Callable[..., McpClient]
BackendSpec = StdioClientTransportOptions | str | Sequence[str] | ClientFactory


class BackendUnavailableError(InternalError):
    """The backend could not be reached or went away (-32603); the next request reconnects."""


class BackendTimeoutError(InternalError):
    """The backend did not answer one request within ``backend_request_timeout`` (-32603);
    it was sent ``notifications/cancelled``, and its connection is kept for the next."""


class BackendBusyError(InternalError):
    """Every backend connection the proxy may keep (``max_backend_sessions``) is running a
    call: a front call that needs one more fails at once (-32603) rather than wait."""


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


def client_factory(
    spec: BackendSpec | HttpBackend, *, inherit_environment: bool = False
) -> ClientFactory:
    """A function making a backend ``McpClient`` from a spec: ``StdioClientTransportOptions``,
    a command line (list of strings), a URL string (``http(s)://`` or ``ws(s)://``), an
    ``HttpBackend``, the client's HTTP or WebSocket options, or a factory already (called
    with the client's keyword arguments). A stdio backend starts in a minimal environment
    plus its own variables (``_environment``), or, with ``inherit_environment``, as its
    options say."""
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
        return _stdio_factory(spec, inherit_environment)
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
    return _stdio_factory(options, inherit_environment)


def _stdio_factory(
    options: StdioClientTransportOptions, inherit_environment: bool
) -> ClientFactory:
    if inherit_environment:  # the proxy's choice, whatever the options said
        inheriting = dataclasses.replace(options, inherit_environment_variables=True)
        return lambda **kwargs: McpClient.stdio(inheriting, **kwargs)
    return lambda **kwargs: McpClient.stdio(with_minimal_environment(options), **kwargs)


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
    """One connected backend client, made on first use and remade after it dies.

    ``party`` says whose calls it runs: one front session's, or one principal's one call at
    a time (``_pool``); None for the shared connection, whose calls may be anyone's. What
    the backend sends of its own during a call (requests, logs) names no call on the wire:
    the connection it comes on is all that tells whose it is (``_routing``)."""

    def __init__(
        self,
        make: Callable[[BackendConnection], McpClient],
        label: str = "",
        *,
        connect_timeout: float = DEFAULT_BACKEND_CONNECT_TIMEOUT,
        capabilities: Iterable[str] = (),
        party: str | None = None,
    ) -> None:
        self._make = make
        #: What the backend is (a command line, a URL), named in its errors.
        self.label = label
        self.connect_timeout = connect_timeout
        self._client: McpClient | None = None
        self._lock = asyncio.Lock()
        self.last_used = time.monotonic()
        #: The front calls running on this connection, newest last.
        self.active: list[Any] = []
        #: The capabilities (``sampling``, ``elicitation``, ``roots``) declared to the
        #: backend as the proxy's own: those of the front client it serves; for the shared
        #: connection, those asked only within a call (``SHARED_DECLARED``).
        self.front_capabilities: frozenset[str] = frozenset(capabilities)
        #: Whose calls run on it: a front session, a principal; None: anyone's.
        self.party = party

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
            deadline = asyncio.timeout(self.connect_timeout)
            try:
                async with deadline:
                    await client.connect()
            except BaseException as exc:
                with contextlib.suppress(Exception):
                    await client.aclose()
                if deadline.expired():
                    raise BackendUnavailableError(self._silent()) from None
                if isinstance(exc, Exception):
                    raise BackendUnavailableError(self._unavailable(exc)) from exc
                raise
            self._client = client
            return client

    def _named(self) -> str:
        return f" ({self.label})" if self.label else ""

    def _unavailable(self, exc: BaseException) -> str:
        # uvloop's FileNotFoundError for a missing command does not name it: the label does.
        return f"Backend server unavailable{self._named()}: {type(exc).__name__}: {exc}"

    def _late(self, timeout: float) -> str:
        return (
            f"Backend server{self._named()} did not answer within {timeout:g} s "
            f"(backend_request_timeout); the request was cancelled at the backend"
        )

    def _silent(self) -> str:
        return (
            f"Backend server unavailable{self._named()}: it did not answer initialize within "
            f"{self.connect_timeout:g} s (backend_connect_timeout)"
        )

    async def _discard(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            with contextlib.suppress(Exception):
                await client.aclose()

    async def run(self, call: Callable[[McpClient], Awaitable[Any]]) -> Any:
        """``call(client)``; a dead backend becomes ``BackendUnavailableError``, one too slow
        to answer ``BackendTimeoutError``."""
        client = await self.client()
        try:
            return await call(client)
        except RequestTimeoutError:
            # Only this request was late (the client told the backend it is abandoned): the
            # connection, the other calls on it and the backend's state are kept. A
            # TimeoutError is an OSError: caught before the clause for a dead backend.
            raise BackendTimeoutError(self._late(client.session.request_timeout)) from None
        except (ConnectionClosedError, TransportError, OSError) as exc:
            await self._discard()
            raise BackendUnavailableError(self._unavailable(exc)) from exc
        finally:
            self.last_used = time.monotonic()

    async def aclose(self) -> None:
        await self._discard()

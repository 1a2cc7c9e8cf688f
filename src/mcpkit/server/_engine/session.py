"""One client connection's protocol state on the server side.

Owns the handshake state, the negotiated version and capabilities, the per-session log
level, and the server-to-client requests waiting for answers. Does not own I/O: it is given
a ``send`` coroutine function by its transport.
"""

from __future__ import annotations

import asyncio
import itertools
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec

from mcpkit._exceptions import ConnectionClosedError, McpCallError, RequestTimeoutError
from mcpkit.protocol._jsonrpc import JsonRpcErrorResponse, JsonRpcResponse, RequestId

#: Writes one message to the client of a connection.
SendMessage = Callable[[dict[str, Any]], Awaitable[None]]

#: How long a server-to-client request (sampling, elicitation, roots) may wait for its answer.
DEFAULT_CLIENT_REQUEST_TIMEOUT = 300.0
#: How many server-to-client requests one session may have outstanding at once.
DEFAULT_MAX_PENDING_CLIENT_REQUESTS = 64

LOG_LEVELS: tuple[str, ...] = (
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
)
_LOG_RANK = {name: rank for rank, name in enumerate(LOG_LEVELS)}


class McpSession(msgspec.Struct, eq=False, repr_omit_defaults=True):
    """Protocol state of one connection (stdio pipe, WebSocket, HTTP session).

    ``McpSession(send, session_id=..., key=...)``; ``key`` (what the dispatcher tracks the
    connection's requests by) defaults to the session id, else a new random one. A msgspec
    Struct for the cost of making one, in C: the stateless transports make one per request
    (``for_request``). Equality is identity."""

    send: SendMessage | None = None
    session_id: str | None = None
    key: str = ""
    client_request_timeout: float = DEFAULT_CLIENT_REQUEST_TIMEOUT
    max_pending_client_requests: int = DEFAULT_MAX_PENDING_CLIENT_REQUESTS
    protocol_version: str | None = None
    client_capabilities: dict[str, Any] | None = None
    client_info: dict[str, Any] | None = None
    log_level: str | None = None
    #: initialize was answered; and notifications/initialized came.
    initialize_seen: bool = False
    initialized: bool = False
    #: One request's worth of state (stateless HTTP): initialize may come at any time.
    ephemeral: bool = False
    #: 2026-07-28: no handshake; logging only when the request named a level.
    modern: bool = False
    closed: bool = False
    #: Server-to-client request ids are "{prefix}s{n}"; a session served by several
    #: instances prefixes them with the instance's id, so ids never collide and the
    #: client's answer can be routed back to the instance that waits for it.
    request_id_prefix: str = ""
    #: The identity the session's last request came as (``SessionIdentities``); UNSET
    #: before its first.
    seen_auth: Any = msgspec.UNSET
    #: What this session shows besides the app's choice (``server._session_view``).
    visibility: Any = None
    _pending: dict[RequestId, asyncio.Future[Any]] | None = None  # made on first use
    _ids: itertools.count[int] | None = None

    def __post_init__(self) -> None:
        if not self.key:
            self.key = self.session_id or uuid.uuid4().hex

    @classmethod
    def for_request(
        cls,
        key: str,
        protocol_version: str,
        client_capabilities: dict[str, Any] | None,
        client_info: dict[str, Any] | None = None,
        log_level: str | None = None,
        modern: bool = False,
    ) -> McpSession:
        """The session of one request (stateless HTTP, the 2026-07-28 era): its state came
        with it, there is no handshake to wait for. A copy of a made one (in C) with five
        fields set: a third of a call with keywords and ``__post_init__`` (every 2026-07-28
        request makes one)."""
        made: McpSession = (_MODERN_REQUEST if modern else _REQUEST).__copy__()  # type: ignore[attr-defined]
        made.key = key or uuid.uuid4().hex
        made.protocol_version = protocol_version
        made.client_capabilities = client_capabilities
        made.client_info = client_info
        made.log_level = log_level
        return made

    def copy_with_key(self, key: str) -> McpSession:
        """A shallow copy under another ``key``: the per-request session of a stateless
        POST, copied from one made once per version (one field set, where ``for_request``
        sets five). Only for a session fresh from ``for_request`` whose containers are all
        unset, so the copies share nothing that changes."""
        made: McpSession = self.__copy__()  # type: ignore[attr-defined]  # msgspec's, in C
        made.key = key
        return made

    def should_log(self, level: str) -> bool:
        """Whether a log message at ``level`` passes this session's ``logging/setLevel``."""
        if self.log_level is None:
            return not self.modern
        return _LOG_RANK.get(level, 0) >= _LOG_RANK.get(self.log_level, 0)

    def client_supports(self, capability: str) -> bool:
        """Whether the client declared ``capability``."""
        caps = self.client_capabilities or {}
        return caps.get(capability) is not None

    async def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        send: SendMessage | None = None,
        timeout: float | None = None,
    ) -> Any:
        """Send a server-to-client request and wait for the result.

        Raises ``McpCallError`` when the client answers with an error, ``RequestTimeoutError``
        past the timeout, ``ConnectionClosedError`` when the session closes first.
        """
        if self.closed:
            raise ConnectionClosedError("session is closed")
        if self._pending is None:
            self._pending, self._ids = {}, itertools.count(1)
        if len(self._pending) >= self.max_pending_client_requests:
            raise McpCallError("too many outstanding requests to the client", -32603)
        channel = send or self.send
        if channel is None:
            raise ConnectionClosedError("no channel to reach the client")
        request_id = f"{self.request_id_prefix}s{next(self._ids)}"  # type: ignore[arg-type]
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        try:
            await channel(message)
            async with asyncio.timeout(
                timeout if timeout is not None else self.client_request_timeout
            ):
                return await future
        except TimeoutError:
            # As the spec asks of a request timed out: the client stops its handler.
            await _tell_cancelled(channel, request_id, f"no answer to {method} in time")
            raise RequestTimeoutError(f"client did not answer {method} in time") from None
        finally:
            if self._pending is not None:
                self._pending.pop(request_id, None)

    def resolve(self, message: JsonRpcResponse | JsonRpcErrorResponse) -> bool:
        """Deliver a client's answer to the request waiting for it; False when none waits."""
        pending = self._pending
        future = pending.get(message.id) if pending is not None and message.id is not None else None
        if future is None or future.done():
            return False
        if isinstance(message, JsonRpcResponse):
            future.set_result(message.result)
        else:
            error = message.error
            future.set_exception(
                McpCallError(str(error.get("message", "")), message.code, error.get("data"))
            )
        return True

    def close(self) -> None:
        """Fail every waiting server-to-client request; further requests are refused."""
        self.closed = True
        for future in (self._pending or {}).values():
            if not future.done():
                future.set_exception(ConnectionClosedError("session closed"))
        self._pending = None


# What for_request copies: every container unset, so the copies share nothing that changes.
_REQUEST = McpSession(key="-", initialize_seen=True, initialized=True, ephemeral=True)
_MODERN_REQUEST = McpSession(
    key="-", initialize_seen=True, initialized=True, ephemeral=True, modern=True
)


#: Seconds the cancellation of a timed-out server-to-client request may take to send; past
#: it (a client that does not read) it is given up, as the request was.
CANCEL_NOTICE_WAIT = 1.0


async def _tell_cancelled(channel: SendMessage, request_id: str, reason: str) -> None:
    """``notifications/cancelled`` for a request of ours the client did not answer in time,
    on the channel the request went out on; never raises (the client may be gone)."""
    note = {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": request_id, "reason": reason},
    }
    try:
        async with asyncio.timeout(CANCEL_NOTICE_WAIT):
            await channel(note)
    except Exception:  # its loss costs nothing: the request is over
        return

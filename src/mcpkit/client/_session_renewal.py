"""A new Streamable HTTP session when the server has forgotten ours.

A server answers 404 to a request carrying an ``Mcp-Session-Id`` it no longer knows (the
session expired, was deleted, the server restarted). The spec then asks the client to start
a new session with a new ``initialize``. For a session this client initialized, the
transport does that by itself and sends the refused request once more: the ``initialize``
it sent first goes out again (same version, same capabilities), then
``notifications/initialized``, then what the old session held for the client and a new one
would not (its ``resources/subscribe`` and ``logging/setLevel`` requests), then the listen
stream reopens. Requests failing meanwhile wait for that one renewal.

What does not come back: the old session's server-side state (its open tasks, the answers
to server requests in flight) and events sent while no session existed. A session resumed
with ``known_session_id`` is not renewed (it is someone else's): its 404 ends the transport
with ``SessionExpiredError``, as do a failed renewal and a server that answers the new
``initialize`` with another protocol version.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from typing import TYPE_CHECKING, Any, Protocol

import msgspec

from mcpkit._exceptions import TransportError
from mcpkit.client._frames import FramePeek, peek, raw_field

if TYPE_CHECKING:
    import httpx

    from mcpkit.client._http_options import HttpClientTransportOptions

logger = logging.getLogger("mcpkit.client.http")

__all__ = ["MAX_RENEWALS", "RENEWAL_TIMEOUT", "RenewableTransport", "SessionRenewal"]

#: Seconds the new session's requests (``initialize`` and the restored state) may take.
RENEWAL_TIMEOUT = 30.0
#: Renewals one transport makes at most; past it a 404 ends the transport (a server that
#: forgets every session at once should not be re-initialized for ever).
MAX_RENEWALS = 100
#: The prefix of the ids of the transport's own requests (never the client engine's).
_OWN_ID = "mcpkit-renewal-"


class RenewableTransport(Protocol):
    """What a renewal does through its transport (``StreamableHttpClientTransport``)."""

    #: The session spoken in (None: none yet, or the old one dropped for the new).
    session_id: str | None

    @property
    def options(self) -> HttpClientTransportOptions: ...

    @property
    def resumed(self) -> bool:
        """Whether the session is one opened elsewhere (``known_session_id``)."""
        ...

    @property
    def protocol_version(self) -> str | None: ...

    def stop_listening(self) -> None:
        """Close the listen stream of the old session."""
        ...

    def start_listening(self) -> None:
        """Open the listen stream of the new session."""
        ...

    async def open_post(self, frame: bytes) -> httpx.Response:
        """POST ``frame`` with no renewal of its own on a 404."""
        ...

    async def own_request(self, frame: bytes, request_id: str, *, initialize: bool = False) -> None:
        """POST a request of the renewal's own and read its answer (``initialize``: adopt
        the session it opens)."""
        ...


class SessionRenewal:
    """What a ``StreamableHttpClientTransport`` needs to start a new session: the requests
    that made the old one what it was, and the renewal itself."""

    def __init__(self, transport: RenewableTransport) -> None:
        self.transport = transport
        #: The ``initialize`` request this client sent (None: the session was not made here).
        self.initialize: bytes | None = None
        #: Requests whose effect lives in the session, by what they set: replayed in order.
        self.kept: dict[str, bytes] = {}
        #: Sessions started again so far.
        self.count = 0
        self._lock: asyncio.Lock | None = None
        self._answers: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._ids = itertools.count(1)

    def note(self, frame: bytes, peeks: list[FramePeek]) -> None:
        """Remember ``frame`` (sent by the client engine) if a new session would need it."""
        if len(peeks) != 1 or not peeks[0].is_request:
            return
        message = peeks[0]
        if message.method == "initialize":
            self.initialize = frame
            self.kept.clear()
        elif message.method in ("resources/subscribe", "resources/unsubscribe"):
            uri = raw_field(message.params, "uri")
            if isinstance(uri, str):
                key = f"subscription {uri}"
                if message.method == "resources/subscribe":
                    self.kept[key] = frame
                else:
                    self.kept.pop(key, None)
        elif message.method == "logging/setLevel":
            self.kept["logging"] = frame

    def possible(self) -> bool:
        """Whether a 404 on this transport's session may start a new one."""
        transport = self.transport
        return (
            transport.options.renew_expired_session
            and not transport.options.stateless
            and self.initialize is not None
            and not transport.resumed
            and self.count < MAX_RENEWALS
        )

    def take(self, frame: bytes) -> bool:
        """True when ``frame`` answers one of the renewal's own requests (it is not the
        client engine's to see)."""
        if not self._answers:
            return False
        found = peek(frame)
        if len(found) != 1 or not found[0].is_response:
            return False
        future = self._answers.get(found[0].id) if isinstance(found[0].id, str) else None
        if future is None:
            return False
        if not future.done():
            future.set_result(msgspec.json.decode(frame))
        return True

    async def renewed(self, expired: str) -> bool:
        """Start a new session in place of ``expired`` (or wait for the renewal already under
        way); whether the transport has a session to send the refused request in."""
        if not self.possible():
            return False
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            transport = self.transport
            if transport.session_id != expired:  # renewed while this request waited
                return transport.session_id is not None
            self.count += 1
            try:
                async with asyncio.timeout(RENEWAL_TIMEOUT):
                    await self._start_session()
            except (TransportError, TimeoutError, OSError) as exc:
                logger.warning(
                    "%s: a new session could not be started: %s",
                    transport.options.display_name,
                    exc or type(exc).__name__,
                )
                return False
            logger.info(
                "%s: session %s was unknown to the server; speaking in new session %s",
                transport.options.display_name,
                expired,
                transport.session_id,
            )
            return True

    async def _start_session(self) -> None:
        transport = self.transport
        version = transport.protocol_version
        transport.stop_listening()
        transport.session_id = None
        assert self.initialize is not None
        result = await self._request(self.initialize, initialize=True)
        if result.get("protocolVersion") != version:
            raise TransportError(
                f"the new session speaks {result.get('protocolVersion')!r}, not {version!r}"
            )
        initialized = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'
        response = await transport.open_post(initialized)
        await response.aclose()
        for frame in list(self.kept.values()):
            try:
                await self._request(frame)
            except TransportError as exc:  # the server refuses it now: the rest still goes
                logger.warning(
                    "%s: restoring the session state failed: %s",
                    transport.options.display_name,
                    exc,
                )
        transport.start_listening()

    async def _request(self, frame: bytes, *, initialize: bool = False) -> dict[str, Any]:
        """Send ``frame`` again under an id of the renewal's own; its result."""
        message = msgspec.json.decode(frame)
        request_id = f"{_OWN_ID}{next(self._ids)}"
        message["id"] = request_id
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._answers[request_id] = future
        try:
            await self.transport.own_request(
                msgspec.json.encode(message), request_id, initialize=initialize
            )
            if not future.done():
                raise TransportError(f"no answer to {message.get('method')} in the new session")
            answer = future.result()
        finally:
            self._answers.pop(request_id, None)
        if "error" in answer:
            error = answer["error"]
            detail = error.get("message") if isinstance(error, dict) else error
            raise TransportError(f"{message.get('method')} refused in the new session: {detail}")
        result = answer.get("result")
        return result if isinstance(result, dict) else {}

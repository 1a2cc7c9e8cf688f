"""WebSocket client transport: one text message per JSON-RPC frame, subprotocol ``mcp``.

Authorization works as on the HTTP transports, with the same option names (see
``_auth_hooks``): the upgrade request is a GET that carries ``additional_headers`` and what
``apply_per_request_headers`` adds (``OAuthClientProvider.install(options)``: the access
token and, for a DPoP-bound token, a proof). A refused upgrade is sent once more when the
hooks can answer it, as an HTTP request is: a 401 (or a 403 ``insufficient_scope``) that
``auth_challenge_handler`` answers with new credentials, or a ``use_dpop_nonce`` challenge.
Otherwise it fails with ``HttpStatusError``, as an HTTP transport does.

The hooks are told the upgrade's URL in its http(s) form: that is the HTTP request the
upgrade is (its DPoP ``htu``; servers compare ``ws``/``wss`` as ``http``/``https``), and it
is how an ``OAuthClientProvider`` recognizes its server's origin. So the provider is made
with the server's HTTP URL (its MCP endpoint, or the http form of the WebSocket URL).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from mcpkit._exceptions import ConnectionClosedError, TransportError
from mcpkit._extras import require
from mcpkit.client._auth_hooks import (
    HttpRequestHeaderContext,
    HttpResponseChallengeContext,
    authorization_retry,
    joined_challenge,
    observe_response,
    request_headers,
)
from mcpkit.client._http_options import DEFAULT_HTTP_TIMEOUT, HttpStatusError, auth_hint
from mcpkit.client._inbox import DEFAULT_MAX_QUEUED_FRAMES, InboxTransport
from mcpkit.protocol._jsonrpc import DEFAULT_MAX_MESSAGE_BYTES

logger = logging.getLogger("mcpkit.client.websocket")

__all__ = ["WebSocketClientTransport", "WebSocketClientTransportOptions", "http_form"]

SUBPROTOCOL = "mcp"
#: Seconds the closing handshake may take.
DEFAULT_CLOSE_TIMEOUT = 5.0
#: Seconds between keepalive pings.
DEFAULT_PING_INTERVAL = 20.0
#: How much of a refusal's body and challenge the error message quotes.
_ERROR_PREVIEW = 300


@dataclass(slots=True)
class WebSocketClientTransportOptions:
    """How to reach one MCP server over WebSocket (``ws://`` or ``wss://``).

    The auth fields mean what they mean on ``HttpClientTransportOptions``, for the upgrade
    request: ``additional_headers`` (a static ``Authorization: Bearer ...``, say);
    ``apply_per_request_headers`` and ``observe_response_challenge``; and
    ``auth_challenge_handler``, asked on a 401 (or a 403 ``insufficient_scope``) for the
    ``Authorization`` value to retry the upgrade once with. ``OAuthClientProvider.install``
    (``mcpkit.auth.client``) sets the three hooks.
    """

    url: str
    additional_headers: dict[str, str] = field(default_factory=dict)
    auth_challenge_handler: Callable[[str], str | Awaitable[str]] | None = None
    apply_per_request_headers: Callable[[HttpRequestHeaderContext, dict[str, str]], None] | None = (
        None
    )
    observe_response_challenge: Callable[[HttpResponseChallengeContext], None] | None = None
    #: Messages past it make the library close the connection (1009).
    max_message_bytes: int | None = DEFAULT_MAX_MESSAGE_BYTES
    #: Seconds connecting and the opening handshake may take (each attempt).
    open_timeout: float | None = DEFAULT_HTTP_TIMEOUT
    #: Frames received but not yet taken by the client engine.
    max_queued_frames: int = DEFAULT_MAX_QUEUED_FRAMES
    ping_interval: float | None = DEFAULT_PING_INTERVAL


def http_form(url: str) -> str:
    """``url`` with ``ws``/``wss`` as ``http``/``https`` (the upgrade's HTTP target)."""
    parts = urlsplit(url)
    scheme = {"ws": "http", "wss": "https"}.get(parts.scheme.lower(), parts.scheme)
    return urlunsplit((scheme, parts.netloc, parts.path or "/", parts.query, ""))


def _options_from(
    target: str | WebSocketClientTransportOptions, fields: dict[str, Any]
) -> WebSocketClientTransportOptions:
    # ``headers`` is this transport's older name for ``additional_headers``.
    if "headers" in fields:
        fields["additional_headers"] = dict(fields.pop("headers") or {})
    if isinstance(target, WebSocketClientTransportOptions):
        return dataclasses.replace(target, **fields) if fields else target
    return WebSocketClientTransportOptions(url=target, **fields)


class WebSocketClientTransport(InboxTransport):
    """A ``MessageStream`` over one WebSocket connection (``websockets`` asyncio client).

    Made from a URL with option fields as keywords, or from ready
    ``WebSocketClientTransportOptions`` (keywords then replace their fields).
    Messages past ``max_message_bytes`` make the library close the connection (1009), which
    ends the transport. A server that selects no subprotocol is accepted with a warning.
    """

    #: This transport predates the 2026-07-28 era: clients speak the handshake era on it.
    modern_capable = False

    def __init__(self, url: str | WebSocketClientTransportOptions, **fields: Any) -> None:
        options = _options_from(url, fields)
        super().__init__(options.max_queued_frames)
        self.options = options
        #: What ``auth_challenge_handler`` last gave: every later upgrade carries it.
        self.authorization: str | None = None
        self._ws: Any = None
        self._reader: asyncio.Task[None] | None = None

    @property
    def url(self) -> str:
        return self.options.url

    @property
    def subprotocol(self) -> str | None:
        return self._ws.subprotocol if self._ws is not None else None

    async def start(self) -> None:
        if self._ws is not None:
            return
        self._ws = await self._open_authorized()
        if self._ws.subprotocol != SUBPROTOCOL:
            logger.warning("%s selected no %r subprotocol; continuing", self.url, SUBPROTOCOL)
        self._reader = asyncio.ensure_future(self._read())

    # the upgrade ---------------------------------------------------------------------------

    async def _open_authorized(self) -> Any:
        """Open the connection; retry a refused upgrade once when the auth hooks can answer
        its challenge (one retry, shared as on HTTP); else ``HttpStatusError``."""
        connect, InvalidStatus, WebSocketException = _websockets_client()
        retried = False
        while True:
            headers = self._upgrade_headers()
            try:
                ws = await self._open(connect, headers)
            except InvalidStatus as exc:
                response = exc.response
                self._observe(response.status_code, response.headers)
                authorization = None if retried else await self._retry_authorization(response)
                if authorization is None:
                    raise self._refusal(response, headers) from exc
                retried = True
                if authorization:  # "" answers a DPoP nonce challenge: same token, new proof
                    self.authorization = authorization
                continue
            except (OSError, TimeoutError, WebSocketException) as exc:
                raise TransportError(f"WebSocket connection to {self.url} failed: {exc!r}") from exc
            self._observe(ws.response.status_code, ws.response.headers)
            return ws

    def _upgrade_headers(self) -> dict[str, str]:
        context = HttpRequestHeaderContext("GET", http_form(self.url))
        return request_headers(self.options, context, {}, authorization=self.authorization)

    async def _open(self, connect: Any, headers: dict[str, str]) -> Any:
        """One opening handshake; a refusal raises the library's ``InvalidStatus``."""
        return await connect(
            self.url,
            subprotocols=[SUBPROTOCOL],
            additional_headers=headers or None,
            max_size=self.options.max_message_bytes,
            open_timeout=self.options.open_timeout,
            ping_interval=self.options.ping_interval,
            close_timeout=DEFAULT_CLOSE_TIMEOUT,
            compression=None,
        )

    def _observe(self, status_code: int, headers: Any) -> None:
        observe_response(
            self.options,
            "GET",
            http_form(self.url),
            status_code,
            www_authenticate=joined_challenge(headers.get_all("www-authenticate")) or None,
            dpop_nonce=_first(headers, "dpop-nonce"),
        )

    async def _retry_authorization(self, response: Any) -> str | None:
        async def body_preview() -> bytes:
            return bytes(response.body or b"")

        return await authorization_retry(
            self.options,
            response.status_code,
            joined_challenge(response.headers.get_all("www-authenticate")),
            dpop_nonce=_first(response.headers, "dpop-nonce"),
            body_preview=body_preview,
            request=f"WebSocket upgrade of {self.url}",
        )

    def _refusal(self, response: Any, sent: Mapping[str, str]) -> HttpStatusError:
        """The error of a refused upgrade: the status, the challenge, what to do about it."""
        status = response.status_code
        body = bytes(response.body or b"")
        text = f"the WebSocket upgrade of {self.url} was refused: HTTP {status} {response.reason_phrase}".rstrip()
        challenge = joined_challenge(response.headers.get_all("www-authenticate"))
        if challenge:
            text += f"; WWW-Authenticate: {challenge[:_ERROR_PREVIEW]}"
        snippet = body[:_ERROR_PREVIEW].decode("utf-8", "replace").strip()
        if snippet:
            text += f"; {snippet}"
        hint = _upgrade_hint(
            status,
            challenge,
            sent_credentials=any(k.lower() == "authorization" for k in sent),
            has_auth_hooks=self.options.auth_challenge_handler is not None,
        )
        return HttpStatusError(f"{text}{hint}", status, body)

    # frames ------------------------------------------------------------------------------

    async def _read(self) -> None:
        from websockets.exceptions import ConnectionClosed, ConnectionClosedOK

        error: ConnectionClosedError | None = None
        try:
            async for message in self._ws:
                await self._inbox.put(
                    message.encode("utf-8") if isinstance(message, str) else bytes(message)
                )
        except ConnectionClosedOK:
            pass
        except ConnectionClosed as exc:
            error = ConnectionClosedError(f"WebSocket {self.url} closed: {_describe(exc)}")
        if error is None and not self._closed:
            error = ConnectionClosedError(f"the server closed the WebSocket {self.url}")
        if not self._closed:
            self._fatal = error
        self._inbox.close(None if self._closed else error)

    async def send(self, frame: bytes) -> None:
        from websockets.exceptions import ConnectionClosed

        self._raise_if_ended()
        if self._ws is None or self._closed:
            raise ConnectionClosedError("the WebSocket transport is not connected")
        try:
            await self._ws.send(frame.decode("utf-8"))
        except ConnectionClosed as exc:
            raise ConnectionClosedError(f"WebSocket {self.url} closed: {_describe(exc)}") from exc

    async def aclose(self) -> None:
        if not self._begin_close():
            return
        if self._ws is not None:
            try:
                await self._ws.close()
            except Exception as exc:  # the peer vanished mid-handshake: nothing left to do
                logger.debug("closing %s: %r", self.url, exc)
        if self._reader is not None:
            self._reader.cancel()
            await asyncio.gather(self._reader, return_exceptions=True)
        self._inbox.close()


def _upgrade_hint(
    status: int, challenge: str, *, sent_credentials: bool, has_auth_hooks: bool
) -> str:
    """``auth_hint``, and what a bare 403 to an upgrade may mean."""
    hint = auth_hint(
        status, challenge, sent_credentials=sent_credentials, has_auth_hooks=has_auth_hooks
    )
    if hint or status != 403 or challenge:
        return hint
    # ASGI servers without the websocket.http.response extension can only refuse an
    # upgrade with a bare 403, so a missing token looks like this too.
    return (
        " (refused without a challenge: check the URL's path, an mcpkit server's"
        " WebSocket endpoint is its MCP endpoint plus /ws, e.g. /mcp/ws; if the server"
        " requires authorization, send a token)"
    )


def _first(headers: Any, name: str) -> str | None:
    # ``websockets`` headers raise on ``get`` when a name repeats (two challenges, say).
    values = headers.get_all(name)
    return values[0] if values else None


def _websockets_client() -> tuple[Any, Any, type[Exception]]:
    """(``connect``, ``InvalidStatus``, ``WebSocketException``) of the ``websockets`` library."""
    require("websockets", "ws", "the WebSocket client transport")
    from websockets.asyncio.client import connect
    from websockets.exceptions import InvalidStatus, WebSocketException

    return connect, InvalidStatus, WebSocketException


def _describe(exc: Any) -> str:
    frame = getattr(exc, "rcvd", None) or getattr(exc, "sent", None)
    if frame is None:
        return "no close frame"
    return f"code {frame.code}" + (f" ({frame.reason})" if frame.reason else "")

"""Options for the HTTP client transports, and the HTTP plumbing they configure.

``HttpClientTransportOptions`` describes one HTTP server (Streamable HTTP, legacy HTTP+SSE,
or "find out"). ``HttpRequester`` is what the transports send through: it builds the
headers (static ones, then the per-request hook), follows redirects by hand under the
configured policy, and reports every response to the challenge observer.
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from urllib.parse import urljoin, urlsplit

import httpx

from mcpkit._exceptions import MessageTooLargeError, TransportError
from mcpkit.client._auth_hooks import (
    HttpRequestHeaderContext,
    HttpResponseChallengeContext,
    authorization_retry,
    joined_challenge,
    observe_response,
    request_headers,
)
from mcpkit.client._endpoint_memory import EndpointMemory
from mcpkit.client._inbox import DEFAULT_MAX_QUEUED_FRAMES
from mcpkit.client._transport_mode import HttpTransportMode
from mcpkit.protocol._jsonrpc import DEFAULT_MAX_MESSAGE_BYTES
from mcpkit.protocol._sse import DEFAULT_MAX_SSE_EVENT_BYTES

logger = logging.getLogger("mcpkit.client.http")

__all__ = [
    "DEFAULT_HTTP_TIMEOUT",
    "HttpClientTransportOptions",
    "HttpRedirectPolicy",
    "HttpRequestHeaderContext",
    "HttpRequester",
    "HttpResponseChallengeContext",
    "HttpStatusError",
    "HttpTransportMode",
    "same_origin",
]

#: Seconds one HTTP exchange may take to connect, send, and answer without streaming.
DEFAULT_HTTP_TIMEOUT = 30.0
#: Consecutive failed reconnects of one SSE stream before it is given up.
DEFAULT_MAX_RECONNECT_ATTEMPTS = 6
#: Backoff of SSE reconnects the server gave no ``retry`` for: first delay, and cap (s).
DEFAULT_RECONNECT_DELAY = 0.5
DEFAULT_MAX_RECONNECT_DELAY = 30.0
#: HTTP connections one transport may hold open at once (each open SSE stream holds one).
DEFAULT_MAX_CONNECTIONS = 100

_REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
#: How much of an error body is kept for the error message.
_ERROR_BODY_PREVIEW = 4096


class HttpRedirectPolicy(enum.Enum):
    """Which 3xx redirects the client follows (at most ``max_redirects`` hops)."""

    FOLLOW_ALL = "follow-all"
    SAME_ORIGIN_ONLY = "same-origin-only"
    NO_FOLLOW = "no-follow"


@dataclass(slots=True)
class HttpClientTransportOptions:
    """How to reach one MCP server over HTTP.

    ``enable_listen_stream`` left at None opens the GET listen stream unless ``stateless``.
    ``stateless`` is for purely stateless peers: no ``Mcp-Session-Id`` or ``Last-Event-ID``
    is sent, and the session is not DELETEd on close. ``request_timeout`` bounds connecting,
    sending, and reading answers that do not stream (acknowledgements, DELETE); waiting for a
    request's result is bounded by the client's own per-request timeout instead.
    ``known_session_id`` resumes a session opened elsewhere (Streamable HTTP only):
    ``McpClient`` sends no ``initialize``; every request, the GET listen stream and any DELETE
    carry that ``Mcp-Session-Id``, and ``MCP-Protocol-Version`` is the client's
    ``protocol_version`` (default 2025-11-25) until the server's answer names the session's
    own. ``connect()`` checks the session with a ``ping``: one the server does not know
    fails with ``SessionExpiredError``. ``delete_session_on_close`` says whether closing
    DELETEs the session: None (the default) does for a session this client initialized, not
    for a resumed one (it belongs to whoever opened it); True and False decide for both.

    ``apply_per_request_headers(context, headers)`` may add headers to every request sent
    (redirect hops included; it runs after ``additional_headers``);
    ``observe_response_challenge(context)`` sees every response's status and challenge
    headers. ``auth_challenge_handler(www_authenticate)`` (sync or async) is called on every
    401, and on a 403 whose challenge says ``insufficient_scope``; a non-empty answer is the
    ``Authorization`` value the request is sent once more with (and later requests carry).
    A 401/400 with a ``DPoP-Nonce`` and a ``use_dpop_nonce`` challenge (or body) is sent
    once more as is. The two share one retry per request. ``OAuthClientProvider.install``
    (``mcpkit.auth.client``) sets all three hooks.

    ``endpoint_memory`` is where the era and (AUTO_DETECT) transport mode a client finds
    are remembered, keyed by the endpoint and the credentials (``additional_headers``, the
    auth hooks' owner, a given ``httpx`` client). None (the default): the transport keeps
    its own, so every client probes afresh and no two clients share an answer. Hand the same
    ``EndpointMemory`` to several clients to let a later one with the same endpoint and
    credentials skip the probe an earlier one made.
    """

    endpoint: str
    transport_mode: HttpTransportMode = HttpTransportMode.AUTO_DETECT
    name: str = ""
    known_session_id: str = ""
    additional_headers: dict[str, str] = field(default_factory=dict)
    enable_listen_stream: bool | None = None
    stateless: bool = False
    max_sse_event_bytes: int | None = DEFAULT_MAX_SSE_EVENT_BYTES
    redirect_policy: HttpRedirectPolicy = HttpRedirectPolicy.SAME_ORIGIN_ONLY
    max_redirects: int = 5
    request_timeout: float | None = DEFAULT_HTTP_TIMEOUT
    auth_challenge_handler: Callable[[str], str | Awaitable[str]] | None = None
    apply_per_request_headers: Callable[[HttpRequestHeaderContext, dict[str, str]], None] | None = (
        None
    )
    observe_response_challenge: Callable[[HttpResponseChallengeContext], None] | None = None
    #: Bound on a JSON (non-streamed) response body.
    max_response_bytes: int | None = DEFAULT_MAX_MESSAGE_BYTES
    #: Consecutive failed reconnects of one SSE stream before it is given up.
    max_reconnect_attempts: int = DEFAULT_MAX_RECONNECT_ATTEMPTS
    #: Frames received but not yet taken by the client engine.
    max_queued_frames: int = DEFAULT_MAX_QUEUED_FRAMES
    max_connections: int = DEFAULT_MAX_CONNECTIONS
    #: DELETE the session on close: None -> only a session this client initialized.
    delete_session_on_close: bool | None = None
    #: A 404 on a session this client initialized starts a new one (``initialize`` again,
    #: its subscriptions and log level restored) and sends the request once more, as the
    #: spec asks of a client; False: the request fails with ``SessionExpiredError``.
    renew_expired_session: bool = True
    #: Where the era and transport mode found are remembered (None: this transport's own).
    endpoint_memory: EndpointMemory | None = None

    @property
    def display_name(self) -> str:
        """The name in logs and errors: ``name``, else the endpoint."""
        return self.name or self.endpoint

    @property
    def listen_stream_enabled(self) -> bool:
        """Whether the GET listen stream is opened (default: with a session, not stateless)."""
        if self.enable_listen_stream is None:
            return not self.stateless
        return self.enable_listen_stream


class HttpStatusError(TransportError):
    """The server answered an HTTP request with an error status."""

    def __init__(self, message: str, status_code: int, body: bytes = b"") -> None:
        super().__init__(message)
        self.status_code = status_code
        self.body = body


def origin_of(url: str) -> tuple[str, str, int | None]:
    """(scheme, host, port) with the scheme's default port filled in."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    port = parts.port or {"http": 80, "https": 443, "ws": 80, "wss": 443}.get(scheme)
    return scheme, (parts.hostname or "").lower(), port


def same_origin(a: str, b: str) -> bool:
    return origin_of(a) == origin_of(b)


def new_http_client(options: HttpClientTransportOptions) -> httpx.AsyncClient:
    """The ``httpx.AsyncClient`` a transport owns when it is not handed one."""
    timeout = options.request_timeout
    return httpx.AsyncClient(
        follow_redirects=False,  # HttpRequester follows them under the configured policy
        timeout=httpx.Timeout(timeout),
        limits=httpx.Limits(
            max_connections=options.max_connections,
            max_keepalive_connections=min(20, options.max_connections),
        ),
    )


class HttpRequester:
    """Sends one HTTP request the way the options say, following redirects by hand."""

    def __init__(self, options: HttpClientTransportOptions, client: httpx.AsyncClient) -> None:
        self.options = options
        self.client = client
        #: What ``auth_challenge_handler`` last gave: sent on every later request.
        self.authorization: str | None = None

    def timeout(self, *, streaming: bool) -> httpx.Timeout:
        """``request_timeout`` everywhere, except reads of a response that may stream."""
        t = self.options.request_timeout
        return httpx.Timeout(t, read=None) if streaming else httpx.Timeout(t)

    def _headers(
        self, method: str, url: str, hop: int, headers: Mapping[str, str], *, crossed: bool
    ) -> dict[str, str]:
        """Static headers, then the transport's, then the hook (see ``request_headers``)."""
        context = HttpRequestHeaderContext(method, url, hop)
        return request_headers(
            self.options, context, headers, authorization=self.authorization, crossed=crossed
        )

    def _observe(self, method: str, url: str, response: httpx.Response) -> None:
        observe_response(
            self.options,
            method,
            url,
            response.status_code,
            www_authenticate=response.headers.get("www-authenticate"),
            dpop_nonce=response.headers.get("dpop-nonce"),
        )

    async def open(
        self,
        method: str,
        url: str,
        headers: Mapping[str, str],
        *,
        content: bytes | None = None,
        streaming: bool = True,
    ) -> httpx.Response:
        """Send the request and return the response with its body not yet read.

        The caller must ``aclose()`` it. Redirects are followed per ``redirect_policy``; a
        refused or excess redirect raises ``TransportError``; with ``NO_FOLLOW`` the 3xx
        response itself is returned. Connection failures raise ``TransportError``.
        """
        # One retry, shared by the auth challenge handler and a DPoP nonce challenge.
        retried = False
        sent = headers
        while True:
            response = await self._open_following(
                method, url, sent, content=content, streaming=streaming
            )
            if retried or response.status_code not in (400, 401, 403):
                return response
            body_start = _BodyStart(response)
            authorization = await self._auth_retry(method, url, response, body_start)
            if authorization is None:
                return await body_start.replay()
            await response.aclose()
            retried = True
            if authorization:
                sent = {k: v for k, v in headers.items() if k.lower() != "authorization"}
                sent["Authorization"] = authorization

    async def _auth_retry(
        self, method: str, url: str, response: httpx.Response, body_start: _BodyStart
    ) -> str | None:
        """Whether to send the request again after a 400/401/403: None for no; "" to send
        it as it was (a ``use_dpop_nonce`` challenge: the header hook makes a new proof with
        the nonce the observer saw); else the ``Authorization`` value the auth challenge
        handler gave (kept for later requests too)."""
        try:
            value = await authorization_retry(
                self.options,
                response.status_code,
                joined_challenge(response.headers.get_list("www-authenticate")),
                dpop_nonce=response.headers.get("dpop-nonce"),
                body_preview=body_start.read,
                request=f"{method} {url}",
            )
        except TransportError:
            await response.aclose()
            raise
        if value:
            self.authorization = value
        return value

    async def _open_following(
        self,
        method: str,
        url: str,
        headers: Mapping[str, str],
        *,
        content: bytes | None,
        streaming: bool,
    ) -> httpx.Response:
        opts = self.options
        start_url = url
        crossed = False
        for hop in range(opts.max_redirects + 1):
            request = self.client.build_request(
                method,
                url,
                headers=self._headers(method, url, hop, headers, crossed=crossed),
                content=content,
                timeout=self.timeout(streaming=streaming),
            )
            try:
                response = await self.client.send(request, stream=True)
            except httpx.HTTPError as exc:
                raise TransportError(f"{method} {url} failed: {exc!r}") from exc
            self._observe(method, url, response)
            location = response.headers.get("location")
            if (
                response.status_code not in _REDIRECT_STATUSES
                or not location
                or opts.redirect_policy is HttpRedirectPolicy.NO_FOLLOW
            ):
                return response
            await response.aclose()
            target = urljoin(url, location)
            if urlsplit(target).scheme not in ("http", "https"):
                raise TransportError(f"refused a redirect from {url} to {target}: not HTTP")
            cross = not same_origin(url, target)
            if cross and opts.redirect_policy is HttpRedirectPolicy.SAME_ORIGIN_ONLY:
                raise TransportError(
                    f"refused a redirect from {url} to {target}: another origin "
                    "(redirect_policy is SAME_ORIGIN_ONLY)"
                )
            crossed = crossed or cross
            if response.status_code == 303 and method != "GET":
                method, content = "GET", None  # "See Other": fetch the result, do not resend
            logger.debug(
                "%s: following %d redirect to %s", opts.display_name, response.status_code, target
            )
            url = target
        raise TransportError(f"more than {opts.max_redirects} redirects from {start_url}")


#: Headers that describe a body as sent, not the start of it a ``_BodyStart`` keeps.
_BODY_FRAMING = frozenset({"content-length", "transfer-encoding", "content-encoding"})


class _BodyStart:
    """The start of a refusal's body (``error_body``), read when the auth retry looks in
    it for ``use_dpop_nonce``, never more: a server's body may not end. The response's
    stream is spent then, and ``replay`` gives one holding that start in its place."""

    def __init__(self, response: httpx.Response) -> None:
        self.response = response
        self.data: bytes | None = None

    async def read(self) -> bytes:
        if self.data is None:
            self.data = await error_body(self.response)
        return self.data

    async def replay(self) -> httpx.Response:
        """The response itself, or (once its start was read) one holding that start."""
        if self.data is None:
            return self.response
        await self.response.aclose()
        headers = [
            (name, value)
            for name, value in self.response.headers.multi_items()
            if name.lower() not in _BODY_FRAMING
        ]
        return httpx.Response(
            self.response.status_code,
            headers=headers,
            content=self.data,
            request=self.response.request,
        )


async def read_body(response: httpx.Response, limit: int | None) -> bytes:
    """The whole body, or ``MessageTooLargeError`` past ``limit`` bytes (the rest unread)."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if limit is not None and size > limit:
            raise MessageTooLargeError(
                f"HTTP response body exceeds {limit} bytes", {"limit": limit}
            )
        chunks.append(chunk)
    return b"".join(chunks)


async def error_body(response: httpx.Response) -> bytes:
    """The start of an error response's body, for the error message; never raises."""
    try:
        chunks: list[bytes] = []
        size = 0
        async for chunk in response.aiter_bytes():
            chunks.append(chunk)
            size += len(chunk)
            if size >= _ERROR_BODY_PREVIEW:
                break
        return b"".join(chunks)[:_ERROR_BODY_PREVIEW]
    except Exception:
        return b""


#: The media types and headers of MCP over HTTP.
SSE = "text/event-stream"
JSON = "application/json"
SESSION_HEADER = "Mcp-Session-Id"
VERSION_HEADER = "MCP-Protocol-Version"


def content_type(response: httpx.Response) -> str:
    value: str = response.headers.get("content-type", "")
    return value.split(";", 1)[0].strip().lower()


def describe_status(response: httpx.Response, body: bytes = b"") -> str:
    text = f"HTTP {response.status_code} {response.reason_phrase}".rstrip()
    snippet = body[:300].decode("utf-8", "replace").strip()
    return f"{text}: {snippet}" if snippet else text


def status_error(method: str, url: str, response: httpx.Response, body: bytes) -> HttpStatusError:
    try:
        sent = "authorization" in response.request.headers
    except RuntimeError:  # a response made without its request
        sent = False
    hint = auth_hint(
        response.status_code, response.headers.get("www-authenticate", ""), sent_credentials=sent
    )
    return HttpStatusError(
        f"{method} {url} answered {describe_status(response, body)}{hint}",
        response.status_code,
        body,
    )


def auth_hint(
    status: int, challenge: str, *, sent_credentials: bool, has_auth_hooks: bool = False
) -> str:
    """What a caller can do about an auth refusal, over HTTP or a WebSocket upgrade ("" for
    other statuses): the next step, which the bare status does not say."""
    if status == 401 and sent_credentials:
        return " (the credentials sent were not accepted)"
    if status == 401 and has_auth_hooks:
        return " (the server requires authorization, and the auth challenge handler gave no credentials)"
    if status == 401:
        return (
            " (the server requires authorization: send a token with"
            " additional_headers={'Authorization': 'Bearer ...'}, or install an"
            " OAuthClientProvider (mcpkit.auth.client) on the options)"
        )
    if status == 403 and "insufficient_scope" in challenge:
        return " (the token lacks a scope this server requires)"
    return ""


def retry_after(response: httpx.Response) -> float | None:
    """A ``Retry-After`` given in seconds, if any (HTTP dates are ignored)."""
    value: str = response.headers.get("retry-after", "").strip()
    return float(value) if value.isdigit() else None


def backoff_delay(failures: int) -> float:
    """Exponential backoff for the ``failures``-th consecutive failed reconnect (0-based)."""
    delay: float = DEFAULT_RECONNECT_DELAY * (2 ** min(failures, 16))
    return min(delay, DEFAULT_MAX_RECONNECT_DELAY)

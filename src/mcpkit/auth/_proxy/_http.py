"""The little HTTP the authorization server's endpoints speak (plain ASGI): bounded form
bodies, query strings, cookies, and its answers: JSON (never cached), redirects, HTML pages
that refuse to be framed, and the OAuth error (RFC 6749 §5.2) as one exception."""

from __future__ import annotations

import html
import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
Scope = dict[str, Any]

#: Largest form or JSON body an endpoint reads (registration, token, consent).
DEFAULT_MAX_FORM_BYTES = 64 * 1024
#: Most parameters one request may carry (query or form).
MAX_PARAMETERS = 64
#: The hosts that name this computer (plain http is allowed there, RFC 8252 §7.3).
LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})

_NO_STORE = ((b"cache-control", b"no-store"), (b"pragma", b"no-cache"))
_CORS = ((b"access-control-allow-origin", b"*"),)
#: Pages the user sees (login, consent): no framing (clickjacking), no scripts, no caching.
_PAGE_HEADERS = (
    (b"content-type", b"text/html; charset=utf-8"),
    (b"x-frame-options", b"DENY"),
    (
        b"content-security-policy",
        b"default-src 'none'; style-src 'unsafe-inline'; form-action 'self' http: https:;"
        b" frame-ancestors 'none'",
    ),
    (b"referrer-policy", b"no-referrer"),
    *_NO_STORE,
)


class OAuthEndpointError(Exception):
    """An OAuth error answer: ``error`` (an RFC 6749 code), a description the client may
    read, and the HTTP status."""

    def __init__(self, error: str, description: str, status: int = 400) -> None:
        super().__init__(f"{error}: {description}")
        self.error = error
        self.description = description
        self.status = status

    def body(self) -> dict[str, str]:
        """The JSON error body."""
        return {"error": self.error, "error_description": self.description}


def headers_of(scope: Scope) -> dict[str, str]:
    """Request headers by lower-case name (the last of a repeated one)."""
    return {k.decode("latin-1"): v.decode("latin-1") for k, v in scope.get("headers", ())}


def _params(pairs: list[tuple[str, str]]) -> dict[str, str]:
    """Parameters by name; one given twice is refused (RFC 6749 §3.1)."""
    if len(pairs) > MAX_PARAMETERS:
        raise OAuthEndpointError("invalid_request", "too many parameters")
    out: dict[str, str] = {}
    for name, value in pairs:
        if name in out:
            raise OAuthEndpointError("invalid_request", f"the parameter {name} is repeated")
        out[name] = value
    return out


def query_params(scope: Scope) -> dict[str, str]:
    """The query string's parameters."""
    raw = scope.get("query_string", b"").decode("latin-1")
    return _params(parse_qsl(raw, keep_blank_values=False))


async def read_body(receive: Receive, limit: int = DEFAULT_MAX_FORM_BYTES) -> bytes:
    """The request body; past ``limit`` bytes an ``invalid_request`` (413)."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise OAuthEndpointError("invalid_request", "the client went away")
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise OAuthEndpointError("invalid_request", f"the body exceeds {limit} bytes", 413)
        chunks.append(chunk)
        if not message.get("more_body"):
            return b"".join(chunks)


async def form_params(scope: Scope, receive: Receive, limit: int) -> dict[str, str]:
    """The parameters of a form POST (``application/x-www-form-urlencoded``)."""
    content_type = headers_of(scope).get("content-type", "").split(";")[0].strip().lower()
    if content_type != "application/x-www-form-urlencoded":
        raise OAuthEndpointError(
            "invalid_request", "the body must be application/x-www-form-urlencoded"
        )
    body = await read_body(receive, limit)
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise OAuthEndpointError("invalid_request", "the body is not UTF-8") from None
    return _params(parse_qsl(text, keep_blank_values=False))


def cookies_of(scope: Scope) -> dict[str, str]:
    """The request's cookies by name."""
    out: dict[str, str] = {}
    for part in headers_of(scope).get("cookie", "").split(";"):
        name, _, value = part.strip().partition("=")
        if name and name not in out:
            out[name] = value
    return out


def set_cookie(
    name: str, value: str, *, path: str, max_age: int, secure: bool
) -> tuple[bytes, bytes]:
    """A ``Set-Cookie`` header: HttpOnly, SameSite=Lax, Secure on HTTPS."""
    flags = f"{name}={value}; Path={path}; Max-Age={max_age}; HttpOnly; SameSite=Lax"
    if secure:
        flags += "; Secure"
    return (b"set-cookie", flags.encode("latin-1"))


async def send(send_: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]]) -> None:
    """One whole answer."""
    raw = [*headers, (b"content-length", b"%d" % len(body))]
    await send_({"type": "http.response.start", "status": status, "headers": raw})
    await send_({"type": "http.response.body", "body": body})


async def send_json(
    send_: Send,
    status: int,
    value: Any,
    headers: list[tuple[bytes, bytes]] | None = None,
    *,
    cacheable: bool = False,
) -> None:
    """A JSON answer, open to any origin (CORS), not cached unless ``cacheable``."""
    extra = [(b"content-type", b"application/json"), *_CORS, *(headers or ())]
    extra += [(b"cache-control", b"public, max-age=300")] if cacheable else list(_NO_STORE)
    await send(send_, status, json.dumps(value).encode(), extra)


async def send_error(send_: Send, error: OAuthEndpointError) -> None:
    """The OAuth error as JSON; a 401 ``invalid_client`` also names the Basic scheme."""
    headers = []
    if error.status == 401:
        headers.append((b"www-authenticate", b'Basic realm="oauth"'))
    await send_json(send_, error.status, error.body(), headers)


async def send_preflight(send_: Send, methods: bytes) -> None:
    """The answer to a CORS preflight of an endpoint a browser-based client calls."""
    await send(
        send_,
        204,
        b"",
        [
            *_CORS,
            (b"access-control-allow-methods", methods),
            (b"access-control-allow-headers", b"authorization, content-type, mcp-protocol-version"),
            (b"access-control-max-age", b"600"),
        ],
    )


class Route:
    """One endpoint of a server that serves by path (``server.serve(path, scope, receive,
    send)``, the method checked there) as an ASGI app of its own."""

    __slots__ = ("path", "server")

    def __init__(self, server: Any, path: str) -> None:
        self.server = server
        self.path = path

    async def __call__(self, scope: Scope, receive: Receive, send_: Send) -> None:
        await self.server.serve(self.path, scope, receive, send_)


def with_query(url: str, params: Mapping[str, str | None]) -> str:
    """``url`` with ``params`` (None values left out) added to its query."""
    query = urlencode({k: v for k, v in params.items() if v is not None})
    return f"{url}{'&' if urlsplit(url).query else '?'}{query}"


async def redirect(
    send_: Send, location: str, headers: list[tuple[bytes, bytes]] | None = None
) -> None:
    """A 302 to ``location``."""
    await send(
        send_, 302, b"", [(b"location", location.encode("latin-1")), *_NO_STORE, *(headers or ())]
    )


async def send_page(
    send_: Send, status: int, page: str, headers: list[tuple[bytes, bytes]] | None = None
) -> None:
    """An HTML page (that no other site may frame)."""
    await send(send_, status, page.encode("utf-8"), [*_PAGE_HEADERS, *(headers or ())])


def page(title: str, body: str) -> str:
    """A small HTML page around ``body`` (already escaped)."""
    return (
        "<!doctype html><html><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{html.escape(title)}</title><style>"
        "body{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem}"
        "button{padding:.5rem 1rem;margin-right:.5rem}code{word-break:break-all}"
        "label{display:block;margin:.5rem 0}"
        f"</style></head><body><h1>{html.escape(title)}</h1>{body}</body></html>"
    )


def error_page(description: str) -> str:
    """The page shown when the request cannot be sent back to the client."""
    return page("Authorization failed", f"<p>{html.escape(description)}</p>")


__all__ = [
    "DEFAULT_MAX_FORM_BYTES",
    "LOOPBACK_HOSTS",
    "OAuthEndpointError",
    "Route",
    "cookies_of",
    "error_page",
    "form_params",
    "headers_of",
    "page",
    "query_params",
    "read_body",
    "redirect",
    "send",
    "send_error",
    "send_json",
    "send_page",
    "send_preflight",
    "set_cookie",
    "with_query",
]

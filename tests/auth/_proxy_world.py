"""What the OAuthProxy tests share: an upstream provider (a DevAuthServer by default, or
any ``Provider`` a test makes: a fake GitHub, a DevAuthServer dressed as Entra) and an MCP
server with the proxy beside its endpoint, each a real uvicorn server on 127.0.0.1, and a
"browser" (plain httpx, redirects followed by hand) that signs a user in."""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urljoin, urlsplit

import httpx

from mcpkit import McpServerApp, McpToolContext, mcp_server, mcp_tool
from mcpkit.auth import DevAuthServer, DevUser, OAuthProxy, OidcUpstream, Upstream
from mcpkit.auth._dpop import b64url
from mcpkit.auth.client import AuthorizeCallback, OAuthClientMetadata, OAuthClientProvider
from mcpkit.client import HttpClientTransportOptions, HttpTransportMode, McpClient, connect_http
from mcpkit.transports.http import StreamableHttpServerOptions, create_asgi_app
from tests.http_server import POST_HEADERS, bound_socket, serve_asgi
from tests.wire import initialize_request

REDIRECT = "http://127.0.0.1:33418/callback"
ALICE = DevUser("alice", "wonderland", email="alice@example.test", name="Alice Liddell")
BOB = DevUser("bob", "builder", email="bob@example.test", name="Bob")


@mcp_server(name="proxy-protected")
class Protected:
    """``whoami`` reports the identity the tool sees on ``ctx.auth``."""

    @mcp_tool()
    def whoami(self, ctx: McpToolContext) -> str:
        auth = ctx.auth
        assert auth is not None
        return json.dumps(
            {
                "subject": auth.subject,
                "email": auth.claims.get("email"),
                "name": auth.claims.get("name"),
                "upstream": auth.claims.get("upstream"),
                "scopes": list(auth.scopes),
                "client_id": auth.client_id,
            }
        )


@dataclass
class Provider:
    """The upstream side of a world: the provider's ASGI app (served on a port of its own),
    the proxy's upstream for it, and how a browser signs a user in there (the provider's
    authorization URL in, the redirect back to the proxy's callback out)."""

    app: Any
    upstream: Upstream
    log_in: Callable[[httpx.AsyncClient, str, Any], Awaitable[str]]


def dev_provider(provider_base: str, proxy_base: str) -> Provider:
    """A DevAuthServer with alice and bob, the proxy registered as ``mcp-proxy``."""
    dev = DevAuthServer(provider_base, [ALICE, BOB])
    dev.add_client("mcp-proxy", "proxy-secret", [f"{proxy_base}/oauth/callback"])
    upstream = OidcUpstream(dev.discovery_url, "mcp-proxy", "proxy-secret", name="dev")
    return Provider(dev, upstream, log_in)


@dataclass
class World:
    dev: Any
    proxy: OAuthProxy
    base: str
    mcp_url: str
    provider: Provider

    def url(self, path: str) -> str:
        return f"{self.base}{path}"


@contextlib.asynccontextmanager
async def world(
    provider: Callable[[str, str], Provider] = dev_provider,
    *,
    app: McpServerApp | None = None,
    required_scopes: tuple[str, ...] = (),
    **proxy_options: Any,
) -> AsyncIterator[World]:
    """The world; ``app``: the MCP server's (default: ``Protected``); ``required_scopes``:
    what its endpoint requires of a token (and its 401 challenge asks for)."""
    dev_sock, mcp_sock = bound_socket(), bound_socket()
    mcp_port = mcp_sock.getsockname()[1]
    base = f"http://127.0.0.1:{mcp_port}"
    made = provider(f"http://127.0.0.1:{dev_sock.getsockname()[1]}", base)
    upstream = made.upstream
    proxy_options.setdefault("scopes", ("mcp:read", "mcp:write"))
    proxy = OAuthProxy(upstream=upstream, base_url=base, resource=f"{base}/mcp", **proxy_options)
    gate = proxy.bearer_auth(required_scopes=list(required_scopes)) if required_scopes else None
    options = StreamableHttpServerOptions(port=mcp_port, auth_server=proxy, bearer_auth=gate)
    asgi = create_asgi_app(app or McpServerApp(Protected), options)
    try:
        async with (
            serve_asgi(made.app, sock=dev_sock),
            serve_asgi(asgi, sock=mcp_sock, lifespan="on"),
        ):
            yield World(made.app, proxy, base, f"{base}/mcp", made)
    finally:
        await proxy.aclose()
        await upstream.aclose()  # type: ignore[attr-defined]


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    return verifier, b64url(hashlib.sha256(verifier.encode()).digest())


def query_of(url: str) -> dict[str, str]:
    return dict(parse_qsl(urlsplit(url).query))


def hidden_fields(page: str) -> dict[str, str]:
    return dict(re.findall(r"<input type='hidden' name='([^']+)' value='([^']*)'>", page))


async def register(http: httpx.AsyncClient, w: World, **metadata: Any) -> dict[str, Any]:
    body = {
        "redirect_uris": [REDIRECT],
        "client_name": "Test Client",
        "token_endpoint_auth_method": "none",
        "grant_types": ["authorization_code", "refresh_token"],
        **metadata,
    }
    answer = await http.post(w.url("/register"), json=body)
    assert answer.status_code == 201, answer.text
    return dict(answer.json())


def authorize_url(w: World, client_id: str, challenge: str, **extra: str) -> str:
    params = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": REDIRECT,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "state": "client-state",
        "scope": "mcp:read",
        "resource": w.mcp_url,
        **extra,
    }
    return str(httpx.URL(w.url("/authorize"), params=params))


async def approve(
    http: httpx.AsyncClient, w: World, page: str, decision: str = "approve"
) -> httpx.Response:
    form = {**hidden_fields(page), "decision": decision}
    return await http.post(w.url("/oauth/consent"), data=form)


async def log_in(http: httpx.AsyncClient, login_url: str, user: DevUser) -> str:
    """At the dev provider: the login page, the form posted; the redirect back to the proxy."""
    page = await http.get(login_url)
    assert page.status_code == 200, page.text
    form = {**hidden_fields(page.text), "username": user.username, "password": user.password}
    done = await http.post(urljoin(login_url, "authorize"), data=form)
    assert done.status_code == 302, done.text
    return done.headers["location"]


async def sign_in(
    http: httpx.AsyncClient,
    w: World,
    url: str,
    user: Any = ALICE,
    *,
    expect_consent: bool | None = None,
) -> str:
    """The browser's whole way from the client's authorization URL back to its redirect
    URI: consent (when asked), the provider's login, the proxy's callback. Returns where the
    client was sent back to. ``expect_consent``: whether the consent page must (True) or
    must not (False) be shown; None: either."""
    first = await http.get(url)
    if expect_consent is not None:
        assert (first.status_code == 200) is expect_consent, first.text
    if first.status_code == 200:
        assert first.status_code == 200 and "Allow access?" in first.text, first.text
        upstream = await approve(http, w, first.text)
    else:
        upstream = first
    assert upstream.status_code == 302, upstream.text
    callback = await w.provider.log_in(http, upstream.headers["location"], user)
    back = await http.get(callback)
    assert back.status_code == 302, back.text
    return back.headers["location"]


async def tokens_for(
    http: httpx.AsyncClient,
    w: World,
    client_id: str,
    user: Any = ALICE,
    *,
    token_headers: dict[str, str] | None = None,
    **extra: str,
) -> dict[str, Any]:
    """Sign ``user`` in for ``client_id`` and redeem the code (with ``token_headers``, a
    DPoP proof say): the token response."""
    verifier, challenge = pkce()
    back = await sign_in(http, w, authorize_url(w, client_id, challenge, **extra), user)
    code = query_of(back)["code"]
    answer = await http.post(
        w.url("/token"),
        data={
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": REDIRECT,
            "code_verifier": verifier,
            "client_id": client_id,
            "resource": w.mcp_url,
        },
        headers=token_headers,
    )
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


async def call_whoami(http: httpx.AsyncClient, w: World, token: str) -> httpx.Response:
    """A session opened with the token, then ``whoami`` called in it; a refused
    ``initialize`` is the answer."""
    auth = {"authorization": f"Bearer {token}"}
    init = await http.post(w.mcp_url, json=initialize_request(), headers={**POST_HEADERS, **auth})
    if init.status_code != 200:
        return init
    headers = {**POST_HEADERS, **auth, "mcp-session-id": init.headers["mcp-session-id"]}
    headers["mcp-protocol-version"] = "2025-11-25"
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "whoami"}}
    return await http.post(w.mcp_url, json=call, headers={**headers, "accept": "application/json"})


def tool_text(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 200, response.text
    return dict(json.loads(response.json()["result"]["content"][0]["text"]))


def mcpkit_client(
    mcp_url: str, redirect_uri: str, authorize: AuthorizeCallback
) -> tuple[OAuthClientProvider, McpClient]:
    """mcpkit's client over Streamable HTTP (2025-11-25) with its ``OAuthClientProvider``
    installed (registering as "mcpkit" with ``redirect_uri``, ``authorize`` the browser).
    Close the provider after the client."""
    provider = OAuthClientProvider(
        mcp_url,
        client_metadata=OAuthClientMetadata(redirect_uris=[redirect_uri], client_name="mcpkit"),
        authorize=authorize,
    )
    options = HttpClientTransportOptions(
        endpoint=mcp_url, transport_mode=HttpTransportMode.STREAMABLE_HTTP
    )
    provider.install(options)
    client = connect_http(options, protocol_version="2025-11-25", protocol_mode="legacy")
    return provider, client

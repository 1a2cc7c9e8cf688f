"""The "Protect a server with GitHub, Google or your OpenID Connect provider" recipes of
docs/auth.md, each run as written once: the Python block executed with only its public
URLs pointed at stand-ins on 127.0.0.1 (the fake GitHub, a ``DevAuthServer`` as Google
and as the OpenID provider), the proxy it builds served in front of an app, and a user
signed in through it end to end, reaching a tool that sees who they are."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import re
import socket
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from joserfc.jwk import ECKey

import mcpkit.auth
from mcpkit import McpServerApp, McpToolContext, mcp_server, mcp_tool
from mcpkit.auth import DevAuthServer, DevUser
from mcpkit.transports.http import StreamableHttpServerOptions, create_asgi_app
from tests.auth._fake_github import FakeGitHub, GitHubUser
from tests.auth._proxy_world import Provider, World, call_whoami, log_in, register, tokens_for
from tests.http_server import bound_socket, serve_asgi

ROOT = Path(__file__).resolve().parents[2]
PAGE = (ROOT / "docs" / "auth.md").read_text(encoding="utf-8")
PUBLIC = "https://mcp.example.com"


def recipes() -> list[str]:
    """The Python blocks of the recipes section, in order."""
    section = PAGE.split("### Protect a server with GitHub, Google or your OpenID Connect")[1]
    section = section.split("\n### ")[0]
    return re.findall(r"```python\n(.*?)```", section, re.S)


def whoami(ctx: McpToolContext) -> str:
    """Who the tool sees."""
    assert ctx.auth is not None
    return json.dumps({"subject": ctx.auth.subject, "email": ctx.auth.claims.get("email")})


@mcp_server(name="weather")
class Weather:
    """The app of the recipes that serve none of their own."""

    @mcp_tool()
    def whoami(self, ctx: McpToolContext) -> str:
        return whoami(ctx)


@contextlib.asynccontextmanager
async def recipe_served(
    code: str,
    provider_app: StandIn,
    upstream_log_in: Callable[..., Any],
    tmp_path: Path,
    sock: socket.socket,
) -> AsyncIterator[World]:
    """Run ``code`` (its public URL made the one of ``sock``, bound for it) and serve what it
    built beside ``provider_app``."""
    base = url_of(sock)
    key = tmp_path / "proxy-key.pem"
    key.write_bytes(ECKey.generate_key("P-256", private=True).as_pem(private=True))
    namespace: dict[str, Any] = {}
    with contextlib.chdir(tmp_path):
        exec(compile(code.replace(PUBLIC, base), "docs/auth.md", "exec"), namespace)
    proxy = namespace["proxy"]
    if "app" in namespace:  # the recipe's own app, given the tool the test calls
        namespace["app"].tool()(whoami)
    asgi = namespace.get("asgi") or create_asgi_app(
        McpServerApp(Weather), StreamableHttpServerOptions(auth_server=proxy)
    )
    try:
        async with (
            serve_asgi(provider_app.app, sock=provider_app.sock),
            serve_asgi(asgi, sock=sock, lifespan="on"),
        ):
            yield World(None, proxy, base, f"{base}/mcp", Provider(None, None, upstream_log_in))  # type: ignore[arg-type]
    finally:
        await proxy.aclose()
        await proxy.upstream.aclose()


def url_of(sock: socket.socket) -> str:
    return f"http://127.0.0.1:{sock.getsockname()[1]}"


class StandIn:
    """A provider on 127.0.0.1: its ASGI app and the socket bound for it."""

    def __init__(self, app: Any, sock: socket.socket) -> None:
        self.app = app
        self.sock = sock


async def signed_in_as(w: World, user: Any) -> dict[str, Any]:
    async with asyncio.timeout(30), httpx.AsyncClient() as http:
        client = await register(http, w)
        tokens = await tokens_for(http, w, client["client_id"], user)
        answer = await call_whoami(http, w, tokens["access_token"])
    assert answer.status_code == 200, answer.text
    return dict(json.loads(answer.json()["result"]["content"][0]["text"]))


def test_the_section_holds_the_three_recipes() -> None:
    blocks = recipes()
    assert len(blocks) == 3
    assert "GitHubUpstream(" in blocks[0] and "GoogleUpstream(" in blocks[1]
    assert "OidcUpstream(" in blocks[2]


async def test_the_github_recipe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    provider, mcp = bound_socket(), bound_socket()
    provider_base, mcp_base = url_of(provider), url_of(mcp)
    fake = FakeGitHub(provider_base, "Iv1.0123456789abcdef", "...", f"{mcp_base}/oauth/callback")
    octo = GitHubUser(583231, "octocat", "The Octocat", "octo@github.test")
    fake.users = {"octocat": octo}
    # GitHub itself is the stand-in: the recipe's upstream pointed at it, nothing else.
    monkeypatch.setattr(
        mcpkit.auth,
        "GitHubUpstream",
        functools.partial(mcpkit.auth.GitHubUpstream, base_url=provider_base),
    )
    stand_in = StandIn(fake, provider)
    async with recipe_served(recipes()[0], stand_in, fake.log_in, tmp_path, mcp) as w:
        seen = await signed_in_as(w, octo)
    assert seen == {"subject": "583231", "email": "octo@github.test"}


async def test_the_google_recipe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    provider, mcp = bound_socket(), bound_socket()
    provider_base, mcp_base = url_of(provider), url_of(mcp)
    grace = DevUser(
        "grace",
        "cobol",
        email="grace@example.com",
        subject="1099",
        claims={"hd": "example.com", "email_verified": True},
    )
    google = DevAuthServer(provider_base, [grace])
    google.add_client("1234-abc.apps.googleusercontent.com", "...", [f"{mcp_base}/oauth/callback"])
    monkeypatch.setattr(
        mcpkit.auth,
        "GoogleUpstream",
        functools.partial(mcpkit.auth.GoogleUpstream, issuer=provider_base),
    )
    stand_in = StandIn(google, provider)
    async with recipe_served(recipes()[1], stand_in, log_in, tmp_path, mcp) as w:
        seen = await signed_in_as(w, grace)
    assert seen == {"subject": "1099", "email": "grace@example.com"}


async def test_the_openid_connect_recipe(tmp_path: Path) -> None:
    provider, mcp = bound_socket(), bound_socket()
    provider_base, mcp_base = url_of(provider), url_of(mcp)
    ada = DevUser("ada", "engine", email="ada@idp.test")
    idp = DevAuthServer(provider_base, [ada])
    idp.add_client("mcp", "...", [f"{mcp_base}/oauth/callback"])
    code = recipes()[2].replace(
        "https://idp.example.com/.well-known/openid-configuration", idp.discovery_url
    )
    async with recipe_served(code, StandIn(idp, provider), log_in, tmp_path, mcp) as w:
        seen = await signed_in_as(w, ada)
    assert seen == {"subject": "ada", "email": "ada@idp.test"}

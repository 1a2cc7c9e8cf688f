"""Client-side discovery in the spec's order, against small recording servers on
127.0.0.1: protected-resource metadata (challenge URL, path-suffixed, root), authorization
server metadata (RFC 8414 / OpenID, path-inserted and appended), issuer validation, the
resource check, PKCE refusal, and the 2025-03-26 fallbacks."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from mcpkit.auth import OAuthError, build_challenge
from mcpkit.auth.client import (
    OAuthClientMetadata,
    OAuthClientProvider,
    as_metadata_candidates,
    discover_authorization_server,
    discover_protected_resource,
    prm_candidates,
    resource_matches_server,
)
from tests.auth._authserver import AuthServer, AuthServerConfig, Browser
from tests.auth._support import Signer
from tests.http_server import serve_asgi
from tests.raw_asgi import send_json


class Recorder:
    """Answers GETs from a path → JSON table (404 otherwise) and records every path."""

    def __init__(self, routes: dict[str, Any] | None = None) -> None:
        self.routes = routes or {}
        self.paths: list[str] = []

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        self.paths.append(scope["path"])
        doc = self.routes.get(scope["path"])
        if doc is None:
            await send_json(send, 404, {"error": "not_found"})
        else:
            await send_json(send, 200, doc)


def test_candidate_orders():
    assert prm_candidates("https://h.example/public/mcp") == [
        "https://h.example/.well-known/oauth-protected-resource/public/mcp",
        "https://h.example/.well-known/oauth-protected-resource",
    ]
    assert prm_candidates("https://h.example") == [
        "https://h.example/.well-known/oauth-protected-resource"
    ]
    assert as_metadata_candidates("https://auth.example/tenant1") == [
        "https://auth.example/.well-known/oauth-authorization-server/tenant1",
        "https://auth.example/.well-known/openid-configuration/tenant1",
        "https://auth.example/tenant1/.well-known/openid-configuration",
    ]
    assert as_metadata_candidates("https://auth.example") == [
        "https://auth.example/.well-known/oauth-authorization-server",
        "https://auth.example/.well-known/openid-configuration",
    ]


def test_resource_matching():
    assert resource_matches_server("https://h.example/mcp", "https://h.example/mcp")
    assert resource_matches_server("https://h.example", "https://h.example/mcp")
    assert resource_matches_server("HTTPS://H.EXAMPLE:443/", "https://h.example/mcp")
    assert not resource_matches_server("https://evil.example/mcp", "https://h.example/mcp")
    assert not resource_matches_server("https://h.example/mc", "https://h.example/mcp")
    assert not resource_matches_server("https://h.example/other", "https://h.example/mcp")
    assert not resource_matches_server("http://h.example/mcp", "https://h.example/mcp")
    assert not resource_matches_server("https://h.example:8443/mcp", "https://h.example/mcp")


async def test_prm_discovery_order():
    prm = {"resource": "x", "authorization_servers": ["https://as.example"]}
    async with asyncio.timeout(20):
        # From the challenge: that URL only.
        rec = Recorder({"/custom/prm.json": prm})
        async with serve_asgi(rec) as base, httpx.AsyncClient() as http:
            found = await discover_protected_resource(
                http, f"{base}/mcp", f"{base}/custom/prm.json"
            )
            assert found is not None and found.url == f"{base}/custom/prm.json"
            assert rec.paths == ["/custom/prm.json"]
        # No challenge URL: path-suffixed first, then the root.
        rec = Recorder({"/.well-known/oauth-protected-resource": prm})
        async with serve_asgi(rec) as base, httpx.AsyncClient() as http:
            found = await discover_protected_resource(http, f"{base}/mcp", None)
            assert found is not None
            assert rec.paths == [
                "/.well-known/oauth-protected-resource/mcp",
                "/.well-known/oauth-protected-resource",
            ]
        rec = Recorder(
            {
                "/.well-known/oauth-protected-resource/mcp": prm,
                "/.well-known/oauth-protected-resource": prm,
            }
        )
        async with serve_asgi(rec) as base, httpx.AsyncClient() as http:
            await discover_protected_resource(http, f"{base}/mcp", None)
            assert rec.paths == [
                "/.well-known/oauth-protected-resource/mcp"
            ]  # the root is never asked
        # A challenge URL that fails falls back to the well-known ones.
        rec = Recorder({"/.well-known/oauth-protected-resource": prm})
        async with serve_asgi(rec) as base, httpx.AsyncClient() as http:
            found = await discover_protected_resource(http, f"{base}/mcp", f"{base}/gone.json")
            assert found is not None
            assert rec.paths == [
                "/gone.json",
                "/.well-known/oauth-protected-resource/mcp",
                "/.well-known/oauth-protected-resource",
            ]
        # Nothing at all.
        rec = Recorder()
        async with serve_asgi(rec) as base, httpx.AsyncClient() as http:
            assert await discover_protected_resource(http, f"{base}/mcp", None) is None


@pytest.mark.parametrize(
    "issuer_path,served,expected",
    [
        (
            "/tenant1",
            "/tenant1/.well-known/openid-configuration",
            [
                "/.well-known/oauth-authorization-server/tenant1",
                "/.well-known/openid-configuration/tenant1",
                "/tenant1/.well-known/openid-configuration",
            ],
        ),
        (
            "/tenant1",
            "/.well-known/openid-configuration/tenant1",
            [
                "/.well-known/oauth-authorization-server/tenant1",
                "/.well-known/openid-configuration/tenant1",
            ],
        ),
        (
            "",
            "/.well-known/openid-configuration",
            [
                "/.well-known/oauth-authorization-server",
                "/.well-known/openid-configuration",
            ],
        ),
        (
            "",
            "/.well-known/oauth-authorization-server",
            ["/.well-known/oauth-authorization-server"],
        ),
    ],
)
async def test_as_metadata_discovery_order(issuer_path, served, expected):
    rec = Recorder()
    async with asyncio.timeout(20), serve_asgi(rec) as base, httpx.AsyncClient() as http:
        issuer = f"{base}{issuer_path}"
        rec.routes[served] = {
            "issuer": issuer,
            "token_endpoint": f"{issuer}/token",
            "authorization_endpoint": f"{issuer}/authorize",
        }
        found = await discover_authorization_server(http, issuer)
        assert found is not None and found.issuer == issuer
        assert rec.paths == expected


async def test_as_metadata_with_another_issuer_is_refused():
    rec = Recorder()
    async with asyncio.timeout(20), serve_asgi(rec) as base, httpx.AsyncClient() as http:
        rec.routes["/.well-known/oauth-authorization-server"] = {
            "issuer": "https://honest.example",
            "token_endpoint": f"{base}/token",
        }
        with pytest.raises(OAuthError, match="names issuer"):
            await discover_authorization_server(http, base)


def provider_for(url: str, **kwargs: Any) -> OAuthClientProvider:
    kwargs.setdefault(
        "client_metadata", OAuthClientMetadata(redirect_uris=["http://127.0.0.1:9/callback"])
    )
    kwargs.setdefault("authorize", Browser())
    return OAuthClientProvider(url, **kwargs)


async def test_provider_refuses_a_resource_that_is_not_this_server():
    rec = Recorder(
        {
            "/.well-known/oauth-protected-resource/mcp": {
                "resource": "https://evil.example/mcp",
                "authorization_servers": ["https://as.example"],
            }
        }
    )
    async with asyncio.timeout(20), serve_asgi(rec) as base:
        provider = provider_for(f"{base}/mcp")
        with pytest.raises(OAuthError, match="not this server"):
            await provider.handle_challenge("Bearer", 401)
        assert all("as.example" not in p for p in rec.paths)  # never went on to the AS
        await provider.aclose()


async def test_provider_refuses_without_s256():
    signer = Signer()
    auth = AuthServer(signer, AuthServerConfig(code_challenge_methods=["plain"]))
    async with asyncio.timeout(20), serve_asgi(auth) as as_base:
        auth.base = as_base
        rec = Recorder(
            {
                "/.well-known/oauth-protected-resource/mcp": {
                    "resource": "",
                    "authorization_servers": [as_base],
                }
            }
        )
        async with serve_asgi(rec) as base:
            rec.routes["/.well-known/oauth-protected-resource/mcp"]["resource"] = f"{base}/mcp"
            for methods in (["plain"], None):
                auth.config.code_challenge_methods = methods
                provider = provider_for(f"{base}/mcp")
                with pytest.raises(OAuthError, match="S256"):
                    await provider.handle_challenge("Bearer", 401)
                await provider.aclose()
            assert auth.authorize_requests == [] and auth.registrations == []


async def test_2025_03_26_fallbacks_without_resource_metadata():
    """No protected-resource metadata: the MCP server's origin is the authorization server;
    its RFC 8414 metadata when published, else /authorize, /token, /register there."""
    signer = Signer()
    auth = AuthServer(signer, AuthServerConfig(discovery=()))  # no metadata at all
    async with asyncio.timeout(20), serve_asgi(auth) as base:
        auth.base = base
        browser = Browser()
        provider = provider_for(f"{base}/mcp", authorize=browser)
        value = await provider.handle_challenge("Bearer", 401)
        assert value and value.startswith("Bearer ")
        assert browser.visited[0].startswith(f"{base}/authorize?")
        assert ("POST", "/register") in auth.requests and ("POST", "/token") in auth.requests
        assert auth.token_requests[-1]["form"]["resource"] == f"{base}/mcp"
        await provider.aclose()
        # With metadata at the origin, it is used.
        auth.config.discovery = ("oauth",)
        provider = provider_for(f"{base}/mcp")
        assert await provider.handle_challenge(build_challenge("Bearer", []), 401)
        assert ("GET", "/.well-known/oauth-authorization-server") in auth.requests
        await provider.aclose()

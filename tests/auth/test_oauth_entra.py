"""EntraUpstream end to end against a DevAuthServer dressed as Microsoft Entra ID's
``organizations`` authority: its discovery document names the issuer as Entra's
multi-tenant documents do (``{authority}/{tenantid}/v2.0``), while each ID token names the
user's own tenant (``iss`` and ``tid``), so the issuer is checked as Microsoft documents."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

from mcpkit.auth import DevAuthServer, DevUser, EntraUpstream
from mcpkit.auth._proxy._http import send_json
from tests.auth._proxy_world import (
    Provider,
    authorize_url,
    call_whoami,
    log_in,
    pkce,
    query_of,
    register,
    sign_in,
    tokens_for,
    tool_text,
    world,
)

TENANT = "4c5e8f1a-0b2d-4e6f-9a8b-1c2d3e4f5a6b"
OTHER_TENANT = "9e8d7c6b-5a49-4837-8261-5f4e3d2c1b0a"
ADA = DevUser(
    "ada",
    "engine",
    name="Ada Lovelace",
    subject="pairwise-sub-of-ada",
    claims={
        "oid": "00000000-0000-0000-66f3-3332eca7ea81",
        "tid": TENANT,
        "preferred_username": "ada@contoso.test",
        "ver": "2.0",
    },
)
#: A token whose ``tid`` names another tenant than its ``iss``: refused.
MALLORY = DevUser(
    "mallory",
    "forged",
    name="Mallory",
    claims={"oid": "11111111-2222-3333-4444-555555555555", "tid": OTHER_TENANT},
)


class EntraStandIn:
    """``/organizations/v2.0/.well-known/openid-configuration`` with the templated issuer;
    ``/{TENANT}/v2.0/...`` served by the DevAuthServer (whose issuer is the tenant's)."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.prefix = f"/{TENANT}/v2.0"
        self.dev = DevAuthServer(f"{base}{self.prefix}", [ADA, MALLORY])
        self.paths: list[str] = []

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            self.paths.append(scope["path"])
        if scope["type"] == "http" and scope["path"] == (
            "/organizations/v2.0/.well-known/openid-configuration"
        ):
            doc = {**self.dev.metadata(), "issuer": f"{self.base}/{{tenantid}}/v2.0"}
            await send_json(send, 200, doc)
            return
        if scope["type"] == "http" and scope["path"].startswith(self.prefix + "/"):
            scope = {**scope, "path": scope["path"][len(self.prefix) :]}
        await self.dev(scope, receive, send)


def entra(**options: Any) -> Any:
    def make(provider_base: str, proxy_base: str) -> Provider:
        stand_in = EntraStandIn(provider_base)
        stand_in.dev.add_client("app-id", "app-secret", [f"{proxy_base}/oauth/callback"])
        upstream = EntraUpstream(
            "app-id", "app-secret", tenant="organizations", authority=provider_base, **options
        )
        return Provider(stand_in, upstream, log_in)

    return make


async def test_a_work_account_reaches_the_tool_as_its_object_id_in_its_tenant() -> None:
    async with asyncio.timeout(30), world(entra()) as w, httpx.AsyncClient() as http:
        client = await register(http, w)
        tokens = await tokens_for(http, w, client["client_id"], ADA)
        seen = tool_text(await call_whoami(http, w, tokens["access_token"]))
        assert seen["subject"] == f"00000000-0000-0000-66f3-3332eca7ea81.{TENANT}"
        assert seen["email"] == "ada@contoso.test"  # preferred_username: no email claim
        assert seen["name"] == "Ada Lovelace" and seen["upstream"] == "entra"
        # Entra's ID token says all it will: userinfo is not read.
        assert f"/{TENANT}/v2.0/token" in w.dev.paths
        assert f"/{TENANT}/v2.0/userinfo" not in w.dev.paths


async def test_a_token_whose_tid_is_not_its_issuers_tenant_is_refused() -> None:
    async with asyncio.timeout(30), world(entra()) as w, httpx.AsyncClient() as http:
        client = await register(http, w)
        _, challenge = pkce()
        back = await sign_in(http, w, authorize_url(w, client["client_id"], challenge), MALLORY)
        query = query_of(back)
        assert query["error"] == "access_denied" and "another issuer" in query["error_description"]


async def test_allowed_tenants_keep_other_tenants_out() -> None:
    provider = entra(allowed_tenants=[OTHER_TENANT])
    async with asyncio.timeout(30), world(provider) as w, httpx.AsyncClient() as http:
        client = await register(http, w)
        _, challenge = pkce()
        back = await sign_in(http, w, authorize_url(w, client["client_id"], challenge), ADA)
        assert query_of(back)["error"] == "access_denied"

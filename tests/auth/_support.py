"""Shared pieces of the auth tests: signing keys, tokens, a JWKS server, a clock, and the
server the gate protects."""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

import httpx
from joserfc import jwt
from joserfc.jwk import ECKey, KeySet, RSAKey

from mcpkit import McpToolContext, mcp_server, mcp_tool
from mcpkit.auth import current_auth
from mcpkit.server import use_guards
from tests.raw_asgi import send_json, send_response

ISSUER = "https://as.example.test"


class Signer:
    """An authorization server's signing key set (one RSA, one EC key) and token minting."""

    def __init__(self) -> None:
        self.rsa = RSAKey.generate_key(2048, parameters={"kid": f"rsa-{uuid.uuid4().hex[:8]}"})
        self.ec = ECKey.generate_key("P-256", parameters={"kid": f"ec-{uuid.uuid4().hex[:8]}"})

    def jwks(self) -> dict[str, Any]:
        return KeySet([self.rsa, self.ec]).as_dict(private=False)

    def token(
        self,
        *,
        audience: str | list[str] | None,
        scope: str | None = "mcp:read",
        subject: str = "alice",
        issuer: str = ISSUER,
        lifetime: int = 300,
        key: str = "ec",
        jkt: str | None = None,
        now: float | None = None,
        **extra: Any,
    ) -> str:
        now = time.time() if now is None else now
        claims: dict[str, Any] = {
            "iss": issuer,
            "sub": subject,
            "iat": int(now),
            "exp": int(now + lifetime),
            "client_id": "client-1",
            "jti": uuid.uuid4().hex,
        }
        if audience is not None:
            claims["aud"] = audience
        if scope is not None:
            claims["scope"] = scope
        if jkt is not None:
            claims["cnf"] = {"jkt": jkt}
        claims.update(extra)
        k = self.ec if key == "ec" else self.rsa
        alg = "ES256" if key == "ec" else "RS256"
        return jwt.encode({"alg": alg, "kid": k.kid, "typ": "at+jwt"}, claims, k)


class FakeClock:
    def __init__(self, start: float | None = None) -> None:
        self.now = float(int(time.time())) if start is None else start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


class JwksApp:
    """Serves a JWKS at ``/jwks.json`` and counts the fetches."""

    def __init__(self, jwks: dict[str, Any]) -> None:
        self.jwks = jwks
        self.fetches = 0

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        if scope["path"] != "/jwks.json":
            await send_response(send, 404)
            return
        self.fetches += 1
        await send_json(send, 200, self.jwks)


async def announced_endpoint(stream: httpx.Response) -> str:
    """The message endpoint a legacy SSE stream announces in its first data line ("" when
    the stream ends before one)."""
    async for line in stream.aiter_lines():
        if line.startswith("data:"):
            return line[5:].strip()
    return ""


def writers_only(ctx: Any) -> bool:
    auth = current_auth()
    return auth is not None and "mcp:write" in auth.scopes


@mcp_server(name="auth-test")
class AuthTest:
    """What the protected server offers: ``whoami`` reports the identity the gate let in,
    ``write`` is guarded by the ``mcp:write`` scope."""

    @mcp_tool()
    def whoami(self, ctx: McpToolContext) -> str:
        auth = current_auth()
        bound = ctx.binding.auth
        return json.dumps(
            {
                "subject": auth.subject if auth else None,
                "scopes": list(auth.scopes) if auth else None,
                "client_id": auth.client_id if auth else None,
                "binding_subject": bound.subject if bound else None,
            }
        )

    @mcp_tool()
    @use_guards(writers_only)
    def write(self) -> str:
        return "written"

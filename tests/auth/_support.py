"""Shared pieces of the auth tests: signing keys, tokens, a JWKS server, a clock."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import uuid
from typing import Any, AsyncIterator, Awaitable, Callable

import uvicorn
from joserfc import jwt
from joserfc.jwk import ECKey, KeySet, RSAKey

from tests.http_server import free_port

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


Asgi = Callable[[dict[str, Any], Any, Any], Awaitable[None]]


@contextlib.asynccontextmanager
async def serve_asgi(app: Asgi) -> AsyncIterator[str]:
    """Serve a plain ASGI app on 127.0.0.1; yields its base URL (no trailing slash)."""
    port = free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    try:
        async with asyncio.timeout(10):
            while not server.started:
                await asyncio.sleep(0.01)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        async with asyncio.timeout(10):
            await asyncio.gather(task, return_exceptions=True)


class JwksApp:
    """Serves a JWKS at ``/jwks.json`` and counts the fetches."""

    def __init__(self, jwks: dict[str, Any]) -> None:
        self.jwks = jwks
        self.fetches = 0

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        if scope["path"] != "/jwks.json":
            await send({"type": "http.response.start", "status": 404, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        self.fetches += 1
        body = json.dumps(self.jwks).encode()
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": body})

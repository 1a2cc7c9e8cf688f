"""The host application's own authentication in front of a mounted MCP app.

A FastAPI, Starlette or Lauren application that already knows how to check its users
(API keys, session cookies, its own tokens) wraps the mounted MCP app in ``HostAuth``: the
check runs before any MCP request, a refusal is a 401 from the host, and the identity it
returns reaches tools as ``ctx.auth`` and guards as ``ctx.auth``, exactly as one verified
by ``BearerAuthConfig`` does (sessions are bound to it too).
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from typing import Any

from mcpkit.auth._types import CURRENT_AUTH, SCOPE_KEY, AuthInfo

#: The host's check: the request's headers (names in lower case) to the caller's identity,
#: or None to refuse the request. Sync or async.
HostVerifier = Callable[[Mapping[str, str]], Awaitable[AuthInfo | None] | AuthInfo | None]

# The ASGI shapes as Starlette and FastAPI type them, so that ``Mount("/tools",
# app=HostAuth(...))`` type-checks; the wrapped app may be typed any way.
Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
Asgi = Callable[..., Awaitable[None]]

#: The WebSocket close code for a refused upgrade where no HTTP answer can be sent.
POLICY_VIOLATION = 1008


class HostAuth:
    """ASGI middleware running the host's check in front of an ASGI app (an ``McpAsgiApp``).

    ``verify`` gets the request headers (lower-case names; the first of repeated ones) and
    returns an ``AuthInfo`` to let the request through as that identity, or None to answer
    401 with a JSON body ``{"error": "unauthorized"}`` (and ``WWW-Authenticate:
    www_authenticate`` unless it is None). HTTP requests and WebSocket upgrades are both
    checked; a refused upgrade gets the 401 where the server supports the WebSocket denial
    response extension, else a close with code 1008. CORS preflights (``OPTIONS``) and
    lifespan events pass unchecked, so ``lifespan=mcp.lifespan`` keeps working.
    """

    def __init__(
        self, app: Asgi, verify: HostVerifier, *, www_authenticate: str | None = "Bearer"
    ) -> None:
        self.app = app
        self.verify = verify
        self.www_authenticate = www_authenticate

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind not in ("http", "websocket") or (kind == "http" and scope["method"] == "OPTIONS"):
            await self.app(scope, receive, send)
            return
        identity = await self._identity(scope)
        if identity is None:
            if kind == "websocket":
                await receive()  # the upgrade's websocket.connect comes before any answer
            await self._refuse(scope, send)
            return
        scope = dict(scope)
        scope[SCOPE_KEY] = identity
        token = CURRENT_AUTH.set(identity)
        try:
            await self.app(scope, receive, send)
        finally:
            CURRENT_AUTH.reset(token)

    async def _identity(self, scope: Scope) -> AuthInfo | None:
        headers: dict[str, str] = {}
        for name, value in scope.get("headers") or ():
            headers.setdefault(name.decode("latin-1").lower(), value.decode("latin-1"))
        outcome = self.verify(headers)
        if inspect.isawaitable(outcome):
            outcome = await outcome
        if outcome is not None and not isinstance(outcome, AuthInfo):
            raise TypeError(
                f"HostAuth's verify must return an AuthInfo or None, not {type(outcome).__name__}"
            )
        return outcome

    async def _refuse(self, scope: Scope, send: Send) -> None:
        body = json.dumps({"error": "unauthorized"}).encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
        if self.www_authenticate is not None:
            headers.append((b"www-authenticate", self.www_authenticate.encode("latin-1")))
        if scope["type"] == "http":
            await send({"type": "http.response.start", "status": 401, "headers": headers})
            await send({"type": "http.response.body", "body": body})
        elif "websocket.http.response" in (scope.get("extensions") or {}):
            await send({"type": "websocket.http.response.start", "status": 401, "headers": headers})
            await send({"type": "websocket.http.response.body", "body": body})
        else:
            await send({"type": "websocket.close", "code": POLICY_VIOLATION})


__all__ = ["HostAuth", "HostVerifier"]

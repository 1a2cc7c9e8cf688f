"""The three framework recipes of docs/frameworks.md, as the tests serve them: FastAPI,
Starlette and Lauren, each mounting one mcpkit app at ``/tools`` behind the host's own
API-key check (``HostAuth``), with the MCP app's lifespan run by the host's."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Annotated, Any

from fastapi import Depends, FastAPI, HTTPException, Request
from lauren import Header, HeaderField, Lauren
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Mount, Route

from mcpkit import (
    McpExecutionContext,
    McpServerApp,
    McpToolContext,
    mcp_lifespan,
    mcp_server,
    mcp_tool,
    use_guards,
)
from mcpkit.auth import AuthInfo, HostAuth
from mcpkit.transports.http import McpAsgiApp, create_asgi_app

#: The host's users, by API key: (name, scopes).
USERS: dict[str, tuple[str, tuple[str, ...]]] = {
    "key-ada": ("ada", ("tools", "admin")),
    "key-bob": ("bob", ("tools",)),
}


def identify(headers: Mapping[str, str]) -> AuthInfo | None:
    """The host's check: an ``x-api-key`` header naming a known user."""
    key = headers.get("x-api-key", "")
    if key not in USERS:
        return None
    name, scopes = USERS[key]
    return AuthInfo(subject=name, scopes=scopes, token=key)


def admins_only(ctx: McpExecutionContext) -> bool:
    """A guard on the identity the host verified."""
    return ctx.auth is not None and ctx.auth.has_scopes("admin")


@mcp_server(name="hosted", version="1.0.0")
class Hosted:
    """A server whose lifespan opens a (pretend) connection that a tool reads."""

    def __init__(self) -> None:
        self.phase = "never started"

    @mcp_lifespan
    async def life(self) -> AsyncIterator[dict[str, str]]:
        self.phase = "running"
        yield {"db": "connected"}
        self.phase = "stopped"

    @mcp_tool()
    async def whoami(self, ctx: McpToolContext) -> str:
        """The caller, as the host identified them."""
        assert ctx.auth is not None
        return f"{ctx.auth.subject} {ctx.lifespan_context['db']}"

    @use_guards(admins_only)
    @mcp_tool()
    async def purge(self) -> str:
        """Admins only."""
        return "purged"


def mcp_app() -> McpAsgiApp:
    return create_asgi_app(McpServerApp(Hosted))


def user(request: Request) -> AuthInfo:
    """The same check as a FastAPI dependency, for the host's own routes."""
    identity = identify(request.headers)
    if identity is None:
        raise HTTPException(401, "unauthorized")
    return identity


def fastapi_host(mcp: McpAsgiApp) -> Any:
    """FastAPI: the same check as a dependency on the host's routes, and ``HostAuth`` on the
    mount (dependencies do not reach mounted apps)."""

    api = FastAPI(lifespan=mcp.lifespan)

    @api.get("/me")
    def me(identity: Annotated[AuthInfo, Depends(user)]) -> dict[str, Any]:
        return {"user": identity.subject}

    api.mount("/tools", HostAuth(mcp, identify))
    return api


def starlette_host(mcp: McpAsgiApp) -> Any:
    """Starlette: its own lifespan around ``mcp.running()``."""

    async def me(request: Request) -> JSONResponse:
        identity = identify(request.headers)
        if identity is None:
            return JSONResponse({"error": "unauthorized"}, status_code=401)
        return JSONResponse({"user": identity.subject})

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with mcp.running():
            yield

    return Starlette(
        routes=[Route("/me", me), Mount("/tools", app=HostAuth(mcp, identify))],
        lifespan=lifespan,
    )


def lauren_host(mcp: McpAsgiApp) -> Any:
    """Lauren: ``mount`` for the app, ``on_startup``/``on_shutdown`` for its lifespan
    (Lauren does not pass lifespan events to mounted apps either)."""
    app = Lauren(title="host", docs_url=None, redoc_url=None, openapi_url=None)

    @app.get("/me")
    async def me(x_api_key: Header[str] = HeaderField(default="")) -> tuple[dict[str, Any], int]:  # noqa: B008
        identity = identify({"x-api-key": x_api_key})
        if identity is None:
            return {"error": "unauthorized"}, 401
        return {"user": identity.subject}, 200

    app.on_startup(mcp.startup)
    app.on_shutdown(mcp.shutdown)
    app.mount("/tools", HostAuth(mcp, identify))
    return app


HOSTS: dict[str, Callable[[McpAsgiApp], Any]] = {
    "fastapi": fastapi_host,
    "starlette": starlette_host,
    "lauren": lauren_host,
}

"""The ASGI application: routes the MCP endpoint (Streamable HTTP), the legacy SSE
endpoints and the WebSocket endpoint, runs the app's lifespan, and refuses what the
DNS-rebinding guard refuses before anything else runs.

With ``options.bearer_auth`` set, every request to an MCP endpoint then passes the auth
gate (``mcpkit.auth``) before its handler runs, and the protected-resource metadata is
served, without auth, at its well-known paths. The accepted identity travels in
``scope["mcp.auth"]`` and the ``CURRENT_AUTH`` context variable."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from mcpkit._runtime import freeze_startup_objects
from mcpkit.transports.http._asgi import Receive, Send, header_map, send_text
from mcpkit.transports.http._options import StreamableHttpServerOptions
from mcpkit.transports.http._security import TransportSecurityGuard
from mcpkit.transports.http._streamable import StreamableHttpHandler

if TYPE_CHECKING:
    from mcpkit.server._app import McpServerApp

logger = logging.getLogger("mcpkit.http")


class McpAsgiApp:
    """``McpAsgiApp(app, options)`` is a plain ASGI callable: mount it anywhere."""

    def __init__(
        self, app: McpServerApp, options: StreamableHttpServerOptions | None = None
    ) -> None:
        self.app = app
        self.options = options or StreamableHttpServerOptions()
        if self.options.server_name:
            app.name = self.options.server_name
        if self.options.server_version:
            app.version = self.options.server_version
        self.guard = TransportSecurityGuard(self.options.transport_security, self.options.host)
        self.streamable = StreamableHttpHandler(app, self.options)
        base = self.options.base_path
        self.endpoint = base or "/"
        self.routes: dict[str, Any] = {self.endpoint: self.streamable}
        if self.options.enable_legacy_sse:
            from mcpkit.transports.http._legacy_sse import LegacySseHandler

            legacy = LegacySseHandler(app, self.options, self.streamable.cluster)
            self.routes[f"{base}/sse"] = legacy.get
            self.routes[f"{base}/messages"] = legacy.post
        self.websocket_path = f"{base}/ws"
        self.auth: Any = None
        if self.options.bearer_auth is not None:
            from mcpkit.auth._server import BearerAuthGate

            self.auth = BearerAuthGate(self.options.bearer_auth, base)
            #: Routes served without auth: the metadata document.
            self.public_routes = {path: self.auth.serve_metadata for path in self.auth.metadata_paths}

    async def __call__(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind != "http":
            if kind == "websocket":
                await self._websocket(scope, receive, send)
            elif kind == "lifespan":
                await self._lifespan(receive, send)
            return
        # An HTTP request is routed here rather than one coroutine further: it is every request.
        path = scope["path"]
        if len(path) > 1 and path.endswith("/"):
            path = path[:-1]
        handler = self.routes.get(path)
        auth = self.auth
        if handler is None and auth is not None:
            handler = self.public_routes.get(path)
            auth = None
        if handler is None:
            await send_text(send, 404, "Not Found")
            return
        headers = header_map(scope)
        refusal = self.guard.check(scope["method"], headers)
        if refusal is not None:
            await send_text(send, refusal[0], refusal[1])
            return
        if auth is None or scope["method"] == "OPTIONS":
            await handler(scope, receive, send, headers)
            return
        outcome = await auth.authenticate(scope, headers)
        if not hasattr(outcome, "auth"):
            await auth.send_denial(send, outcome)
            return
        await self._run_authenticated(handler, outcome, scope, receive, send, headers)

    @staticmethod
    async def _run_authenticated(handler: Any, outcome: Any, scope: dict[str, Any], receive: Receive, send: Send, headers: dict[str, str]) -> None:
        from mcpkit.auth._server import with_extra_headers
        from mcpkit.auth._types import CURRENT_AUTH, SCOPE_KEY

        scope[SCOPE_KEY] = outcome.auth
        token = CURRENT_AUTH.set(outcome.auth)
        try:
            await handler(scope, receive, with_extra_headers(send, outcome.response_headers), headers)
        finally:
            CURRENT_AUTH.reset(token)

    async def _websocket(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        if not self.options.enable_websocket or scope["path"].rstrip("/") != self.websocket_path:
            await send({"type": "websocket.close", "code": 1008})
            return
        headers = header_map(scope)
        refusal = self.guard.check("GET", headers)
        if refusal is not None:
            await send({"type": "websocket.close", "code": 1008, "reason": refusal[1]})
            return
        from mcpkit.transports.http._websocket import serve_websocket

        if self.auth is None:
            await serve_websocket(self.app, scope, receive, send, headers, self.options)
            return
        # The upgrade is authorized like any request; a refusal is a real HTTP answer
        # (401/403 with its challenge) where the server can send one, else close 1008.
        first = await receive()
        if first["type"] != "websocket.connect":
            return
        outcome = await self.auth.authenticate(scope, headers)
        if not hasattr(outcome, "auth"):
            if "websocket.http.response" in (scope.get("extensions") or {}):
                await self.auth.send_denial(send, outcome, websocket=True)
            else:
                await send({"type": "websocket.close", "code": 1008, "reason": outcome.error or "unauthorized"})
            return
        replayed = False

        async def replay() -> dict[str, Any]:
            nonlocal replayed
            if not replayed:
                replayed = True
                return first
            return await receive()

        from mcpkit.auth._types import CURRENT_AUTH, SCOPE_KEY

        scope[SCOPE_KEY] = outcome.auth
        token = CURRENT_AUTH.set(outcome.auth)
        try:
            await serve_websocket(self.app, scope, replay, send, headers, self.options)
        finally:
            CURRENT_AUTH.reset(token)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    await self.app.start()
                except Exception as exc:
                    logger.exception("startup failed")
                    await send({"type": "lifespan.startup.failed", "message": str(exc)})
                    return
                if self.options.freeze_gc_at_startup:
                    freeze_startup_objects()
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                self.streamable.close()
                await self.app.stop()
                await send({"type": "lifespan.shutdown.complete"})
                return


def create_asgi_app(app: McpServerApp, options: StreamableHttpServerOptions | None = None) -> McpAsgiApp:
    """The ASGI app serving ``app`` over Streamable HTTP (and legacy SSE / WebSocket)."""
    return McpAsgiApp(app, options)


def serve_http(app: McpServerApp, options: StreamableHttpServerOptions | None = None, **uvicorn_options: Any) -> None:
    """Serve ``app`` with uvicorn (the ``mcpkit[http]`` extra) until interrupted."""
    try:
        import uvicorn
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("serving HTTP needs uvicorn: pip install 'mcpkit[http]'") from exc
    options = options or StreamableHttpServerOptions()
    config = {"host": options.host or "0.0.0.0", "port": options.port, "log_level": "warning", "lifespan": "on"}
    config.update(uvicorn_options)
    uvicorn.run(McpAsgiApp(app, options), **config)

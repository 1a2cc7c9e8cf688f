"""The ASGI application: routes the MCP endpoint (Streamable HTTP), the legacy SSE
endpoints and the WebSocket endpoint, runs the app's lifespan, and refuses what the
DNS-rebinding guard refuses before anything else runs.

Every endpoint is an ASGI app of its own (``StreamableHttpHandler``, the legacy SSE
handler's ``get`` and ``post``), and so is each layer around it: connection guards
(``ConnectionGate.wrap``) and, with ``options.bearer_auth`` set, the auth layer
(``BearerAuthLayer``), which every request to an MCP endpoint passes before its endpoint
runs. The protected-resource metadata is served, without auth, at its well-known paths,
and so are the endpoints of an authorization server served beside the MCP endpoint
(``options.auth_server``, an ``OAuthProxy``), which then also gates it.
The accepted identity travels in ``scope["mcp.auth"]`` and the ``CURRENT_AUTH`` context
variable; the transports put it on each call's binding.

Mounted under a prefix (``Mount("/tools", app)`` in Starlette, ``api.mount`` in FastAPI)
the app routes on the path relative to it: ``path`` minus ``root_path`` when ``path``
starts with it (the ASGI spec's form, which Starlette uses), else ``path`` as given (hosts
that strip the prefix). The URLs it hands out (the legacy SSE ``endpoint`` event, the
protected-resource metadata) carry the prefix.

Start-up: the app's ``@mcp_lifespan`` halves run on the ASGI ``lifespan`` events, or, where
the host does not forward them (a mount), through ``lifespan=mcp.lifespan`` or
``async with mcp.running():`` in the host's own lifespan. An app with no ``@mcp_lifespan``
that nobody started is started by its first request. One that has lifespans and was not
started refuses requests (500, a JSON-RPC error naming the fix) rather than serve without
what its lifespans set up."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import math
import signal
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from mcpkit._codes import ErrorCode
from mcpkit._exceptions import MCPError
from mcpkit.protocol._jsonrpc import error_response
from mcpkit.server._engine.engine import engine_of
from mcpkit.server._engine.shutdown import shutting_down_error
from mcpkit.server._engine.unexpected import internal_error
from mcpkit.transports._starting import StartupAbandoned, start_unless_stopped
from mcpkit.transports.http._asgi import (
    BodyTimeout,
    Receive,
    Send,
    error_body,
    header_map,
    send_json,
    send_text,
)
from mcpkit.transports.http._connection_guards import ConnectionGate
from mcpkit.transports.http._endpoint import HEADERS_SCOPE_KEY, AsgiApp
from mcpkit.transports.http._options import StreamableHttpServerOptions
from mcpkit.transports.http._security import TransportSecurityGuard
from mcpkit.transports.http._streamable.handler import StreamableHttpHandler

if TYPE_CHECKING:
    from mcpkit.server._engine.engine import McpEngine, ServesAnEngine

#: The signals ``mcpkit run`` shuts down on, gracefully (a second one ends the grace).
_EXIT_SIGNALS = (signal.SIGINT, signal.SIGTERM)

logger = logging.getLogger("mcpkit.http")

NOT_STARTED = (
    "the MCP app's lifespan has not run: pass lifespan=mcp.lifespan to your FastAPI/Starlette "
    "app, or use `async with mcp.running()`"
)
SHUT_DOWN = "the MCP app has shut down"


def relative_path(path: str, root: str) -> str:
    """``path`` relative to an app mounted at ``root``: without the prefix when ``path``
    starts with it (at a segment boundary), else unchanged (the host stripped it)."""
    root = root.rstrip("/")
    if root and path.startswith(root) and (len(path) == len(root) or path[len(root)] == "/"):
        return path[len(root) :] or "/"
    return path


class McpAsgiApp:
    """``McpAsgiApp(app, options)`` is a plain ASGI callable: mount it anywhere. ``app``:
    an ``McpServerApp``, or an ``McpEngine`` of one's own."""

    def __init__(
        self, app: McpEngine | ServesAnEngine, options: StreamableHttpServerOptions | None = None
    ) -> None:
        #: What was given to serve (an app, or an engine).
        self.app = app
        self.engine = engine = engine_of(app)
        options = options or StreamableHttpServerOptions()
        #: An authorization server's endpoints (``options.auth_server``), served as they are.
        self.auth_server_routes: dict[str, AsgiApp] = {}
        if options.auth_server is not None:
            self.auth_server_routes = dict(options.auth_server.endpoints())
            if options.bearer_auth is None:
                options = dataclasses.replace(
                    options, bearer_auth=options.auth_server.bearer_auth()
                )
        self.options = options
        if self.options.server_name:
            engine.announced_name = self.options.server_name
        if self.options.server_version:
            engine.announced_version = self.options.server_version
        self.guard = TransportSecurityGuard(self.options.transport_security, self.options.host)
        self.streamable = StreamableHttpHandler(engine, self.options)
        base = self.options.base_path
        self.endpoint = base or "/"
        #: Path -> the ASGI app serving it (the endpoint inside its layers).
        self.routes: dict[str, AsgiApp] = {self.endpoint: self.streamable}
        self.legacy: Any = None
        if self.options.enable_legacy_sse:
            from mcpkit.transports.http._legacy_sse import LegacySseHandler

            legacy = self.legacy = LegacySseHandler(
                engine,
                self.options,
                self.streamable.cluster,
                session_table=self.streamable.sessions,  # one max_sessions for every kind
            )
            self.routes[f"{base}/sse"] = legacy.get
            self.routes[f"{base}/messages"] = legacy.post
        self.websocket_path = f"{base}/ws"
        #: Connection guards (``_connection_guards``); None: no route is wrapped.
        self.connection_gate = ConnectionGate.for_engine(engine, self.options)
        if self.connection_gate is not None:
            gate = self.connection_gate
            self.routes = {path: gate.wrap(handler) for path, handler in self.routes.items()}
        self.auth: Any = None
        #: Routes served without auth: the metadata document.
        self.public_routes: dict[str, AsgiApp] = {}
        if self.options.bearer_auth is not None:
            from mcpkit.transports.http._auth_layer import (
                BearerAuthLayer,
                MetadataEndpoint,
                auth_gate,
            )

            self.auth = auth = auth_gate(self.options, base)
            self.routes = {
                path: BearerAuthLayer(route, auth) for path, route in self.routes.items()
            }
            metadata = MetadataEndpoint(auth)
            self.public_routes = dict.fromkeys(auth.metadata_paths, metadata)
        #: Set once the engine is known to be started: the one check every request makes.
        self._ready = False
        self._stopped = False
        self._refusal_logged = False
        self._startup_abandoned = asyncio.Event()

    async def __call__(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind != "http":
            if kind == "websocket":
                try:
                    await self._websocket(scope, receive, send)
                except Exception as exc:  # the safety net, as for HTTP: logged, closed 1011
                    internal_error(
                        exc,
                        "WebSocket connection",
                        expose=self.engine.dispatcher.expose_internal_errors,
                        logger=logger,
                    )
                    with contextlib.suppress(Exception):
                        await send({"type": "websocket.close", "code": 1011})
            elif kind == "lifespan":
                await self._lifespan(receive, send)
            return
        # An HTTP request is routed here rather than one coroutine further: it is every request.
        path = scope["path"]
        root = scope.get("root_path")
        if root:  # mounted under a prefix
            path = relative_path(path, root)
        if len(path) > 1 and path.endswith("/"):
            path = path[:-1]
        handler = self.routes.get(path)
        if handler is None:
            handler = self.public_routes.get(path)
            if handler is None and path in self.auth_server_routes:
                # The authorization server's own endpoints: form posts, browser pages and
                # cross-origin calls, each checked by the endpoint itself.
                try:
                    await self.auth_server_routes[path](scope, receive, send)
                except Exception as exc:  # the safety net
                    await self._failed(send, exc)
                return
            if handler is None:
                # A wrong path is the usual mistake of a first mount (/mcp/mcp): say the right one.
                await send_text(
                    send, 404, f"Not Found: the MCP endpoint is {root or ''}{self.endpoint}"
                )
                return
        headers = scope[HEADERS_SCOPE_KEY] = header_map(scope)  # made once, read down the chain
        method = scope["method"]
        refusal = self.guard.check(method, headers, scope["headers"])
        if refusal is not None:  # 400, 415, 421, 403: a JSON-RPC error without id, as all refusals
            await send_json(send, refusal[0], error_body(ErrorCode.INVALID_REQUEST, refusal[1]))
            return
        if not self._ready and not await self._ensure_started(send):
            return
        streamable = self.streamable
        try:
            if handler is streamable and method == "POST" and streamable.cluster.started:
                # What the endpoint's own __call__ would do, one coroutine fewer (nothing
                # wraps it, and the headers are made).
                await streamable.post(scope, receive, send, headers)
            else:
                await handler(scope, receive, send)
        except BodyTimeout:  # raised before any answer: the body never came in full
            await self._body_timeout(send)
        except Exception as exc:  # the safety net: a bug, or a store failing unforeseen
            await self._failed(send, exc)

    async def _failed(self, send: Send, exc: Exception) -> None:
        """An exception no handler caught: logged once (with its traceback and an error id),
        answered 500 with a -32603 JSON-RPC body when no answer had started, else the
        answer under way (an SSE stream) is ended. Never a bare 500 from the server."""
        error = internal_error(
            exc, "HTTP request", expose=self.engine.dispatcher.expose_internal_errors, logger=logger
        )
        try:
            await send_json(send, 500, error_response(None, error))
        except Exception:  # an answer had started (the server refuses a second start)
            with contextlib.suppress(Exception):
                await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _body_timeout(self, send: Send) -> None:
        """408 for a POST whose body took longer than ``body_read_timeout``; the
        connection closes (the rest of that body would otherwise be read as a request)."""
        message = f"Request body not received within {self.options.body_read_timeout} s"
        await send_json(
            send,
            408,
            error_body(ErrorCode.INVALID_REQUEST, message),
            [(b"connection", b"close")],
        )

    async def _websocket(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        path = scope["path"]
        root = scope.get("root_path")
        if root:
            path = relative_path(path, root)
        if not self.options.enable_websocket or path.rstrip("/") != self.websocket_path:
            await send({"type": "websocket.close", "code": 1008})
            return
        headers = header_map(scope)
        refusal = self.guard.check("GET", headers, scope["headers"])
        if refusal is not None:
            await send({"type": "websocket.close", "code": 1008, "reason": refusal[1]})
            return
        if not self._ready and not await self._ensure_started(None):
            await self._refuse_websocket(scope, receive, send)
            return
        from mcpkit.transports.http._websocket import serve_websocket

        if self.auth is None:
            await serve_websocket(
                self.engine,
                scope,
                receive,
                send,
                headers,
                self.options,
                self.connection_gate,
                self.streamable.sessions,
            )
            return
        # The upgrade is authorized like any request; a refusal is a real HTTP answer
        # (401/403 with its challenge) where the server can send one, else close 1008.
        first = await receive()
        if first["type"] != "websocket.connect":
            return
        from mcpkit.auth._server import Denial

        outcome = await self.auth.authenticate(scope, headers)
        if isinstance(outcome, Denial):
            if "websocket.http.response" in (scope.get("extensions") or {}):
                await self.auth.send_denial(send, outcome, websocket=True)
            else:
                await send(
                    {
                        "type": "websocket.close",
                        "code": 1008,
                        "reason": outcome.error or "unauthorized",
                    }
                )
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
            await serve_websocket(
                self.engine,
                scope,
                replay,
                send,
                headers,
                self.options,
                self.connection_gate,
                self.streamable.sessions,
            )
        finally:
            CURRENT_AUTH.reset(token)

    # life -------------------------------------------------------------------------------

    async def startup(self) -> None:
        """Start the app: its lifespans' start-up halves. What the ASGI ``lifespan.startup``
        event does; nothing of the process is changed (its collector, signal handlers and
        uvicorn's protocol stay the host's). ``abandon_startup()`` stops it at once
        (``StartupAbandoned``)."""
        await start_unless_stopped(self.engine, self._startup_abandoned)
        if self.guard.unchecked_host_warning is not None:
            logger.warning(self.guard.unchecked_host_warning)
        self._stopped = False
        self._ready = True

    def abandon_startup(self) -> None:
        """Stop a start-up in progress (what it started stops again): what a signal does
        to a server still starting, whose app may wait long (a proxy's silent backend)."""
        self._startup_abandoned.set()

    @property
    def startup_abandoned(self) -> bool:
        """True once ``abandon_startup()`` was called."""
        return self._startup_abandoned.is_set()

    async def shutdown(self) -> None:
        """Close the Streamable HTTP sessions, then run the lifespans' shutdown halves.
        What the ASGI ``lifespan.shutdown`` event does; requests after it get 503."""
        self._ready = False
        self._stopped = True
        self.streamable.close()
        if self.legacy is not None:
            self.legacy.close()
        await self.engine.stop()

    def end_streams(self) -> None:
        """End the Streamable HTTP GET streams, each with its end of body: what a server
        going down does first, since uvicorn waits for open responses before the lifespan
        shutdown. Legacy SSE streams carry their calls' answers, so they end later
        (``answer_connections``, then ``end_legacy_streams``)."""
        self.streamable.end_streams()

    def end_legacy_streams(self) -> None:
        """End the legacy SSE streams once what they had queued is written."""
        if self.legacy is not None:
            self.legacy.close()

    async def answer_connections(self, grace: float, hurry: asyncio.Event | None = None) -> None:
        """The calls of frame connections (WebSocket, legacy SSE) at shutdown: up to
        ``grace`` seconds to finish (less once ``hurry`` is set), then each answered
        -32000 "Server shutting down", the answers given ``ABORT_SETTLE`` to go out. Runs
        before uvicorn's own shutdown, which closes every WebSocket at once."""
        connections = list(self.engine.open_connections)
        await asyncio.gather(*(c.drain(grace, hurry) for c in connections))
        await asyncio.gather(*(c.abort() for c in connections))

    async def end_calls(self, grace: float, hurry: asyncio.Event | None = None) -> None:
        """The calls' part of a graceful shutdown, run beside the server's own once it has
        stopped accepting: long-lived requests (subscriptions) end at once; calls still
        running after ``grace`` seconds (or once ``hurry`` is set) are cancelled, each
        answered -32000 "Server shutting down" (as JSON, or as the last event of its SSE
        stream). Runs until cancelled, ending as well any call that starts later (its
        body was still arriving)."""
        self.engine.shutting_down.set()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(
                (hurry or asyncio.Event()).wait(), None if math.isinf(grace) else grace
            )
        error = shutting_down_error()
        while True:
            self.engine.dispatcher.abort(error)
            await asyncio.sleep(_SHUTDOWN_POLL)

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[McpAsgiApp]:
        """``async with mcp.running():`` inside a host's lifespan, for a mounted app (hosts
        do not forward lifespan events to mounted apps): start-up on entry, shutdown on exit."""
        await self.startup()
        try:
            yield self
        finally:
            await self.shutdown()

    @contextlib.asynccontextmanager
    async def lifespan(self, host: Any = None) -> AsyncIterator[None]:
        """``FastAPI(lifespan=mcp.lifespan)`` / ``Starlette(lifespan=mcp.lifespan)``: the
        host calls it with itself and enters it: ``running()``, yielding no state (the host
        would take a yielded value for its ``request.state``)."""
        async with self.running():
            yield

    async def _ensure_started(self, send: Send | None) -> bool:
        """The slow path of the per-request check: the engine was started by someone else
        (``McpServerApp.start()`` or ``running()``), or needs nothing (start it now), or was
        not started (refuse, saying how to fix it). ``send=None``: the caller refuses."""
        engine = self.engine
        if engine.started:
            self._ready = True
            return True
        if not self._stopped:
            if not engine.needs_startup:
                # No lifespans: start() awaits nothing, so concurrent first requests cannot
                # interleave in it. No GC freeze: that belongs to start-up, not to a request.
                await engine.start()
                self._ready = True
                return True
            if not self._refusal_logged:
                self._refusal_logged = True
                logger.error("refusing requests: %s", NOT_STARTED)
        if send is not None:
            status, message = (503, SHUT_DOWN) if self._stopped else (500, NOT_STARTED)
            await send_json(send, status, error_body(ErrorCode.INTERNAL_ERROR, message))
        return False

    async def _refuse_websocket(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        """An upgrade to an app not started: the JSON-RPC error as an HTTP answer where the
        server can send one, else the handshake refused (close before accept)."""
        status, message = (503, SHUT_DOWN) if self._stopped else (500, NOT_STARTED)
        if (await receive())["type"] != "websocket.connect":
            return
        if "websocket.http.response" in (scope.get("extensions") or {}):
            from mcpkit.protocol._jsonrpc import encode_json

            body = encode_json(error_body(ErrorCode.INTERNAL_ERROR, message))
            headers = [
                (b"content-type", b"application/json"),
                (b"content-length", b"%d" % len(body)),
            ]
            await send(
                {"type": "websocket.http.response.start", "status": status, "headers": headers}
            )
            await send({"type": "websocket.http.response.body", "body": body})
            return
        await send({"type": "websocket.close", "code": 1011, "reason": message[:120]})

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    await self.startup()
                except Exception as exc:
                    if isinstance(exc, StartupAbandoned):
                        logger.info("%s", exc)
                    elif isinstance(exc, MCPError):  # mcpkit's own says what failed: no traceback
                        logger.error("startup failed: %s", exc)
                    else:
                        logger.exception("startup failed")
                    await send({"type": "lifespan.startup.failed", "message": str(exc)})
                    return
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.shutdown()
                await send({"type": "lifespan.shutdown.complete"})
                return


def create_asgi_app(
    app: McpEngine | ServesAnEngine, options: StreamableHttpServerOptions | None = None
) -> McpAsgiApp:
    """The ASGI app serving ``app`` over Streamable HTTP (and legacy SSE / WebSocket)."""
    return McpAsgiApp(app, options)


#: Seconds between the checks of a shutdown in progress (grace over, calls ended).
_SHUTDOWN_POLL = 0.05

"""Body-based routing of JSON-RPC requests to method handlers.

The dispatcher is one per engine (``McpEngine``), shared by every connection. It tracks in-flight
requests by (connection, request id) so that ``notifications/cancelled`` reaches exactly the
request it names and two connections using the same ids never touch each other.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from mcpkit._exceptions import (
    InternalError,
    InvalidRequestError,
    McpCallError,
    MethodNotFoundError,
    ProtocolError,
    ToolError,
)
from mcpkit.protocol._jsonrpc import (
    JsonRpcNotification,
    JsonRpcRequest,
    RequestId,
    error_response,
)
from mcpkit.server._engine.binding import CURRENT_BINDING, TransportBinding
from mcpkit.server._engine.middleware import MiddlewareChain
from mcpkit.server._engine.unexpected import client_request_failed, internal_error
from mcpkit.server._eras.mrtr import InputRequired

logger = logging.getLogger("mcpkit.server")

Handler = Callable[[JsonRpcRequest, TransportBinding], Awaitable[dict[str, Any]]]
NotificationHandler = Callable[[JsonRpcNotification, TransportBinding], Awaitable[None]]

#: Requests one connection may have running at once; past it a request is refused at once.
DEFAULT_MAX_IN_FLIGHT_PER_CONNECTION = 128

#: Methods a handshake-era client may send before ``initialize`` has been answered.
_BEFORE_INITIALIZE = frozenset({"initialize", "ping"})

_InFlightKey = tuple[str, RequestId]


class McpDispatcher:
    """Routes requests by ``method`` and tracks them for cancellation."""

    def __init__(
        self,
        *,
        max_in_flight_per_connection: int = DEFAULT_MAX_IN_FLIGHT_PER_CONNECTION,
        expose_internal_errors: bool = False,
    ) -> None:
        self.max_in_flight_per_connection = max_in_flight_per_connection
        #: Send an unexpected exception's text to the client (development only); else a
        #: generic -32603 with an error id, the detail logged under that id.
        self.expose_internal_errors = expose_internal_errors
        self._handlers: dict[str, Handler] = {}
        self._notification_handlers: dict[str, NotificationHandler] = {}
        self._in_flight: dict[_InFlightKey, asyncio.Task[Any]] = {}
        self._per_connection: dict[str, int] = {}
        self._cancel_requested: set[_InFlightKey] = set()
        #: Requests cancelled because the server is going down, with the error each answers.
        self._aborted: dict[_InFlightKey, ProtocolError] = {}
        #: The 2026-07-28 era (``ModernEra``), installed by the app; None serves only the handshake era.
        self.modern: Any = None
        #: What ``ctx.set_state`` keeps (``SessionStates``), installed by the app; None: a
        #: call's state is its own.
        self.session_state: Any = None
        #: What traces and measures each request (``mcpkit.otel.instrument``): ``dispatch``
        #: runs every request through its ``around_dispatch(run, request, binding)``. None,
        #: the default, costs one check per request.
        self.telemetry: Any = None
        #: The engine's middleware (``middleware.MiddlewareChain``): around every handler.
        self.middleware = MiddlewareChain()
        self.on_notification("notifications/cancelled", self._on_cancelled)
        self.on_notification("$/cancelRequest", self._on_cancelled)

    # registration -----------------------------------------------------------------------

    def register(self, method: str, handler: Handler) -> None:
        """Route requests for ``method`` to ``handler(request, binding) -> result``."""
        self._handlers[method] = handler

    def on_notification(self, method: str, handler: NotificationHandler) -> None:
        """Handle the client notification ``method`` with ``handler`` (replacing any)."""
        self._notification_handlers[method] = handler

    def has_method(self, method: str) -> bool:
        """Whether a request handler is registered for ``method``."""
        return method in self._handlers

    def handler(self, method: str) -> Handler:
        """The request handler registered for ``method`` (``KeyError`` without one)."""
        return self._handlers[method]

    # requests ---------------------------------------------------------------------------

    async def dispatch(
        self, request: JsonRpcRequest, binding: TransportBinding | None = None
    ) -> dict[str, Any] | None:
        """Run one request to its wire response; None when the client cancelled it.

        Runs in the caller's task (the transport's): cancelling that task cancels the request.
        """
        telemetry = self.telemetry
        if telemetry is not None:
            traced: dict[str, Any] | None = await telemetry.around_dispatch(
                self._run, request, binding
            )
            return traced
        return await self._run(request, binding)

    async def _run(
        self, request: JsonRpcRequest, binding: TransportBinding | None
    ) -> dict[str, Any] | None:
        """``dispatch`` without telemetry (what ``around_dispatch`` is given to run)."""
        if binding is None:
            binding = CURRENT_BINDING.get() or TransportBinding()
        era = self.modern
        params = request.params
        if era is not None and (
            binding.modern or (params and "_meta" in params and era.applies(params, binding))
        ):
            try:
                binding = era.enter(request, binding)
                if era.request_states.shared is not None:  # used states shared by instances
                    await era.confirm(binding)
            except ProtocolError as exc:
                return error_response(request.id, exc)
        else:
            era = None
        handler = self._handlers.get(request.method)
        connection = binding.connection_key
        key = (connection, request.id)
        # Looked up only while something is in flight (mostly nothing is).
        running = self._per_connection.get(connection, 0) if self._per_connection else 0
        session = binding.session
        if (
            handler is None
            or running >= self.max_in_flight_per_connection
            or (running and key in self._in_flight)
            or (
                session is not None
                and not session.initialize_seen
                and request.method not in _BEFORE_INITIALIZE
            )
        ):
            return error_response(request.id, self._refusal(request, binding, running))
        # Tracked while it runs: cancel() finds its task, and it counts against the limit.
        # Also a request that never waits: skipping that took stepping the handler by hand,
        # which saved ~5,500 instructions a call (4.6% of mcpkit's own in 2026-07-28, with
        # no wall-time gain clear of noise: bench/asgi_calls.py --instructions).
        task = asyncio.current_task()
        assert task is not None, "dispatch() runs inside a task"
        self._in_flight[key] = task
        self._per_connection[connection] = running + 1
        try:
            if self.middleware:
                result = await self.middleware.request(request, binding, handler)
            else:
                result = await handler(request, binding)
            if era is not None:
                result = era.leave(request.method, result)
        except BaseException as exc:
            return self._failure(exc, request, binding, era, key)
        finally:
            del self._in_flight[key]
            if self._cancel_requested:
                self._cancel_requested.discard(key)
            if self._aborted:
                self._aborted.pop(key, None)
            remaining = self._per_connection[connection] - 1
            if remaining:
                self._per_connection[connection] = remaining
            else:
                del self._per_connection[connection]
        return {"jsonrpc": "2.0", "id": request.id, "result": result}  # result_response(), inline

    def _response(
        self, request: JsonRpcRequest, key: _InFlightKey, result: Any
    ) -> dict[str, Any] | None:
        if self._cancel_requested and key in self._cancel_requested:
            return None
        return {"jsonrpc": "2.0", "id": request.id, "result": result}  # result_response(), inline

    def _failure(
        self,
        exc: BaseException,
        request: JsonRpcRequest,
        binding: TransportBinding,
        era: Any,
        key: _InFlightKey,
    ) -> dict[str, Any] | None:
        """The response of a request whose handler raised ``exc``; raises what is not the
        request's to answer (a cancellation from outside, ``KeyboardInterrupt``)."""
        if isinstance(exc, InputRequired):
            if era is None:
                return error_response(
                    request.id, InternalError("input requests need the 2026-07-28 era")
                )
            return self._response(request, key, era.input_required(binding, exc.requests))
        if isinstance(exc, (ProtocolError, McpCallError)):
            # McpCallError: a request the handler made of the client failed (a tool's is
            # already its isError result; a prompt's or a resource's fails the request).
            error = exc if isinstance(exc, ProtocolError) else client_request_failed(exc)
            if era is not None:
                error = era.convert_error(error)
            return None if key in self._cancel_requested else error_response(request.id, error)
        if isinstance(exc, asyncio.CancelledError):
            task = asyncio.current_task()
            assert task is not None, "dispatch() runs inside a task"
            if key not in self._cancel_requested:
                aborted = self._aborted.pop(key, None) if self._aborted else None
                if aborted is None or task.uncancel():
                    raise exc
                return error_response(request.id, aborted)  # abort(): answered, not dropped
            task.uncancel()
            return None
        if isinstance(exc, ToolError):
            # Raised on purpose (a tool's is its isError result already; here a resource's or
            # a prompt's): its text is for the client, under any masking, and it is no bug.
            logger.info("%s raised ToolError: %s", request.method, exc)
            if key in self._cancel_requested:
                return None
            return error_response(request.id, InternalError(str(exc)))
        if isinstance(exc, Exception):  # a handler bug must not take the connection down
            error = internal_error(
                exc, f"handler for {request.method}", expose=self.expose_internal_errors
            )
            return error_response(request.id, error)
        raise exc

    def _refusal(
        self, request: JsonRpcRequest, binding: TransportBinding, running: int
    ) -> ProtocolError:
        """Why a request may not run (``dispatch`` checked that one of these holds)."""
        if request.method not in self._handlers:
            return MethodNotFoundError(f"Method not found: {request.method}")
        if (
            binding.session is not None
            and not binding.session.initialize_seen
            and request.method not in _BEFORE_INITIALIZE
        ):
            return InvalidRequestError("Session not initialized: send initialize first")
        if (binding.connection_key, request.id) in self._in_flight:
            return InvalidRequestError(f"Request id {request.id!r} is already in use")
        return InternalError("Server busy: too many requests in flight on this connection")

    # cancellation -----------------------------------------------------------------------

    def cancel(self, connection_key: str, request_id: RequestId) -> bool:
        """Cancel the running request ``request_id`` of one connection; False if none runs."""
        key = (connection_key, request_id)
        task = self._in_flight.get(key)
        if task is None or task.done():
            return False
        self._cancel_requested.add(key)
        task.cancel()
        return True

    def cancel_connection(self, connection_key: str) -> int:
        """Cancel every request of a connection that went away; returns how many."""
        if not self._per_connection.get(connection_key):  # every session's end: mostly none
            return 0
        keys = [key for key in self._in_flight if key[0] == connection_key]
        return sum(self.cancel(*key) for key in keys)

    def abort(self, error: ProtocolError, connection_key: str | None = None) -> int:
        """Cancel the running requests (of one connection, else all) because the server is
        going down: unlike ``cancel``, each is answered, with ``error``. Returns how many."""
        count = 0
        for key, task in list(self._in_flight.items()):
            if (
                (connection_key is None or key[0] == connection_key)
                and not task.done()
                and key not in self._cancel_requested
                and key not in self._aborted
            ):
                self._aborted[key] = error
                task.cancel()
                count += 1
        return count

    def is_cancel_requested(self, connection_key: str, request_id: RequestId) -> bool:
        """Whether the client cancelled that request."""
        return (connection_key, request_id) in self._cancel_requested

    def in_flight_count(self, connection_key: str | None = None) -> int:
        """Requests running (of one connection, else all)."""
        if connection_key is None:
            return len(self._in_flight)
        return self._per_connection.get(connection_key, 0)

    async def _on_cancelled(self, note: JsonRpcNotification, binding: TransportBinding) -> None:
        params = note.params or {}
        request_id = params.get("requestId", params.get("id"))
        if isinstance(request_id, (str, int)) and not isinstance(request_id, bool):
            self.cancel(binding.connection_key, request_id)

    # notifications ----------------------------------------------------------------------

    async def notify(
        self, note: JsonRpcNotification, binding: TransportBinding | None = None
    ) -> None:
        """Handle a client notification; unknown ones are ignored, as JSON-RPC asks."""
        handler = self._notification_handlers.get(note.method)
        if handler is None and not self.middleware:
            return
        if binding is None:
            binding = CURRENT_BINDING.get() or TransportBinding()
        try:
            if self.middleware:
                await self.middleware.notification(note, binding, handler)
            else:
                await handler(note, binding)  # type: ignore[misc]  # not None: checked
        except Exception:
            logger.exception("notification handler for %s failed", note.method)

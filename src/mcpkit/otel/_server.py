"""The server side: a SERVER span and a duration point per request the dispatcher runs,
over every transport and both eras, parented by the trace context in ``params._meta``."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from opentelemetry import context, metrics, propagate, trace
from opentelemetry.context import Context

from mcpkit.otel._conventions import (
    CANCELLED,
    JSONRPC_REQUEST_ID,
    MCP_PROTOCOL_VERSION,
    MCP_SESSION_ID,
    NETWORK_PROTOCOL_NAME,
    NETWORK_TRANSPORT,
    RPC_RESPONSE_STATUS_CODE,
    SERVER_ACTIVE_SESSIONS,
    SERVER_OPEN_STREAMS,
    SERVER_OPERATION_DURATION,
    STREAM_METHODS,
    TOOL_ERROR,
    TRACE_CONTEXT_KEYS,
    describe,
    is_tool_error,
    metric_attributes,
)
from mcpkit.otel._instruments import instruments, mark_failed
from mcpkit.protocol._modern import PROTOCOL_VERSION_KEY
from mcpkit.server._engine.binding import CURRENT_BINDING, TransportBinding

if TYPE_CHECKING:
    from mcpkit.protocol._jsonrpc import JsonRpcRequest
    from mcpkit.server._app import McpServerApp
    from mcpkit.server._engine.session import McpSession

#: Sessions remembered for the active-sessions gauge; past it new ones go uncounted
#: until closed ones are pruned (at each collection).
DEFAULT_MAX_TRACKED_SESSIONS = 10_000

Dispatch = Callable[
    ["JsonRpcRequest", "TransportBinding | None"], Awaitable["dict[str, Any] | None"]
]


def _trace_carrier(meta: Any) -> dict[str, Any] | None:
    """The W3C trace-context entries of a ``_meta`` (None: it has none)."""
    if type(meta) is not dict or "traceparent" not in meta:
        return None
    return {key: meta[key] for key in TRACE_CONTEXT_KEYS if type(meta.get(key)) is str}


def _transport(headers: Mapping[str, str] | None) -> dict[str, str]:
    """``network.*`` of a call: a message stream without HTTP headers (stdio, in-memory)
    is a pipe; anything with headers came over TCP, as HTTP or a WebSocket."""
    if headers is None:
        return {NETWORK_TRANSPORT: "pipe"}
    upgrade = headers.get("upgrade", "")
    protocol = "websocket" if upgrade.lower() == "websocket" else "http"
    return {NETWORK_TRANSPORT: "tcp", NETWORK_PROTOCOL_NAME: protocol}


class McpServerTelemetry:
    """Traces and measures one app's requests; made by ``instrument(app)``.

    ``tracer_provider`` / ``meter_provider``: None takes the global ones (as configured with
    ``opentelemetry.trace.set_tracer_provider`` and its metrics counterpart).
    """

    def __init__(
        self,
        app: McpServerApp,
        *,
        tracer_provider: trace.TracerProvider | None = None,
        meter_provider: metrics.MeterProvider | None = None,
        max_tracked_sessions: int = DEFAULT_MAX_TRACKED_SESSIONS,
    ) -> None:
        if max_tracked_sessions < 1:
            raise ValueError("max_tracked_sessions must be at least 1")
        self.app = app
        self.max_tracked_sessions = max_tracked_sessions
        self._tracer, meter, self._duration = instruments(
            SERVER_OPERATION_DURATION,
            "MCP request duration as observed on the receiver, from the time it was received "
            "until the result is sent.",
            tracer_provider,
            meter_provider,
        )
        self._streams = meter.create_up_down_counter(
            SERVER_OPEN_STREAMS,
            unit="{stream}",
            description="Long-lived subscriptions/listen streams open now.",
        )
        meter.create_observable_up_down_counter(
            SERVER_ACTIVE_SESSIONS,
            callbacks=[self._observe_sessions],
            unit="{session}",
            description="MCP sessions (connections that made a request) open now.",
        )
        self._sessions: dict[str, McpSession] = {}

    # the dispatcher's hook ----------------------------------------------------------------

    async def around_dispatch(
        self, run: Dispatch, request: JsonRpcRequest, binding: TransportBinding | None
    ) -> dict[str, Any] | None:
        """Run ``run(request, binding)`` inside the request's SERVER span, and time it."""
        seen = binding if binding is not None else CURRENT_BINDING.get() or TransportBinding()
        started = time.perf_counter()
        params = request.params
        name, attributes = describe(request.method, params)
        if request.id is not None:
            attributes[JSONRPC_REQUEST_ID] = str(request.id)
        attributes.update(_transport(seen.headers))
        session = seen.session
        if session is not None:
            if session.session_id is not None:
                attributes[MCP_SESSION_ID] = session.session_id
            self._track(session)
        meta = params.get("_meta") if type(params) is dict else None
        version = session.protocol_version if session is not None else None
        if version is None and type(meta) is dict:
            version = meta.get(PROTOCOL_VERSION_KEY)
        if type(version) is str:
            attributes[MCP_PROTOCOL_VERSION] = version
        parent, links = self._parent(meta, seen.headers)
        streaming = request.method in STREAM_METHODS
        stream_attributes = {NETWORK_TRANSPORT: attributes[NETWORK_TRANSPORT]}
        # start_span + attach rather than start_as_current_span: three context managers
        # fewer on every request.
        span = self._tracer.start_span(
            name, context=parent, kind=trace.SpanKind.SERVER, attributes=attributes, links=links
        )
        token = context.attach(trace.set_span_in_context(span, parent))
        if streaming:
            self._streams.add(1, stream_attributes)
        try:
            response = await run(request, binding)
        except asyncio.CancelledError:
            mark_failed(span, attributes, CANCELLED, None)
            raise
        except BaseException as exc:
            span.record_exception(exc)
            mark_failed(span, attributes, type(exc).__qualname__, str(exc))
            raise
        else:
            self._finish(span, request.method, attributes, response)
        finally:
            if streaming:
                self._streams.add(-1, stream_attributes)
            context.detach(token)
            span.end()
            self._duration.record(time.perf_counter() - started, metric_attributes(attributes))
        return response

    # what a span says -----------------------------------------------------------------------

    def _parent(
        self, meta: Any, headers: Mapping[str, str] | None
    ) -> tuple[Context | None, list[trace.Link]]:
        """The parent: the context in ``_meta`` (SEP-414), else the HTTP headers'; with
        both, the headers' span is linked (one HTTP request may carry many MCP ones)."""
        carrier = _trace_carrier(meta)
        from_headers = (
            propagate.extract(headers) if headers is not None and "traceparent" in headers else None
        )
        if carrier is None:
            return from_headers, []
        parent = propagate.extract(carrier)
        links: list[trace.Link] = []
        if from_headers is not None:
            linked = trace.get_current_span(from_headers).get_span_context()
            if linked.is_valid:
                links.append(trace.Link(linked))
        return parent, links

    def _finish(
        self,
        span: trace.Span,
        method: str,
        attributes: dict[str, Any],
        response: dict[str, Any] | None,
    ) -> None:
        if response is None:  # the client cancelled it
            mark_failed(span, attributes, CANCELLED, None)
            return
        error = response.get("error")
        if type(error) is dict:
            code = str(error.get("code"))
            attributes[RPC_RESPONSE_STATUS_CODE] = code
            span.set_attribute(RPC_RESPONSE_STATUS_CODE, code)
            message = error.get("message")
            mark_failed(span, attributes, code, message if type(message) is str else None)
            return
        result = response.get("result")
        if method == "initialize" and type(result) is dict:
            version = result.get("protocolVersion")
            if type(version) is str:  # the version agreed on, not the one asked for
                attributes[MCP_PROTOCOL_VERSION] = version
                span.set_attribute(MCP_PROTOCOL_VERSION, version)
        if is_tool_error(method, result):
            mark_failed(span, attributes, TOOL_ERROR, None)

    # sessions -------------------------------------------------------------------------------

    def _track(self, session: McpSession) -> None:
        """Remember a connection's session (not a request's own, which has no channel)."""
        if session.send is None or session.closed or session.key in self._sessions:
            return
        if len(self._sessions) >= self.max_tracked_sessions:
            self._prune()
            if len(self._sessions) >= self.max_tracked_sessions:
                return
        self._sessions[session.key] = session

    def _prune(self) -> None:
        for key in [key for key, session in self._sessions.items() if session.closed]:
            del self._sessions[key]

    def _observe_sessions(self, options: metrics.CallbackOptions) -> list[metrics.Observation]:
        self._prune()
        return [metrics.Observation(len(self._sessions))]

    @property
    def active_sessions(self) -> int:
        """Sessions open now that have made at least one request."""
        self._prune()
        return len(self._sessions)

"""The client side: a CLIENT span and a duration point per request ``McpClient`` sends,
its trace context injected into the request's ``params._meta`` (SEP-414)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from opentelemetry import context, metrics, propagate, trace

from mcpkit._exceptions import McpCallError, RequestTimeoutError
from mcpkit.otel._conventions import (
    CANCELLED,
    CLIENT_OPERATION_DURATION,
    JSONRPC_REQUEST_ID,
    MCP_PROTOCOL_VERSION,
    MCP_SESSION_ID,
    NETWORK_PROTOCOL_NAME,
    NETWORK_TRANSPORT,
    RPC_RESPONSE_STATUS_CODE,
    TIMEOUT,
    TOOL_ERROR,
    describe,
    is_tool_error,
    metric_attributes,
)
from mcpkit.otel._instruments import instruments, mark_failed

if TYPE_CHECKING:
    from mcpkit.client._client import McpClient

SendRequest = Callable[..., Awaitable[Any]]

#: ``network.*`` by the module of the client's transport; any other is HTTP over TCP.
_TRANSPORTS: dict[str, dict[str, str]] = {
    "mcpkit.client._stdio": {NETWORK_TRANSPORT: "pipe"},
    "mcpkit.transports._memory": {NETWORK_TRANSPORT: "pipe"},
    "mcpkit.client._websocket": {NETWORK_TRANSPORT: "tcp", NETWORK_PROTOCOL_NAME: "websocket"},
}
_HTTP = {NETWORK_TRANSPORT: "tcp", NETWORK_PROTOCOL_NAME: "http"}


class McpClientTelemetry:
    """Traces and measures one client's requests; made by ``instrument_client(client)``.

    ``tracer_provider`` / ``meter_provider``: None takes the global ones.
    """

    def __init__(
        self,
        client: McpClient,
        *,
        tracer_provider: trace.TracerProvider | None = None,
        meter_provider: metrics.MeterProvider | None = None,
    ) -> None:
        self.client = client
        self._tracer, _meter, self._duration = instruments(
            CLIENT_OPERATION_DURATION,
            "MCP request duration as observed on the sender, from the time it was sent until "
            "the response is received.",
            tracer_provider,
            meter_provider,
        )
        stream = client.session.stream
        self._network = _TRANSPORTS.get(type(stream).__module__, _HTTP)

    async def around_request(
        self,
        send: SendRequest,
        method: str,
        params: dict[str, Any] | None,
        timeout: float | None,
        progress: Any,
        request_id: Any,
    ) -> Any:
        """Send one request inside its CLIENT span, the span's context in its ``_meta``."""
        started = time.perf_counter()
        if request_id is None:  # reserved now, so the span can name it
            request_id = self.client.session.new_request_id()
        name, attributes = describe(method, params)
        attributes[JSONRPC_REQUEST_ID] = str(request_id)
        attributes.update(self._network)
        attributes[MCP_PROTOCOL_VERSION] = self.client.protocol_version
        session_id = self.client.session_id
        if session_id is not None:
            attributes[MCP_SESSION_ID] = session_id
        span = self._tracer.start_span(name, kind=trace.SpanKind.CLIENT, attributes=attributes)
        token = context.attach(trace.set_span_in_context(span))
        try:
            result = await send(
                method,
                _with_trace_context(params),
                timeout=timeout,
                progress=progress,
                request_id=request_id,
            )
        except McpCallError as exc:
            code = str(exc.code)
            attributes[RPC_RESPONSE_STATUS_CODE] = code
            span.set_attribute(RPC_RESPONSE_STATUS_CODE, code)
            mark_failed(span, attributes, code, exc.message)
            raise
        except RequestTimeoutError as exc:
            mark_failed(span, attributes, TIMEOUT, str(exc))
            raise
        except asyncio.CancelledError:
            mark_failed(span, attributes, CANCELLED, None)
            raise
        except BaseException as exc:
            span.record_exception(exc)
            mark_failed(span, attributes, type(exc).__qualname__, str(exc))
            raise
        else:
            if is_tool_error(method, result):
                mark_failed(span, attributes, TOOL_ERROR, None)
        finally:
            context.detach(token)
            span.end()
            self._duration.record(time.perf_counter() - started, metric_attributes(attributes))
        return result


def _with_trace_context(params: dict[str, Any] | None) -> dict[str, Any] | None:
    """``params`` with the current trace context added to its ``_meta`` (a copy: the
    caller's dicts are left as they were)."""
    carrier: dict[str, str] = {}
    propagate.inject(carrier)
    if not carrier:
        return params
    params = dict(params or {})
    meta = params.get("_meta")
    params["_meta"] = {**meta, **carrier} if type(meta) is dict else carrier
    return params

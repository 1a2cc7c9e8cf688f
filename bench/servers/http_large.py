"""Servers of ``bench/large_payload.py``: one large text (``BENCH_PAYLOAD_BYTES``, 5 MiB by
default) answered by a tool (``big``) and a resource (``big://text``), by mcpkit and by a bare
ASGI app writing the same bytes.

``mcpkit_app``: ``create_asgi_app`` over Streamable HTTP, stateless. A request whose
``_meta`` carries a ``progressToken`` gets one progress notification before the answer, so
its client (accepting SSE) is answered as an SSE stream; without one, plain JSON.

``bare_app``: reads the body and writes a prebuilt answer of the same bytes: the JSON body
mcpkit writes, or the SSE frames (the progress event, then the answer's event), chosen by
substring tests on the body. The text is built once at import in both, so neither pays
for making it per call.
"""

from __future__ import annotations

import os
from typing import Any

import msgspec
from _bare_asgi import read_body, serve_lifespan

from mcpkit import McpServerApp, McpToolContext, mcp_resource, mcp_server, mcp_tool
from mcpkit.transports.http import StreamableHttpServerOptions, create_asgi_app

PAYLOAD_BYTES = int(os.environ.get("BENCH_PAYLOAD_BYTES", str(5 * 1024 * 1024)))
#: Lines of printable ASCII with a quote and a newline in each, so JSON has to escape some.
_LINE = 'payload line with "quotes" and a tab\tthen text to pad it out to 64.\n'
TEXT = (_LINE * (PAYLOAD_BYTES // len(_LINE) + 1))[:PAYLOAD_BYTES]
RESOURCE_URI = "big://text"


@mcp_server(name="bench-large")
class Large:
    @mcp_tool()
    async def big(self, ctx: McpToolContext = None) -> str:  # type: ignore[assignment]
        """The large text."""
        await ctx.report_progress(1, 1)
        return TEXT

    @mcp_resource(RESOURCE_URI, mime_type="text/plain")
    async def big_text(self, ctx: McpToolContext = None) -> str:  # type: ignore[assignment]
        """The large text, as a resource."""
        await ctx.report_progress(1, 1)
        return TEXT


mcpkit_app = create_asgi_app(
    McpServerApp(Large),
    StreamableHttpServerOptions(endpoint="/mcp", stateless=True, enable_legacy_sse=False),
)

_encode = msgspec.json.encode


def _frame(message: Any) -> bytes:
    return b"event: message\ndata: " + _encode(message) + b"\n\n"


def _answers() -> dict[tuple[str, bool], bytes]:
    tool = {"content": [{"type": "text", "text": TEXT}]}
    resource = {"contents": [{"uri": RESOURCE_URI, "mimeType": "text/plain", "text": TEXT}]}
    progress = {
        "jsonrpc": "2.0",
        "method": "notifications/progress",
        "params": {"progressToken": 1, "progress": 1, "total": 1},
    }
    out = {}
    for kind, result in (("tool", tool), ("resource", resource)):
        response = {"jsonrpc": "2.0", "id": 1, "result": result}
        out[(kind, False)] = _encode(response)
        out[(kind, True)] = _frame(progress) + _frame(response)
    return out


ANSWERS = _answers()


async def bare_app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] == "lifespan":
        await serve_lifespan(receive, send)
        return
    if scope["type"] != "http":
        return
    body = await read_body(receive)
    kind = "resource" if b'"resources/read"' in body else "tool"
    sse = b'"progressToken"' in body
    answer = ANSWERS[(kind, sse)]
    content_type = b"text/event-stream" if sse else b"application/json"
    headers = [(b"content-type", content_type)]
    if not sse:
        headers.append((b"content-length", b"%d" % len(answer)))
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    if sse:  # as a streaming server writes it: the frames, then the end of body
        await send({"type": "http.response.body", "body": answer, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})
    else:
        await send({"type": "http.response.body", "body": answer})

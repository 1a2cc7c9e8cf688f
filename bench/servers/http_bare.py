"""The ceiling: a bare ASGI app, no framework, no MCP. It reads the POST body and answers
with a fixed JSON-RPC ``tools/call`` result; the only other answers are what the session
scenarios need: a fixed initialize result when the body names ``initialize``, 202 for a
notification (no ``"id"``), 200 for DELETE; these carry a fixed ``mcp-session-id``. A
2026-07-28 request (its ``_meta`` names the protocol version) gets the same tools/call result
in that era's shape (``resultType``, ``serverInfo`` in ``_meta``) and no session id: that era
has no sessions."""

from _bare_asgi import read_body, serve_lifespan

RESULT = (
    b'{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"3"}],'
    b'"structuredContent":{"result":3},"isError":false}}'
)
MODERN_RESULT = (
    b'{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"3"}],'
    b'"structuredContent":{"result":3},"isError":false,"resultType":"complete",'
    b'"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"bare","version":"0"}}}}'
)
#: how a 2026-07-28 request is told apart: a substring test, as cheap as the initialize one
MODERN_MARK = b'"io.modelcontextprotocol/protocolVersion"'
INIT_RESULT = (
    b'{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},'
    b'"serverInfo":{"name":"bare","version":"0"}}}'
)


def _headers(body: bytes) -> list[tuple[bytes, bytes]]:
    return [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"mcp-session-id", b"bare-session"),
    ]


JSON_HEADERS = _headers(RESULT)
MODERN_HEADERS = [
    (b"content-type", b"application/json"),
    (b"content-length", str(len(MODERN_RESULT)).encode()),
]
INIT_HEADERS = _headers(INIT_RESULT)
EMPTY_HEADERS = [(b"content-length", b"0"), (b"mcp-session-id", b"bare-session")]


async def app(scope, receive, send):
    if scope["type"] == "lifespan":
        await serve_lifespan(receive, send)
        return
    if scope["type"] != "http":
        return
    body = await read_body(receive)
    if scope["method"] == "POST" and b'"id"' in body:
        if b'"initialize"' in body:
            await send({"type": "http.response.start", "status": 200, "headers": INIT_HEADERS})
            await send({"type": "http.response.body", "body": INIT_RESULT})
            return
        if MODERN_MARK in body:
            await send({"type": "http.response.start", "status": 200, "headers": MODERN_HEADERS})
            await send({"type": "http.response.body", "body": MODERN_RESULT})
            return
        await send({"type": "http.response.start", "status": 200, "headers": JSON_HEADERS})
        await send({"type": "http.response.body", "body": RESULT})
    else:  # a notification, or DELETE
        status = 202 if scope["method"] == "POST" else 200
        await send({"type": "http.response.start", "status": status, "headers": EMPTY_HEADERS})
        await send({"type": "http.response.body", "body": b""})

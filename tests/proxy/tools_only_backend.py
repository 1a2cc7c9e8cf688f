"""A handshake-era stdio server that offers only tools, written by hand as the reference
servers are (server-filesystem, server-memory): its ``initialize`` declares ``tools`` and
nothing else, every other method is -32601, and a client that declares ``roots`` is asked
``roots/list`` right after ``notifications/initialized``.

``python tools_only_backend.py [TOOL ...]``: the tools it offers (default ``roots_seen``);
each answers with what this connection was told: the client's capabilities and the
answer to its ``roots/list`` (a result, an error, or ``"not asked"``)."""

import json
import sys
from typing import Any

TOOLS = sys.argv[1:] or ["roots_seen"]


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def answer(request: dict[str, Any], seen: dict[str, Any]) -> None:
    method, ident = request.get("method"), request.get("id")
    if method == "initialize":
        seen["capabilities"] = request["params"].get("capabilities", {})
        result: dict[str, Any] = {
            "protocolVersion": request["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "tools-only", "version": "1.0"},
        }
    elif method == "tools/list":
        result = {"tools": [{"name": name, "inputSchema": {"type": "object"}} for name in TOOLS]}
    elif method == "tools/call":
        text = json.dumps({"tool": request["params"]["name"], **seen}, sort_keys=True)
        result = {"content": [{"type": "text", "text": text}]}
    elif method == "ping":
        result = {}
    else:
        send(
            {
                "jsonrpc": "2.0",
                "id": ident,
                "error": {"code": -32601, "message": "Method not found"},
            }
        )
        return
    send({"jsonrpc": "2.0", "id": ident, "result": result})


def main() -> None:
    seen: dict[str, Any] = {"roots": "not asked"}
    held: list[dict[str, Any]] | None = None  # requests kept until roots/list is answered
    for line in sys.stdin:
        message = json.loads(line)
        if "method" not in message:  # the answer to our roots/list
            seen["roots"] = message.get("result", message.get("error"))
            for request in held or []:
                answer(request, seen)
            held = None
        elif message["method"] == "notifications/initialized":
            if "roots" in seen.get("capabilities", {}):
                send({"jsonrpc": "2.0", "id": "roots-1", "method": "roots/list"})
                held = []
        elif "id" in message and held is not None:
            held.append(message)
        elif "id" in message:
            answer(message, seen)


if __name__ == "__main__":
    main()

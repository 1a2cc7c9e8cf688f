"""A handshake-era stdio server written by hand, to misbehave on purpose: its tools answer
late or never, or flood the client. Every message it reads is appended, as one JSON line, to
the file ``$RECORD`` names: a test sees what the proxy sent it.

Tools: ``pid`` (this process's id), ``silent`` (never answers), ``flood_changed`` (``n``
``notifications/tools/list_changed`` before its answer; its tools/list then also offers
``added``), ``ask_twice`` (sends two ``elicitation/create``, ids ``q1`` and ``q2``, and never
answers)."""

import json
import os
import sys
from typing import Any

RECORD = os.environ["RECORD"]
TOOLS = ["pid", "silent", "flood_changed", "ask_twice"]


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def result(ident: Any, value: dict[str, Any]) -> None:
    send({"jsonrpc": "2.0", "id": ident, "result": value})


def text(ident: Any, value: str) -> None:
    result(ident, {"content": [{"type": "text", "text": value}]})


def main() -> None:
    tools = list(TOOLS)
    for line in sys.stdin:
        message = json.loads(line)
        with open(RECORD, "a") as record:
            record.write(json.dumps(message) + "\n")
        method, ident = message.get("method"), message.get("id")
        params = message.get("params") or {}
        if method == "initialize":
            result(
                ident,
                {
                    "protocolVersion": params["protocolVersion"],
                    "capabilities": {"tools": {"listChanged": True}},
                    "serverInfo": {"name": "raw", "version": "1.0"},
                },
            )
        elif method == "tools/list":
            result(
                ident, {"tools": [{"name": n, "inputSchema": {"type": "object"}} for n in tools]}
            )
        elif method == "tools/call" and params["name"] == "pid":
            text(ident, str(os.getpid()))
        elif method == "tools/call" and params["name"] == "flood_changed":
            tools.append("added")
            for _ in range(int(params["arguments"]["n"])):
                send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
            text(ident, "flooded")
        elif method == "tools/call" and params["name"] == "silent":
            pass
        elif method == "tools/call" and params["name"] == "ask_twice":
            for question in ("q1", "q2"):
                ask = {"message": question, "requestedSchema": {"type": "object"}}
                send(
                    {
                        "jsonrpc": "2.0",
                        "id": question,
                        "method": "elicitation/create",
                        "params": ask,
                    }
                )
        elif method == "ping":
            result(ident, {})
        elif method is not None and ident is not None:
            send({"jsonrpc": "2.0", "id": ident, "error": {"code": -32601, "message": "nope"}})


if __name__ == "__main__":
    main()

"""mcpkit's client for the MCP conformance suite's client scenarios.

The suite starts it as ``python examples/conformance_client.py <server-url>`` with the
scenario's name in ``MCP_CONFORMANCE_SCENARIO``, and judges what reaches its test server::

    conformance client --command "python examples/conformance_client.py" --scenario tools_call

Scenarios (``@modelcontextprotocol/conformance`` 0.1.16, non-auth):

* ``initialize``: the handshake (then list the tools, as any client would).
* ``tools_call``: call ``add_numbers``.
* ``elicitation-sep1034-client-defaults``: call the tool that elicits; accept with the
  schema's default values filled in (SEP-1034).
* ``sse-retry``: call ``test_reconnection``, whose response stream the server closes early;
  the transport must come back with GET + ``Last-Event-ID`` after the ``retry`` delay.

Any other scenario gets the generic run: list the tools and call each with arguments made
from its input schema.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from typing import Any

from mcpkit import McpClient
from mcpkit.client._http_options import HttpClientTransportOptions, HttpTransportMode

#: Bound on one whole run; the suite itself gives a client 30 s.
RUN_TIMEOUT = 25.0

log = logging.getLogger("conformance-client")


def value_for(schema: dict[str, Any]) -> Any:
    """A plausible argument value for a JSON Schema: its default, else something typed."""
    if "default" in schema:
        return schema["default"]
    if schema.get("enum"):
        return schema["enum"][0]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    return {
        "number": 1,
        "integer": 1,
        "boolean": True,
        "array": [],
        "object": {},
    }.get(kind, "test")  # type: ignore[arg-type]


def arguments_for(input_schema: dict[str, Any]) -> dict[str, Any]:
    properties = input_schema.get("properties") or {}
    return {name: value_for(schema) for name, schema in properties.items()}


async def accept_with_defaults(params: dict[str, Any]) -> dict[str, Any]:
    """Elicitation: accept, filling every field that has a default (SEP-1034)."""
    schema = params.get("requestedSchema") or {}
    content = {
        name: prop["default"]
        for name, prop in (schema.get("properties") or {}).items()
        if isinstance(prop, dict) and "default" in prop
    }
    return {"action": "accept", "content": content}


async def answer_sampling(params: dict[str, Any]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": {"type": "text", "text": "This is a test response from the client"},
        "model": "conformance-test-model",
        "stopReason": "endTurn",
    }


async def run(url: str, scenario: str) -> None:
    options = HttpClientTransportOptions(
        endpoint=url, transport_mode=HttpTransportMode.AUTO_DETECT, name=f"conformance:{scenario}"
    )
    client = McpClient.http(
        options,
        client_name="mcpkit-conformance-client",
        client_version="0.1.0",
        elicitation_handler=accept_with_defaults,
        sampling_handler=answer_sampling,
        logging_handler=lambda params: log.info("server log: %s", params),
    )
    async with client:
        log.info("connected: %s", client.server_info)
        tools = await client.list_tools()
        names = {tool.name for tool in tools}
        if scenario == "initialize":
            return
        if scenario == "tools_call" and "add_numbers" in names:
            result = await client.call_tool("add_numbers", {"a": 5, "b": 3})
            log.info("add_numbers: %s", result.content)
            return
        if scenario == "elicitation-sep1034-client-defaults":
            result = await client.call_tool("test_client_elicitation_defaults", {})
            log.info("elicitation: %s", result.content)
            return
        if scenario == "sse-retry":
            result = await client.call_tool("test_reconnection", {})
            log.info("test_reconnection: %s", result.content)
            return
        for tool in tools:
            schema = tool.input_schema if isinstance(tool.input_schema, dict) else {}
            result = await client.call_tool(tool.name, arguments_for(schema))
            log.info("%s: %s", tool.name, result.content)


def main() -> int:
    if len(sys.argv) < 2:
        print("usage: conformance_client.py <server-url>", file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(name)s: %(message)s")
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    try:
        asyncio.run(asyncio.wait_for(run(sys.argv[1], scenario), RUN_TIMEOUT))
    except Exception as exc:
        log.error("scenario %s failed: %r", scenario or "(none)", exc)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

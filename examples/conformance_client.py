"""mcpkit's client for the MCP conformance suite's client scenarios.

The suite starts it as ``python examples/conformance_client.py <server-url>`` with the
scenario's name in ``MCP_CONFORMANCE_SCENARIO`` (and, for some scenarios, a JSON context in
``MCP_CONFORMANCE_CONTEXT``), and judges what reaches its test server::

    conformance client --command "python examples/conformance_client.py" --scenario tools_call

The client always connects the way an application would: ``McpClient.http(url)`` with
AUTO_DETECT and ``protocol_mode="auto"``, so a 2026-07-28 scenario server is found by the
``server/discover`` probe, and a handshake-era one gets ``initialize`` after it.

Each scenario is one entry of ``SCENARIOS`` (name -> coroutine run with the connected
client); any other scenario gets ``generic``: list the tools and call each with arguments
made from its input schema. Scenarios that need different client settings (handlers,
credentials) add them to ``CLIENT_OPTIONS``.

The ``auth/*`` scenarios run the same way with an ``OAuthClientProvider`` installed on the
transport (``oauth_provider``): it answers the server's 401/403 challenges, discovers and
registers, and plays the user with ``headless_authorize`` (the scenario authorization
servers redirect at once). Credentials, keys and assertions come from the context.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from mcpkit import McpClient
from mcpkit.auth.client import IdJagTokenExchange, OAuthClientMetadata, OAuthClientProvider
from mcpkit.client import HttpClientTransportOptions, HttpTransportMode

#: Bound on one whole run; the suite itself gives a client 30 s.
RUN_TIMEOUT = 25.0

log = logging.getLogger("conformance-client")


@dataclass
class Run:
    """What a scenario gets: the connected client, and the suite's context."""

    client: McpClient
    scenario: str
    context: dict[str, Any] = field(default_factory=dict)


# -- handlers ------------------------------------------------------------------------------


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
    return {
        name: value_for(schema) for name, schema in properties.items() if isinstance(schema, dict)
    }


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


# -- authorization (auth/* scenarios) -------------------------------------------------------

#: Where the scenario authorization servers send the browser back to (never listened on:
#: ``headless_authorize`` reads the redirect instead of following it).
REDIRECT_URI = "http://localhost:3000/callback"
#: The Client ID Metadata Document URL the suite expects (auth/basic-cimd).
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"


async def headless_authorize(url: str) -> str:
    """Play the user: open the authorization URL and return where it redirects to."""
    import httpx

    async with httpx.AsyncClient(follow_redirects=False, timeout=10) as http:
        response = await http.get(url)
    location = response.headers.get("location")
    if response.status_code not in (301, 302, 303, 307, 308) or not location:
        raise RuntimeError(
            f"authorization endpoint answered {response.status_code} without a redirect"
        )
    return location


def oauth_provider(url: str, scenario: str, context: dict[str, Any]) -> OAuthClientProvider:
    """The ``OAuthClientProvider`` a scenario calls for, from the suite's context."""
    kwargs: dict[str, Any] = {
        "client_metadata": OAuthClientMetadata(
            redirect_uris=[REDIRECT_URI], client_name="mcpkit-conformance-client"
        ),
        "authorize": headless_authorize,
        "client_metadata_url": CLIENT_METADATA_URL,
        "dpop": scenario in ("auth/dpop", "auth/dpop-nonce"),
    }
    if context.get("client_id"):
        kwargs["client_id"] = context["client_id"]
        kwargs["client_secret"] = context.get("client_secret")
        kwargs["client_issuer"] = context.get("issuer")
    if scenario.startswith("auth/client-credentials"):
        kwargs["grant_type"] = "client_credentials"
    if context.get("valid_jwt"):  # workload identity federation: the workload's own JWT
        kwargs["grant_type"] = "jwt_bearer"
        kwargs["assertion"] = context["valid_jwt"]
    if context.get("idp_id_token"):  # enterprise-managed: ID token -> ID-JAG -> access token
        kwargs["grant_type"] = "jwt_bearer"
        kwargs["assertion"] = IdJagTokenExchange(
            context["idp_token_endpoint"],
            context["idp_id_token"],
            client_id=context.get("idp_client_id"),
        )
    if context.get("private_key_pem"):
        kwargs["private_key"] = context["private_key_pem"]
        kwargs["signing_algorithm"] = context.get("signing_algorithm")
        kwargs["token_endpoint_auth_method"] = "private_key_jwt"
    return OAuthClientProvider(url, **kwargs)


# -- scenarios -----------------------------------------------------------------------------


async def generic(run: Run) -> None:
    """List the tools, and call each with arguments made from its input schema."""
    for tool in await run.client.list_tools():
        schema = tool.input_schema if isinstance(tool.input_schema, dict) else {}
        result = await run.client.call_tool(tool.name, arguments_for(schema))
        log.info("%s: %s", tool.name, result.content)


async def list_only(run: Run) -> None:
    """Connect and list the tools, as any client would (initialize, request-metadata,
    json-schema-ref-no-deref: the schema is read, its network ``$ref`` never fetched)."""
    tools = await run.client.list_tools()
    log.info("tools: %s", [tool.name for tool in tools])


def call(name: str, arguments: dict[str, Any] | None = None) -> Callable[[Run], Awaitable[None]]:
    """A scenario that calls one tool (after listing the tools)."""

    async def scenario(run: Run) -> None:
        await run.client.list_tools()
        result = await run.client.call_tool(name, arguments or {})
        log.info("%s: %s", name, result.content)

    return scenario


async def every_feature(run: Run) -> None:
    """http-standard-headers: one request of each kind that carries Mcp-Method / Mcp-Name."""
    client = run.client
    for tool in await client.list_tools():
        await client.call_tool(tool.name, arguments_for(tool.input_schema))
    for resource in await client.list_resources():
        await client.read_resource(resource.uri)
    for prompt in await client.list_prompts():
        await client.get_prompt(prompt.name)


async def context_tool_calls(run: Run) -> None:
    """http-custom-headers: call the tools the context names, with its exact arguments."""
    await run.client.list_tools()
    for entry in run.context.get("toolCalls") or []:
        result = await run.client.call_tool(entry["name"], entry.get("arguments") or {})
        log.info("%s: %s", entry["name"], result.content)


async def echo_schema(run: Run) -> None:
    """json-schema-2020-12-preservation: send the focal tool's inputSchema back verbatim."""
    tools = {tool.name: tool for tool in await run.client.list_tools()}
    focal = tools["json_schema_2020_12_tool"]
    result = await run.client.call_tool("json_schema_echo", {"schema": focal.input_schema})
    log.info("json_schema_echo: %s", result.content)


SCENARIOS: dict[str, Callable[[Run], Awaitable[None]]] = {
    "initialize": list_only,
    "tools_call": call("add_numbers", {"a": 5, "b": 3}),
    "elicitation-sep1034-client-defaults": call("test_client_elicitation_defaults"),
    "sse-retry": call("test_reconnection"),
    "request-metadata": list_only,
    "sep-2322-client-request-state": generic,
    "http-standard-headers": every_feature,
    "http-custom-headers": context_tool_calls,
    "http-invalid-tool-headers": generic,
    "json-schema-ref-no-deref": list_only,
    "json-schema-2020-12-preservation": echo_schema,
}

#: Extra ``McpClient`` keyword arguments of scenarios that need them.
CLIENT_OPTIONS: dict[str, dict[str, Any]] = {}


def client_for(url: str, scenario: str, context: dict[str, Any] | None = None) -> McpClient:
    options = HttpClientTransportOptions(
        endpoint=url, transport_mode=HttpTransportMode.AUTO_DETECT, name=f"conformance:{scenario}"
    )
    if scenario.startswith("auth/"):
        oauth_provider(url, scenario, context or {}).install(options)
    kwargs: dict[str, Any] = {
        "client_name": "mcpkit-conformance-client",
        "client_version": "0.1.0",
        "protocol_mode": "auto",
        "elicitation_handler": accept_with_defaults,
        "sampling_handler": answer_sampling,
        "logging_handler": lambda params: log.info("server log: %s", params),
    }
    kwargs.update(CLIENT_OPTIONS.get(scenario, {}))
    return McpClient.http(options, **kwargs)


async def run(url: str, scenario: str, context: dict[str, Any]) -> None:
    async with client_for(url, scenario, context) as client:
        log.info("connected (%s %s): %s", client.era, client.protocol_version, client.server_info)
        await SCENARIOS.get(scenario, generic)(Run(client, scenario, context))


def main() -> int:
    if len(sys.argv) < 2:
        print("usage: conformance_client.py <server-url>", file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(name)s: %(message)s")
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    try:
        asyncio.run(asyncio.wait_for(run(sys.argv[1], scenario, context), RUN_TIMEOUT))
    except Exception as exc:
        log.error("scenario %s failed: %r", scenario or "(none)", exc)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

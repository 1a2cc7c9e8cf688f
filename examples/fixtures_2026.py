"""The fixtures the MCP conformance suite's 2026-07-28 scenarios expect of a server
(server/discover, stateless requests, SEP-2243 headers, multi round-trip requests).
``examples/everything.py`` serves them beside the 2025 fixtures."""

from __future__ import annotations

from typing import Annotated

import msgspec

from mcpkit import McpCatalogManager, McpToolContext, mcp_prompt, mcp_server, mcp_tool

NAME_SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
CONFIRM_SCHEMA = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
CONTEXT_SCHEMA = {
    "type": "object",
    "properties": {"context": {"type": "string"}},
    "required": ["context"],
}
COLOR_SCHEMA = {
    "type": "object",
    "properties": {"color": {"type": "string"}},
    "required": ["color"],
}
STATE_MARKER = "conformance-request-state"


def _sampling(question: str, max_tokens: int) -> tuple[str, dict]:
    return "sampling/createMessage", {
        "messages": [{"role": "user", "content": {"type": "text", "text": question}}],
        "maxTokens": max_tokens,
    }


def _sampled_text(answer: dict) -> str:
    content = answer.get("content")
    if isinstance(content, list):
        content = content[0] if content else {}
    return str((content or {}).get("text", ""))


@mcp_server(name="mcpkit-everything")
class Conformance2026:
    def __init__(self, catalog: McpCatalogManager) -> None:
        self.catalog = catalog
        self.changes = 0

    # stateless requests ---------------------------------------------------------------

    @mcp_tool(description="Needs sampling; fails with -32021 when the client lacks it")
    async def test_missing_capability(self, ctx: McpToolContext) -> str:
        answer = await ctx.sample("Say something", max_tokens=20)
        return _sampled_text(answer)

    @mcp_tool(description="Reports progress, then asks the user through an input request")
    async def test_streaming_elicitation(self, ctx: McpToolContext) -> str:
        await ctx.report_progress(1, 2, "about to ask")
        answer = await ctx.elicit("What is your name?", NAME_SCHEMA, key="user_name")
        return f"Hello, {(answer.content or {}).get('name')}!"

    @mcp_tool(description="Logs at info level (sent only when the request named a log level)")
    async def test_logging_tool(self, ctx: McpToolContext) -> str:
        await ctx.info("test_logging_tool ran")
        return "logged"

    @mcp_tool(description="Adds a tool, so tools/list changes")
    async def test_trigger_tool_change(self) -> str:
        self.changes += 1
        name = f"dynamic_tool_{self.changes}"

        def dynamic() -> str:
            return "dynamic"

        self.catalog.register_tool(dynamic, name=name, description="Added at run time")
        return f"added {name}"

    @mcp_tool(description="Adds a prompt, so prompts/list changes")
    async def test_trigger_prompt_change(self) -> str:
        self.changes += 1
        name = f"dynamic_prompt_{self.changes}"

        def dynamic() -> str:
            return "dynamic"

        self.catalog.register_prompt(dynamic, name=name, description="Added at run time")
        return f"added {name}"

    @mcp_tool(description="A region mirrored into the Mcp-Param-Region header (SEP-2243)")
    def test_custom_header(
        self,
        region: Annotated[
            str, msgspec.Meta(description="Region", extra_json_schema={"x-mcp-header": "Region"})
        ],
        query: str = "",
    ) -> str:
        return f"region={region} query={query}"

    # multi round-trip requests ----------------------------------------------------------

    @mcp_tool(description="Asks the user's name through an input request")
    async def test_input_required_result_elicitation(self, ctx: McpToolContext) -> str:
        answer = await ctx.elicit("What is your name?", NAME_SCHEMA, key="user_name")
        return f"Hello, {(answer.content or {}).get('name')}!"

    @mcp_tool(description="Asks the client's model through an input request")
    async def test_input_required_result_sampling(self, ctx: McpToolContext) -> str:
        answer = await ctx.sample(
            "What is the capital of France?", max_tokens=100, key="capital_question"
        )
        return f"The model said: {_sampled_text(answer)}"

    @mcp_tool(description="Asks for the client's roots through an input request")
    async def test_input_required_result_list_roots(self, ctx: McpToolContext) -> str:
        roots = await ctx.list_roots(key="client_roots")
        return "Roots: " + ", ".join(root.get("uri", "") for root in roots)

    @mcp_tool(description="Keeps its own state across rounds in requestState")
    async def test_input_required_result_request_state(self, ctx: McpToolContext) -> str:
        if ctx.request_state is None:
            ctx.request_state = STATE_MARKER
        answer = await ctx.elicit("Please confirm", CONFIRM_SCHEMA, key="confirm")
        verdict = "state-ok" if ctx.request_state == STATE_MARKER else "state-missing"
        return f"{verdict}: confirmed={(answer.content or {}).get('ok')}"

    @mcp_tool(description="Asks for three inputs at once")
    async def test_input_required_result_multiple_inputs(self, ctx: McpToolContext) -> str:
        ctx.request_state = ctx.request_state or STATE_MARKER
        answers = await ctx.gather_inputs(
            {
                "user_name": (
                    "elicitation/create",
                    {
                        "mode": "form",
                        "message": "What is your name?",
                        "requestedSchema": NAME_SCHEMA,
                    },
                ),
                "greeting": _sampling("Write a short greeting", 50),
                "client_roots": ("roots/list", {}),
            }
        )
        name = ((answers.get("user_name") or {}).get("content") or {}).get("name")
        roots = len((answers.get("client_roots") or {}).get("roots", []))
        return f"name={name} greeting={_sampled_text(answers.get('greeting') or {})} roots={roots}"

    @mcp_tool(description="Asks in two rounds: a first step, then a colour")
    async def test_input_required_result_multi_round(self, ctx: McpToolContext) -> str:
        first = await ctx.elicit("Step 1: what is your name?", NAME_SCHEMA, key="step1")
        second = await ctx.elicit("Step 2: favourite colour?", COLOR_SCHEMA, key="step2")
        return (
            f"name={(first.content or {}).get('name')} color={(second.content or {}).get('color')}"
        )

    @mcp_tool(description="Round 1 carries requestState; an altered one is refused")
    async def test_input_required_result_tampered_state(self, ctx: McpToolContext) -> str:
        ctx.request_state = ctx.request_state or STATE_MARKER
        answer = await ctx.elicit("What is your name?", NAME_SCHEMA, key="user_name")
        return f"Hello, {(answer.content or {}).get('name')}!"

    @mcp_tool(description="Asks only for what the client declared it can answer")
    async def test_input_required_result_capabilities(self, ctx: McpToolContext) -> str:
        answers = await ctx.gather_inputs(
            {
                "user_name": (
                    "elicitation/create",
                    {
                        "mode": "form",
                        "message": "What is your name?",
                        "requestedSchema": NAME_SCHEMA,
                    },
                ),
                "capital_question": _sampling("What is the capital of France?", 100),
                "client_roots": ("roots/list", {}),
            }
        )
        return "answered: " + ", ".join(sorted(answers))

    @mcp_prompt(description="A prompt that first asks the user for context")
    async def test_input_required_result_prompt(self, ctx: McpToolContext) -> list:
        answer = await ctx.elicit(
            "What context should the prompt use?", CONTEXT_SCHEMA, key="user_context"
        )
        context = (answer.content or {}).get("context", "")
        return [{"role": "user", "content": {"type": "text", "text": f"Context: {context}"}}]

"""Engine defects the live fuzzer (tests/fuzz/) found, one regression test or more each,
over a raw in-memory connection at the protocol version in question. Every message the
server sends is checked against that version's schema; the client's answers to the
server's own requests are scripted, malformed ones included.

G  a client's malformed answer to sampling, elicitation or roots: -32602, no traceback
H  completion/complete with parameters of the wrong type: -32602 before the handler
I  ctx.gather_inputs follows the session's version, as ctx.elicit does
J  results and descriptions in the form of the session's version (docs/eras.md)
K  SEP-1330 enum forms on a 2025-06-18 session: adapted, or refused before sending
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jsonschema
import pytest

from mcpkit import (
    Audio,
    Image,
    InvalidParamsError,
    McpServerApp,
    McpToolContext,
    MissingCapabilityError,
    mcp_completion,
    mcp_prompt,
    mcp_server,
    mcp_tool,
)
from tests.in_memory import InMemoryPeer
from tests.wire import SchemaChecker, check

ELICITATION = {"elicitation": {}}
ALL_INPUTS = {"elicitation": {}, "sampling": {}, "roots": {}}

Answer = Callable[[str, dict[str, Any]], Any]


def accept_anything(method: str, params: dict[str, Any]) -> Any:
    """A well-behaved client's answers."""
    if method == "elicitation/create":
        return {"action": "accept", "content": {"context": "fine", "name": "Ada"}}
    if method == "sampling/createMessage":
        return {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"}
    return {"roots": [{"uri": "file:///r", "name": "r"}]}


class Client:
    """The client end of one connection at ``version``: answers the server's requests with
    ``answer(method, params)`` (the ``result`` sent), keeps what the server sent, and checks
    every server message against the schema of ``version``."""

    def __init__(
        self,
        app: McpServerApp,
        version: str,
        capabilities: dict[str, Any] | None = None,
        answer: Answer = accept_anything,
    ) -> None:
        self.peer = InMemoryPeer(app)
        self.version = version
        self.capabilities = capabilities or {}
        self.answer = answer
        self.checker = SchemaChecker(version)
        self.server_requests: list[dict[str, Any]] = []
        self.initialize_result: dict[str, Any] = {}
        self.ids = 0

    async def __aenter__(self) -> Client:
        reply = await self.request(
            "initialize",
            {
                "protocolVersion": self.version,
                "capabilities": self.capabilities,
                "clientInfo": {"name": "findings", "version": "1"},
            },
        )
        assert reply["result"]["protocolVersion"] == self.version, reply
        self.initialize_result = reply["result"]
        await self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.peer.close()

    async def _send(self, message: dict[str, Any]) -> None:
        self.checker.outgoing_from_client(message)
        await self.peer.client.send(json.dumps(message).encode())

    async def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """Send a request; answer what the server asks meanwhile; return the reply."""
        self.ids += 1
        rid = self.ids
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            message["params"] = params
        await self._send(message)
        async with asyncio.timeout(5):
            while True:
                frame = await self.peer.client.receive()
                assert frame is not None, "the server closed the connection"
                incoming = json.loads(frame)
                self.checker.from_server(incoming)
                if "method" in incoming and "id" in incoming:
                    self.server_requests.append(incoming)
                    result = self.answer(incoming["method"], incoming.get("params") or {})
                    await self._send({"jsonrpc": "2.0", "id": incoming["id"], "result": result})
                elif incoming.get("id") == rid:
                    return incoming  # type: ignore[no-any-return]

    async def call(self, tool: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        return await self.request("tools/call", {"name": tool, "arguments": arguments or {}})


@pytest.fixture
def no_tracebacks(caplog: pytest.LogCaptureFixture) -> Any:
    """Fails the test when the engine logs an error (an unexpected exception's traceback)."""
    caplog.set_level(logging.WARNING, logger="mcpkit")
    yield caplog
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
    assert errors == [], [r.getMessage() for r in errors]


def error_of(reply: dict[str, Any], version: str) -> dict[str, Any]:
    check(version, "JSONRPCErrorResponse" if version >= "2025-11-25" else "JSONRPCError", reply)
    assert "error" in reply, reply
    return reply["error"]  # type: ignore[no-any-return]


# ------------------------------------------------------------------ G: malformed answers


@dataclass
class Person:
    name: str
    age: int


@mcp_server(name="findings")
class Findings:
    @mcp_tool()
    async def ask_person(self, ctx: McpToolContext) -> str:
        answer = await ctx.elicit("Who?", Person)
        return f"{answer.content.name} is {answer.content.age}"

    @mcp_tool()
    async def roots_or_none(self, ctx: McpToolContext) -> str:
        try:
            roots = await ctx.list_roots()
        except InvalidParamsError as exc:  # the tool sees the client's malformed answer
            return f"no roots: {exc.message}"
        return ",".join(root["uri"] for root in roots)

    @mcp_tool()
    async def go_to(self, ctx: McpToolContext) -> str:
        answer = await ctx.elicit_url("Sign in", "https://example.com/login", "e1")
        return answer.action

    @mcp_tool()
    async def pick_titled(self, ctx: McpToolContext) -> str:
        answer = await ctx.elicit("Pick", TITLED_SCHEMA)
        return f"{answer.action}:{json.dumps(answer.data)}"

    @mcp_tool()
    async def gather_multi(self, ctx: McpToolContext) -> str:
        answers = await ctx.gather_inputs(
            {
                "multi": ("elicitation/create", {"message": "Pick", "requestedSchema": MULTI}),
                "roots": ("roots/list", None),
            }
        )
        return ",".join(sorted(answers))

    @mcp_tool()
    def resource_link(self) -> list:
        return [{"type": "resource_link", "uri": "test://linked", "name": "linked"}]

    @mcp_tool()
    def typed_dict(self) -> dict:
        return {"type": "person", "name": "Ada"}  # data, not a content block

    @mcp_tool()
    def explicit_result(self) -> dict:
        return {
            "content": [
                {"type": "text", "text": "a", "annotations": {"lastModified": "2025-01-01"}},
                Audio(b"RIFF", "audio/wav").to_content(),
                {"type": "hologram"},
            ]
        }

    @mcp_tool(title="Titled", annotations={"readOnlyHint": True})
    def titled(self) -> int:
        return 1

    @mcp_prompt(title="Sounds")
    def sounds(self) -> list:
        return [Audio(b"RIFF", "audio/wav"), Image(b"\x89PNG", "image/png"), "words"]

    @mcp_prompt()
    def ask(self, topic: str) -> str:
        return topic

    @mcp_completion(prompt="ask")
    def complete_topic(self, value: str) -> list[str]:
        return [t for t in ("paris", "park") if t.startswith(value.lower())]


TITLED_SCHEMA = {
    "type": "object",
    "properties": {
        "color": {
            "type": "string",
            "title": "Colour",
            "oneOf": [{"const": "r", "title": "Red"}, {"const": "g", "title": "Green"}],
            "default": "r",
        },
        "size": {"type": "string", "anyOf": [{"const": "s"}, {"const": "l", "title": "Large"}]},
        "plain": {"type": "string", "enum": ["a", "b"]},
    },
}
MULTI = {
    "type": "object",
    "properties": {"tags": {"type": "array", "items": {"type": "string", "enum": ["x", "y"]}}},
}


@pytest.fixture
def findings() -> McpServerApp:
    return McpServerApp(Findings)


def scripted(result: Any) -> Answer:
    return lambda method, params: result


@pytest.mark.parametrize(
    "result",
    [
        1.5,
        [1, 2],
        "accept",
        None,
        {"action": "maybe"},
        {"action": "accept", "content": [1]},
        {"action": "accept", "content": {"context": {"nested": True}}},
    ],
    ids=["number", "list", "string", "null", "bad-action", "content-list", "nested-value"],
)
async def test_malformed_elicitation_answer_to_a_prompt_is_invalid_params(
    everything, no_tracebacks, result
):
    """The fuzzer's case: prompts/get test_input_required_result_prompt on stdio, the
    client answering elicitation/create with ``1.5``: was -32603 and an AttributeError."""
    async with Client(everything, "2025-11-25", ELICITATION, scripted(result)) as client:
        reply = await client.request("prompts/get", {"name": "test_input_required_result_prompt"})
        error = error_of(reply, "2025-11-25")
        assert error["code"] == -32602, error
        assert "elicitation/create" in error["message"]
        assert error["data"] == {"method": "elicitation/create"}
        # the session goes on
        assert "result" in await client.call("test_simple_text")


async def test_malformed_elicitation_answer_to_a_tool_is_invalid_params(everything, no_tracebacks):
    async with Client(everything, "2025-06-18", ELICITATION, scripted([])) as client:
        reply = await client.call("test_elicitation", {"message": "hi"})
        assert error_of(reply, "2025-06-18")["code"] == -32602


async def test_elicited_content_that_the_type_refuses_is_invalid_params(findings, no_tracebacks):
    answer = {"action": "accept", "content": {"name": "Ada", "age": "old"}}
    async with Client(findings, "2025-11-25", ELICITATION, scripted(answer)) as client:
        error = error_of(await client.call("ask_person"), "2025-11-25")
        assert error["code"] == -32602 and "does not match the requested schema" in error["message"]
    good = {"action": "accept", "content": {"name": "Ada", "age": 36}}
    async with Client(findings, "2025-11-25", ELICITATION, scripted(good)) as client:
        reply = await client.call("ask_person")
        check("2025-11-25", "CallToolResult", reply["result"])
        assert reply["result"]["content"][0]["text"] == "Ada is 36"


@pytest.mark.parametrize(
    "result",
    [
        1.5,
        {"role": "robot", "content": {"type": "text", "text": "x"}, "model": "m"},
        {"role": "assistant", "content": "just text", "model": "m"},
        {"role": "assistant", "content": {"type": "text", "text": "x"}},
        {"role": "assistant", "content": [{"text": "untyped"}], "model": "m"},
    ],
    ids=["number", "bad-role", "string-content", "no-model", "untyped-block"],
)
async def test_malformed_sampling_answer_is_invalid_params(everything, no_tracebacks, result):
    async with Client(everything, "2025-11-25", {"sampling": {}}, scripted(result)) as client:
        error = error_of(await client.call("test_sampling", {"prompt": "p"}), "2025-11-25")
        assert error["code"] == -32602 and "sampling/createMessage" in error["message"]


@pytest.mark.parametrize(
    "result",
    [[], {"roots": "file:///r"}, {"roots": [{"uri": 7}]}, {"roots": [{"uri": "f", "name": 1}]}],
    ids=["list", "string-roots", "number-uri", "number-name"],
)
async def test_malformed_roots_answer_is_invalid_params(everything, no_tracebacks, result):
    async with Client(everything, "2025-11-25", {"roots": {}}, scripted(result)) as client:
        reply = await client.call("test_input_required_result_list_roots")
        error = error_of(reply, "2025-11-25")
        assert error["code"] == -32602 and "roots/list" in error["message"]


async def test_a_tool_can_catch_a_malformed_answer(findings, no_tracebacks):
    async with Client(findings, "2025-11-25", {"roots": {}}, scripted({"roots": 3})) as client:
        reply = await client.call("roots_or_none")
        check("2025-11-25", "CallToolResult", reply["result"])
        assert reply["result"]["content"][0]["text"].startswith("no roots: Invalid result")


async def test_well_formed_answers_still_reach_the_tools(everything, no_tracebacks):
    async with Client(everything, "2025-11-25", ALL_INPUTS) as client:
        reply = await client.call("test_sampling", {"prompt": "p"})
        assert reply["result"]["content"][0]["text"] == "LLM response: hi"
        reply = await client.call("test_input_required_result_list_roots")
        assert reply["result"]["content"][0]["text"] == "Roots: file:///r"
        reply = await client.request("prompts/get", {"name": "test_input_required_result_prompt"})
        check("2025-11-25", "GetPromptResult", reply["result"])
        assert reply["result"]["messages"][0]["content"]["text"] == "Context: fine"


# ------------------------------------------------------------------ H: completion params


@pytest.mark.parametrize(
    "params, param",
    [
        (
            {
                "ref": {"type": "ref/prompt", "name": "ask"},
                "argument": {"name": "topic", "value": 5},
            },
            "argument.value",
        ),
        (
            {"ref": {"type": "ref/prompt", "name": "ask"}, "argument": {"name": 5, "value": "p"}},
            "argument.name",
        ),
        (
            {"ref": {"type": "ref/prompt", "name": "ask"}, "argument": {"name": "topic"}},
            "argument.value",
        ),
        (
            {"ref": {"type": "ref/prompt", "name": 3}, "argument": {"name": "topic", "value": "p"}},
            "ref.name",
        ),
        (
            {"ref": {"type": "ref/resource", "uri": None}, "argument": {"name": "a", "value": "p"}},
            "ref.uri",
        ),
        (
            {"ref": {"type": "ref/tool", "name": "x"}, "argument": {"name": "a", "value": "p"}},
            "ref",
        ),
        (
            {
                "ref": {"type": "ref/prompt", "name": "ask"},
                "argument": {"name": "topic", "value": "p"},
                "context": "x",
            },
            "context",
        ),
        (
            {
                "ref": {"type": "ref/prompt", "name": "ask"},
                "argument": {"name": "topic", "value": "p"},
                "context": {"arguments": {"other": 1}},
            },
            "context.arguments",
        ),
    ],
    ids=["value", "name", "no-value", "ref-name", "ref-uri", "ref-type", "context", "context-args"],
)
async def test_completion_params_are_checked_before_the_handler(
    findings, no_tracebacks, params, param
):
    """The fuzzer's case: ``"value": 5`` reached ``value.lower()``: -32603 and a traceback."""
    async with Client(findings, "2025-11-25") as client:
        error = error_of(await client.request("completion/complete", params), "2025-11-25")
        assert error["code"] == -32602, error
        if param != "ref":
            assert error["data"] == {"param": param}
        good = {
            "ref": {"type": "ref/prompt", "name": "ask"},
            "argument": {"name": "topic", "value": "PA"},
            "context": {"arguments": {"other": "x"}},
        }
        reply = await client.request("completion/complete", good)
        check("2025-11-25", "CompleteResult", reply["result"])
        assert reply["result"]["completion"]["values"] == ["paris", "park"]


# ------------------------------------------------------------------ I: gather_inputs


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26"])
async def test_gather_inputs_sends_no_elicitation_before_2025_06_18(
    everything, no_tracebacks, version
):
    """The fuzzer's case: multi_input sent elicitation/create (with ``mode``) to sessions
    whose version has no elicitation. Those requests are skipped, as a capability the
    client lacks is; ctx.elicit refuses the same sessions with -32021."""
    async with Client(everything, version, ELICITATION) as client:
        reply = await client.call("multi_input")
        check(version, "CallToolResult", reply["result"])
        assert reply["result"]["content"][0]["text"] == "name=None confirmed=None"
        assert client.server_requests == []
        error = error_of(await client.call("test_elicitation", {"message": "m"}), version)
        assert error["code"] == -32021 and version in error["message"]
        assert error["data"] == {"requiredCapabilities": {"elicitation": {}}}


async def test_gather_inputs_at_2025_06_18_sends_no_mode(everything, no_tracebacks):
    async with Client(everything, "2025-06-18", ELICITATION) as client:
        reply = await client.call("multi_input")
        assert reply["result"]["content"][0]["text"] == "name=Ada confirmed=None"
        assert len(client.server_requests) == 2
        for request in client.server_requests:
            check("2025-06-18", "ElicitRequest", request)
            assert "mode" not in request["params"]


async def test_gather_inputs_at_2025_11_25_keeps_mode(everything, no_tracebacks):
    async with Client(everything, "2025-11-25", ELICITATION) as client:
        await client.call("multi_input")
        assert [r["params"]["mode"] for r in client.server_requests] == ["form", "form"]
        for request in client.server_requests:
            check("2025-11-25", "ElicitRequest", request)


async def test_gather_inputs_skips_a_form_the_version_cannot_show(findings, no_tracebacks):
    async with Client(findings, "2025-06-18", ALL_INPUTS) as client:
        reply = await client.call("gather_multi")
        assert reply["result"]["content"][0]["text"] == "roots"
        assert [r["method"] for r in client.server_requests] == ["roots/list"]


@pytest.mark.parametrize(
    "version, capabilities, required",
    [
        ("2025-06-18", ELICITATION, {"elicitation": {}}),
        ("2025-11-25", ELICITATION, {"elicitation": {"url": {}}}),
        ("2025-11-25", {"elicitation": {"form": {}}}, {"elicitation": {"url": {}}}),
    ],
    ids=["2025-06-18", "form-only-by-default", "form-only"],
)
async def test_url_elicitation_follows_version_and_declared_modes(
    findings, no_tracebacks, version, capabilities, required
):
    async with Client(findings, version, capabilities) as client:
        error = error_of(await client.call("go_to"), version)
        assert error["code"] == -32021 and error["data"] == {"requiredCapabilities": required}
        assert client.server_requests == []


async def test_url_elicitation_reaches_a_client_that_declared_it(findings, no_tracebacks):
    answer = scripted({"action": "accept"})
    async with Client(findings, "2025-11-25", {"elicitation": {"url": {}}}, answer) as client:
        reply = await client.call("go_to")
        assert reply["result"]["content"][0]["text"] == "accept"
        (request,) = client.server_requests
        check("2025-11-25", "ElicitRequest", request)
        assert request["params"]["mode"] == "url"
        # a client that declared only URL mode gets no form
        error = error_of(await client.call("pick_titled"), "2025-11-25")
        assert error["code"] == -32021
        assert error["data"] == {"requiredCapabilities": {"elicitation": {"form": {}}}}


# ------------------------------------------------------------------ J: content per version


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"])
async def test_audio_content_only_to_versions_that_have_it(everything, no_tracebacks, version):
    """The fuzzer's case: test_audio_content answered a 2024-11-05 session with an audio
    block, which that version has no type for."""
    async with Client(everything, version) as client:
        result = (await client.call("test_audio_content"))["result"]
        check(version, "CallToolResult", result)
        (block,) = result["content"]
        if version == "2024-11-05":
            assert block == {
                "type": "text",
                "text": "[audio content (audio/wav) not supported by protocol 2024-11-05]",
            }
        else:
            assert block["type"] == "audio" and block["mimeType"] == "audio/wav"


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-06-18"])
async def test_resource_links_from_2025_06_18(findings, no_tracebacks, version):
    async with Client(findings, version) as client:
        result = (await client.call("resource_link"))["result"]
        check(version, "CallToolResult", result)
        (block,) = result["content"]
        if version < "2025-06-18":
            assert block["text"] == (
                f"[resource_link content (test://linked) not supported by protocol {version}]"
            )
        else:
            assert block == {"type": "resource_link", "uri": "test://linked", "name": "linked"}


async def test_a_dict_with_another_type_is_data_not_a_content_block(findings, no_tracebacks):
    async with Client(findings, "2025-11-25") as client:
        result = (await client.call("typed_dict"))["result"]
        check("2025-11-25", "CallToolResult", result)
        assert json.loads(result["content"][0]["text"]) == {"type": "person", "name": "Ada"}


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-11-25"])
async def test_an_explicit_result_is_adapted_too(findings, no_tracebacks, version):
    async with Client(findings, version) as client:
        result = (await client.call("explicit_result"))["result"]
        check(version, "CallToolResult", result)
        text, audio, unknown = result["content"]
        assert unknown["text"] == f"[hologram content not supported by protocol {version}]"
        assert audio["type"] == ("text" if version == "2024-11-05" else "audio")
        # a block of a type the version has goes as it is: a result is the call's data
        assert text == {"type": "text", "text": "a", "annotations": {"lastModified": "2025-01-01"}}


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"])
async def test_prompt_content_per_version(findings, no_tracebacks, version):
    async with Client(findings, version) as client:
        result = (await client.request("prompts/get", {"name": "sounds"}))["result"]
        check(version, "GetPromptResult", result)
        kinds = [message["content"]["type"] for message in result["messages"]]
        assert kinds == ["text" if version == "2024-11-05" else "audio", "image", "text"]
        prompts = (await client.request("prompts/list"))["result"]["prompts"]
        check(version, "ListPromptsResult", {"prompts": prompts})
        sounds = next(p for p in prompts if p["name"] == "sounds")
        assert ("title" in sounds) == (version >= "2025-06-18")


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"])
async def test_tool_descriptions_per_version(everything, no_tracebacks, version):
    async with Client(everything, version) as client:
        result = (await client.call("text_stats", {"text": "One two. Three"}))["result"]
        check(version, "CallToolResult", result)
        # kept in every version (the call's data); older clients read the text block
        assert result["structuredContent"]["words"] == 3
        assert json.loads(result["content"][0]["text"])["words"] == 3
        tools = (await client.request("tools/list"))["result"]
        check(version, "ListToolsResult", tools)
        stats = next(t for t in tools["tools"] if t["name"] == "text_stats")
        assert ("outputSchema" in stats) == ("title" in stats) == (version >= "2025-06-18")
        assert ("annotations" in stats) == (version >= "2025-03-26")
        tasks = next(t for t in tools["tools"] if t["name"] == "slow_compute")
        assert ("execution" in tasks) == (version >= "2025-11-25")


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"])
async def test_server_info_members_per_version(version):
    app = McpServerApp(Findings, title="Findings")
    app.website_url = "https://example.com"
    async with Client(app, version) as client:
        info = client.initialize_result["serverInfo"]
        check(version, "Implementation", info)
    assert info["name"] == "findings"
    assert ("title" in info) == (version >= "2025-06-18")
    assert ("websiteUrl" in info) == (version >= "2025-11-25")


# ------------------------------------------------------------------ K: SEP-1330 enums


async def test_sep1330_enums_are_refused_before_sending_to_2025_06_18(everything, no_tracebacks):
    """The fuzzer's case: the five SEP-1330 forms went as they are to a 2025-06-18 client,
    whose schema has only ``enum`` + ``enumNames``; multi-select has no form there."""
    async with Client(everything, "2025-06-18", ELICITATION) as client:
        error = error_of(await client.call("test_elicitation_sep1330_enums"), "2025-06-18")
        assert error["code"] == -32021 and "multi-select" in error["message"]
        assert client.server_requests == []


async def test_sep1330_enums_go_as_they_are_to_2025_11_25(everything, no_tracebacks):
    async with Client(everything, "2025-11-25", ELICITATION) as client:
        reply = await client.call("test_elicitation_sep1330_enums")
        assert "result" in reply
        (request,) = client.server_requests
        check("2025-11-25", "ElicitRequest", request)
        properties = request["params"]["requestedSchema"]["properties"]
        assert properties["titledSingle"]["oneOf"][0] == {
            "const": "value1",
            "title": "First Option",
        }
        assert properties["untitledMulti"]["type"] == "array"


async def test_titled_enums_become_enum_names_for_2025_06_18(findings, no_tracebacks):
    async with Client(findings, "2025-06-18", ELICITATION) as client:
        reply = await client.call("pick_titled")
        assert "result" in reply
        (request,) = client.server_requests
        check("2025-06-18", "ElicitRequest", request)
        properties = request["params"]["requestedSchema"]["properties"]
        assert properties["color"] == {
            "type": "string",
            "title": "Colour",
            "enum": ["r", "g"],
            "enumNames": ["Red", "Green"],
            "default": "r",
        }
        assert properties["size"] == {
            "type": "string",
            "enum": ["s", "l"],
            "enumNames": ["s", "Large"],
        }
        assert properties["plain"] == TITLED_SCHEMA["properties"]["plain"]
        for prop in properties.values():  # each one an EnumSchema of 2025-06-18
            check("2025-06-18", "EnumSchema", prop)
        assert "mode" not in request["params"]
    assert "oneOf" in TITLED_SCHEMA["properties"]["color"]  # the tool's own schema is untouched


def test_a_titled_enum_is_no_2025_06_18_enum_schema():
    """Why the conversion: the 2025-11-25 form is not one of the 2025-06-18 enum shapes."""
    with pytest.raises(jsonschema.ValidationError):
        check("2025-06-18", "EnumSchema", TITLED_SCHEMA["properties"]["color"])


async def test_a_tool_can_fall_back_when_the_form_is_refused(no_tracebacks):
    @mcp_server(name="fallback")
    class Fallback:
        @mcp_tool()
        async def tags(self, ctx: McpToolContext) -> str:
            try:
                answer = await ctx.elicit("Tags?", MULTI)
            except MissingCapabilityError:
                answer = await ctx.elicit(
                    "Tags, comma separated?",
                    {"type": "object", "properties": {"tags": {"type": "string"}}},
                )
            return str(answer.data)

    answer = scripted({"action": "accept", "content": {"tags": "x,y"}})
    async with Client(McpServerApp(Fallback), "2025-06-18", ELICITATION, answer) as client:
        reply = await client.call("tags")
        assert reply["result"]["content"][0]["text"] == "{'tags': 'x,y'}"
        (request,) = client.server_requests
        assert request["params"]["requestedSchema"]["properties"]["tags"] == {"type": "string"}

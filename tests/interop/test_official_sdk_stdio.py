"""Interop over stdio with the official ``mcp`` SDK (2.3.0), both ways round:

* the official ``ClientSession`` against ``examples/everything.py`` served by
  ``python -m mcpkit run ... --transport stdio``;
* mcpkit's ``McpClient`` against ``tests/interop/official_server.py`` (an ``MCPServer``).

Each test starts its own server process and bounds every wait with ``asyncio.timeout``.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import io
import json
import sys
import wave
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

from mcpkit import McpCallError, McpClient, StdioClientTransportOptions
from tests.waiting import wait_until

pytestmark = [
    pytest.mark.interop,
    # The official SDK marks the 2025-era methods (logging/setLevel, resources/subscribe,
    # sampling...) deprecated as of 2026-07-28; they are exactly what is under test here.
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]

ROOT = Path(__file__).resolve().parents[2]
EVERYTHING = "examples/everything.py"
OFFICIAL_SERVER = Path(__file__).with_name("official_server.py")

#: Upper bound for one whole test (process start-up included).
TEST_TIMEOUT = 30.0
#: How long "nothing else arrives" is watched for.
QUIET_PERIOD = 0.3

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
SAMPLING_ANSWER = "This is a test response from the client"


# =========================================================================================
# official client -> mcpkit server (examples/everything.py)
# =========================================================================================


@dataclass
class Recorder:
    """What the official client saw of the server's own messages."""

    notifications: list[Any] = field(default_factory=list)
    logs: list[types.LoggingMessageNotificationParams] = field(default_factory=list)
    sampling_requests: list[types.CreateMessageRequestParams] = field(default_factory=list)
    elicitation_requests: list[Any] = field(default_factory=list)
    elicitation_answer: types.ElicitResult = field(
        default_factory=lambda: types.ElicitResult(
            action="accept", content={"username": "testuser", "email": "test@example.com"}
        )
    )

    def of_type(self, kind: type) -> list[Any]:
        return [n for n in self.notifications if isinstance(n, kind)]

    async def on_message(self, message: Any) -> None:
        self.notifications.append(message)

    async def on_log(self, params: types.LoggingMessageNotificationParams) -> None:
        self.logs.append(params)

    async def on_sampling(
        self, context: Any, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult:
        self.sampling_requests.append(params)
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text=SAMPLING_ANSWER),
            model="test-model",
            stop_reason="endTurn",
        )

    async def on_elicitation(self, context: Any, params: Any) -> types.ElicitResult:
        self.elicitation_requests.append(params)
        return self.elicitation_answer


@contextlib.asynccontextmanager
async def official_client(
    *, sampling: bool = True, elicitation: bool = True
) -> AsyncIterator[tuple[ClientSession, Recorder]]:
    """An initialized official ``ClientSession`` on a fresh mcpkit stdio server process."""
    recorder = Recorder()
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "mcpkit", "run", EVERYTHING, "--transport", "stdio"],
        cwd=str(ROOT),
    )
    async with stdio_client(params) as (read, write):
        async with ClientSession(
            read,
            write,
            read_timeout_seconds=10,
            sampling_callback=recorder.on_sampling if sampling else None,
            elicitation_callback=recorder.on_elicitation if elicitation else None,
            logging_callback=recorder.on_log,
            message_handler=recorder.on_message,
        ) as session:
            await session.initialize()
            yield session, recorder


def texts(result: types.CallToolResult) -> list[str]:
    return [block.text for block in result.content if isinstance(block, types.TextContent)]


def requested_schema(request: Any) -> dict[str, Any]:
    """The ``requestedSchema`` of a recorded elicitation request, as a plain dict."""
    schema = request.requested_schema
    if isinstance(schema, dict):
        return schema
    return schema.model_dump(by_alias=True, exclude_none=True)


def is_titled_option(option: dict[str, Any]) -> bool:
    return isinstance(option.get("const"), str) and isinstance(option.get("title"), str)


REQUIRED_TOOLS = {
    "test_simple_text",
    "test_image_content",
    "test_audio_content",
    "test_embedded_resource",
    "test_multiple_content_types",
    "test_tool_with_logging",
    "test_tool_with_progress",
    "test_error_handling",
    "test_sampling",
    "test_elicitation",
    "test_elicitation_sep1034_defaults",
    "test_elicitation_sep1330_enums",
    "json_schema_2020_12_tool",
    "test_reconnection",
}
REQUIRED_PROMPTS = {
    "test_simple_prompt",
    "test_prompt_with_arguments",
    "test_prompt_with_embedded_resource",
    "test_prompt_with_image",
}


async def test_initialize_and_listings() -> None:
    async with asyncio.timeout(TEST_TIMEOUT), official_client() as (session, _):
        init = session.initialize_result
        assert init is not None
        assert init.protocol_version == "2025-11-25"
        assert init.server_info.name == "mcpkit-everything"
        caps = init.capabilities
        assert caps.tools is not None and caps.prompts is not None and caps.logging is not None
        assert caps.resources is not None and caps.resources.subscribe is True
        assert caps.completions is not None

        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert set(tools) >= REQUIRED_TOOLS
        for tool in tools.values():
            assert tool.description, f"{tool.name} has no description"
            assert tool.input_schema.get("type") == "object"
        assert tools["test_sampling"].input_schema["required"] == ["prompt"]
        assert tools["test_elicitation"].input_schema["required"] == ["message"]

        resources = {r.uri: r for r in (await session.list_resources()).resources}
        assert resources["test://static-text"].mime_type == "text/plain"
        assert resources["test://static-binary"].mime_type == "image/png"
        assert "test://watched-resource" in resources
        for resource in resources.values():
            assert resource.name

        templates = (await session.list_resource_templates()).resource_templates
        assert [t.uri_template for t in templates] == ["test://template/{id}/data"]
        assert templates[0].mime_type == "application/json"

        prompts = {p.name: p for p in (await session.list_prompts()).prompts}
        assert set(prompts) >= REQUIRED_PROMPTS
        for prompt in prompts.values():
            assert prompt.description
        args = {a.name: a for a in prompts["test_prompt_with_arguments"].arguments or []}
        assert set(args) == {"arg1", "arg2"}
        assert all(a.required for a in args.values())
        embedded_args = prompts["test_prompt_with_embedded_resource"].arguments or []
        assert [a.name for a in embedded_args] == ["resourceUri"]

        await session.send_ping()


async def test_json_schema_2020_12_tool_schema_is_verbatim() -> None:
    async with asyncio.timeout(TEST_TIMEOUT), official_client() as (session, _):
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        schema = tools["json_schema_2020_12_tool"].input_schema
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        assert schema["$defs"]["address"]["$anchor"] == "addressDef"
        assert schema["$defs"]["address"]["properties"] == {
            "street": {"type": "string"},
            "city": {"type": "string"},
        }
        assert schema["properties"]["address"] == {"$ref": "#/$defs/address"}
        contact = schema["properties"]["contactMethod"]
        assert contact == {"type": "string", "enum": ["phone", "email"]}
        assert schema["allOf"] == [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}]
        assert schema["if"] == {
            "properties": {"contactMethod": {"const": "phone"}},
            "required": ["contactMethod"],
        }
        assert schema["then"] == {"required": ["phone"]}
        assert schema["else"] == {"required": ["email"]}
        assert schema["additionalProperties"] is False

        result = await session.call_tool(
            "json_schema_2020_12_tool",
            {"name": "Ada", "contactMethod": "email", "email": "ada@example.com"},
        )
        assert not result.is_error
        assert "ada@example.com" in texts(result)[0]


async def test_content_tools() -> None:
    async with asyncio.timeout(TEST_TIMEOUT), official_client() as (session, _):
        result = await session.call_tool("test_simple_text")
        assert not result.is_error
        assert texts(result) == ["This is a simple text response for testing."]

        result = await session.call_tool("test_image_content", {})
        [image] = result.content
        assert isinstance(image, types.ImageContent)
        assert image.mime_type == "image/png"
        assert base64.b64decode(image.data).startswith(PNG_SIGNATURE)

        result = await session.call_tool("test_audio_content", {})
        [audio] = result.content
        assert isinstance(audio, types.AudioContent)
        assert audio.mime_type == "audio/wav"
        with wave.open(io.BytesIO(base64.b64decode(audio.data))) as clip:
            assert clip.getnframes() > 0

        result = await session.call_tool("test_embedded_resource", {})
        [embedded] = result.content
        assert isinstance(embedded, types.EmbeddedResource)
        assert isinstance(embedded.resource, types.TextResourceContents)
        assert embedded.resource.uri == "test://embedded-resource"
        assert embedded.resource.mime_type == "text/plain"
        assert embedded.resource.text == "This is an embedded resource content."

        result = await session.call_tool("test_multiple_content_types", {})
        assert [block.type for block in result.content] == ["text", "image", "resource"]
        assert result.content[0].text == "Multiple content types test:"  # type: ignore[union-attr]
        resource = result.content[2].resource  # type: ignore[union-attr]
        assert resource.uri == "test://mixed-content-resource"
        assert resource.mime_type == "application/json"
        assert json.loads(resource.text) == {"test": "data", "value": 123}

        result = await session.call_tool("test_reconnection", {})
        assert not result.is_error and texts(result)


async def test_error_handling_is_a_tool_error_not_a_protocol_error() -> None:
    async with asyncio.timeout(TEST_TIMEOUT), official_client() as (session, _):
        result = await session.call_tool("test_error_handling", {})
        assert result.is_error is True
        assert texts(result) == ["This tool intentionally returns an error for testing"]

        result = await session.call_tool("calculate", {"a": 1, "b": 0, "operation": "divide"})
        assert result.is_error is True
        assert "divide by zero" in texts(result)[0]

        with pytest.raises(MCPError):
            await session.call_tool("no_such_tool", {})
        # invalid input data is a tool execution error (tools, "Error Handling")
        result = await session.call_tool("calculate", {"a": "one", "b": 2})
        assert result.is_error is True
        assert texts(result)[0].startswith("Invalid argument 'a'")


async def test_structured_output_validates_against_output_schema() -> None:
    async with asyncio.timeout(TEST_TIMEOUT), official_client() as (session, _):
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert tools["calculate"].output_schema is not None
        # call_tool validates structuredContent against the listed outputSchema
        result = await session.call_tool("calculate", {"a": 2, "b": 3, "operation": "multiply"})
        assert not result.is_error
        assert result.structured_content == {"result": 6.0}

        result = await session.call_tool("text_stats", {"text": "Hello world. Hello again!\nBye"})
        assert result.structured_content == {
            "characters": 29,
            "words": 5,
            "lines": 2,
            "sentences": 3,
            "most_common_word": "hello",
        }
        assert json.loads(texts(result)[0]) == result.structured_content


async def test_progress_notifications() -> None:
    async with asyncio.timeout(TEST_TIMEOUT), official_client() as (session, _):
        updates: list[tuple[float, float | None, str | None]] = []

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            updates.append((progress, total, message))

        result = await session.call_tool(
            "test_tool_with_progress", {}, progress_callback=on_progress
        )
        assert not result.is_error
        await wait_until(lambda: len(updates) >= 3, "3 progress notifications")
        assert [(p, t) for p, t, _ in updates] == [(0, 100), (50, 100), (100, 100)]


async def test_logging_notifications_and_level_filter() -> None:
    async with asyncio.timeout(TEST_TIMEOUT), official_client() as (session, recorder):
        await session.set_logging_level("debug")
        result = await session.call_tool("test_tool_with_logging", {})
        assert not result.is_error
        await wait_until(lambda: len(recorder.logs) >= 3, "3 log messages")
        assert [(log.level, log.data) for log in recorder.logs] == [
            ("info", "Tool execution started"),
            ("info", "Tool processing data"),
            ("info", "Tool execution completed"),
        ]

        # above the tool's level: nothing may come through
        recorder.logs.clear()
        await session.set_logging_level("warning")
        await session.call_tool("test_tool_with_logging", {})
        await session.send_ping()
        await asyncio.sleep(QUIET_PERIOD)
        assert recorder.logs == []


async def test_read_resources() -> None:
    async with asyncio.timeout(TEST_TIMEOUT), official_client() as (session, _):
        [text] = (await session.read_resource("test://static-text")).contents
        assert isinstance(text, types.TextResourceContents)
        assert (text.uri, text.mime_type) == ("test://static-text", "text/plain")
        assert text.text == "This is the content of the static text resource."

        [blob] = (await session.read_resource("test://static-binary")).contents
        assert isinstance(blob, types.BlobResourceContents)
        assert blob.mime_type == "image/png"
        assert base64.b64decode(blob.blob).startswith(PNG_SIGNATURE)

        [data] = (await session.read_resource("test://template/123/data")).contents
        assert isinstance(data, types.TextResourceContents)
        assert data.uri == "test://template/123/data"
        assert data.mime_type == "application/json"
        assert json.loads(data.text) == {
            "id": "123",
            "templateTest": True,
            "data": "Data for ID: 123",
        }

        with pytest.raises(MCPError):
            await session.read_resource("test://no-such-resource")


async def test_subscribe_update_unsubscribe() -> None:
    uri = "test://watched-resource"
    async with asyncio.timeout(TEST_TIMEOUT), official_client() as (session, recorder):
        [before] = (await session.read_resource(uri)).contents
        await session.subscribe_resource(uri)

        result = await session.call_tool("update_watched_resource", {})
        assert "1 subscriber(s) notified" in texts(result)[0]
        await wait_until(lambda: recorder.of_type(types.ResourceUpdatedNotification), "updated")
        [note] = recorder.of_type(types.ResourceUpdatedNotification)
        assert note.params.uri == uri
        [after] = (await session.read_resource(uri)).contents
        assert after.text != before.text  # type: ignore[union-attr]

        await session.unsubscribe_resource(uri)
        result = await session.call_tool("update_watched_resource", {})
        assert "0 subscriber(s) notified" in texts(result)[0]
        await session.send_ping()
        await asyncio.sleep(QUIET_PERIOD)
        assert len(recorder.of_type(types.ResourceUpdatedNotification)) == 1


async def test_notes_store_list_changed_and_updates() -> None:
    async with asyncio.timeout(TEST_TIMEOUT), official_client() as (session, recorder):
        result = await session.call_tool("save_note", {"key": "groceries", "text": "milk"})
        assert texts(result) == ["Created note://groceries"]
        await wait_until(
            lambda: recorder.of_type(types.ResourceListChangedNotification), "list_changed"
        )
        uris = [r.uri for r in (await session.list_resources()).resources]
        assert "note://groceries" in uris
        [content] = (await session.read_resource("note://groceries")).contents
        assert content.text == "milk"  # type: ignore[union-attr]

        await session.subscribe_resource("note://groceries")
        await session.call_tool("save_note", {"key": "groceries", "text": "milk, eggs"})
        await wait_until(lambda: recorder.of_type(types.ResourceUpdatedNotification), "updated")
        [content] = (await session.read_resource("note://groceries")).contents
        assert content.text == "milk, eggs"  # type: ignore[union-attr]

        listed = await session.call_tool("list_notes", {})
        assert listed.structured_content == {"groceries": "milk, eggs"}

        bad = await session.call_tool("save_note", {"key": "Not A Key", "text": "x"})
        assert bad.is_error

        changes = len(recorder.of_type(types.ResourceListChangedNotification))
        await session.call_tool("delete_note", {"key": "groceries"})
        await wait_until(
            lambda: len(recorder.of_type(types.ResourceListChangedNotification)) > changes,
            "resources/list_changed after delete",
        )
        assert "note://groceries" not in [r.uri for r in (await session.list_resources()).resources]
        with pytest.raises(MCPError):
            await session.read_resource("note://groceries")


async def test_prompts() -> None:
    async with asyncio.timeout(TEST_TIMEOUT), official_client() as (session, _):
        simple = await session.get_prompt("test_simple_prompt")
        assert [(m.role, m.content.text) for m in simple.messages] == [  # type: ignore[union-attr]
            ("user", "This is a simple prompt for testing.")
        ]

        with_args = await session.get_prompt(
            "test_prompt_with_arguments", {"arg1": "hello", "arg2": "world"}
        )
        [message] = with_args.messages
        assert isinstance(message.content, types.TextContent)
        assert message.content.text == "Prompt with arguments: arg1='hello', arg2='world'"

        embedded = await session.get_prompt(
            "test_prompt_with_embedded_resource", {"resourceUri": "test://example-resource"}
        )
        first, second = embedded.messages
        assert isinstance(first.content, types.EmbeddedResource)
        assert isinstance(first.content.resource, types.TextResourceContents)
        assert first.content.resource.uri == "test://example-resource"
        assert first.content.resource.text == "Embedded resource content for testing."
        assert isinstance(second.content, types.TextContent)
        assert second.content.text == "Please process the embedded resource above."

        image = await session.get_prompt("test_prompt_with_image")
        first, second = image.messages
        assert isinstance(first.content, types.ImageContent)
        assert first.content.mime_type == "image/png"
        assert base64.b64decode(first.content.data).startswith(PNG_SIGNATURE)
        assert second.content.text == "Please analyze the image above."  # type: ignore[union-attr]

        with pytest.raises(MCPError):  # a required argument is missing
            await session.get_prompt("test_prompt_with_arguments", {"arg1": "only one"})
        with pytest.raises(MCPError):
            await session.get_prompt("no_such_prompt")


async def test_completion() -> None:
    async with asyncio.timeout(TEST_TIMEOUT), official_client() as (session, _):
        prompt_ref = types.PromptReference(type="ref/prompt", name="test_prompt_with_arguments")
        result = await session.complete(prompt_ref, {"name": "arg1", "value": "pa"})
        assert result.completion.values == ["paris", "park", "party"]
        assert result.completion.has_more is False

        result = await session.complete(prompt_ref, {"name": "arg2", "value": "wor"})
        assert result.completion.values == ["world"]

        result = await session.complete(prompt_ref, {"name": "arg1", "value": "zzz"})
        assert result.completion.values == []

        template_ref = types.ResourceTemplateReference(
            type="ref/resource", uri="test://template/{id}/data"
        )
        result = await session.complete(template_ref, {"name": "id", "value": "12"})
        assert result.completion.values == ["123", "1234"]


async def test_sampling_round_trip() -> None:
    async with asyncio.timeout(TEST_TIMEOUT), official_client() as (session, recorder):
        result = await session.call_tool("test_sampling", {"prompt": "Test prompt for sampling"})
        assert not result.is_error
        assert texts(result) == [f"LLM response: {SAMPLING_ANSWER}"]
        [request] = recorder.sampling_requests
        assert request.max_tokens == 100
        [message] = request.messages
        assert message.role == "user"
        assert message.content.text == "Test prompt for sampling"  # type: ignore[union-attr]


async def test_sampling_without_client_capability_fails() -> None:
    async with (
        asyncio.timeout(TEST_TIMEOUT),
        official_client(sampling=False) as (session, recorder),
    ):
        try:
            result = await session.call_tool("test_sampling", {"prompt": "anyone there?"})
        except MCPError:
            pass  # a JSON-RPC error is an acceptable way to refuse
        else:
            assert result.is_error, "a client without sampling must not get a successful result"
        assert recorder.sampling_requests == []


async def test_elicitation_round_trip() -> None:
    async with asyncio.timeout(TEST_TIMEOUT), official_client() as (session, recorder):
        result = await session.call_tool(
            "test_elicitation", {"message": "Please provide your information"}
        )
        assert not result.is_error
        [text] = texts(result)
        assert text.startswith("User response: action=accept")
        assert "testuser" in text and "test@example.com" in text

        [request] = recorder.elicitation_requests
        assert request.message == "Please provide your information"
        schema = requested_schema(request)
        assert schema["type"] == "object"
        assert schema["properties"] == {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"},
        }
        assert sorted(schema["required"]) == ["email", "username"]

        recorder.elicitation_answer = types.ElicitResult(action="decline")
        result = await session.call_tool("test_elicitation", {"message": "Again?"})
        assert texts(result)[0].startswith("User response: action=decline")


async def test_elicitation_sep1034_defaults() -> None:
    async with asyncio.timeout(TEST_TIMEOUT), official_client() as (session, recorder):
        recorder.elicitation_answer = types.ElicitResult(
            action="accept",
            content={
                "name": "Jane Smith",
                "age": 25,
                "score": 88,
                "status": "inactive",
                "verified": False,
            },
        )
        result = await session.call_tool("test_elicitation_sep1034_defaults", {})
        assert texts(result)[0].startswith("Elicitation completed: action=accept")
        assert "Jane Smith" in texts(result)[0]
        props = requested_schema(recorder.elicitation_requests[0])["properties"]
        assert (props["name"]["type"], props["name"]["default"]) == ("string", "John Doe")
        assert (props["age"]["type"], props["age"]["default"]) == ("integer", 30)
        assert (props["score"]["type"], props["score"]["default"]) == ("number", 95.5)
        assert props["status"]["type"] == "string" and props["status"]["default"] == "active"
        assert props["status"]["default"] in props["status"]["enum"]
        assert props["verified"]["type"] == "boolean" and props["verified"]["default"] is True


async def test_elicitation_sep1330_enums() -> None:
    async with asyncio.timeout(TEST_TIMEOUT), official_client() as (session, recorder):
        recorder.elicitation_answer = types.ElicitResult(
            action="accept",
            content={
                "untitledSingle": "option1",
                "titledSingle": "value1",
                "legacyEnum": "opt1",
                "untitledMulti": ["option1", "option2"],
                "titledMulti": ["value1", "value2"],
            },
        )
        result = await session.call_tool("test_elicitation_sep1330_enums", {})
        assert texts(result)[0].startswith("Elicitation completed: action=accept")
        props = requested_schema(recorder.elicitation_requests[0])["properties"]

        untitled = props["untitledSingle"]
        assert untitled["type"] == "string" and untitled["enum"]
        assert "oneOf" not in untitled and "enumNames" not in untitled
        titled = props["titledSingle"]
        assert titled["type"] == "string" and "enum" not in titled
        assert titled["oneOf"] and all(is_titled_option(o) for o in titled["oneOf"])
        legacy = props["legacyEnum"]
        assert legacy["type"] == "string" and len(legacy["enum"]) == len(legacy["enumNames"]) == 3
        multi = props["untitledMulti"]
        assert multi["type"] == "array"
        assert multi["items"]["type"] == "string" and multi["items"]["enum"]
        assert "anyOf" not in multi["items"]
        titled_multi = props["titledMulti"]
        assert titled_multi["type"] == "array" and "enum" not in titled_multi["items"]
        options = titled_multi["items"]["anyOf"]
        assert options and all(is_titled_option(o) for o in options)


# =========================================================================================
# mcpkit client -> official server (tests/interop/official_server.py)
# =========================================================================================


@dataclass
class KitRecorder:
    logs: list[dict[str, Any]] = field(default_factory=list)
    sampling_requests: list[dict[str, Any]] = field(default_factory=list)

    def on_log(self, params: dict[str, Any]) -> None:
        self.logs.append(params)

    async def on_sampling(self, params: dict[str, Any]) -> dict[str, Any]:
        self.sampling_requests.append(params)
        return {
            "role": "assistant",
            "content": {"type": "text", "text": "Paris"},
            "model": "kit-model",
            "stopReason": "endTurn",
        }


@contextlib.asynccontextmanager
async def kit_client() -> AsyncIterator[tuple[McpClient, KitRecorder]]:
    recorder = KitRecorder()
    options = StdioClientTransportOptions(command=sys.executable, arguments=[str(OFFICIAL_SERVER)])
    async with McpClient.stdio(
        options,
        # the handshake era: the official 2.3.0 server also speaks 2026-07-28 ("auto" picks it)
        protocol_mode="legacy",
        sampling_handler=recorder.on_sampling,
        logging_handler=recorder.on_log,
        request_timeout=10,
    ) as client:
        yield client, recorder


async def test_kit_client_initialize_and_list() -> None:
    async with asyncio.timeout(TEST_TIMEOUT), kit_client() as (client, _):
        info = client.server_info
        assert info is not None
        assert info.protocol_version == "2025-11-25"
        assert info.server_info.name == "official-interop"
        assert info.instructions == "Official SDK server for mcpkit interop tests"
        await client.ping()

        tools = {tool.name: tool for tool in await client.list_tools()}
        assert {"add", "echo", "fail", "work", "ask"} <= set(tools)
        assert tools["add"].input_schema["properties"].keys() == {"a", "b"}

        resources = await client.list_resources()
        assert [(r.uri, r.mime_type) for r in resources] == [("demo://greeting", "text/plain")]
        templates = await client.list_resource_templates()
        assert [t.uri_template for t in templates] == ["demo://items/{item_id}"]

        prompts = await client.list_prompts()
        assert [p.name for p in prompts] == ["review"]
        assert [(a.name, a.required) for a in prompts[0].arguments or []] == [("code", True)]


async def test_kit_client_tool_calls() -> None:
    async with asyncio.timeout(TEST_TIMEOUT), kit_client() as (client, _):
        result = await client.call_tool("add", {"a": 2, "b": 3})
        assert not result.is_error
        assert result.content[0].text == "5"  # type: ignore[union-attr]
        assert result.structured_content == {"result": 5}

        result = await client.call_tool("echo", {"text": "hi"})
        assert result.content[0].text == "echo: hi"  # type: ignore[union-attr]

        result = await client.call_tool("fail")
        assert result.is_error is True
        assert "deliberate failure" in result.content[0].text  # type: ignore[union-attr]

        with pytest.raises(McpCallError):
            await client.request("no/such-method", {})


async def test_kit_client_progress_and_logging() -> None:
    async with asyncio.timeout(TEST_TIMEOUT), kit_client() as (client, recorder):
        updates: list[tuple[float, float | None, str | None]] = []
        result = await client.call_tool(
            "work",
            {"steps": 3},
            progress=lambda progress, total, message: updates.append((progress, total, message)),
        )
        assert result.content[0].text == "did 3 steps"  # type: ignore[union-attr]
        await wait_until(lambda: len(updates) >= 3, "3 progress updates")
        await wait_until(lambda: len(recorder.logs) >= 2, "2 log messages")
        assert updates == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]
        assert [(log["level"], log["data"]) for log in recorder.logs] == [
            ("info", "starting 3 steps"),
            ("warning", "all steps done"),
        ]


async def test_kit_client_answers_sampling() -> None:
    async with asyncio.timeout(TEST_TIMEOUT), kit_client() as (client, recorder):
        result = await client.call_tool("ask", {"question": "What is the capital of France?"})
        assert not result.is_error
        assert result.content[0].text == "model kit-model says: Paris"  # type: ignore[union-attr]
        [request] = recorder.sampling_requests
        assert request["maxTokens"] == 50
        assert request["messages"] == [
            {"role": "user", "content": {"type": "text", "text": "What is the capital of France?"}}
        ]


async def test_kit_client_resources_prompts_completion() -> None:
    async with asyncio.timeout(TEST_TIMEOUT), kit_client() as (client, _):
        [greeting] = (await client.read_resource("demo://greeting")).contents
        assert greeting.text == "Hello from the official SDK"  # type: ignore[union-attr]
        assert greeting.mime_type == "text/plain"

        [item] = (await client.read_resource("demo://items/42")).contents
        assert item.uri == "demo://items/42"
        assert json.loads(item.text) == {"id": "42"}  # type: ignore[union-attr]

        with pytest.raises(McpCallError):
            await client.read_resource("demo://missing")

        prompt = await client.get_prompt("review", {"code": "x = 1"})
        assert prompt.description == "Ask for a code review"
        [message] = prompt.messages
        assert message.role == "user"
        assert message.content.text == "Please review this code:\nx = 1"  # type: ignore[union-attr]

        completion = await client.complete({"type": "ref/prompt", "name": "review"}, "code", "pr")
        assert completion.completion.values == ["print('hi')", "print(42)"]

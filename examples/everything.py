"""Everything server: every fixture the MCP conformance suite (0.1.16) asks of a server,
plus a few ordinary tools (a calculator, text statistics, a notes store).

Run it with::

    mcpkit run examples/everything.py --transport stdio

Fixture names, texts, MIME types and schemas are the ones the suite checks; see
``docs/conformance-server-0.1.16.md`` for what each scenario looks at.
"""

from __future__ import annotations

import asyncio
import io
import json
import re
import struct
import wave
import zlib
from collections import Counter
from dataclasses import dataclass
from typing import Any, Literal

from fixtures_2026 import Conformance2026
from fixtures_tasks import ConformanceTasks

from mcpkit import (
    Audio,
    Image,
    McpCatalogManager,
    McpServerApp,
    McpToolContext,
    ResourceSubscriptionManager,
    mcp_completion,
    mcp_prompt,
    mcp_resource,
    mcp_server,
    mcp_tool,
)

# --------------------------------------------------------------------------- binary fixtures


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    body = kind + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)


def make_png(red: int = 255, green: int = 0, blue: int = 0) -> bytes:
    """A valid 1x1 RGB PNG of one colour."""
    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)  # 1x1, 8-bit depth, truecolour
    scanline = bytes([0, red, green, blue])  # filter byte "none", then one pixel
    return (
        b"\x89PNG\r\n\x1a\n"
        + _png_chunk(b"IHDR", header)
        + _png_chunk(b"IDAT", zlib.compress(scanline))
        + _png_chunk(b"IEND", b"")
    )


def make_wav(duration: float = 0.05, rate: int = 8000) -> bytes:
    """A short, silent, mono 16-bit PCM WAV file."""
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(b"\x00\x00" * int(duration * rate))
    return buffer.getvalue()


PNG = make_png()
WAV = make_wav()

# --------------------------------------------------------------------------- schemas

WATCHED_URI = "test://watched-resource"

ELICITATION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "username": {"type": "string", "description": "User's response"},
        "email": {"type": "string", "description": "User's email address"},
    },
    "required": ["username", "email"],
}

SEP1034_DEFAULTS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "Your name", "default": "John Doe"},
        "age": {"type": "integer", "description": "Your age", "default": 30},
        "score": {"type": "number", "description": "Your score", "default": 95.5},
        "status": {
            "type": "string",
            "description": "Account status",
            "enum": ["active", "inactive", "pending"],
            "default": "active",
        },
        "verified": {"type": "boolean", "description": "Whether you are verified", "default": True},
    },
}

SEP1330_ENUMS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        # 1. untitled single-select
        "untitledSingle": {
            "type": "string",
            "description": "Pick one option",
            "enum": ["option1", "option2", "option3"],
        },
        # 2. titled single-select
        "titledSingle": {
            "type": "string",
            "description": "Pick one titled option",
            "oneOf": [
                {"const": "value1", "title": "First Option"},
                {"const": "value2", "title": "Second Option"},
                {"const": "value3", "title": "Third Option"},
            ],
        },
        # 3. legacy titled single-select (enumNames, deprecated)
        "legacyEnum": {
            "type": "string",
            "description": "Pick one (legacy titles)",
            "enum": ["opt1", "opt2", "opt3"],
            "enumNames": ["Option One", "Option Two", "Option Three"],
        },
        # 4. untitled multi-select
        "untitledMulti": {
            "type": "array",
            "description": "Pick any options",
            "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
        },
        # 5. titled multi-select
        "titledMulti": {
            "type": "array",
            "description": "Pick any titled options",
            "items": {
                "anyOf": [
                    {"const": "value1", "title": "First Choice"},
                    {"const": "value2", "title": "Second Choice"},
                    {"const": "value3", "title": "Third Choice"},
                ]
            },
        },
    },
}

JSON_SCHEMA_2020_12: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {
                "street": {"type": "string"},
                "city": {"type": "string"},
            },
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}

PROMPT_ARGUMENT_VALUES = ["hello", "help", "paris", "park", "party", "world", "test", "testing"]
TEMPLATE_IDS = ["1", "2", "3", "42", "123", "1234"]

_NOTE_KEY = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")


@dataclass
class TextStats:
    characters: int
    words: int
    lines: int
    sentences: int
    most_common_word: str | None


def _sampled_text(result: dict[str, Any]) -> str:
    content = result.get("content")
    blocks = content if isinstance(content, list) else [content]
    texts = [b.get("text", "") for b in blocks if isinstance(b, dict) and b.get("type") == "text"]
    return " ".join(texts) if texts else json.dumps(content)


@mcp_server(
    name="mcpkit-everything",
    version="0.1.0",
    instructions=(
        "Conformance fixtures (test_*) plus a calculator, text statistics and a notes store."
    ),
)
class Everything:
    def __init__(self, catalog: McpCatalogManager, subs: ResourceSubscriptionManager) -> None:
        self.catalog = catalog
        self.subs = subs
        self.watched_version = 1
        self.notes: dict[str, str] = {}

    # ----------------------------------------------------------------- conformance tools

    @mcp_tool(description="Returns a simple text response", annotations={"readOnlyHint": True})
    def test_simple_text(self) -> str:
        return "This is a simple text response for testing."

    @mcp_tool(description="Returns a 1x1 PNG image")
    def test_image_content(self) -> Image:
        return Image(PNG, "image/png")

    @mcp_tool(description="Returns a short silent WAV clip")
    def test_audio_content(self) -> Audio:
        return Audio(WAV, "audio/wav")

    @mcp_tool(description="Returns an embedded text resource")
    def test_embedded_resource(self) -> dict:
        return {
            "type": "resource",
            "resource": {
                "uri": "test://embedded-resource",
                "mimeType": "text/plain",
                "text": "This is an embedded resource content.",
            },
        }

    @mcp_tool(description="Returns text, an image and an embedded resource")
    def test_multiple_content_types(self) -> list:
        return [
            {"type": "text", "text": "Multiple content types test:"},
            Image(PNG, "image/png"),
            {
                "type": "resource",
                "resource": {
                    "uri": "test://mixed-content-resource",
                    "mimeType": "application/json",
                    "text": json.dumps({"test": "data", "value": 123}, separators=(",", ":")),
                },
            },
        ]

    @mcp_tool(description="Sends three info log messages while it runs")
    async def test_tool_with_logging(self, ctx: McpToolContext) -> str:
        await ctx.info("Tool execution started")
        await asyncio.sleep(0.05)
        await ctx.info("Tool processing data")
        await asyncio.sleep(0.05)
        await ctx.info("Tool execution completed")
        return "Tool with logging executed successfully"

    @mcp_tool(description="Reports progress 0, 50 and 100 of 100")
    async def test_tool_with_progress(self, ctx: McpToolContext) -> str:
        await ctx.report_progress(0, 100)
        await asyncio.sleep(0.05)
        await ctx.report_progress(50, 100)
        await asyncio.sleep(0.05)
        await ctx.report_progress(100, 100)
        return "Tool with progress executed successfully"

    @mcp_tool(description="Always fails, so its result has isError set")
    def test_error_handling(self) -> str:
        raise RuntimeError("This tool intentionally returns an error for testing")

    @mcp_tool(description="Asks the client's LLM to answer a prompt (sampling)")
    async def test_sampling(self, prompt: str, ctx: McpToolContext) -> str:
        """Asks the client's LLM to answer a prompt (sampling).

        Args:
            prompt: The prompt to send to the LLM
        """
        result = await ctx.sample(prompt, max_tokens=100)
        return f"LLM response: {_sampled_text(result)}"

    @mcp_tool(description="Asks the user for a username and an email (elicitation)")
    async def test_elicitation(self, message: str, ctx: McpToolContext) -> str:
        """Asks the user for a username and an email (elicitation).

        Args:
            message: The message to show the user
        """
        answer = await ctx.elicit(message, ELICITATION_SCHEMA)
        return f"User response: action={answer.action}, content={json.dumps(answer.data)}"

    @mcp_tool(description="Elicitation with defaults for every primitive type (SEP-1034)")
    async def test_elicitation_sep1034_defaults(self, ctx: McpToolContext) -> str:
        answer = await ctx.elicit(
            "Please review and update the form fields with defaults", SEP1034_DEFAULTS_SCHEMA
        )
        return f"Elicitation completed: action={answer.action}, content={json.dumps(answer.data)}"

    @mcp_tool(description="Elicitation with all five enum forms (SEP-1330)")
    async def test_elicitation_sep1330_enums(self, ctx: McpToolContext) -> str:
        answer = await ctx.elicit(
            "Please select options from the enum fields", SEP1330_ENUMS_SCHEMA
        )
        return f"Elicitation completed: action={answer.action}, content={json.dumps(answer.data)}"

    @mcp_tool(
        description="Tool with JSON Schema 2020-12 features", input_schema=JSON_SCHEMA_2020_12
    )
    def json_schema_2020_12_tool(self, **arguments: Any) -> str:
        return f"Received arguments: {json.dumps(arguments, sort_keys=True)}"

    @mcp_tool(
        description="Closes its SSE stream mid-call; the client resumes and gets the result (SEP-1699)"
    )
    async def test_reconnection(self, ctx: McpToolContext) -> str:
        await ctx.close_sse_stream()  # a no-op off Streamable HTTP
        await asyncio.sleep(0.1)
        return "Reconnection test completed successfully"

    @mcp_tool(description="Changes test://watched-resource and notifies its subscribers")
    async def update_watched_resource(self) -> str:
        self.watched_version += 1
        delivered = await self.subs.notify_updated(WATCHED_URI)
        return (
            f"{WATCHED_URI} is now at version {self.watched_version}; "
            f"{delivered} subscriber(s) notified"
        )

    # ----------------------------------------------------------------- conformance resources

    @mcp_resource(
        "test://static-text",
        name="static-text",
        mime_type="text/plain",
        description="A static text resource",
    )
    def static_text(self) -> str:
        return "This is the content of the static text resource."

    @mcp_resource(
        "test://static-binary",
        name="static-binary",
        mime_type="image/png",
        description="A static binary resource (a 1x1 PNG)",
    )
    def static_binary(self) -> bytes:
        return PNG

    @mcp_resource(
        "test://template/{id}/data",
        name="template-data",
        mime_type="application/json",
        description="JSON data for one id",
    )
    def template_data(self, id: str) -> str:
        return json.dumps({"id": id, "templateTest": True, "data": f"Data for ID: {id}"})

    @mcp_resource(
        WATCHED_URI,
        name="watched-resource",
        mime_type="text/plain",
        description="A resource that changes when update_watched_resource is called",
    )
    def watched_resource(self) -> str:
        return f"Watched resource content, version {self.watched_version}"

    # ----------------------------------------------------------------- conformance prompts

    @mcp_prompt(description="A simple prompt without arguments")
    def test_simple_prompt(self) -> str:
        return "This is a simple prompt for testing."

    @mcp_prompt(description="A prompt with two required arguments")
    def test_prompt_with_arguments(self, arg1: str, arg2: str) -> str:
        """A prompt with two required arguments.

        Args:
            arg1: First test argument
            arg2: Second test argument
        """
        return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"

    @mcp_prompt(description="A prompt that embeds a resource")
    def test_prompt_with_embedded_resource(self, resourceUri: str) -> list:
        """A prompt that embeds a resource.

        Args:
            resourceUri: URI of the resource to embed
        """
        return [
            {
                "role": "user",
                "content": {
                    "type": "resource",
                    "resource": {
                        "uri": resourceUri,
                        "mimeType": "text/plain",
                        "text": "Embedded resource content for testing.",
                    },
                },
            },
            {
                "role": "user",
                "content": {"type": "text", "text": "Please process the embedded resource above."},
            },
        ]

    @mcp_prompt(description="A prompt with an image")
    def test_prompt_with_image(self) -> list:
        return [
            {"role": "user", "content": Image(PNG, "image/png").to_content()},
            {
                "role": "user",
                "content": {"type": "text", "text": "Please analyze the image above."},
            },
        ]

    # ----------------------------------------------------------------- completions

    @mcp_completion(prompt="test_prompt_with_arguments")
    def complete_prompt_arguments(self, value: str) -> list[str]:
        return [word for word in PROMPT_ARGUMENT_VALUES if word.startswith(value.lower())]

    @mcp_completion(resource="test://template/{id}/data", argument="id")
    def complete_template_id(self, value: str) -> list[str]:
        return [item for item in TEMPLATE_IDS if item.startswith(value)]

    # ----------------------------------------------------------------- a calculator

    @mcp_tool(title="Calculator", annotations={"readOnlyHint": True, "idempotentHint": True})
    def calculate(
        self,
        a: float,
        b: float,
        operation: Literal["add", "subtract", "multiply", "divide", "power"] = "add",
    ) -> float:
        """Apply an arithmetic operation to two numbers.

        Args:
            a: The left operand
            b: The right operand
            operation: What to do with them
        """
        if operation == "add":
            return a + b
        if operation == "subtract":
            return a - b
        if operation == "multiply":
            return a * b
        if operation == "divide":
            if b == 0:
                raise ValueError("Cannot divide by zero")
            return a / b
        return float(a**b)

    # ----------------------------------------------------------------- text statistics

    @mcp_tool(title="Text statistics", annotations={"readOnlyHint": True})
    def text_stats(self, text: str) -> TextStats:
        """Count characters, words, lines and sentences of a text.

        Args:
            text: The text to measure
        """
        words = re.findall(r"[A-Za-z0-9']+", text)
        counts = Counter(word.lower() for word in words)
        return TextStats(
            characters=len(text),
            words=len(words),
            lines=len(text.splitlines()) if text else 0,
            sentences=len([s for s in re.split(r"[.!?]+", text) if s.strip()]),
            most_common_word=counts.most_common(1)[0][0] if counts else None,
        )

    # ----------------------------------------------------------------- a notes store

    def _register_note(self, key: str) -> None:
        def read_note() -> str:
            return self.notes[key]

        self.catalog.register_resource(
            read_note,
            uri=f"note://{key}",
            name=f"note-{key}",
            title=f"Note {key}",
            mime_type="text/plain",
            description=f"The note stored under {key!r}",
        )

    @mcp_tool(title="Save a note", annotations={"destructiveHint": False})
    async def save_note(self, key: str, text: str) -> str:
        """Store a note; a new key adds the resource note://KEY (resources list_changed),
        an existing one updates it (resources/updated to its subscribers).

        Args:
            key: Lowercase letters, digits, '-' and '_' (at most 64)
            text: The note's content
        """
        if not _NOTE_KEY.match(key):
            raise ValueError(
                f"Invalid note key {key!r}: use lowercase letters, digits, '-' and '_'"
            )
        existed = key in self.notes
        self.notes[key] = text
        if existed:
            await self.subs.notify_updated(f"note://{key}")
            return f"Updated note://{key}"
        self._register_note(key)
        return f"Created note://{key}"

    @mcp_tool(title="Delete a note", annotations={"destructiveHint": True})
    def delete_note(self, key: str) -> str:
        """Delete a note and its resource.

        Args:
            key: The note's key
        """
        if self.notes.pop(key, None) is None:
            raise KeyError(f"No note named {key!r}")
        self.catalog.unregister_resource(f"note://{key}")
        return f"Deleted note://{key}"

    @mcp_tool(title="List notes", annotations={"readOnlyHint": True})
    def list_notes(self) -> dict[str, str]:
        """All notes, by key."""
        return dict(self.notes)


app = McpServerApp(Everything, Conformance2026, ConformanceTasks)

"""Schema checks for every message mcpkit emits in tests.

``SchemaChecker`` validates server-to-client messages against the
``schema.json`` of the protocol version in force; ``ValidatingStream`` wraps the client
end of a transport so that every frame the server sends is checked as it arrives.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import msgspec

# The schemas are vendored in the repository (spec/), so the tests need nothing beside it.
SPEC_DIR = Path(__file__).resolve().parents[1] / "spec"

RESULT_TYPES = {
    "initialize": "InitializeResult",
    "ping": "EmptyResult",
    "tools/list": "ListToolsResult",
    "tools/call": "CallToolResult",
    "resources/list": "ListResourcesResult",
    "resources/templates/list": "ListResourceTemplatesResult",
    "resources/read": "ReadResourceResult",
    "resources/subscribe": "EmptyResult",
    "resources/unsubscribe": "EmptyResult",
    "prompts/list": "ListPromptsResult",
    "prompts/get": "GetPromptResult",
    "completion/complete": "CompleteResult",
    "logging/setLevel": "EmptyResult",
    "server/discover": "DiscoverResult",
}


@cache
def load_schema(version: str) -> dict[str, Any]:
    return json.loads((SPEC_DIR / version / "schema" / "schema.json").read_text())


@cache
def validator_for(version: str, definition: str) -> jsonschema.protocols.Validator:
    schema = load_schema(version)
    defs_key = "$defs" if "$defs" in schema else "definitions"
    if definition not in schema[defs_key]:
        raise KeyError(f"{definition} not in the {version} schema")
    root = {**schema, "$ref": f"#/{defs_key}/{definition}"}
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft7Validator)
    return cls(root)


def check(version: str, definition: str, instance: Any) -> None:
    """Raise ``jsonschema.ValidationError`` when ``instance`` is not a valid ``definition``."""
    validator_for(version, definition).validate(instance)


class SchemaChecker:
    """Tracks client requests' methods and validates the server's messages."""

    def __init__(self, version: str = "2025-11-25") -> None:
        self.version = version
        self.methods: dict[Any, str] = {}
        self.checked = 0

    def outgoing_from_client(self, message: dict[str, Any]) -> None:
        if "method" in message and "id" in message:
            self.methods[message["id"]] = message["method"]

    def from_server(self, message: Any) -> None:
        for item in message if isinstance(message, list) else [message]:
            self._check_one(item)

    def _check_one(self, message: dict[str, Any]) -> None:
        error_def = "JSONRPCErrorResponse" if self.version >= "2025-11-25" else "JSONRPCError"
        if "error" in message:
            # Only 2025-11-25 and later define an error without an id (unreadable request).
            check(
                self.version if "id" in message else "2025-11-25",
                error_def if "id" in message else "JSONRPCErrorResponse",
                message,
            )
        elif "result" in message:
            method = self.methods.get(message["id"])
            if method == "initialize":
                self.version = message["result"]["protocolVersion"]
            check(
                self.version,
                "JSONRPCResponse" if self.version < "2025-11-25" else "JSONRPCResultResponse",
                message,
            )
            if method in RESULT_TYPES:
                check(self.version, RESULT_TYPES[method], message["result"])
        elif "id" in message:
            check(self.version, "ServerRequest", message)
        else:
            check(self.version, "ServerNotification", message)
        self.checked += 1


class ValidatingStream:
    """Wraps a client-side ``MessageStream``; checks every server frame against the schema."""

    def __init__(self, inner: Any, checker: SchemaChecker) -> None:
        self.inner = inner
        self.checker = checker

    async def send(self, frame: bytes) -> None:
        self.checker.outgoing_from_client(msgspec.json.decode(frame))
        await self.inner.send(frame)

    async def receive(self) -> bytes | None:
        frame = await self.inner.receive()
        if frame is not None:
            self.checker.from_server(msgspec.json.decode(frame))
        return frame

    async def aclose(self) -> None:
        await self.inner.aclose()

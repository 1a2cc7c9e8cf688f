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


def initialize_request(
    version: str = "2025-11-25", request_id: Any = 1, **capabilities: Any
) -> dict[str, Any]:
    """A client's ``initialize`` request for ``version`` (raw, for tests that speak HTTP)."""
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": capabilities,
            "clientInfo": {"name": "t", "version": "1"},
        },
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


class ModernWire:
    """The client end of a 2026-07-28 connection, checking every message against that
    schema both ways (interim ``input_required`` results included) and keeping what went
    each way; ``check_sent = False`` lets a test send what the schema refuses, on purpose."""

    VERSION = "2026-07-28"

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.sent: list[dict[str, Any]] = []
        self.received: list[dict[str, Any]] = []
        self.errors: list[dict[str, Any]] = []
        self.check_sent = True
        self._methods: dict[Any, str] = {}

    async def send(self, frame: bytes) -> None:
        message = json.loads(frame)
        self.sent.append(message)
        if "method" in message and "id" in message and self.check_sent:
            check(self.VERSION, "ClientRequest", message)
            self._methods[message["id"]] = message["method"]
        await self.inner.send(frame)

    async def receive(self) -> bytes | None:
        frame = await self.inner.receive()
        if frame is not None:
            message = json.loads(frame)
            self.received.append(message)
            self._check_received(message)
        return frame

    def _check_received(self, message: dict[str, Any]) -> None:
        if "result" in message:
            check(self.VERSION, "JSONRPCResultResponse", message)
            result = message["result"]
            method = self._methods.get(message["id"])
            if result.get("resultType") == "input_required":
                check(self.VERSION, "InputRequiredResult", result)
            elif method in RESULT_TYPES:
                check(self.VERSION, RESULT_TYPES[method], result)
        elif "error" in message:
            check(self.VERSION, "JSONRPCErrorResponse", message)
            self.errors.append(message)
        elif "id" not in message:
            check(self.VERSION, "ServerNotification", message)

    async def aclose(self) -> None:
        await self.inner.aclose()

    def requests(self, method: str | None = None) -> list[dict[str, Any]]:
        """The requests the client sent (of ``method`` when given)."""
        return [
            m
            for m in self.sent
            if "id" in m and "method" in m and (method is None or m["method"] == method)
        ]

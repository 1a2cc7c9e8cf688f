"""What the live fuzzer sends: schema-guided valid messages, mutations of them, garbage.

Valid messages are instances of the era's ``ClientRequest`` / ``ClientNotification``
definitions (tests/fuzz/_schema_gen.py), dressed with the live server's catalog (real tool
names and arguments from their input schemas, real resource URIs and prompts) so that they
reach the handlers and not only the parameter checks. Mutations and garbage are in
tests/fuzz/_mutations.py; what each input is owed comes from tests/fuzz/_oracle.py.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from typing import Any

from tests.fuzz._mutations import GARBAGE, MUTATIONS
from tests.fuzz._oracle import Expect, encode
from tests.fuzz._schema_gen import SchemaInstances
from tests.wire import load_schema

MODERN = "2026-07-28"
PV_KEY = "io.modelcontextprotocol/protocolVersion"
CAPS_KEY = "io.modelcontextprotocol/clientCapabilities"
INFO_KEY = "io.modelcontextprotocol/clientInfo"
CLIENT_INFO = {"name": "mcpkit-fuzzer", "version": "1"}
#: Frames past this are refused whole by either transport (stdio line, HTTP body).
MAX_FRAME = 4 * 1024 * 1024

#: The result a client answers each server-to-client request with.
CLIENT_RESULTS = {
    "sampling/createMessage": "CreateMessageResult",
    "roots/list": "ListRootsResult",
    "elicitation/create": "ElicitResult",
    "tasks/get": "GetTaskResult",
    "tasks/result": "GetTaskPayloadResult",
    "tasks/cancel": "CancelTaskResult",
    "tasks/list": "ListTasksResult",
}


def modern_meta(caps: Any = None) -> dict[str, Any]:
    """The ``_meta`` every 2026-07-28 request carries (SEP-2575)."""
    # Fresh dicts each time: a mutation edits the message it is given in place.
    return {PV_KEY: MODERN, CAPS_KEY: {} if caps is None else caps, INFO_KEY: dict(CLIENT_INFO)}


# --------------------------------------------------------------------------- inputs


@dataclass
class Input:
    """One fuzz input: the frames to send (one message each), what they are owed (left
    empty for the target's oracle to fill in), and HTTP-only tweaks."""

    kind: str  # valid | mutated | garbage | http
    label: str
    frames: list[bytes]
    expect: Expect = field(default_factory=Expect)
    headers: dict[str, str | None] = field(default_factory=dict)  # None: leave the header out
    http_method: str = "POST"
    oversized: bool = False  # past the 4 MiB bounds: the transport refuses it whole
    relaxed: bool = False  # ``expect`` was set by hand (an HTTP-level tweak): keep it
    cancel_after: list[Any] = field(default_factory=list)  # request ids to cancel once sent


@dataclass
class Catalog:
    """What the server offers, read before fuzzing (tools/list and friends)."""

    tools: list[dict[str, Any]] = field(default_factory=list)
    prompts: list[dict[str, Any]] = field(default_factory=list)
    resources: list[str] = field(default_factory=list)
    templates: list[str] = field(default_factory=list)
    task_ids: list[str] = field(default_factory=list)


class Inputs:
    """Makes inputs for one era (``version`` is the negotiated version, or 2026-07-28)."""

    def __init__(
        self, version: str, catalog: Catalog, rng: random.Random, *, first_id: int = 0
    ) -> None:
        self.version = version
        self.modern = version == MODERN
        self.catalog = catalog
        self.rng = rng
        self.gen = SchemaInstances(load_schema(version), rng)
        self.defs = self.gen.defs
        self.requests = self._members("ClientRequest")
        self.notifications = self._members("ClientNotification")
        self._ids = first_id  # ids stay unique across sessions: the ledger is per run
        self.sent_ids: list[Any] = []

    def _members(self, union: str) -> list[dict[str, Any]]:
        node = self.defs.get(union, {})
        return [self.gen.resolve(m["$ref"]) for m in node["anyOf"]] if "anyOf" in node else [node]

    def next_id(self) -> Any:
        self._ids += 1
        rid: Any = self._ids if self._ids % 3 else f"f-{self._ids}"
        self.sent_ids.append(rid)
        return rid

    # -- valid ----------------------------------------------------------------------------

    def request(self, method: str | None = None) -> dict[str, Any]:
        """A schema-generated request with a fresh id, dressed with the catalog."""
        schema = self.rng.choice(self.requests)
        if method is not None:
            schema = next(
                s for s in self.requests if s["properties"]["method"].get("const") == method
            )
        message = self.gen.instance(schema)
        message = message if isinstance(message, dict) else {}
        message["method"] = schema["properties"]["method"]["const"]
        params = message.get("params")
        if not isinstance(params, dict):
            params = {} if "params" in message or self.modern else None
        if params is not None:
            self._dress(message["method"], params)
            message["params"] = params
        message["jsonrpc"] = "2.0"
        message["id"] = self.next_id()
        return message

    def notification(self) -> dict[str, Any]:
        message = self.gen.instance(self.rng.choice(self.notifications))
        message = message if isinstance(message, dict) else {}
        message["jsonrpc"] = "2.0"
        message.pop("id", None)
        params = message.get("params")
        if message.get("method") == "notifications/cancelled" and isinstance(params, dict):
            if self.sent_ids and self.rng.random() < 0.7:
                params["requestId"] = self.rng.choice(self.sent_ids[-20:])
        if self.modern and isinstance(params, dict):
            params["_meta"] = modern_meta()
        return message

    def client_result(self, method: str) -> Any:
        """What the fuzzer answers a server-to-client request with (schema-generated)."""
        name = CLIENT_RESULTS.get(method, "Result")
        if name not in self.defs:
            return {}
        return self.gen.of_definition(name)

    def _dress(self, method: str, params: dict[str, Any]) -> None:
        rng, catalog = self.rng, self.catalog
        real = rng.random() < 0.8
        if method == "tools/call" and catalog.tools and real:
            tool = rng.choice(catalog.tools)
            params["name"] = tool["name"]
            schema = tool.get("inputSchema") or {"type": "object"}
            arguments = SchemaInstances(schema, rng).instance(schema)  # its own $refs
            params["arguments"] = clamp_arguments(arguments)
        elif method in ("resources/read", "resources/subscribe", "resources/unsubscribe"):
            if real and (catalog.resources or catalog.templates):
                params["uri"] = self._uri()
        elif method == "prompts/get" and catalog.prompts and real:
            prompt = rng.choice(catalog.prompts)
            params["name"] = prompt["name"]
            arguments = prompt.get("arguments", [])
            params["arguments"] = {
                a["name"]: self.gen.string() for a in arguments if rng.random() < 0.9
            }
        elif method == "completion/complete" and real and catalog.prompts:
            prompt = rng.choice(catalog.prompts)
            params["ref"] = {"type": "ref/prompt", "name": prompt["name"]}
        elif method.startswith("tasks/") and catalog.task_ids and real:
            params["taskId"] = rng.choice(catalog.task_ids[-10:])
        if self.modern:
            found = params.get("_meta")
            meta: dict[str, Any] = found if isinstance(found, dict) else {}
            caps = self.gen.of_definition("ClientCapabilities") if rng.random() < 0.3 else {}
            params["_meta"] = {**meta, **modern_meta(caps)}

    def _uri(self) -> str:
        catalog = self.catalog
        if catalog.templates and (not catalog.resources or self.rng.random() < 0.3):
            template = self.rng.choice(catalog.templates)
            return re.sub(r"\{[^}]*\}", lambda _: self.gen.string() or "1", template)
        return self.rng.choice(catalog.resources)

    # -- one input ------------------------------------------------------------------------

    def next(self) -> Input:
        """One input; what it is owed is left to the target (it depends on the framing)."""
        roll = self.rng.random()
        if roll < 0.4:
            made = self._valid()
        elif roll < 0.85:
            made = self._mutated()
        else:
            made = self._garbage()
        if made.oversized:
            made.expect = Expect(anon=(1, 1))
        return made

    def _valid(self) -> Input:
        roll = self.rng.random()
        if roll < 0.12:
            message = self.notification()
            return Input("valid", f"valid {message.get('method')}", [encode(message)])
        if roll < 0.16 and not self.modern:
            return self._duplicate()
        if roll < 0.20:
            return self._cancelled()
        message = self.request()
        return Input("valid", f"valid {message['method']}", [encode(message)])

    def _duplicate(self) -> Input:
        """The same request twice, back to back: both are answered (the second, if the first
        is still running, with a duplicate-id error)."""
        message = self.request("tools/call")
        frame = encode(message)
        made = Input("valid", "valid duplicate id in flight", [frame, frame])
        made.expect.add_id(message["id"], 2, 2)
        return made

    def _cancelled(self) -> Input:
        """A slow call, then its cancellation: a reply is allowed, not owed."""
        message = self.request("tools/call")
        slow = [t for t in self.catalog.tools if t["name"] == "slow_compute"]
        if slow:
            message["params"]["name"] = "slow_compute"
            message["params"]["arguments"] = {"seconds": 0.3}
        made = Input("valid", "valid call then cancel", [encode(message)])
        made.cancel_after.append(message["id"])
        made.expect.add_id(message["id"], 0, 1)
        return made

    def cancel_frame(self, rid: Any) -> bytes:
        params: dict[str, Any] = {"requestId": rid, "reason": "fuzz"}
        if self.modern:
            params["_meta"] = modern_meta()
        return encode({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params})

    def _mutated(self) -> Input:
        base: dict[str, Any] = self.request() if self.rng.random() < 0.85 else self.notification()
        name, mutate = self.rng.choice(MUTATIONS)
        data = mutate(self, base)
        oversized = len(data) > MAX_FRAME
        return Input("mutated", f"mutated {name}", [data], oversized=oversized)

    def _garbage(self) -> Input:
        name, make = self.rng.choice(GARBAGE)
        return Input("garbage", f"garbage {name}", [make(self)])


def clamp_arguments(arguments: Any) -> Any:
    """Keep generated ``seconds`` small: slow_compute sleeps that long (up to 600 s), and a
    reply is due within the fuzzer's wait. Mutations may still send any value."""
    if isinstance(arguments, dict) and isinstance(arguments.get("seconds"), (int, float)):
        arguments["seconds"] = max(-1.0, min(float(arguments["seconds"]), 0.2))
    return arguments

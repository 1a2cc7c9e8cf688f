"""A tool whose input schema is given as it is (``input_schema={...}``) has its arguments
checked against that schema, as a typed tool has them checked against its signature: what
the schema refuses is an ``isError`` result naming every wrong argument, missing ones
first, and the function never runs. A schema no check can be made of fails at
registration. Proxied and OpenAPI tools leave the check to what they call."""

from __future__ import annotations

import http.server
import json
import re
import threading
import urllib.request
from typing import Any

import pytest

from mcpkit import McpCallError, McpClient, McpServerApp, mcp_server, mcp_tool
from mcpkit.proxy import McpProxy
from mcpkit.server._schema import json_schema
from mcpkit.server._schema.engines import MAX_LISTED_ARGUMENT_ERRORS

BOOKING = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "minLength": 2},
        "nights": {"type": "integer", "minimum": 1, "maximum": 30},
        "room": {"enum": ["single", "double"]},
        "guests": {
            "type": "array",
            "items": {"$ref": "#/$defs/guest"},
            "minItems": 1,
        },
    },
    "required": ["city", "nights"],
    "additionalProperties": False,
    "$defs": {
        "guest": {
            "type": "object",
            "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
            "required": ["name"],
        }
    },
}


def booking_app(calls: list[dict[str, Any]]) -> McpServerApp:
    app = McpServerApp("hotel")

    @app.tool(input_schema=BOOKING)
    def book(**arguments: Any) -> str:
        calls.append(arguments)
        return f"booked {arguments['nights']} nights in {arguments['city']}"

    return app


async def test_arguments_the_schema_takes_reach_the_function_as_they_are(connect) -> None:
    calls: list[dict[str, Any]] = []
    guests = [{"name": "Ada", "age": 36}]
    async with connect(booking_app(calls)) as client:
        result = await client.call_tool("book", {"city": "Oslo", "nights": 2, "guests": guests})
        assert result.is_error is None
        assert result.content[0].text == "booked 2 nights in Oslo"
    assert calls == [{"city": "Oslo", "nights": 2, "guests": guests}]


async def test_every_wrong_argument_is_named_missing_ones_first(connect) -> None:
    calls: list[dict[str, Any]] = []
    async with connect(booking_app(calls)) as client:
        result = await client.call_tool(
            "book",
            {"city": "X", "room": "suite", "guests": [{"age": "old"}], "pets": 2},
        )
    assert result.is_error is True
    assert result.content[0].text == (
        "Missing required argument 'nights'; "
        "Invalid argument 'guests[0].name': missing required field; "
        "Invalid argument 'city': \"X\" is shorter than 2 characters; "
        'Invalid argument \'room\': "suite" is not one of "single" or "double"; '
        "Invalid argument 'guests[0].age': Expected `integer`, got `string`; "
        "Unknown argument 'pets'"
    )
    assert calls == []  # the function never ran


async def test_conditional_and_alternative_requirements_name_what_is_missing(
    connect, everything
) -> None:
    """The example server's tool of the conformance suite's JSON Schema 2020-12 check:
    ``$defs``, ``allOf`` of ``anyOf``, ``if``/``then``/``else``."""
    tool = "json_schema_2020_12_tool"
    async with connect(everything) as client:
        saved = await client.call_tool(tool, {"contactMethod": "email", "email": "a@b.c"})
        phone = await client.call_tool(tool, {"contactMethod": "phone", "email": "a@b.c"})
        neither = await client.call_tool(tool, {"name": "Ada", "address": {"city": 7}})
    assert saved.is_error is None
    assert phone.is_error is True
    assert phone.content[0].text == "Missing required argument 'phone'"
    assert neither.content[0].text == (
        "Missing required argument 'email'; "
        "Invalid argument 'address.city': Expected `string`, got `integer`; "
        "Invalid arguments: needs 'phone' or 'email'"
    )


async def test_the_message_is_bounded_as_a_typed_tools_is(connect) -> None:
    count = MAX_LISTED_ARGUMENT_ERRORS + 3
    names = [f"n{index}" for index in range(count)]
    app = McpServerApp("many")

    @app.tool(
        input_schema={
            "type": "object",
            "properties": {name: {"type": "integer"} for name in names},
            "required": names,
        }
    )
    def total(**arguments: int) -> int:
        return sum(arguments.values())

    async with connect(app) as client:
        result = await client.call_tool("total", {})
    text = result.content[0].text
    assert result.is_error is True
    assert len(re.findall("Missing required argument", text)) == MAX_LISTED_ARGUMENT_ERRORS
    assert text.endswith(" (and 3 more)")


async def test_an_unknown_tool_and_arguments_that_are_no_object_stay_protocol_errors(
    connect,
) -> None:
    async with connect(booking_app([])) as client:
        with pytest.raises(McpCallError) as unknown:
            await client.call_tool("nope", {})
        with pytest.raises(McpCallError) as not_an_object:
            await client.request("tools/call", {"name": "book", "arguments": [1, 2]})
    assert unknown.value.code == -32602 and not_an_object.value.code == -32602
    assert not_an_object.value.message == '"arguments" must be an object'


async def test_the_schema_is_compiled_once_when_the_tool_is_registered(connect, monkeypatch):
    compiled: list[Any] = []
    real = json_schema.arguments_validator

    def counting(schema: Any) -> Any:
        compiled.append(schema)
        return real(schema)

    monkeypatch.setattr(json_schema, "arguments_validator", counting)
    app = booking_app([])
    assert compiled == [BOOKING]
    async with connect(app) as client:
        for nights in (1, 2, 0):
            await client.call_tool("book", {"city": "Oslo", "nights": nights})
    assert compiled == [BOOKING]


def test_every_spelling_of_a_given_schema_is_checked() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}

    @mcp_server(name="decorated")
    class Decorated:
        @mcp_tool(input_schema=schema)
        def by_class(self, **arguments: Any) -> str:
            return "ok"

    @mcp_tool(input_schema=schema)
    def by_function(**arguments: Any) -> str:
        return "ok"

    app = McpServerApp(Decorated, by_function)
    app.catalog.register_tool(lambda **arguments: "ok", name="by_catalog", input_schema=schema)
    for name in ("by_class", "by_function", "by_catalog"):
        entry = app.catalog.get_tool(name)
        assert entry is not None and entry.input_schema is schema
        assert entry.signature.validate({"n": 1}) == {"n": 1}
        with pytest.raises(Exception, match="Missing required argument 'n'"):
            entry.signature.validate({})


@pytest.mark.parametrize(
    ("schema", "said"),
    [
        (
            {"type": "object", "properties": {"name": {"type": "string", "pattern": "(unclosed"}}},
            r'^at #/properties/name/pattern: "\(unclosed" is not a "regex"$',
        ),
        (
            {"type": "object", "properties": {"a": {"$ref": "#/$defs/missing"}}},
            r"^\$ref: Pointer '/\$defs/missing' does not exist$",
        ),
        (
            {"type": "object", "properties": {"a": {"$ref": "https://example.com/a.json"}}},
            r"^a reference to 'https://example.com/a.json' points out of the schema; mcpkit "
            r"fetches no other document",
        ),
        (
            {"type": "object", "properties": {"a": {"$ref": "file:///etc/hostname"}}},
            r"^a reference to 'file:///etc/hostname' points out of the schema",
        ),
        (
            {"$schema": "https://example.com/my-metaschema", "type": "object"},
            r"^a reference to 'https://example.com/my-metaschema' points out of the schema",
        ),
        ({"type": "dict"}, r'^at #/type: matches none of the anyOf options \(1: "dict" is not one'),
        ({"type": "object", "required": "a"}, r"^at #/required: Expected `array`, got `string`$"),
        # 2020-12's items is one schema: a list of them is draft 7, which $schema would say
        (
            {"type": "array", "items": [{"type": "string"}], "additionalItems": False},
            r"^at #/items: Expected `boolean` or `object`, got `array` \(an older draft's "
            r"spelling\? name the draft in \$schema\)$",
        ),
    ],
)
def test_a_schema_no_check_can_be_made_of_fails_at_registration(
    schema: dict[str, Any], said: str
) -> None:
    app = McpServerApp("broken")

    def lookup(**arguments: Any) -> str:
        return "never"

    with pytest.raises(ValueError) as refused:
        app.tool(input_schema=schema)(lookup)
    prefix = "tool 'lookup': input_schema cannot check arguments: "
    message = str(refused.value)
    assert message.startswith(prefix)
    assert re.search(said, message.removeprefix(prefix)), message
    assert app.catalog.list_tools() == []


def test_a_schema_referring_to_a_server_is_refused_and_nothing_is_fetched() -> None:
    """A real server that would answer with a schema: neither a ``$ref`` to it, nor one made
    absolute by an ``$id`` on it, nor a metaschema there is fetched; each is refused."""
    seen: list[str] = []

    class Recording(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.append(self.path)
            body = json.dumps({"type": "string"}).encode()
            self.send_response(200)
            self.send_header("content-type", "application/schema+json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            return None

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Recording)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    schemas = [
        {"type": "object", "properties": {"a": {"$ref": f"{base}/a.json"}}},
        {"$id": f"{base}/root.json", "type": "object", "properties": {"a": {"$ref": "b.json"}}},
        {"$schema": f"{base}/meta.json", "type": "object"},
    ]
    app = McpServerApp("offline")
    try:
        for schema in schemas:
            with pytest.raises(ValueError, match=f"a reference to '{re.escape(base)}/"):
                app.tool(input_schema=schema, name="lookup")(lambda **arguments: "never")
        direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # no proxy
        with direct.open(f"{base}/probe.json", timeout=10) as answer:
            assert json.load(answer) == {"type": "string"}  # the server does answer
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
    assert seen == ["/probe.json"]  # the probe, and nothing mcpkit asked for
    assert app.catalog.list_tools() == []


def test_a_reference_loop_that_never_enters_the_value_is_no_hang() -> None:
    """JSON Schema leaves such a loop's meaning undefined; it does not run forever: the loop
    adds nothing, what sits beside it is checked."""
    loop = {"$defs": {"loop": {"$ref": "#/$defs/loop"}}, "$ref": "#/$defs/loop"}
    assert _refusal({**loop, "required": ["a"]}, {"a": 1}) is None
    assert _refusal({**loop, "required": ["a"]}, {}) == "Missing required argument 'a'"


async def test_a_proxied_tool_leaves_the_check_to_its_backend(connect) -> None:
    """The backend checks the arguments against its own schema: its one message comes back,
    the proxy adds none of its own."""
    backend = McpServerApp("backend")

    @backend.tool()
    def nights(count: int) -> str:
        return f"{count} nights"

    proxy = McpProxy(lambda **options: McpClient.in_memory(backend, **options))
    async with connect(proxy.app) as client:
        (tool,) = await client.list_tools()
        assert tool.input_schema["required"] == ["count"]
        assert proxy.app.catalog.get_tool("nights").signature is None  # type: ignore[union-attr]
        result = await client.call_tool("nights", {"count": "two", "extra": 1})
        good = await client.call_tool("nights", {"count": 2})
    assert result.is_error is True
    assert [block.text for block in result.content] == [
        "Invalid argument 'count': Expected `int`, got `str`"
    ]
    assert good.content[0].text == "2 nights"


def _refusal(schema: dict[str, Any], arguments: dict[str, Any]) -> str | None:
    """The message ``arguments`` are refused with under ``schema`` (None: taken)."""
    from mcpkit._exceptions import InvalidParamsError
    from mcpkit.server._schema.json_schema import arguments_validator

    try:
        arguments_validator(schema)(arguments)
    except InvalidParamsError as exc:
        return exc.message
    return None


DRAFT_7 = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "type": "object",
    "definitions": {"port": {"type": "integer", "minimum": 1, "exclusiveMaximum": 65536}},
    "properties": {
        "port": {"$ref": "#/definitions/port", "type": "string"},  # siblings of $ref: ignored
        "pair": {"type": "array", "items": [{"type": "string"}], "additionalItems": False},
    },
    "dependencies": {"port": ["host"]},
}


@pytest.mark.parametrize(
    ("schema", "arguments", "refusal"),
    [
        (DRAFT_7, {"port": 80, "host": "h", "pair": ["a"]}, None),
        (
            DRAFT_7,
            {"port": 65536, "pair": ["a", "b"]},
            "Missing required argument 'host'; "
            "Invalid argument 'port': 65536 is greater than or equal to the maximum of 65536; "
            "Invalid argument 'pair': Additional items are not allowed (\"b\" was unexpected)",
        ),
        # numbers are compared as JSON does: 1.0 is an integer, true is no number
        ({"properties": {"n": {"type": "integer"}}}, {"n": 1.0}, None),
        (
            {"properties": {"n": {"type": "number"}}},
            {"n": True},
            "Invalid argument 'n': Expected `number`, got `boolean`",
        ),
        ({"properties": {"n": {"multipleOf": 0.1}}}, {"n": 0.3}, None),
        (
            {"properties": {"tags": {"uniqueItems": True}}},
            {"tags": [1, True, 1.0]},
            "Invalid argument 'tags': [1,true,1.0] has non-unique elements",
        ),
        (
            {"properties": {"v": {"anyOf": [{"type": "string"}, {"type": "null"}]}}},
            {"v": 3},
            "Invalid argument 'v': Expected `string` or `null`, got `integer`",
        ),
        (
            {"properties": {"v": {"oneOf": [{"type": "integer"}, {"type": "number"}]}}},
            {"v": 3},
            "Invalid argument 'v': 3 is valid under more than one of the schemas listed in the "
            "'oneOf' keyword",
        ),
        # unevaluatedProperties: what any subschema in place names counts as evaluated
        (
            {
                "allOf": [{"properties": {"a": {}}}],
                "properties": {"b": {}},
                "unevaluatedProperties": False,
            },
            {"a": 1, "b": 2, "c": 3},
            "Unknown argument 'c'",
        ),
        # format is an annotation, as JSON Schema 2020-12 has it by default, in every draft
        ({"properties": {"at": {"type": "string", "format": "date-time"}}}, {"at": "x"}, None),
        ({**DRAFT_7, "properties": {"at": {"format": "date-time"}}}, {"at": "x"}, None),
        # patterns are ECMA-262 regular expressions, Unicode classes included
        ({"properties": {"name": {"pattern": r"^\p{L}+$"}}}, {"name": "Zoë"}, None),
        (
            {"properties": {"name": {"pattern": r"^\p{L}+$"}}},
            {"name": "Zoë1"},
            'Invalid argument \'name\': "Zoë1" does not match "^\\p{L}+$"',
        ),
        # without $schema, 2020-12 still reaches definitions and reads dependencies
        (
            {
                "properties": {"p": {"$ref": "#/definitions/n"}},
                "definitions": {"n": {"type": "integer"}},
            },
            {"p": "one"},
            "Invalid argument 'p': Expected `integer`, got `string`",
        ),
        ({"dependencies": {"a": ["b"]}}, {"a": 1}, "Missing required argument 'b'"),
        # an argument's value is shown cut short, however long it is
        (
            {"properties": {"s": {"maxLength": 3}}},
            {"s": "x" * 500},
            "Invalid argument 's': \"" + "x" * 38 + "… is longer than 3 characters",
        ),
        (
            {"properties": {"n": {"anyOf": [{"type": "integer"}, {"required": ["m"]}]}}},
            {"n": {"k": "x" * 500}},
            "Invalid argument 'n': matches none of the anyOf options (1: Expected `integer`, got "
            "`object`; 2: 'n.m': missing required field)",
        ),
    ],
)
def test_what_the_schema_says_is_checked_as_json_schema_says(
    schema: dict[str, Any], arguments: dict[str, Any], refusal: str | None
) -> None:
    assert _refusal(schema, arguments) == refusal


def test_a_document_pasted_into_a_property_keeps_its_own_references() -> None:
    """A subschema with an ``$id`` is a resource of its own: its ``#/$defs/...`` point into
    it. Without an ``$id`` they point into the whole schema, where there is no such place
    (``$schema`` alone does not make a resource: 2020-12 allows it only at a resource's root)."""
    document = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$defs": {"Id": {"type": "string"}, "Item": {"properties": {"id": {"$ref": "#/$defs/Id"}}}},
        "$ref": "#/$defs/Item",
    }
    schema = {"type": "object", "properties": {"item": {"$id": "item.json", **document}}}
    assert _refusal(schema, {"item": {"id": "x"}}) is None
    assert _refusal(schema, {"item": {"id": 7}}) == (
        "Invalid argument 'item.id': Expected `string`, got `integer`"
    )
    with pytest.raises(ValueError, match=r"Pointer '/\$defs/Item' does not exist"):
        _refusal({"type": "object", "properties": {"item": document}}, {})


async def test_a_typed_return_still_gives_structured_content(connect) -> None:
    """The output schema the return type gives is kept, and its promise too: each result
    carries ``structuredContent`` (it was listed, and the results came as text alone)."""
    app = McpServerApp("typed-return")

    @app.tool(input_schema={"type": "object", "properties": {"n": {"type": "integer"}}})
    def double(**arguments: int) -> int:
        return 2 * arguments.get("n", 0)

    async with connect(app) as client:
        (tool,) = await client.list_tools()
        result = await client.call_tool("double", {"n": 4})
    assert tool.output_schema["properties"]["result"]["type"] == "integer"
    assert result.structured_content == {"result": 8}

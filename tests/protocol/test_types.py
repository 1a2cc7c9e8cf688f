"""Generated MCP types: import, decode real messages, round-trip, stay in sync with the spec."""

from __future__ import annotations

import copy
import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import msgspec
import pytest

from mcpkit.protocol import SUPPORTED_VERSIONS, types

REPO = Path(__file__).resolve().parents[2]
TYPES_DIR = REPO / "src" / "mcpkit" / "protocol" / "types"


def _load_generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("_gen_types", REPO / "tools" / "gen_types.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["_gen_types"] = module  # dataclasses resolve annotations through sys.modules
    spec.loader.exec_module(module)
    return module


gen = _load_generator()
SPEC_DIR = gen.DEFAULT_SPEC_DIR

MODERN = "2026-07-28"
# Fields every result needs in the modern era.
_MODERN_RESULT = {"resultType": "complete"}
_MODERN_CACHED = {"resultType": "complete", "cacheScope": "public", "ttlMs": 0}


def _at_least(version: str, first: str) -> bool:
    return version >= first  # ISO dates compare as strings


def realistic_messages(version: str) -> dict[str, dict[str, Any]]:
    """Type name -> a result a real peer of ``version`` would send."""
    modern = version == MODERN
    implementation = {"name": "demo-server", "version": "1.2.0"}
    tool: dict[str, Any] = {
        "name": "get_weather",
        "description": "Current weather for a city",
        "inputSchema": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
            "additionalProperties": False,
            "$defs": {"unit": {"enum": ["C", "F"]}},
        },
    }
    image = {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}
    call_result: dict[str, Any] = {
        "content": [{"type": "text", "text": "sunny, 21°C"}, image],
        "isError": False,
        "_meta": {"io.example/trace": "abc", "progressToken": 7},
    }
    if _at_least(version, "2025-03-26"):
        tool["annotations"] = {"readOnlyHint": True, "title": "Weather"}
        call_result["content"].append(
            {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"}
        )
    if _at_least(version, "2025-06-18"):
        tool["title"] = "Weather"
        tool["outputSchema"] = {"type": "object", "properties": {"temp": {"type": "number"}}}
        call_result["structuredContent"] = {"temp": 21.5, "unit": "C"}
        call_result["content"].append(
            {"type": "resource_link", "uri": "file:///w.txt", "name": "w.txt"}
        )
    call_result["content"].append(
        {
            "type": "resource",
            "resource": {"uri": "file:///a.txt", "mimeType": "text/plain", "text": "A"},
            "annotations": {"audience": ["user"], "priority": 1},
        }
    )
    read_result: dict[str, Any] = {
        "contents": [
            {"uri": "file:///a.txt", "mimeType": "text/plain", "text": "hello\nworld"},
            {"uri": "file:///b.bin", "mimeType": "application/octet-stream", "blob": "AAEC"},
        ]
    }
    prompt_result: dict[str, Any] = {
        "description": "Review code",
        "messages": [
            {"role": "user", "content": {"type": "text", "text": "Please review"}},
            {"role": "assistant", "content": image},
            {
                "role": "user",
                "content": {
                    "type": "resource",
                    "resource": {"uri": "file:///x.py", "blob": "cHJpbnQ="},
                },
            },
        ],
    }
    list_tools: dict[str, Any] = {"tools": [tool], "nextCursor": "page-2"}
    capabilities: dict[str, Any] = {
        "tools": {"listChanged": True},
        "resources": {"subscribe": True, "listChanged": False},
        "prompts": {},
        "logging": {},
        "experimental": {"x": {"on": True}},
    }
    messages: dict[str, dict[str, Any]] = {
        "CallToolResult": call_result,
        "ReadResourceResult": read_result,
        "GetPromptResult": prompt_result,
        "ListToolsResult": list_tools,
    }
    if modern:
        call_result.update(_MODERN_RESULT)
        prompt_result.update(_MODERN_RESULT)
        read_result.update(_MODERN_CACHED)
        list_tools.update(_MODERN_CACHED)
        messages["DiscoverResult"] = {
            **_MODERN_CACHED,
            "supportedVersions": [MODERN],
            "capabilities": capabilities,
            "instructions": "Use get_weather.",
        }
    else:
        messages["InitializeResult"] = {
            "protocolVersion": version,
            "capabilities": capabilities,
            "serverInfo": implementation,
            "instructions": "Use get_weather.",
        }
    return messages


def _validator(version: str, type_name: str) -> Any:
    import jsonschema

    schema = json.loads((SPEC_DIR / version / "schema" / "schema.json").read_text())
    defs_key = "$defs" if "$defs" in schema else "definitions"
    root = {**schema, "$ref": f"#/{defs_key}/{type_name}"}
    return jsonschema.validators.validator_for(schema)(root)


def _cases() -> list[tuple[str, str]]:
    return [(v, name) for v in SUPPORTED_VERSIONS for name in realistic_messages(v)]


# --------------------------------------------------------------------------- import


@pytest.mark.parametrize("version", SUPPORTED_VERSIONS)
def test_every_module_imports_and_every_export_is_a_msgspec_type(version: str) -> None:
    module = types.by_version(version)
    assert module.__name__.endswith("_v" + version.replace("-", "_"))
    assert module.__all__ == sorted(module.__all__)
    for name in module.__all__:
        # Building a decoder validates the type (e.g. that every union is decodable).
        msgspec.json.Decoder(getattr(module, name))


def test_package_reexports_latest_handshake_version() -> None:
    latest = types.by_version("2025-11-25")
    assert types.CallToolResult is latest.CallToolResult
    assert "by_version" in types.__all__
    assert set(latest.__all__) <= set(types.__all__)


def test_by_version_rejects_unknown() -> None:
    with pytest.raises(ValueError):
        types.by_version("1999-01-01")
    with pytest.raises(ValueError):
        types.by_version("../../os")


# --------------------------------------------------------------------------- round trips


@pytest.mark.parametrize(("version", "type_name"), _cases())
def test_realistic_message_round_trips(version: str, type_name: str) -> None:
    message = realistic_messages(version)[type_name]
    cls = getattr(types.by_version(version), type_name)
    obj = msgspec.convert(copy.deepcopy(message), cls)
    assert isinstance(obj, cls)
    assert msgspec.to_builtins(obj) == message
    # And through bytes, as it travels.
    wire = msgspec.json.encode(message)
    assert msgspec.json.decode(msgspec.json.encode(msgspec.json.decode(wire, type=cls))) == message


@pytest.mark.parametrize(("version", "type_name"), _cases())
def test_fixtures_are_valid_per_spec_schema(version: str, type_name: str) -> None:
    # Keeps the fixtures above honest: each is what the official schema accepts.
    _validator(version, type_name).validate(realistic_messages(version)[type_name])


@pytest.mark.parametrize("version", [v for v in SUPPORTED_VERSIONS if v != MODERN])
def test_call_tool_result_minimal(version: str) -> None:
    cls = types.by_version(version).CallToolResult
    message = {"content": [{"type": "text", "text": "hi"}], "isError": False}
    obj = msgspec.convert(message, cls)
    assert obj.content[0].text == "hi"
    assert obj.is_error is False
    assert msgspec.to_builtins(obj) == message


def test_modern_call_tool_result_requires_result_type() -> None:
    cls = types.by_version(MODERN).CallToolResult
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert({"content": []}, cls)
    obj = msgspec.convert({"content": [], "resultType": "complete"}, cls)
    assert obj.result_type == "complete"


def test_content_union_decodes_to_distinct_structs() -> None:
    message = realistic_messages("2025-11-25")["CallToolResult"]
    result = msgspec.convert(message, types.CallToolResult)
    kinds = [type(block).__name__ for block in result.content]
    assert kinds == [
        "TextContent",
        "ImageContent",
        "AudioContent",
        "ResourceLink",
        "EmbeddedResource",
    ]
    assert [block.type for block in result.content] == [
        "text",
        "image",
        "audio",
        "resource_link",
        "resource",
    ]
    # Text vs blob contents differ only by which key is present, which msgspec cannot
    # dispatch on: that union stays a dict (convert it when the kind is known).
    embedded = result.content[-1]
    assert embedded.resource == {"uri": "file:///a.txt", "mimeType": "text/plain", "text": "A"}
    text = msgspec.convert(embedded.resource, types.TextResourceContents)
    assert text.text == "A" and text.mime_type == "text/plain"


def test_constructing_a_tagged_struct_needs_no_tag_and_omits_unset_fields() -> None:
    block = types.TextContent(text="hi")
    assert block.type == "text"
    assert msgspec.to_builtins(block) == {"type": "text", "text": "hi"}
    result = types.CallToolResult(content=[block], meta={"k": 1})
    assert msgspec.json.decode(msgspec.json.encode(result)) == {
        "content": [{"type": "text", "text": "hi"}],
        "_meta": {"k": 1},
    }


def test_request_union_is_tagged_by_method() -> None:
    message = {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "tools/call",
        "params": {"name": "echo", "arguments": {"x": 1}, "_meta": {"progressToken": "p1"}},
    }
    request = msgspec.convert(message, types.ClientRequest)
    assert isinstance(request, types.CallToolRequest)
    assert request.params.meta == {"progressToken": "p1"}
    assert msgspec.to_builtins(request) == message


def test_old_params_keep_meta_the_schema_export_dropped() -> None:
    # 2024-11-05's CallToolRequest.params omits _meta in schema.json; progressToken lives there.
    old = types.by_version("2024-11-05")
    message = {"method": "tools/call", "params": {"name": "echo", "_meta": {"progressToken": 1}}}
    request = msgspec.convert(message, old.CallToolRequest)
    assert request.params.meta == {"progressToken": 1}
    assert msgspec.to_builtins(request) == message


def test_modern_meta_keeps_unknown_keys() -> None:
    modern = types.by_version(MODERN)
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "com.example/tenant": "t1",
    }
    params = msgspec.convert({"_meta": meta, "name": "echo"}, modern.CallToolRequestParams)
    assert params.meta == meta
    typed = msgspec.convert(params.meta, modern.RequestMetaObject)
    assert typed.protocol_version == MODERN


def test_number_fields_keep_integers_integral() -> None:
    message = {"progressToken": "t", "progress": 3, "total": 10.5}
    note = msgspec.convert(message, types.ProgressNotificationParams)
    assert note.progress == 3 and isinstance(note.progress, int)
    assert msgspec.json.encode(note) == b'{"progress":3,"progressToken":"t","total":10.5}'


# --------------------------------------------------------------------------- generator


def test_generated_modules_are_up_to_date(tmp_path: Path) -> None:
    assert gen.main(["--spec-dir", str(SPEC_DIR), "--out", str(tmp_path)]) == 0
    generated = sorted(p.name for p in tmp_path.glob("_v*.py"))
    committed = sorted(p.name for p in TYPES_DIR.glob("_v*.py"))
    assert generated == committed
    for name in generated:
        assert (tmp_path / name).read_text() == (TYPES_DIR / name).read_text(), (
            f"{name} is stale: run `python tools/gen_types.py`"
        )


def test_every_supported_version_has_a_spec_and_a_module() -> None:
    assert gen.discover_versions(SPEC_DIR) == sorted(SUPPORTED_VERSIONS)


def test_header_names_the_schema_hash() -> None:
    for path in TYPES_DIR.glob("_v*.py"):
        first = path.read_text().splitlines()[0]
        assert first.startswith("# Generated from schema.json (sha256 ")
        assert first.endswith("— do not edit.")


def test_generator_naming_rules() -> None:
    assert gen.snake_case("isError") == "is_error"
    assert gen.snake_case("_meta") == "meta"
    assert gen.snake_case("$schema") == "schema"
    assert gen.snake_case("io.example/clientInfo") == "io_example_client_info"
    assert gen.snake_case("URLElicitation") == "url_elicitation"
    assert gen.module_name("2025-11-25") == "_v2025_11_25"


def test_generator_falls_back_for_untagged_unions_and_renames_keywords() -> None:
    schema = {
        "$defs": {
            "A": {"type": "object", "properties": {"x": {"type": "string"}}},
            "B": {"type": "object", "properties": {"y": {"type": "string"}}},
            "T1": {
                "type": "object",
                "properties": {"type": {"const": "one"}, "from": {"type": "string"}},
                "required": ["type"],
            },
            "T2": {
                "type": "object",
                "properties": {"type": {"const": "two"}},
                "required": ["type"],
            },
            "Loose": {"anyOf": [{"$ref": "#/$defs/A"}, {"$ref": "#/$defs/B"}]},
            "Tagged": {"anyOf": [{"$ref": "#/$defs/T1"}, {"$ref": "#/$defs/T2"}]},
        }
    }
    source = gen.generate_module(json.dumps(schema).encode(), "2000-01-01")
    assert "Loose = dict[str, Any]" in source
    assert "Tagged = T1 | T2" in source
    module = ModuleType("generated_probe")
    sys.modules["generated_probe"] = module
    try:
        exec(compile(source, "generated_probe", "exec"), module.__dict__)
        one = msgspec.convert({"type": "one", "from": "me"}, module.Tagged)
        assert isinstance(one, module.T1) and one.from_ == "me"
        assert msgspec.to_builtins(one) == {"type": "one", "from": "me"}
    finally:
        del sys.modules["generated_probe"]

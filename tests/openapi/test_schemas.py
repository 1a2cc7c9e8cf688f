"""OpenAPI 3.0 and 3.1 documents into tool input and output schemas: ``$ref``s resolved
(parameters, request bodies, responses, schemas), recursion kept in ``$defs``, 3.0's
``nullable`` and boolean bounds read, name clashes between a body and parameters, and the
document loader (JSON text, YAML without PyYAML, Swagger 2.0)."""

from __future__ import annotations

import json
import sys
from typing import Any

import httpx
import jsonschema
import pytest

from mcpkit import McpServerApp
from mcpkit.openapi import (
    DEFAULT_MAX_SCHEMA_NODES,
    MAX_INLINE_DEPTH,
    MAX_SCHEMA_DEPTH,
    SchemaConverter,
    load_document,
    plan_operation,
    read_operations,
)
from tests.openapi.documents import forest_31, zoo_30

ANIMAL_OUT_PROPERTIES = {
    "id": {"type": "integer", "readOnly": True},
    "name": {"type": "string"},
    "nickname": {"type": ["string", "null"]},
    "weight": {"type": "number", "exclusiveMinimum": 0},
    "kind": {"type": ["string", "null"], "enum": ["cat", "dog", None], "examples": ["cat"]},
    "parent": {"$ref": "#/$defs/Animal"},
}


def tools_of(spec: Any, **options: Any) -> dict[str, dict[str, Any]]:
    client = httpx.AsyncClient(base_url="http://api.test")
    app = McpServerApp.from_openapi(spec, client=client, **options)
    return {tool["name"]: tool for tool in app.catalog.tool_wire_list()}


def check(schema: dict[str, Any], instance: Any) -> None:
    """``schema`` is valid 2020-12 and accepts ``instance`` (its ``$ref``s resolve)."""
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.Draft202012Validator(schema).validate(instance)


def test_openapi_30_parameters_body_and_responses_become_schemas():
    tools = tools_of(zoo_30())
    assert set(tools) == {"getAnimal", "update_animal", "post_keepers_id_shifts"}

    get = tools["getAnimal"]
    assert get["title"] == "One animal" and get["description"] == "One animal"
    assert get["annotations"] == {"readOnlyHint": True}
    assert get["inputSchema"] == {
        "type": "object",
        "properties": {
            # a path-item parameter behind a $ref, its description carried over
            "animalId": {"type": "integer", "description": "The animal's id"},
            "fields": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["animalId"],
    }
    out = get["outputSchema"]
    # the response behind a $ref; writeOnly "secret" left out; x-* and discriminator dropped
    assert out["type"] == "object" and out["required"] == ["id", "name"]
    assert out["properties"] == ANIMAL_OUT_PROPERTIES
    assert set(out["$defs"]) == {"Animal"}
    assert out["$defs"]["Animal"]["properties"] == ANIMAL_OUT_PROPERTIES
    check(
        out,
        {"id": 1, "name": "Rex", "nickname": None, "kind": None, "parent": {"id": 0, "name": "Ma"}},
    )
    with pytest.raises(jsonschema.ValidationError):
        check(out, {"id": 1, "name": "Rex", "weight": 0})  # exclusive minimum


def test_a_body_property_keeps_its_name_and_the_clashing_parameter_is_suffixed():
    tools = tools_of(zoo_30())
    update = tools["update_animal"]  # operationId "update animal!", sanitized
    assert update["description"] == "Replace an animal." and "title" not in update
    assert update["annotations"] == {"idempotentHint": True}
    schema = update["inputSchema"]
    assert list(schema["properties"]) == [
        "animalId",
        "name__query",  # the query parameter "name" clashes with the body's "name"
        "name",
        "nickname",
        "weight",
        "kind",
        "parent",
        "secret",  # writeOnly: sent, never read back
    ]  # readOnly "id" is not sent
    assert schema["required"] == ["animalId", "name"]
    assert schema["$defs"]["Animal"]["required"] == ["name"]
    check(
        schema, {"animalId": 3, "name": "Rex", "parent": {"name": "Ma", "parent": {"name": "Gran"}}}
    )


def test_two_parameters_of_one_name_are_both_suffixed_and_an_array_body_is_body():
    tools = tools_of(zoo_30())
    shifts = tools["post_keepers_id_shifts"]  # no operationId: method and path
    assert shifts["inputSchema"] == {
        "type": "object",
        "properties": {
            "id__path": {"type": "string"},
            "id__header": {"type": "string"},
            # the "Authorization" header parameter is ignored, as OpenAPI says
            "body": {"type": "array", "items": {"type": "string", "format": "date"}},
        },
        "required": ["id__path", "body"],
    }
    assert "outputSchema" not in shifts  # 204: nothing structured to promise


def test_openapi_31_type_arrays_and_defs_style_references():
    tools = tools_of(forest_31())
    node = {
        "type": "object",
        "properties": {
            "value": {"type": ["integer", "null"]},
            "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
        },
    }
    leaf = {"type": "object", "properties": {"color": {"type": "string"}}}
    tree_properties = {
        "name": {"type": "string", "examples": ["oak"]},
        "root": {**node, "description": "The root node"},  # the $ref's sibling kept
        "leaves": {"type": "array", "items": leaf},
    }
    plant = tools["plant"]
    assert plant["inputSchema"] == {
        "type": "object",
        "properties": tree_properties,
        "required": ["name"],
        "$defs": {"Node": node},
    }
    assert plant["outputSchema"] == {
        "type": "object",
        "required": ["name"],
        "properties": tree_properties,
        "$defs": {"Node": node},
    }
    check(
        plant["inputSchema"], {"name": "oak", "root": {"value": 1, "children": [{"value": None}]}}
    )
    with pytest.raises(jsonschema.ValidationError):
        check(plant["inputSchema"], {"name": "oak", "root": {"children": [{"value": "x"}]}})

    leaves = tools["get_trees_treeId_leaves"]
    assert leaves["inputSchema"] == {
        "type": "object",
        "properties": {
            "treeId": {"type": "string", "format": "uuid"},
            "color": {"type": ["string", "null"]},
        },
        "required": ["treeId"],
    }
    # an array is not an object: wrapped as {"result": ...}, as mcpkit does for functions
    assert leaves["outputSchema"] == {
        "type": "object",
        "properties": {"result": {"type": "array", "items": leaf}},
        "required": ["result"],
        "x-fastmcp-wrap-result": True,
    }


def test_nullable_without_a_type_and_a_nullable_ref_accept_null():
    document = load_document(
        {
            "openapi": "3.0.0",
            "info": {"title": "t", "version": "1"},
            "paths": {},
            "components": {
                "schemas": {
                    "Cat": {"type": "object", "properties": {"name": {"type": "string"}}},
                    "Either": {
                        "oneOf": [{"$ref": "#/components/schemas/Cat"}, {"type": "integer"}],
                        "nullable": True,
                    },
                }
            },
        }
    )
    converter = SchemaConverter(document, "request")
    either = converter.convert({"$ref": "#/components/schemas/Either"})
    cat = {"type": "object", "properties": {"name": {"type": "string"}}}
    assert either == {"anyOf": [{"oneOf": [cat, {"type": "integer"}]}, {"type": "null"}]}
    nullable_cat = converter.convert({"$ref": "#/components/schemas/Cat", "nullable": True})
    assert nullable_cat == {**cat, "type": ["object", "null"]}
    for schema in (either, nullable_cat):
        check(schema, None)


def test_deep_chains_of_references_stop_inlining_at_the_depth_bound():
    schemas = {
        f"S{i}": {
            "type": "object",
            "properties": {"next": {"$ref": f"#/components/schemas/S{i + 1}"}},
        }
        for i in range(MAX_INLINE_DEPTH + 5)
    }
    schemas[f"S{MAX_INLINE_DEPTH + 5}"] = {"type": "string"}
    document = load_document(
        {
            "openapi": "3.1.0",
            "info": {"title": "t", "version": "1"},
            "components": {"schemas": schemas},
        }
    )
    converter = SchemaConverter(document, "response")
    schema = converter.finish(converter.convert({"$ref": "#/components/schemas/S0"}))
    depth, node = 0, schema
    while "properties" in node:
        node = node["properties"]["next"]
        depth += 1
    assert depth == MAX_INLINE_DEPTH and node == {"$ref": f"#/$defs/S{MAX_INLINE_DEPTH}"}
    check(schema, {"next": {"next": {"next": {}}}})


def branching_references(levels: int) -> dict[str, Any]:
    """A small document whose schemas refer to the next one twice, ``levels`` deep: inlined
    in full, its request body would hold 2**levels copies of the last one."""
    schemas: dict[str, Any] = {
        f"S{i}": {
            "type": "object",
            "properties": {
                "left": {"$ref": f"#/components/schemas/S{i + 1}"},
                "right": {"$ref": f"#/components/schemas/S{i + 1}"},
            },
        }
        for i in range(levels)
    }
    schemas[f"S{levels}"] = {"type": "string"}
    body = {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/S0"}}}}
    return {
        "openapi": "3.1.0",
        "info": {"title": "t", "version": "1"},
        "paths": {"/tree": {"post": {"operationId": "tree", "requestBody": body}}},
        "components": {"schemas": schemas},
    }


def schema_nodes(schema: Any) -> int:
    """The schema objects (JSON objects) in ``schema``, ``$defs`` included."""
    if isinstance(schema, dict):
        return 1 + sum(schema_nodes(value) for value in schema.values())
    if isinstance(schema, list):
        return sum(schema_nodes(value) for value in schema)
    return 0


def nested(depth: int, leaf: Any) -> Any:
    """An instance of ``S0`` down its left edge (``{}`` on the right, but at the end)."""
    if depth == 0:
        return leaf
    return {"left": nested(depth - 1, leaf), "right": {} if depth > 1 else leaf}


def test_references_that_branch_and_join_are_shared_past_the_size_bound():
    """A 3 KB document of 24 levels, each schema referring to the next twice: inlined up to
    the depth bound, it made a 5 MB tool schema (2**16 copies of the deepest inlined
    schema; more references per level multiply it further)."""
    levels = 24
    document = branching_references(levels)
    assert len(json.dumps(document)) < 4000
    schema = tools_of(document)["tree"]["inputSchema"]
    # the bound counts schema objects; here each has a ``properties`` map, and the last
    # inlined ones hold ``{"$ref": ...}`` objects: well within three times the bound
    assert schema_nodes(schema) < 3 * DEFAULT_MAX_SCHEMA_NODES
    assert len(json.dumps(schema)) < 200_000
    # each schema converted once at most into ``$defs``, beside what was inlined
    assert "S1" in schema["$defs"]
    assert set(schema["$defs"]) <= {f"S{i}" for i in range(levels + 1)}
    # the same values are valid as with every reference inlined
    check(schema, nested(levels, "leaf"))
    with pytest.raises(jsonschema.ValidationError):
        check(schema, nested(levels, 7))  # the last schema is a string


def test_the_size_bound_is_an_option():
    document = branching_references(6)
    inlined = tools_of(document)["tree"]["inputSchema"]
    # every reference inlined: 2**7 - 1 schema objects, 2**6 - 1 ``properties`` maps
    assert "$defs" not in inlined and schema_nodes(inlined) == 2**7 - 1 + 2**6 - 1
    shared = tools_of(document, max_schema_nodes=4)["tree"]["inputSchema"]
    assert schema_nodes(shared) < 40 and set(shared["$defs"]) >= {"S3", "S4", "S5", "S6"}
    check(shared, nested(6, "leaf"))
    with pytest.raises(jsonschema.ValidationError):
        check(shared, nested(6, 7))


def nested_schemas(shape: str, depth: int, components: dict[str, Any]) -> Any:
    """A schema nested ``depth`` levels deep by ``shape`` (the schemas it refers to put in
    ``components``)."""
    if shape == "references":  # D0 -> D1 -> ... each a schema of its own
        prefix = f"D{depth}_"
        for i in range(depth):
            next_ref = {"$ref": f"#/components/schemas/{prefix}{i + 1}"}
            components[f"{prefix}{i}"] = {"type": "object", "properties": {"n": next_ref}}
        components[f"{prefix}{depth}"] = {"type": "string"}
        return {"$ref": f"#/components/schemas/{prefix}0"}
    schema: Any = {"type": "string"}
    for _ in range(depth):
        if shape == "properties":
            schema = {"type": "object", "properties": {"n": schema}}
        elif shape == "items":
            schema = {"type": "array", "items": schema}
        else:
            schema = {"allOf": [schema]}
    return schema


@pytest.mark.parametrize("shape", ["properties", "items", "allOf", "references"])
def test_a_schema_nested_past_the_depth_bound_leaves_its_operation_out(shape, caplog):
    """Nested a few thousand levels (a few kilobytes of document, or a chain of a few
    hundred references), a schema made the import fail with ``RecursionError``."""
    schemas: dict[str, Any] = {}
    too_deep = nested_schemas(shape, 3000, schemas)
    more = nested_schemas(shape, MAX_SCHEMA_DEPTH + 1, schemas)
    deep_enough = nested_schemas(shape, MAX_SCHEMA_DEPTH - 1, schemas)

    def body(schema: Any) -> dict[str, Any]:
        return {"content": {"application/json": {"schema": schema}}}

    def post(name: str, schema: Any) -> dict[str, Any]:
        return {"post": {"operationId": name, "requestBody": body(schema), "responses": {}}}

    document = {
        "openapi": "3.1.0",
        "info": {"title": "t", "version": "1"},
        "paths": {
            "/deep": post("deep", too_deep),
            "/more": post("more", more),
            "/fine": post("fine", deep_enough),
            "/out": {"get": {"responses": {"200": {"description": "ok", **body(too_deep)}}}},
        },
        "components": {"schemas": schemas},
    }
    assert set(tools_of(document)) == {"fine"}
    assert "POST /deep left out" in caplog.text and "GET /out left out" in caplog.text
    assert f"nested deeper than {MAX_SCHEMA_DEPTH}" in caplog.text


def test_json_text_nested_too_deep_to_parse_is_a_value_error():
    text = (
        '{"openapi": "3.1.0", "info": {"title": "t"}, "x-deep": '
        + "[" * 100_000
        + "]" * 100_000
        + "}"
    )
    with pytest.raises(ValueError, match="nested too deeply"):
        load_document(text)


def test_an_unresolvable_reference_is_anything_and_logged(caplog):
    document = load_document({"openapi": "3.1.0", "info": {"title": "t", "version": "1"}})
    converter = SchemaConverter(document, "request")
    assert converter.convert({"$ref": "other.yaml#/Pet"}) == {}
    assert "cannot resolve $ref 'other.yaml#/Pet'" in caplog.text


def test_path_item_parameters_merge_and_the_operation_overrides_them():
    document = load_document(
        {
            "openapi": "3.0.3",
            "info": {"title": "t", "version": "1"},
            "paths": {
                "/items": {
                    "parameters": [
                        {"name": "q", "in": "query", "schema": {"type": "string"}},
                        {"name": "page", "in": "query", "schema": {"type": "integer"}},
                    ],
                    "get": {
                        "parameters": [
                            {
                                "name": "q",
                                "in": "query",
                                "required": True,
                                "schema": {"type": "integer"},
                            }
                        ],
                        "responses": {"200": {"description": "ok"}},
                    },
                }
            },
        }
    )
    (operation,) = read_operations(document)
    plan = plan_operation(document, operation)
    assert plan.input_schema == {
        "type": "object",
        "properties": {"q": {"type": "integer"}, "page": {"type": "integer"}},
        "required": ["q"],
    }


def test_json_text_and_bytes_load_like_the_dict():
    assert tools_of(json.dumps(zoo_30())) == tools_of(zoo_30())
    assert tools_of(json.dumps(forest_31()).encode()) == tools_of(forest_31())


def test_yaml_text_without_pyyaml_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "yaml", None)  # as if PyYAML were not installed
    with pytest.raises(ImportError, match=r"pip install 'mcpkit\[openapi\]'"):
        load_document("openapi: 3.1.0\ninfo: {title: t, version: '1'}\n")


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ({"swagger": "2.0", "info": {}}, "Swagger 2.0 is not supported"),
        ({"info": {}}, "not an OpenAPI 3.x document"),
        ([1, 2], "must be a JSON object"),
    ],
)
def test_documents_that_are_not_openapi_3_are_refused(document, message):
    with pytest.raises(ValueError, match=message):
        load_document(json.dumps(document))

"""The types the client makes of output schemas (``mcpkit.client._schema_types``): objects
as frozen structs with attribute access, equality and a repr, nested through ``$ref``;
arrays, enums, ``const``, optional members with defaults, ``additionalProperties`` maps,
names Python cannot spell; schemas written by pydantic as the peers' servers send them. A
value that does not conform is a ``ValidationError`` (the client then keeps it plain), and
a schema the builder does not handle an ``UnsupportedSchema``."""

from __future__ import annotations

import dataclasses
import datetime
from typing import Any, Literal

import msgspec
import pydantic
import pytest

from mcpkit.client._schema_types import (
    MAX_SCHEMA_DEPTH,
    UnsupportedSchema,
    hydrate,
    schema_type,
)


class Place(pydantic.BaseModel):
    city: str
    country: str = "NO"


class Trip(pydantic.BaseModel):
    title: str
    stops: list[Place]
    mode: Literal["train", "bus"]
    nights: int | None = None
    start: datetime.date


def test_a_pydantic_schema_becomes_nested_structs() -> None:
    made = schema_type(Trip.model_json_schema(), "TripOutput")
    value = {
        "title": "North",
        "stops": [{"city": "Oslo"}, {"city": "Bergen", "country": "NO"}],
        "mode": "train",
        "start": "2026-07-28",
    }
    trip = hydrate(value, made)
    assert type(trip).__name__ == "Trip" and type(trip.stops[0]).__name__ == "Place"
    assert trip.stops[1].city == "Bergen" and trip.stops[0].country == "NO"  # the default
    assert trip.nights is None and trip.start == datetime.date(2026, 7, 28)
    assert trip == hydrate(value, made) and trip != hydrate({**value, "mode": "bus"}, made)
    assert repr(trip).startswith("Trip(title='North', stops=[Place(city='Oslo'")
    with pytest.raises(AttributeError):
        trip.title = "South"  # frozen: data is what the server said
    with pytest.raises(msgspec.ValidationError, match="mode"):
        hydrate({**value, "mode": "plane"}, made)
    with pytest.raises(msgspec.ValidationError, match="title"):
        hydrate({"stops": [], "mode": "bus", "start": "2026-07-28"}, made)


def test_scalars_arrays_maps_and_unions() -> None:
    assert hydrate(3, schema_type({"type": "integer"}, "N")) == 3
    assert hydrate(3, schema_type({"type": "number"}, "N")) == 3.0
    with pytest.raises(msgspec.ValidationError):
        hydrate("3", schema_type({"type": "integer"}, "N"))  # no coercion: not conforming
    pair = schema_type({"type": ["string", "null"]}, "P")
    assert hydrate(None, pair) is None and hydrate("a", pair) == "a"
    counts = schema_type({"type": "object", "additionalProperties": {"type": "integer"}}, "C")
    assert hydrate({"a": 1}, counts) == {"a": 1}
    with pytest.raises(msgspec.ValidationError):
        hydrate({"a": "x"}, counts)
    assert hydrate({"any": [1]}, schema_type({"type": "object"}, "O")) == {"any": [1]}
    assert hydrate([1, "x"], schema_type({"type": "array"}, "A")) == [1, "x"]
    assert schema_type({}, "Anything") is Any and schema_type(True, "Anything") is Any
    assert hydrate("on", schema_type({"const": "on"}, "K")) == "on"
    with pytest.raises(msgspec.ValidationError):
        hydrate("off", schema_type({"const": "on"}, "K"))


def test_properties_python_cannot_spell_keep_their_names_on_the_wire() -> None:
    schema = {
        "type": "object",
        "properties": {
            "class": {"type": "string"},
            "first-name": {"type": "string"},
            "tags": {"type": "array", "items": {"type": "string"}, "default": ["x"]},
        },
        "required": ["class", "first-name"],
    }
    made = schema_type(schema, "Person")
    person = hydrate({"class": "a", "first-name": "Ada"}, made)
    assert (person.class_, person.first_name, person.tags) == ("a", "Ada", ["x"])
    assert msgspec.to_builtins(person) == {"class": "a", "first-name": "Ada", "tags": ["x"]}
    assert person.tags is not hydrate({"class": "a", "first-name": "Ada"}, made).tags
    clash = {"type": "object", "properties": {"a-b": {}, "a_b": {}}}
    with pytest.raises(UnsupportedSchema, match="a_b"):
        schema_type(clash, "Clash")


def test_a_key_the_schema_does_not_name_is_not_dropped() -> None:
    made = schema_type({"type": "object", "properties": {"a": {"type": "integer"}}}, "A")
    assert hydrate({"a": 1}, made).a == 1
    with pytest.raises(msgspec.ValidationError, match="unknown field `b`"):
        hydrate({"a": 1, "b": 2}, made)


@dataclasses.dataclass
class Node:
    name: str
    children: list[Node]


@pytest.mark.parametrize(
    ("schema", "why"),
    [
        (pydantic.TypeAdapter(Node).json_schema(), "recursive"),
        ({"type": "object", "properties": {"a": {"$ref": "#/$defs/Gone"}}}, "does not define"),
        ({"not": {"type": "string"}}, "uses not"),
        ({"allOf": [{"type": "string"}, {"minLength": 1}]}, "allOf"),
        ({"enum": [1.5, 2.5]}, "enum"),
        ({"type": "tuple"}, "unknown type"),
        (
            {
                "anyOf": [
                    {"type": "object", "properties": {"a": {}}},
                    {"type": "object", "properties": {"b": {}}},
                ]
            },
            "Struct types",
        ),
    ],
)
def test_what_the_builder_does_not_handle_is_refused(schema: Any, why: str) -> None:
    with pytest.raises(UnsupportedSchema, match=why):
        schema_type(schema, "Refused")


def test_nesting_is_bounded() -> None:
    schema: dict[str, Any] = {"type": "integer"}
    for _ in range(MAX_SCHEMA_DEPTH + 1):
        schema = {"type": "array", "items": schema}
    with pytest.raises(UnsupportedSchema, match="deeper"):
        schema_type(schema, "Deep")

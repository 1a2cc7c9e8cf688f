"""Tests for mcpkit.server._schema.callables: signatures -> schemas, validation, docstrings."""

import dataclasses
import datetime
import enum
import types
import uuid
import warnings
from typing import Annotated, Any, Literal, NotRequired, Required, TypedDict

import annotated_types as at
import jsonschema
import msgspec
import pydantic
import pytest
import typing_extensions

from mcpkit import InvalidParamsError
from mcpkit.server._schema.callables import CallableSignature, inspect_callable, parse_docstring

# --------------------------------------------------------------------------- helpers


def check(sig: CallableSignature, *valid_arguments: dict[str, Any]) -> None:
    """Schemas are valid 2020-12 and accepted arguments also pass the schema itself."""
    jsonschema.Draft202012Validator.check_schema(sig.input_schema)
    assert sig.input_schema["type"] == "object"
    assert "$ref" not in sig.input_schema
    if sig.output_schema is not None:
        jsonschema.Draft202012Validator.check_schema(sig.output_schema)
        assert sig.output_schema["type"] == "object"
    for arguments in valid_arguments:
        sig.validate(arguments)
        jsonschema.validate(arguments, sig.input_schema, cls=jsonschema.Draft202012Validator)


def invalid(sig: CallableSignature, arguments: Any) -> InvalidParamsError:
    with pytest.raises(InvalidParamsError) as info:
        sig.validate(arguments)
    assert info.value.code == -32602
    assert info.value.data["errors"]
    return info.value


def props(sig: CallableSignature) -> dict[str, Any]:
    return sig.input_schema["properties"]


# --------------------------------------------------------------------------- types used


@dataclasses.dataclass
class Point:
    x: int
    y: int = 0


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Movie(TypedDict):
    title: str
    year: NotRequired[int]


class LooseMovie(TypedDict, total=False):
    title: Required[str]
    rating: float


class Item(msgspec.Struct):
    """An item."""

    name: str
    qty: int = 1


class User(pydantic.BaseModel):
    name: str
    age: int = pydantic.Field(ge=0)


class Address(typing_extensions.TypedDict):
    city: str


@dataclasses.dataclass
class Tree:
    value: int
    children: "list[Tree]" = dataclasses.field(default_factory=list)


class Context:
    """Stands in for the server's request context."""


class SubContext(Context):
    pass


class TextContent:
    def __init__(self, text: str) -> None:
        self.text = text


class CallToolResult:
    pass


# --------------------------------------------------------------------------- primitives


def test_primitives_schema_and_validation() -> None:
    def f(s: str, i: int, x: float, b: bool) -> None: ...

    sig = inspect_callable(f)
    assert props(sig) == {
        "s": {"type": "string"},
        "i": {"type": "integer"},
        "x": {"type": "number"},
        "b": {"type": "boolean"},
    }
    assert sig.input_schema["required"] == ["s", "i", "x", "b"]
    check(sig, {"s": "a", "i": 1, "x": 2, "b": True})
    assert sig.validate({"s": "a", "i": 1, "x": 2, "b": False}) == {
        "s": "a",
        "i": 1,
        "x": 2.0,
        "b": False,
    }


def test_no_string_to_number_coercion() -> None:
    def f(i: int, x: float) -> None: ...

    sig = inspect_callable(f)
    error = invalid(sig, {"i": "5", "x": 1.0})
    assert "'i'" in error.message
    assert error.data == {"errors": [{"path": "i", "message": "Expected `int`, got `str`"}]}
    invalid(sig, {"i": True, "x": 1.0})  # a boolean is not an integer in JSON Schema
    invalid(sig, {"i": 1, "x": "1.5"})


def test_missing_required_argument() -> None:
    def f(a: int, b: str) -> None: ...

    error = invalid(inspect_callable(f), {"a": 1})
    assert error.message == "Missing required argument 'b'"
    assert error.data["errors"][0]["path"] == "b"


def test_every_wrong_argument_is_named_missing_ones_first() -> None:
    """The model reads the message (an isError result) and fixes all of it in one go; a
    pydantic signature says as much as a msgspec one."""

    @dataclasses.dataclass
    class Room:
        beds: int

    def msgspec_typed(city: str, nights: int, tags: list[int] = (), room: Room | None = None): ...

    class Stay(pydantic.BaseModel):
        beds: int

    def pydantic_typed(city: str, nights: int, tags: list[int] = (), room: Stay | None = None): ...

    for fn in (msgspec_typed, pydantic_typed):
        error = invalid(
            inspect_callable(fn), {"city": 3, "tags": [1, "a"], "room": {"beds": "two"}}
        )
        paths = [item["path"] for item in error.data["errors"]]
        assert paths[0] == "nights" and set(paths) == {"nights", "city", "tags[1]", "room.beds"}
        assert error.message.startswith("Missing required argument 'nights'; ")
        for path in ("city", "tags[1]", "room.beds"):
            assert f"Invalid argument '{path}': " in error.message


def test_a_long_list_of_wrong_arguments_is_cut_in_the_message() -> None:
    from mcpkit.server._schema.engines import MAX_LISTED_ARGUMENT_ERRORS

    count = MAX_LISTED_ARGUMENT_ERRORS + 3
    namespace: dict[str, Any] = {}
    exec(f"def fn({', '.join(f'a{i}: int' for i in range(count))}) -> None: ...", namespace)
    fn = namespace["fn"]
    error = invalid(inspect_callable(fn), {f"a{i}": "x" for i in range(count)})
    assert len(error.data["errors"]) == count
    assert error.message.count("Invalid argument") == MAX_LISTED_ARGUMENT_ERRORS
    assert error.message.endswith(" (and 3 more)")


def test_none_and_non_object_arguments() -> None:
    def nothing() -> None: ...

    def one(a: int = 1) -> None: ...

    assert inspect_callable(nothing).validate(None) == {}
    assert inspect_callable(one).validate(None) == {"a": 1}
    error = invalid(inspect_callable(one), [1, 2])
    assert error.data["errors"][0]["path"] == ""
    assert inspect_callable(nothing).input_schema == {"type": "object", "properties": {}}


def test_extra_arguments_ignored_and_mappings_accepted() -> None:
    def f(a: int) -> None: ...

    sig = inspect_callable(f)
    assert sig.validate({"a": 1, "zzz": 2}) == {"a": 1}
    assert sig.validate(types.MappingProxyType({"a": 3})) == {"a": 3}


def test_any_and_missing_annotation() -> None:
    def f(a, b: Any, c=3) -> None: ...

    sig = inspect_callable(f)
    assert props(sig) == {"a": {}, "b": {}, "c": {"default": 3}}
    assert sig.input_schema["required"] == ["a", "b"]
    check(sig, {"a": [1, {"x": None}], "b": "s"})
    assert sig.validate({"a": {"k": 1}, "b": None}) == {"a": {"k": 1}, "b": None, "c": 3}


# --------------------------------------------------------------------------- optional, defaults


def test_optional_and_defaults() -> None:
    def f(
        a: int | None,
        b: str | None = None,
        c: int = None,  # type: ignore[assignment]  # widened to int | None
        d: float = 1.5,
        e: list[int] = [1, 2],  # noqa: B006
        f: object = object(),
    ) -> None: ...

    sig = inspect_callable(f)
    p = props(sig)
    assert sig.input_schema["required"] == ["a"]
    assert p["a"] == {"anyOf": [{"type": "integer"}, {"type": "null"}]}
    assert p["b"]["default"] is None
    assert {"type": "null"} in p["c"]["anyOf"]
    assert p["d"] == {"type": "number", "default": 1.5}
    assert p["e"]["default"] == [1, 2]
    assert "default" not in p["f"]  # not JSON-able
    check(sig, {"a": None}, {"a": 1, "c": None, "e": []})
    first = sig.validate({"a": 1})
    second = sig.validate({"a": 1})
    assert first["e"] == [1, 2] and first["e"] is not second["e"]  # mutable default copied
    assert first["c"] is None and first["d"] == 1.5


def test_keyword_only_required_after_optional() -> None:
    def f(a: int = 1, *, b: str) -> None: ...

    sig = inspect_callable(f)
    assert sig.input_schema["required"] == ["b"]
    assert sig.validate({"b": "x"}) == {"a": 1, "b": "x"}


def test_union() -> None:
    def f(v: int | str) -> None: ...

    sig = inspect_callable(f)
    check(sig, {"v": 1}, {"v": "s"})
    invalid(sig, {"v": 1.5})


# --------------------------------------------------------------------------- containers


def test_containers() -> None:
    def f(
        items: list[int],
        pair: tuple[int, str],
        tags: set[str],
        counts: dict[str, int],
        anything: tuple = (),
    ) -> None: ...

    sig = inspect_callable(f)
    p = props(sig)
    assert p["items"] == {"type": "array", "items": {"type": "integer"}}
    assert p["pair"]["prefixItems"] == [{"type": "integer"}, {"type": "string"}]
    assert p["tags"]["uniqueItems"] is True
    assert p["counts"] == {"type": "object", "additionalProperties": {"type": "integer"}}
    arguments = {"items": [1], "pair": [1, "a"], "tags": ["x"], "counts": {"a": 1}}
    check(sig, arguments)
    kwargs = sig.validate(arguments)
    assert kwargs["pair"] == (1, "a") and kwargs["tags"] == {"x"} and kwargs["anything"] == ()
    error = invalid(sig, {**arguments, "items": [1, "2"]})
    assert error.data["errors"][0]["path"] == "items[1]"


# --------------------------------------------------------------------------- literal, enum


def test_literal_and_enum() -> None:
    def f(mode: Literal["slow", "fast"], color: Color, level: Level = Level.LOW) -> None: ...

    sig = inspect_callable(f)
    p = props(sig)
    assert p["mode"] == {"enum": ["slow", "fast"]}
    assert p["color"]["$ref"] == "#/$defs/Color"
    assert sig.input_schema["$defs"]["Color"]["enum"] == ["red", "green"]  # declared order
    assert p["level"]["default"] == 1
    check(sig, {"mode": "fast", "color": "red"})
    kwargs = sig.validate({"mode": "slow", "color": "green", "level": 2})
    assert kwargs == {"mode": "slow", "color": Color.GREEN, "level": Level.HIGH}
    error = invalid(sig, {"mode": "fast", "color": "blue"})
    assert "color" in error.message and "blue" in error.message
    invalid(sig, {"mode": "medium", "color": "red"})


# --------------------------------------------------------------------------- constraints


def test_msgspec_meta_constraints() -> None:
    def f(
        n: Annotated[int, msgspec.Meta(ge=1, le=10, description="How many.")],
        code: Annotated[str, msgspec.Meta(pattern="^[A-Z]{3}$", min_length=3)],
    ) -> None:
        """Doc.

        Args:
            n: Loses to the annotation's description.
            code: Currency code.
        """

    sig = inspect_callable(f)
    p = props(sig)
    assert p["n"] == {"description": "How many.", "type": "integer", "minimum": 1, "maximum": 10}
    assert p["code"]["pattern"] == "^[A-Z]{3}$"
    assert p["code"]["description"] == "Currency code."
    check(sig, {"n": 3, "code": "EUR"})
    error = invalid(sig, {"n": 11, "code": "EUR"})
    assert error.data["errors"][0]["path"] == "n"
    invalid(sig, {"n": 1, "code": "eur"})


def test_annotated_types_constraints_stay_on_msgspec() -> None:
    def f(
        a: Annotated[int, at.Gt(0), at.Lt(5)],
        b: Annotated[str, at.Len(1, 3)],
        c: Annotated[float, at.Interval(ge=0, le=1)] = 0.5,
        d: list[Annotated[int, at.MultipleOf(2)]] = [],  # noqa: B006
    ) -> None: ...

    sig = inspect_callable(f)
    p = props(sig)
    assert p["a"]["exclusiveMinimum"] == 0 and p["a"]["exclusiveMaximum"] == 5
    assert p["b"]["minLength"] == 1 and p["b"]["maxLength"] == 3
    assert p["d"]["items"]["multipleOf"] == 2
    check(sig, {"a": 1, "b": "ab", "d": [2, 4]})
    invalid(sig, {"a": 0, "b": "ab"})
    invalid(sig, {"a": 1, "b": ""})
    invalid(sig, {"a": 1, "b": "ab", "c": 2})
    invalid(sig, {"a": 1, "b": "ab", "d": [3]})


def test_annotated_types_predicate_needs_pydantic() -> None:
    def f(a: Annotated[int, at.Predicate(lambda v: v % 2 == 0)]) -> None: ...

    sig = inspect_callable(f)
    assert sig.validate({"a": 2}) == {"a": 2}
    invalid(sig, {"a": 3})


def test_plain_string_annotation_is_description() -> None:
    def f(a: Annotated[int, "The a value."]) -> None:
        """Doc.

        Args:
            a: From the docstring.
        """

    assert props(inspect_callable(f))["a"]["description"] == "The a value."


# --------------------------------------------------------------------------- records


def test_dataclass_parameter() -> None:
    def f(p: Point) -> None: ...

    sig = inspect_callable(f)
    assert props(sig)["p"] == {"$ref": "#/$defs/Point"}
    assert sig.input_schema["$defs"]["Point"]["required"] == ["x"]
    check(sig, {"p": {"x": 1}})
    assert sig.validate({"p": {"x": 1, "y": 2}}) == {"p": Point(1, 2)}
    error = invalid(sig, {"p": {"x": "1"}})
    assert error.data["errors"][0]["path"] == "p.x"
    error = invalid(sig, {"p": {}})
    assert error.message == "Invalid argument 'p.x': missing required field"


def test_typeddict_parameter() -> None:
    def f(movie: Movie, loose: LooseMovie | None = None) -> None: ...

    sig = inspect_callable(f)
    defs = sig.input_schema["$defs"]
    assert defs["Movie"]["required"] == ["title"]
    assert defs["LooseMovie"]["required"] == ["title"]
    check(sig, {"movie": {"title": "Alien"}}, {"movie": {"title": "A", "year": 1979}})
    kwargs = sig.validate({"movie": {"title": "Alien", "extra": 1}, "loose": {"title": "B"}})
    assert kwargs["movie"] == {"title": "Alien"} and type(kwargs["movie"]) is dict
    invalid(sig, {"movie": {"year": 1979}})


def test_struct_parameter() -> None:
    def f(item: Item, items: list[Item] = []) -> None: ...  # noqa: B006

    sig = inspect_callable(f)
    assert sig.input_schema["$defs"]["Item"]["description"] == "An item."
    check(sig, {"item": {"name": "a"}, "items": [{"name": "b", "qty": 2}]})
    kwargs = sig.validate({"item": {"name": "a"}, "items": [{"name": "b", "qty": 2}]})
    assert kwargs == {"item": Item("a"), "items": [Item("b", 2)]}


def test_datetime_date_uuid() -> None:
    def f(when: datetime.datetime, day: datetime.date, ident: uuid.UUID) -> None: ...

    sig = inspect_callable(f)
    u = uuid.uuid4()
    arguments = {"when": "2024-05-01T12:00:00Z", "day": "2024-05-01", "ident": str(u)}
    check(sig, arguments)
    kwargs = sig.validate(arguments)
    assert kwargs["when"] == datetime.datetime(2024, 5, 1, 12, tzinfo=datetime.UTC)
    assert kwargs["day"] == datetime.date(2024, 5, 1)
    assert kwargs["ident"] == u
    invalid(sig, {**arguments, "day": "yesterday"})


def test_recursive_dataclass_parameter() -> None:
    def f(tree: Tree) -> Tree: ...

    sig = inspect_callable(f)
    arguments = {"tree": {"value": 1, "children": [{"value": 2}]}}
    check(sig, arguments)
    assert sig.validate(arguments)["tree"] == Tree(1, [Tree(2)])
    assert sig.output_schema is not None and sig.wraps_output is False
    out = sig.structure_output(Tree(1, [Tree(2)]))
    jsonschema.validate(out, sig.output_schema, cls=jsonschema.Draft202012Validator)


# --------------------------------------------------------------------------- pydantic engine


def test_pydantic_model_parameter() -> None:
    def f(user: User, note: str = "") -> None:
        """Save a user.

        Args:
            user: Who.
        """

    sig = inspect_callable(f)
    assert props(sig)["user"]["$ref"] == "#/$defs/User"
    assert props(sig)["user"]["description"] == "Who."
    assert "title" not in props(sig)["note"]
    assert "title" not in sig.input_schema
    check(sig, {"user": {"name": "a", "age": 3}})
    kwargs = sig.validate({"user": {"name": "a", "age": 3}})
    assert kwargs == {"user": User(name="a", age=3), "note": ""}
    error = invalid(sig, {"user": {"name": "a", "age": -1}})
    assert error.data["errors"][0]["path"] == "user.age"
    error = invalid(sig, {"user": {"name": "a", "age": "3"}})  # strict: no coercion
    assert "user.age" in error.message
    error = invalid(sig, {})
    assert error.message == "Missing required argument 'user'"


def test_pydantic_field_in_annotated_and_default() -> None:
    def f(
        a: Annotated[int, pydantic.Field(gt=0, description="Positive.")],
        b: str = pydantic.Field("x", max_length=2),
        c: datetime.date | None = None,
        color: Color = Color.RED,
    ) -> None: ...

    sig = inspect_callable(f)
    p = props(sig)
    assert p["a"]["description"] == "Positive." and p["a"]["exclusiveMinimum"] == 0
    assert p["b"]["default"] == "x" and p["b"]["maxLength"] == 2
    assert sig.input_schema["required"] == ["a"]
    check(sig, {"a": 1}, {"a": 2, "b": "yy", "c": "2024-01-02", "color": "green"})
    kwargs = sig.validate({"a": 1, "c": "2024-01-02", "color": "green"})
    assert kwargs == {"a": 1, "b": "x", "c": datetime.date(2024, 1, 2), "color": Color.GREEN}
    invalid(sig, {"a": 0})
    invalid(sig, {"a": 1, "b": "long"})
    invalid(sig, {"a": "1"})
    invalid(sig, {"a": 1, "color": "blue"})


def _host_warns() -> None:
    warnings.warn("the host's own warning", UserWarning, stacklevel=1)


def test_pydantic_schema_leaves_the_hosts_warnings_alone() -> None:
    """A default no JSON can hold is left out of the schema without a warning, and without
    touching the process's warning filters: resetting them would make every warning the host
    has already shown once (the "default" action) show again, and another thread's filters
    would change while the schema is made."""

    def f(user: User, when: object = object()) -> None: ...

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("default")
        _host_warns()
        filters = list(warnings.filters)
        sig = inspect_callable(f)
        assert warnings.filters == filters
        _host_warns()  # shown once already: "default" does not show it again
    assert "default" not in props(sig)["when"]
    assert [str(w.message) for w in seen] == ["the host's own warning"]


def test_pydantic_awkward_parameter_names() -> None:
    def f(user: User, _private: int = 0, json: str = "", model_config: int = 1) -> None: ...

    sig = inspect_callable(f)
    assert set(props(sig)) == {"user", "_private", "json", "model_config"}
    assert all("title" not in prop for prop in props(sig).values())
    arguments = {"user": {"name": "n", "age": 1}, "_private": 5, "json": "j"}
    check(sig, arguments)
    kwargs = sig.validate(arguments)
    assert kwargs["_private"] == 5 and kwargs["json"] == "j" and kwargs["model_config"] == 1
    error = invalid(sig, {**arguments, "_private": "x"})
    assert error.data["errors"][0]["path"] == "_private"


def test_pydantic_with_records() -> None:
    def f(user: User, address: Address, point: Point) -> None: ...

    sig = inspect_callable(f)
    arguments = {"user": {"name": "n", "age": 1}, "address": {"city": "c"}, "point": {"x": 1}}
    check(sig, arguments)
    kwargs = sig.validate(arguments)
    assert kwargs["address"] == {"city": "c"} and kwargs["point"] == Point(1, 0)


# --------------------------------------------------------------------------- docstrings


def test_parse_google_docstring() -> None:
    doc = """Fetch a page.

    Longer text
    on two lines.

    Args:
        url: The address.
        timeout (float, optional): Seconds to wait,
            continued here.
        *headers: Extra headers.

    Returns:
        The body.

    Raises:
        ValueError: never.
    """
    description, params = parse_docstring(doc)
    assert description == "Fetch a page.\n\nLonger text\non two lines."
    assert params == {
        "url": "The address.",
        "timeout": "Seconds to wait, continued here.",
        "headers": "Extra headers.",
    }


def test_parse_rest_docstring() -> None:
    doc = """Send it.

    :param to: Recipient
        address.
    :param int retries: How often.
    :type to: str
    :returns: nothing
    """
    assert parse_docstring(doc) == (
        "Send it.",
        {"to": "Recipient address.", "retries": "How often."},
    )


def test_parse_numpy_docstring() -> None:
    doc = """Scale values.

    Parameters
    ----------
    values : list of float
        The input
        values.
    factor, offset : float
        Applied to each.

    Returns
    -------
    list
    """
    description, params = parse_docstring(doc)
    assert description == "Scale values."
    assert params == {
        "values": "The input values.",
        "factor": "Applied to each.",
        "offset": "Applied to each.",
    }


def test_parse_docstring_edge_cases() -> None:
    assert parse_docstring(None) == (None, {})
    assert parse_docstring("   ") == (None, {})
    assert parse_docstring("Just text.") == ("Just text.", {})
    assert parse_docstring("Args:\n    a: x") == (None, {"a": "x"})
    # a colon inside prose is not a section header
    doc = "Note this: it works.\n\nExamples:\n    f()"
    assert parse_docstring(doc)[0] == "Note this: it works."


def test_docstring_descriptions_reach_schema() -> None:
    def f(a: int, b: Point) -> None:
        """Do it.

        Args:
            a: The a.
            b: The b.
        """

    sig = inspect_callable(f)
    assert sig.description == "Do it."
    assert sig.param_descriptions == {"a": "The a.", "b": "The b."}
    assert props(sig)["a"] == {"type": "integer", "description": "The a."}
    assert props(sig)["b"] == {"$ref": "#/$defs/Point", "description": "The b."}
    check(sig, {"a": 1, "b": {"x": 1}})


# --------------------------------------------------------------------------- signature shapes


def test_injected_parameters() -> None:
    def f(a: int, ctx: Context, sub: SubContext | None = None, *args: int, **kw: str) -> None: ...

    sig = inspect_callable(f, injectable=(Context,))
    assert set(props(sig)) == {"a"}
    assert sig.injected == {"ctx": Context, "sub": SubContext}
    assert sig.validate({"a": 1, "ctx": "ignored"}) == {"a": 1}
    # without injectable types, an unknown class is not a valid parameter type
    with pytest.raises(TypeError):
        inspect_callable(f)


def test_string_annotations_and_unresolvable_names(caplog: pytest.LogCaptureFixture) -> None:
    def f(
        a: "int",
        p: "Point",
        ctx: "MissingContext",
        other: "Nowhere" = None,  # type: ignore[name-defined]  # noqa: F821
    ) -> "Point": ...

    class MissingContext:
        pass

    sig = inspect_callable(f, injectable=(MissingContext,))
    assert sig.injected == {"ctx": MissingContext}
    assert props(sig)["a"] == {"type": "integer"}
    assert props(sig)["p"] == {"$ref": "#/$defs/Point"}
    assert props(sig)["other"]["default"] is None
    assert sig.output_schema is not None and sig.wraps_output is False
    check(sig, {"a": 1, "p": {"x": 1}})
    # The one parameter left unchecked is said to be, by name; the injected one is not.
    said = [r.getMessage() for r in caplog.records if r.name.startswith("mcpkit.")]
    assert len(said) == 1 and "'Nowhere' of parameter 'other'" in said[0], said


def test_method_with_skip_params() -> None:
    class Tools:
        def add(self, a: int, b: int) -> int:
            """Add."""
            return a + b

    sig = inspect_callable(Tools.add, skip_params=1)
    assert list(props(sig)) == ["a", "b"]
    bound = inspect_callable(Tools().add)
    assert list(props(bound)) == ["a", "b"] and bound.description == "Add."


def test_callable_object_and_partial() -> None:
    import functools

    class Adder:
        def __call__(self, a: int, b: int = 1) -> int:
            """Adds."""
            return a + b

    sig = inspect_callable(Adder())
    assert list(props(sig)) == ["a", "b"] and sig.description == "Adds."

    def g(a: int, b: str) -> None: ...

    assert list(props(inspect_callable(functools.partial(g, 1)))) == ["b"]


def test_positional_only_and_unsupported_types_raise() -> None:
    def pos(a: int, /) -> None: ...

    class Opaque:
        pass

    def opaque(a: Opaque) -> None: ...

    with pytest.raises(TypeError, match="positional-only"):
        inspect_callable(pos)
    with pytest.raises(TypeError, match="opaque") as err:
        inspect_callable(opaque)
    # the parameter at fault and its type are named, and what would do instead
    assert "parameter 'a' is a Opaque" in str(err.value)
    assert "a dataclass, a TypedDict" in str(err.value)


# --------------------------------------------------------------------------- output


@pytest.mark.parametrize(
    "annotation",
    [
        None,
        str,
        dict,
        list,
        TextContent,
        CallToolResult,
        list[TextContent],
        TextContent | None,
        Any,
        str | None,
    ],
)
def test_unstructured_outputs(annotation: Any) -> None:
    def f() -> None: ...

    f.__annotations__["return"] = annotation
    sig = inspect_callable(f)
    assert sig.output_schema is None and sig.wraps_output is False
    value = object()
    assert sig.structure_output(value) is value


def test_missing_return_annotation() -> None:
    def f():
        return 1

    assert inspect_callable(f).output_schema is None


@pytest.mark.parametrize(
    ("annotation", "value", "expected"),
    [
        (Point, Point(1, 2), {"x": 1, "y": 2}),
        (Movie, {"title": "t"}, {"title": "t"}),
        (Item, Item("n"), {"name": "n", "qty": 1}),
        (User, User(name="u", age=2), {"name": "u", "age": 2}),
        (dict[str, int], {"a": 1}, {"a": 1}),
    ],
)
def test_object_outputs(annotation: Any, value: Any, expected: Any) -> None:
    def f() -> None: ...

    f.__annotations__["return"] = annotation
    sig = inspect_callable(f)
    assert sig.wraps_output is False
    assert sig.output_schema is not None and sig.output_schema["type"] == "object"
    assert "$ref" not in sig.output_schema
    out = sig.structure_output(value)
    assert out == expected
    check(sig)
    jsonschema.validate(out, sig.output_schema, cls=jsonschema.Draft202012Validator)


@pytest.mark.parametrize(
    ("annotation", "value", "expected"),
    [
        (int, 3, 3),
        (float, 1.5, 1.5),
        (bool, True, True),
        (list[int], [1, 2], [1, 2]),
        (list[Point], [Point(1)], [{"x": 1, "y": 0}]),
        (Literal["b", "a"], "a", "a"),
        (Color, Color.RED, "red"),
        (Point | None, None, None),
        (datetime.date, datetime.date(2024, 1, 2), "2024-01-02"),
        (list[User], [User(name="u", age=1)], [{"name": "u", "age": 1}]),
        (tuple[int, str], (1, "a"), [1, "a"]),
    ],
)
def test_wrapped_outputs(annotation: Any, value: Any, expected: Any) -> None:
    def f() -> None: ...

    f.__annotations__["return"] = annotation
    sig = inspect_callable(f)
    assert sig.wraps_output is True
    assert sig.output_schema is not None
    assert sig.output_schema["required"] == ["result"]
    out = sig.structure_output(value)
    assert out == {"result": expected}
    check(sig)
    jsonschema.validate(out, sig.output_schema, cls=jsonschema.Draft202012Validator)


def test_output_schema_of_primitive() -> None:
    def f() -> int: ...

    assert inspect_callable(f).output_schema == {
        "type": "object",
        "properties": {"result": {"type": "integer"}},
        "required": ["result"],
        "x-fastmcp-wrap-result": True,  # FastMCP's clients unwrap under this mark alone
    }


def test_output_enum_order_is_declared_order() -> None:
    def f() -> list[Literal["z", "a", "m"]]: ...

    schema = inspect_callable(f).output_schema
    assert schema is not None
    assert schema["properties"]["result"]["items"]["enum"] == ["z", "a", "m"]


# --------------------------------------------------------------------------- metaschema sweep


def _sweep() -> list[Any]:
    def a(x: int, y: float = 1, *, z: str | None = None) -> list[int]: ...

    def b(p: Point, m: Movie, i: Item, c: Color, when: datetime.datetime) -> Point: ...

    def c(
        u: User,
        tags: set[str] = set(),  # noqa: B006
        meta: dict[str, Any] | None = None,
    ) -> User: ...

    def d(t: Tree, k: Literal[1, 2, 3] = 1) -> dict[str, Tree]: ...

    return [a, b, c, d]


@pytest.mark.parametrize("fn", _sweep())
def test_every_schema_is_valid_2020_12(fn: Any) -> None:
    sig = inspect_callable(fn)
    check(sig)
    for schema in (sig.input_schema, sig.output_schema):
        refs = [r for r in _refs(schema)]
        for ref in refs:
            assert ref.startswith("#/$defs/")
            assert ref.removeprefix("#/$defs/") in schema["$defs"]


def _refs(node: Any) -> Any:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref":
                yield value
            else:
                yield from _refs(value)
    elif isinstance(node, list):
        for item in node:
            yield from _refs(item)


# --------------------------------------------------------------------------- more shapes


def test_future_annotations_module(caplog: pytest.LogCaptureFixture) -> None:
    source = (
        "from __future__ import annotations\n"
        "def f(a: int, p: Point, ctx: Context, later: Undefined = 1) -> list[Point]:\n"
        "    '''Future.\n\n    Args:\n        a: An int.\n    '''\n"
    )
    namespace: dict[str, Any] = {"Point": Point, "Context": Context}
    exec(compile(source, "<future>", "exec"), namespace)
    sig = inspect_callable(namespace["f"], injectable=(Context,))
    assert sig.injected == {"ctx": Context}
    assert props(sig)["a"] == {"type": "integer", "description": "An int."}
    assert props(sig)["p"] == {"$ref": "#/$defs/Point"}
    assert props(sig)["later"] == {"default": 1}  # unresolvable name: any JSON value
    assert "'Undefined' of parameter 'later'" in caplog.text
    assert "takes any JSON value, unchecked" in caplog.text
    assert sig.wraps_output is True
    check(sig, {"a": 1, "p": {"x": 2}})


def test_types_only_pydantic_knows_fall_back_to_it() -> None:
    import ipaddress
    import pathlib

    default_ip = ipaddress.IPv4Address("10.0.0.1")

    def f(path: pathlib.Path, ip: ipaddress.IPv4Address = default_ip) -> pathlib.Path: ...

    sig = inspect_callable(f)
    assert props(sig)["ip"]["default"] == "10.0.0.1"
    check(sig, {"path": "/tmp/x"})
    assert sig.validate({"path": "/tmp/x"}) == {
        "path": pathlib.Path("/tmp/x"),
        "ip": ipaddress.IPv4Address("10.0.0.1"),
    }
    invalid(sig, {"path": 3})
    assert sig.structure_output(pathlib.Path("/a")) == {"result": "/a"}


def test_callable_object_documented_on_class() -> None:
    class Tool:
        """Class doc."""

        def __call__(self, x: int) -> int:
            return x

    assert inspect_callable(Tool()).description == "Class doc."


def test_image_and_audio_returns_are_content_not_structured_output():
    from mcpkit.server import Audio, Image

    def picture() -> Image:
        return Image(b"png")

    def sound() -> Audio:
        return Audio(b"wav")

    assert inspect_callable(picture).output_schema is None
    assert inspect_callable(sound).output_schema is None

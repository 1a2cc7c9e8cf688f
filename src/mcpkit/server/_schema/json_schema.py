"""Checking a tool's arguments against an input schema given as it is
(``@app.tool(input_schema={...})``), for ``EntryBuilder.tool``.

The schema is JSON Schema 2020-12, with what older drafts spell otherwise read as well
(``definitions``, ``dependencies``, ``items`` as a list with ``additionalItems``, a boolean
``exclusiveMinimum``; in drafts 4 to 7 a ``$ref`` hides its siblings). It is compiled once,
when the tool is registered, into closures that append ``(path, detail)`` for every wrong
argument; the errors become the message of a typed tool's (``engines._invalid_params``):
missing arguments first, at most ``MAX_LISTED_ARGUMENT_ERRORS`` spelt out.

What no check can be made of is refused at registration (``ValueError`` naming the spot):
a keyword of the wrong type, an unknown ``type`` name, a ``pattern`` Python's ``re`` does not
compile (ECMA-262 has a few forms it lacks, such as ``\\p{L}``), a ``$ref`` that points
nowhere or out of the schema (nothing is fetched). Leniencies, none refusing valid
arguments: ``format`` and the content keywords are annotations (2020-12's default);
``unevaluatedProperties`` and ``unevaluatedItems`` count as evaluated whatever any
subschema in place could evaluate; ``$dynamicRef`` resolves as ``$ref``; a subschema carrying
``$schema`` (a document pasted into a property) is the root its own ``#...`` references
point into, as it would be with an ``$id``.
"""

from __future__ import annotations

import json
import operator
import re
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from typing import Any
from urllib.parse import unquote, urldefrag, urljoin

from mcpkit.server._schema.engines import _MISSING, _UNKNOWN, _invalid_params

Errors = list[tuple[str, str]]
Check = Callable[[Any, str, Errors], None]
#: (the base URI, the schema resource) that ``#...`` references are read against.
Base = tuple[str, Any]

_TYPE_TESTS: dict[str, Callable[[Any], bool]] = {
    "null": lambda value: value is None,
    "boolean": lambda value: isinstance(value, bool),
    "integer": lambda value: (
        (isinstance(value, int) and not isinstance(value, bool))
        or (isinstance(value, float) and value.is_integer())
    ),
    "number": lambda value: isinstance(value, (int, float)) and not isinstance(value, bool),
    "string": lambda value: isinstance(value, str),
    "array": lambda value: isinstance(value, (list, tuple)),
    "object": lambda value: isinstance(value, dict),
}
#: Keywords whose values are data, not schemas: nothing in them is indexed.
_DATA_KEYWORDS = frozenset({"enum", "const", "default", "examples"})
#: Keywords whose subschemas apply to the value itself (what ``unevaluated*`` looks into).
_IN_PLACE_LISTS = ("allOf", "anyOf", "oneOf")
_IN_PLACE_ONES = ("if", "then", "else")
_REFS = ("$ref", "$dynamicRef", "$recursiveRef")
_LEGACY_DRAFT = re.compile(r"draft-0[3-7]")
#: An error detail of the form every single-expectation check uses, for merging the
#: options of an ``anyOf`` that all failed on the value's kind.
_EXPECTED = re.compile(r"^Expected (?P<expected>.+), got (?P<got>.+)$", re.S)
#: Options of an ``anyOf``/``oneOf`` spelt out, and errors of each, when none fits.
_SHOWN_OPTIONS = 5
_SHOWN_OPTION_ERRORS = 3
_SHOWN_OPTION_TEXT = 200
_SHOWN_ENUM_VALUES = 10


def arguments_validator(schema: Any) -> Callable[[Any], dict[str, Any]]:
    """``validate(arguments)`` for a tool whose input schema is ``schema``: the arguments as
    keyword arguments (a copy), or ``InvalidParamsError`` naming every one that is wrong.
    ``ValueError`` (saying where) when ``schema`` cannot be checked against."""
    check = _Compiler(schema).compile(schema, "", None)

    def validate(arguments: Any) -> dict[str, Any]:
        errors: Errors = []
        check(arguments, "", errors)
        if errors:
            raise _invalid_params(errors)
        return dict(arguments)

    return validate


# --------------------------------------------------------------------------- wording


def _key_path(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _shown(value: Any) -> str:
    """A value as JSON text, cut to 40 characters."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 40 else text[:39] + "…"


def _either(items: list[str], word: str = "or") -> str:
    if len(items) < 2:
        return "".join(items)
    return f"{', '.join(items[:-1])} {word} {items[-1]}"


def _plural(count: int, noun: str) -> str:
    if count == 1:
        return f"1 {noun}"
    return f"{count} {noun[:-1]}ies" if noun.endswith("y") else f"{count} {noun}s"


def _below(path: str, where: str) -> str:
    """``where`` as seen from ``path``: ``a.b`` from ``a`` is ``b``, ``a[0]`` is ``[0]``,
    ``a`` itself is ""."""
    if not path or not where.startswith(path):
        return where
    rest = where[len(path) :]
    if not rest or rest.startswith("["):
        return rest
    return rest[1:] if rest.startswith(".") else where


def _relative(path: str, error: tuple[str, str]) -> str:
    """One error of an ``anyOf``/``oneOf`` option, said from where the option applies."""
    sub = _below(path, error[0])
    return f"'{sub}': {error[1]}" if sub else error[1]


def _merged(path: str, singles: Errors) -> str | None:
    """One error per option, each "Expected X, got Y" with the same Y at the value itself:
    "Expected X1 or X2, got Y" (``anyOf: [{type: string}, {type: null}]``)."""
    expected: list[str] = []
    got = set()
    for where, detail in singles:
        match = _EXPECTED.match(detail)
        if where != path or match is None:
            return None
        expected.append(match["expected"])
        got.add(match["got"])
    if len(got) != 1:
        return None
    return f"Expected {_either(list(dict.fromkeys(expected)))}, got {got.pop()}"


def _none_fits(keyword: str, path: str, failures: list[Errors]) -> str:
    """What was wrong with a value no option of an ``anyOf``/``oneOf`` takes."""
    singles = [failure[0] for failure in failures if len(failure) == 1]
    if len(singles) == len(failures):
        if all(detail == _MISSING for _, detail in singles):  # one of these is wanted
            names = dict.fromkeys(f"'{_below(path, where)}'" for where, _ in singles)
            return f"needs {_either(list(names))}"
        merged = _merged(path, singles)
        if merged is not None:
            return merged
    options = "; ".join(
        f"{number}: "
        + _cut(", ".join(_relative(path, error) for error in failure[:_SHOWN_OPTION_ERRORS]))
        for number, failure in enumerate(failures[:_SHOWN_OPTIONS], 1)
    )
    return f"matches none of the {keyword} options ({options})"


def _cut(text: str) -> str:
    """What one ``anyOf`` option says, bounded (options nest as deep as the value does)."""
    return text if len(text) <= _SHOWN_OPTION_TEXT else text[: _SHOWN_OPTION_TEXT - 1] + "…"


# --------------------------------------------------------------------------- values


def _equal(a: Any, b: Any) -> bool:
    """JSON equality: ``1 == 1.0``, but ``true`` is no ``1``."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return isinstance(b, (list, tuple)) and len(a) == len(b) and all(map(_equal, a, b))
    return type(a) is type(b) and bool(a == b)


def _hashable(value: Any) -> Any:
    """A key equal for values ``_equal`` finds equal (``uniqueItems`` in one pass)."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return (type(value).__name__, value)
    if isinstance(value, (int, float)):
        return ("number", value)  # 1 and 1.0 hash and compare alike
    if isinstance(value, (list, tuple)):
        return ("array", tuple(_hashable(item) for item in value))
    if isinstance(value, dict):
        return ("object", frozenset((key, _hashable(item)) for key, item in value.items()))
    return ("other", id(value))


def _is_multiple(value: float, step: float) -> bool:
    if isinstance(value, int) and isinstance(step, int):
        return value % step == 0
    try:  # decimally: 0.3 is a multiple of 0.1, which binary floats deny
        return Decimal(repr(value)) % Decimal(repr(step)) == 0
    except (InvalidOperation, ValueError):
        return False


def _size_check(
    fewest: int | None, most: int | None, kind: str, unit: str
) -> Callable[[int, str, Errors], None] | None:
    """The check of a length bound (``minLength``, ``maxItems``, ...): "Expected {kind} of
    at least 2 {unit}s, got 1"."""
    if fewest is None and most is None:
        return None

    def check_size(count: int, path: str, errors: Errors) -> None:
        if fewest is not None and count < fewest:
            said = _plural(fewest, unit)
            errors.append((path, f"Expected {kind} of at least {said}, got {count}"))
        if most is not None and count > most:
            errors.append((path, f"Expected {kind} of at most {_plural(most, unit)}, got {count}"))

    return check_size


def _accept(value: Any, path: str, errors: Errors) -> None:
    return None


def _refuse(value: Any, path: str, errors: Errors) -> None:
    errors.append((path, "no value is allowed here"))


def _all_of(checks: list[Check]) -> Check:
    if not checks:
        return _accept
    if len(checks) == 1:
        return checks[0]

    def check_all(value: Any, path: str, errors: Errors) -> None:
        for check in checks:
            check(value, path, errors)

    return check_all


def _failures(value: Any, path: str, check: Check) -> Errors:
    scratch: Errors = []
    check(value, path, scratch)
    return scratch


# --------------------------------------------------------------------------- compiler


class _Compiler:
    """Compiles one schema document; every subschema once (references share it)."""

    def __init__(self, root: Any) -> None:
        self.root = root
        self.legacy = isinstance(root, dict) and bool(
            isinstance(root.get("$schema"), str) and _LEGACY_DRAFT.search(root["$schema"])
        )
        self.compiled: dict[int, Check] = {}
        #: The subschemas being compiled, by ``id()``: where in ``edges`` each was entered;
        #: ``edges``: whether each was entered in place (a reference cycle of only those
        #: never ends).
        self.open: dict[int, int] = {}
        self.edges: list[bool] = []
        #: The resources by absolute ``$id``; the roots of resources by ``id()``.
        self.resources: dict[str, Any] = {}
        self.roots: dict[int, Base] = {}
        self.anchors: dict[tuple[int, str], Any] = {}
        uri = ""
        if isinstance(root, dict) and isinstance(root.get("$id"), str):
            uri = urldefrag(root["$id"])[0]
        self.resources[uri] = root
        self.roots[id(root)] = (uri, root)
        self._index(root, (uri, root))

    def _index(self, node: Any, base: Base) -> None:
        """Find the resources (``$id``, or ``$schema`` below the root) and anchors."""
        if isinstance(node, list):
            for item in node:
                self._index(item, base)
            return
        if not isinstance(node, dict):
            return
        ident = node.get("$id")
        if node is not self.root:
            if isinstance(ident, str) and urldefrag(ident)[0]:
                uri = urljoin(base[0], urldefrag(ident)[0])
                base = (uri, node)
                self.resources.setdefault(uri, node)
                self.roots[id(node)] = base
            elif isinstance(node.get("$schema"), str):
                base = (base[0], node)
                self.roots[id(node)] = base
        for keyword in ("$anchor", "$dynamicAnchor"):
            if isinstance(node.get(keyword), str):
                self.anchors.setdefault((id(base[1]), node[keyword]), node)
        if isinstance(ident, str) and ident.startswith("#") and len(ident) > 1:  # draft 7
            self.anchors.setdefault((id(base[1]), ident[1:]), node)
        for key, value in node.items():
            if key not in _DATA_KEYWORDS:
                self._index(value, base)

    def _resolve(self, ref: str, base: Base, where: str) -> tuple[Any, Base]:
        uri, fragment = urldefrag(urljoin(base[0], ref) if base[0] else ref)
        if not uri or uri == base[0]:
            resource, found_base = base[1], base
        elif uri in self.resources:
            resource = self.resources[uri]
            found_base = self.roots[id(resource)]
        else:
            raise ValueError(
                f"at #{where}: $ref {ref!r} points out of the schema; mcpkit fetches no other "
                "document, so put what it refers to under $defs"
            )
        fragment = unquote(fragment)
        if not fragment:
            return resource, found_base
        if not fragment.startswith("/"):
            anchored = self.anchors.get((id(resource), fragment))
            if anchored is None:
                raise ValueError(f"at #{where}: $ref {ref!r} names no anchor of the schema")
            return anchored, found_base
        node = resource
        for part in fragment[1:].split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and part in node:
                node = node[part]
            elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                raise ValueError(f"at #{where}: $ref {ref!r} points to nothing in the schema")
            found_base = self.roots.get(id(node), found_base)  # into an embedded resource
        return node, found_base

    def compile(self, node: Any, where: str, base: Base | None, in_place: bool = False) -> Check:
        """The check of ``node``, reached at ``where``; ``in_place``: by a keyword applying
        it to the value itself (``$ref``, ``allOf``, ``if`` ...), not to a part of it."""
        base = self.roots.get(id(node), base) or self.roots[id(self.root)]
        if node is True:
            return _accept
        if node is False:
            return _refuse
        if not isinstance(node, dict):
            raise ValueError(
                f"at #{where}: a schema is an object or a boolean, not {_json_type(node)}"
            )
        key = id(node)
        found = self.compiled.get(key)
        if found is not None:
            opened = self.open.get(key)
            if opened is not None and in_place and all(self.edges[opened + 1 :]):
                raise ValueError(
                    f"at #{where}: references that come back to where they started without "
                    "going into the value (a property, an item) would be followed forever"
                )
            return found
        slot: list[Check] = []

        def forward(value: Any, path: str, errors: Errors) -> None:  # a recursive reference
            slot[0](value, path, errors)

        self.compiled[key] = forward
        self.open[key] = len(self.edges)
        self.edges.append(in_place)
        try:
            check = self._build(node, where, base)
        finally:
            self.edges.pop()
            del self.open[key]
        slot.append(check)
        self.compiled[key] = check
        return check

    def _build(self, node: dict[str, Any], where: str, base: Base) -> Check:
        refs = [self._ref(node, keyword, where, base) for keyword in _REFS if keyword in node]
        if refs and self.legacy:  # drafts 4-7: a $ref's siblings are ignored
            return _all_of(refs)
        # Compiled before what unevaluated* reads of them, which then knows them sound.
        combined = self._combinators(node, where, base)
        found = [
            self._type(node, where),
            self._enum(node, where),
            self._const(node),
            self._numbers(node, where),
            self._strings(node, where),
            self._arrays(node, where, base),
            self._objects(node, where, base),
            *refs,
            *combined,
        ]
        return _all_of([check for check in found if check is not None])

    # what each keyword checks -----------------------------------------------------------

    def _ref(self, node: dict[str, Any], keyword: str, where: str, base: Base) -> Check:
        ref = node[keyword]
        if not isinstance(ref, str):
            raise ValueError(f"at #{where}/{keyword}: a reference is a string")
        target, target_base = self._resolve(ref, base, f"{where}/{keyword}")
        return self.compile(target, f"{where}/{keyword}", target_base, in_place=True)

    def _type(self, node: dict[str, Any], where: str) -> Check | None:
        kind = node.get("type")
        if kind is None:
            return None
        names = [kind] if isinstance(kind, str) else kind
        if (
            not isinstance(names, list)
            or not names
            or not all(isinstance(name, str) and name in _TYPE_TESTS for name in names)
        ):
            raise ValueError(
                f"at #{where}/type: {_shown(kind)} is not a JSON Schema type; the types are "
                f"{', '.join(_TYPE_TESTS)}"
            )
        tests = tuple(_TYPE_TESTS[name] for name in names)
        expected = _either([f"`{name}`" for name in names])

        def check_type(value: Any, path: str, errors: Errors) -> None:
            for test in tests:
                if test(value):
                    return
            errors.append((path, f"Expected {expected}, got `{_json_type(value)}`"))

        return check_type

    def _enum(self, node: dict[str, Any], where: str) -> Check | None:
        if "enum" not in node:
            return None
        values = node["enum"]
        if not isinstance(values, list):
            raise ValueError(f"at #{where}/enum: enum is a list of values")
        listed = ", ".join(_shown(value) for value in values[:_SHOWN_ENUM_VALUES])
        if len(values) > _SHOWN_ENUM_VALUES:
            listed += f", … ({len(values)} in all)"
        texts = frozenset(values) if all(isinstance(v, str) for v in values) else None

        def check_enum(value: Any, path: str, errors: Errors) -> None:
            if texts is not None:
                if isinstance(value, str) and value in texts:
                    return
            elif any(_equal(value, allowed) for allowed in values):
                return
            errors.append((path, f"Expected one of {listed}, got {_shown(value)}"))

        return check_enum

    def _const(self, node: dict[str, Any]) -> Check | None:
        if "const" not in node:
            return None
        const = node["const"]

        def check_const(value: Any, path: str, errors: Errors) -> None:
            if not _equal(value, const):
                errors.append((path, f"Expected {_shown(const)}, got {_shown(value)}"))

        return check_const

    def _number(self, node: dict[str, Any], keyword: str, where: str) -> Any:
        value = node.get(keyword)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise ValueError(f"at #{where}/{keyword}: {keyword} is a number")
        return value

    def _count(self, node: dict[str, Any], keyword: str, where: str) -> int | None:
        value = node.get(keyword)
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or value < 0
        ):
            raise ValueError(f"at #{where}/{keyword}: {keyword} is a non-negative integer")
        return value

    def _numbers(self, node: dict[str, Any], where: str) -> Check | None:
        bounds: list[tuple[Callable[[Any, Any], bool], Any, str]] = []
        for keyword, exclusive, strict, loose in (
            ("minimum", "exclusiveMinimum", (operator.gt, ">"), (operator.ge, ">=")),
            ("maximum", "exclusiveMaximum", (operator.lt, "<"), (operator.le, "<=")),
        ):
            limit = self._number(node, keyword, where)
            flag = node.get(exclusive)
            if isinstance(flag, bool):  # draft 4: a flag on minimum/maximum
                limits = [(strict if flag else loose, limit)]
            else:
                limits = [(loose, limit), (strict, self._number(node, exclusive, where))]
            bounds += [
                ((test, at, f"{sign} {at}")) for (test, sign), at in limits if at is not None
            ]
        step = self._number(node, "multipleOf", where)
        if step is not None and step <= 0:
            raise ValueError(f"at #{where}/multipleOf: multipleOf is greater than 0")
        if not bounds and step is None:
            return None

        def check_number(value: Any, path: str, errors: Errors) -> None:
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                return
            for test, limit, said in bounds:
                if not test(value, limit):
                    errors.append((path, f"Expected a number {said}, got {_shown(value)}"))
            if step is not None and not _is_multiple(value, step):
                errors.append((path, f"Expected a multiple of {step}, got {_shown(value)}"))

        return check_number

    def _strings(self, node: dict[str, Any], where: str) -> Check | None:
        length = _size_check(
            self._count(node, "minLength", where),
            self._count(node, "maxLength", where),
            "a string",
            "character",
        )
        pattern = node.get("pattern")
        regex = None
        if pattern is not None:
            if not isinstance(pattern, str):
                raise ValueError(f"at #{where}/pattern: a pattern is a string")
            regex = _regex(pattern, f"{where}/pattern")
        if length is None and regex is None:
            return None

        def check_string(value: Any, path: str, errors: Errors) -> None:
            if not isinstance(value, str):
                return
            if length is not None:
                length(len(value), path, errors)
            if regex is not None and regex.search(value) is None:
                errors.append(
                    (path, f"Expected a string matching `{pattern}`, got {_shown(value)}")
                )

        return check_string

    def _arrays(self, node: dict[str, Any], where: str, base: Base) -> Check | None:
        items = node.get("items")
        prefix: Any
        if isinstance(items, list):  # drafts 4-2019: a list of items, then additionalItems
            prefix_key, prefix, rest_key = "items", items, "additionalItems"
        else:
            prefix_key, prefix, rest_key = "prefixItems", node.get("prefixItems"), "items"
        if prefix is not None and not isinstance(prefix, list):
            raise ValueError(f"at #{where}/{prefix_key}: {prefix_key} is a list of schemas")
        heads = [
            self.compile(schema, f"{where}/{prefix_key}/{index}", base)
            for index, schema in enumerate(prefix or ())
        ]
        rest_schema = node.get(rest_key)
        rest = (
            None if rest_schema is None else self.compile(rest_schema, f"{where}/{rest_key}", base)
        )
        contains = None
        if "contains" in node:
            contains = self.compile(node["contains"], f"{where}/contains", base)
        least = self._count(node, "minContains", where)
        least = 1 if least is None else least
        most = self._count(node, "maxContains", where)
        longest = self._count(node, "maxItems", where)
        closed = len(heads) if rest_schema is False else None  # items: false after prefixItems
        if closed is not None:
            longest = closed if longest is None else min(longest, closed)
        size = _size_check(self._count(node, "minItems", where), longest, "an array", "item")
        unique = node.get("uniqueItems") is True
        unevaluated = None
        if "unevaluatedItems" in node:
            evaluated = self._evaluated_items(node, base, set(), top=True)
            if evaluated is not None:
                schema = node["unevaluatedItems"]
                unevaluated = (evaluated, self.compile(schema, f"{where}/unevaluatedItems", base))
        if not (heads or rest or contains or size or unique or unevaluated):
            return None

        def check_array(value: Any, path: str, errors: Errors) -> None:
            if not isinstance(value, (list, tuple)):
                return
            if size is not None:
                size(len(value), path, errors)
            for index, item in enumerate(value):
                if index < len(heads):
                    heads[index](item, f"{path}[{index}]", errors)
                elif rest is not None and closed is None:
                    rest(item, f"{path}[{index}]", errors)
                elif unevaluated is not None and index >= unevaluated[0]:
                    unevaluated[1](item, f"{path}[{index}]", errors)
            if contains is not None:
                found = sum(not _failures(item, path, contains) for item in value)
                if found < least:
                    said = _plural(least, "item")
                    errors.append((path, f"Expected {said} matching `contains`, got {found}"))
                if most is not None and found > most:
                    said = _plural(most, "item")
                    errors.append(
                        (path, f"Expected at most {said} matching `contains`, got {found}")
                    )
            if unique:
                seen: dict[Any, int] = {}
                for index, item in enumerate(value):
                    first = seen.setdefault(_hashable(item), index)
                    if first != index:
                        errors.append(
                            (path, f"Expected unique items, but [{first}] and [{index}] are equal")
                        )
                        break

        return check_array

    def _schemas(
        self, node: dict[str, Any], keyword: str, where: str, base: Base, in_place: bool = False
    ) -> dict[str, Check]:
        table = node.get(keyword)
        if table is None:
            return {}
        if not isinstance(table, dict):
            raise ValueError(f"at #{where}/{keyword}: {keyword} is an object of schemas")
        return {
            name: self.compile(schema, f"{where}/{keyword}/{name}", base, in_place)
            for name, schema in table.items()
        }

    def _names(self, node: dict[str, Any], keyword: str, where: str) -> list[str]:
        names = node.get(keyword, [])
        if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
            raise ValueError(f"at #{where}/{keyword}: {keyword} is a list of property names")
        return names

    def _objects(self, node: dict[str, Any], where: str, base: Base) -> Check | None:
        properties = self._schemas(node, "properties", where, base)
        patterns = [
            (_regex(pattern, f"{where}/patternProperties"), check)
            for pattern, check in self._schemas(node, "patternProperties", where, base).items()
        ]
        extra_schema = node.get("additionalProperties")
        extra = None
        if extra_schema is not None and extra_schema is not False:
            extra = self.compile(extra_schema, f"{where}/additionalProperties", base)
        unevaluated = None
        if "unevaluatedProperties" in node and extra_schema is None:
            names: set[str] = set()
            regexes: list[re.Pattern[str]] = []
            if not self._evaluated_properties(node, base, names, regexes, set(), top=True):
                schema = node["unevaluatedProperties"]
                check = self.compile(schema, f"{where}/unevaluatedProperties", base)
                unevaluated = (frozenset(names), regexes, schema is False, check)
        required = self._names(node, "required", where)
        dependent: list[tuple[str, list[str]]] = []
        dependent_schemas = list(
            self._schemas(node, "dependentSchemas", where, base, in_place=True).items()
        )
        for table, keyword in (
            (node.get("dependentRequired"), "dependentRequired"),
            (node.get("dependencies"), "dependencies"),
        ):
            if table is None:
                continue
            if not isinstance(table, dict):
                raise ValueError(f"at #{where}/{keyword}: {keyword} is an object")
            for trigger, needed in table.items():
                if isinstance(needed, list):
                    dependent.append((trigger, self._names(table, trigger, f"{where}/{keyword}")))
                else:
                    schema = self.compile(needed, f"{where}/{keyword}/{trigger}", base, True)
                    dependent_schemas.append((trigger, schema))
        size = _size_check(
            self._count(node, "minProperties", where),
            self._count(node, "maxProperties", where),
            "an object",
            "property",
        )
        names_check = None
        if "propertyNames" in node:
            names_check = self.compile(node["propertyNames"], f"{where}/propertyNames", base)
        closed = extra_schema is False
        if not (
            properties
            or patterns
            or extra
            or closed
            or unevaluated
            or required
            or dependent
            or dependent_schemas
            or size
            or names_check
        ):
            return None

        def check_object(value: Any, path: str, errors: Errors) -> None:
            if not isinstance(value, dict):
                return
            for name in required:
                if name not in value:
                    errors.append((_key_path(path, name), _MISSING))
            for trigger, needed in dependent:
                if trigger in value:
                    for name in needed:
                        if name not in value:
                            errors.append((_key_path(path, name), _MISSING))
            if size is not None:
                size(len(value), path, errors)
            for key, item in value.items():
                at = _key_path(path, key)
                if names_check is not None:
                    wrong = _failures(key, at, names_check)
                    if wrong:
                        errors.append((at, f"not an allowed name: {wrong[0][1]}"))
                known = properties.get(key)
                if known is not None:
                    known(item, at, errors)
                matched = known is not None
                for regex, check in patterns:
                    if regex.search(key):
                        check(item, at, errors)
                        matched = True
                if matched:
                    continue
                if closed:
                    errors.append((at, _UNKNOWN))
                elif extra is not None:
                    extra(item, at, errors)
                elif unevaluated is not None:
                    names, regexes, refused, check = unevaluated
                    if key in names or any(regex.search(key) for regex in regexes):
                        continue
                    if refused:
                        errors.append((at, _UNKNOWN))
                    else:
                        check(item, at, errors)
            for trigger, check in dependent_schemas:
                if trigger in value:
                    check(value, path, errors)

        return check_object

    def _combinators(self, node: dict[str, Any], where: str, base: Base) -> list[Check]:
        found: list[Check] = []
        options: dict[str, list[Check]] = {}
        for keyword in _IN_PLACE_LISTS:
            if keyword in node:
                schemas = node[keyword]
                if not isinstance(schemas, list) or not schemas:
                    raise ValueError(f"at #{where}/{keyword}: {keyword} is a non-empty list")
                options[keyword] = [
                    self.compile(schema, f"{where}/{keyword}/{index}", base, in_place=True)
                    for index, schema in enumerate(schemas)
                ]
        found.extend(options.get("allOf", ()))
        if "anyOf" in options:
            found.append(_any_of(options["anyOf"]))
        if "oneOf" in options:
            found.append(_one_of(options["oneOf"]))
        if "not" in node:
            refused = self.compile(node["not"], f"{where}/not", base, in_place=True)

            def check_not(value: Any, path: str, errors: Errors) -> None:
                if not _failures(value, path, refused):
                    errors.append((path, "Expected a value the `not` schema refuses"))

            found.append(check_not)
        if "if" in node and ("then" in node or "else" in node):
            condition = self.compile(node["if"], f"{where}/if", base, in_place=True)
            then = self.compile(node.get("then", True), f"{where}/then", base, in_place=True)
            otherwise = self.compile(node.get("else", True), f"{where}/else", base, in_place=True)

            def check_if(value: Any, path: str, errors: Errors) -> None:
                branch = otherwise if _failures(value, path, condition) else then
                branch(value, path, errors)

            found.append(check_if)
        return found

    # what unevaluated* leave alone ------------------------------------------------------

    def _in_place(self, node: dict[str, Any], base: Base) -> list[tuple[Any, Base]]:
        """The subschemas applying to the value ``node`` applies to, resolved."""
        found: list[tuple[Any, Base]] = []
        for keyword in _IN_PLACE_LISTS:
            schemas = node.get(keyword)
            if isinstance(schemas, list):
                found.extend((schema, base) for schema in schemas)
        found.extend((node[keyword], base) for keyword in _IN_PLACE_ONES if keyword in node)
        dependent = node.get("dependentSchemas")
        if isinstance(dependent, dict):
            found.extend((schema, base) for schema in dependent.values())
        for keyword in _REFS:
            if isinstance(node.get(keyword), str):
                found.append(self._resolve(node[keyword], base, ""))
        return found

    def _evaluated_properties(
        self,
        node: Any,
        base: Base,
        names: set[str],
        regexes: list[re.Pattern[str]],
        seen: set[int],
        top: bool = False,
    ) -> bool:
        """Gather what ``node`` and its in-place subschemas may evaluate; True: any name."""
        if not isinstance(node, dict) or id(node) in seen:
            return False
        seen.add(id(node))
        base = self.roots.get(id(node), base)
        if "additionalProperties" in node or (not top and "unevaluatedProperties" in node):
            return True
        if isinstance(node.get("properties"), dict):
            names.update(node["properties"])
        if isinstance(node.get("patternProperties"), dict):
            regexes.extend(_regex(pattern, "") for pattern in node["patternProperties"])
        return any(
            self._evaluated_properties(schema, schema_base, names, regexes, seen)
            for schema, schema_base in self._in_place(node, base)
        )

    def _evaluated_items(
        self, node: Any, base: Base, seen: set[int], top: bool = False
    ) -> int | None:
        """How many leading items ``node`` and its in-place subschemas may evaluate (None:
        all of them)."""
        if not isinstance(node, dict) or id(node) in seen:
            return 0
        seen.add(id(node))
        base = self.roots.get(id(node), base)
        items = node.get("items")
        if isinstance(items, list):
            if "additionalItems" in node:
                return None
            count = len(items)
        elif items is not None or "contains" in node or (not top and "unevaluatedItems" in node):
            return None
        else:
            prefix = node.get("prefixItems")
            count = len(prefix) if isinstance(prefix, list) else 0
        for schema, schema_base in self._in_place(node, base):
            inner = self._evaluated_items(schema, schema_base, seen)
            if inner is None:
                return None
            count = max(count, inner)
        return count


def _regex(pattern: str, where: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise ValueError(
            f"at #{where}: {pattern!r} is no regular expression Python's re module compiles ({exc})"
        ) from None


def _any_of(options: list[Check]) -> Check:
    def check_any(value: Any, path: str, errors: Errors) -> None:
        failures = []
        for option in options:
            wrong = _failures(value, path, option)
            if not wrong:
                return
            failures.append(wrong)
        errors.append((path, _none_fits("anyOf", path, failures)))

    return check_any


def _one_of(options: list[Check]) -> Check:
    def check_one(value: Any, path: str, errors: Errors) -> None:
        failures = []
        fitting = []
        for number, option in enumerate(options, 1):
            wrong = _failures(value, path, option)
            if wrong:
                failures.append(wrong)
            else:
                fitting.append(str(number))
        if len(fitting) == 1:
            return
        if fitting:
            said = _either(fitting, "and")
            errors.append(
                (path, f"Expected exactly one oneOf option to fit, but options {said} do")
            )
        else:
            errors.append((path, _none_fits("oneOf", path, failures)))

    return check_one


__all__ = ["arguments_validator"]

"""mcpkit's JSON Schema validator (the one ``input_schema={...}`` tools are checked with)
against the official JSON-Schema-Test-Suite: every case of the required draft 2020-12 tests
(vendored in ``tests/data/json_schema_test_suite``) passes, except those ``KNOWN_FAILURES``
names with the reason. A listed case that starts passing fails the test as well, so the list
stays true. The suite's remote documents are read from its ``remotes/``: nothing is fetched.

``bench/json_schema.py`` reads the suite through ``suite_cases`` and ``mcpkit_check`` too.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

from mcpkit.server._schema.json_schema import Check, _Compiler

SUITE = Path(__file__).resolve().parents[1] / "data" / "json_schema_test_suite"
#: Where the suite says its ``remotes/`` directory is served.
REMOTES_URI = "http://localhost:1234/"
#: The cases of the vendored required draft 2020-12 tests: a suite read short fails.
CASE_COUNT = 1299

_METASCHEMA = "refers to the 2020-12 metaschema, which mcpkit does not carry: refused"
_UNICODE_CLASS = "\\p{Letter} is ECMA-262 that Python's re lacks: refused at registration"
_DYNAMIC = "$dynamicRef read as $ref: no dynamic scope"
_DYNAMIC_VALID = "$dynamicRef read as $ref: the static target's check refuses a valid value"
_UNEVALUATED = "unevaluated* approximated: what an in-place subschema could evaluate counts"
_VOCABULARY = "a custom metaschema's $vocabulary is not read: validation keywords still apply"

#: Case id (``file | group | test``) -> why mcpkit's validator gets it wrong.
KNOWN_FAILURES: dict[str, str] = {
    "defs | validate definition against metaschema | valid definition schema": _METASCHEMA,
    "defs | validate definition against metaschema | invalid definition schema": _METASCHEMA,
    "ref | remote ref, containing refs itself | remote ref valid": _METASCHEMA,
    "ref | remote ref, containing refs itself | remote ref invalid": _METASCHEMA,
    "pattern | pattern with Unicode property escape requires unicode mode | "
    "ASCII letters match": _UNICODE_CLASS,
    "pattern | pattern with Unicode property escape requires unicode mode | "
    "Non-ASCII letters match": _UNICODE_CLASS,
    "pattern | pattern with Unicode property escape requires unicode mode | "
    "Digits do not match": _UNICODE_CLASS,
    "patternProperties | patternProperties with Unicode property escape | "
    "Unicode letter property name matches": _UNICODE_CLASS,
    "patternProperties | patternProperties with Unicode property escape | "
    "Non-letter property name does not match pattern": _UNICODE_CLASS,
    "dynamicRef | A $dynamicRef resolves to the first $dynamicAnchor still in scope that is "
    "encountered when the schema is evaluated | An array containing non-strings is invalid": (
        _DYNAMIC
    ),
    "dynamicRef | A $dynamicRef with intermediate scopes that don't include a matching "
    "$dynamicAnchor does not affect dynamic scope resolution | "
    "An array containing non-strings is invalid": _DYNAMIC,
    "dynamicRef | A $dynamicRef that initially resolves to a schema with a matching "
    "$dynamicAnchor resolves to the first $dynamicAnchor in the dynamic scope | "
    "The recursive part is not valid against the root": _DYNAMIC,
    "dynamicRef | multiple dynamic paths to the $dynamicRef keyword | "
    "number list with string values": _DYNAMIC,
    "dynamicRef | multiple dynamic paths to the $dynamicRef keyword | "
    "string list with number values": _DYNAMIC,
    "dynamicRef | after leaving a dynamic scope, it is not used by a $dynamicRef | "
    "string matches /$defs/thingy, but the $dynamicRef does not stop here": _DYNAMIC,
    "dynamicRef | after leaving a dynamic scope, it is not used by a $dynamicRef | "
    "/then/$defs/thingy is the final stop for the $dynamicRef": _DYNAMIC_VALID,
    "dynamicRef | strict-tree schema, guards against misspelled properties | "
    "instance with misspelled field": _DYNAMIC,
    "dynamicRef | tests for implementation dynamic anchor and reference link | "
    "incorrect extended schema": _DYNAMIC,
    "dynamicRef | $ref and $dynamicAnchor are independent of order - $defs first | "
    "incorrect extended schema": _DYNAMIC,
    "dynamicRef | $ref and $dynamicAnchor are independent of order - $ref first | "
    "incorrect extended schema": _DYNAMIC,
    "dynamicRef | $dynamicRef avoids the root of each schema, but scopes are still registered | "
    "data is not sufficient for schema at second#/$defs/length": _DYNAMIC,
    "unevaluatedItems | unevaluatedItems with $dynamicRef | with no unevaluated items": (
        _DYNAMIC_VALID
    ),
    "unevaluatedProperties | unevaluatedProperties with $dynamicRef | "
    "with no unevaluated properties": _DYNAMIC_VALID,
    "unevaluatedItems | unevaluatedItems with nested items | with invalid additional item": (
        _UNEVALUATED
    ),
    "unevaluatedItems | unevaluatedItems with anyOf | "
    "when one schema matches and has unevaluated items": _UNEVALUATED,
    "unevaluatedItems | unevaluatedItems with if/then/else | "
    "when if matches and it has unevaluated items": _UNEVALUATED,
    "unevaluatedItems | unevaluatedItems depends on adjacent contains | "
    "contains passes, second item is not evaluated": _UNEVALUATED,
    "unevaluatedItems | unevaluatedItems depends on multiple nested contains | "
    "7 not evaluated, fails unevaluatedItems": _UNEVALUATED,
    "unevaluatedItems | unevaluatedItems and contains interact to control item dependency "
    "relationship | only b's are invalid": _UNEVALUATED,
    "unevaluatedItems | unevaluatedItems and contains interact to control item dependency "
    "relationship | only c's are invalid": _UNEVALUATED,
    "unevaluatedItems | unevaluatedItems and contains interact to control item dependency "
    "relationship | only b's and c's are invalid": _UNEVALUATED,
    "unevaluatedItems | unevaluatedItems and contains interact to control item dependency "
    "relationship | only a's and c's are invalid": _UNEVALUATED,
    "unevaluatedItems | unevaluatedItems with minContains = 0 | no items evaluated by contains": (
        _UNEVALUATED
    ),
    "unevaluatedItems | unevaluatedItems with minContains = 0 | "
    "some but not all items evaluated by contains": _UNEVALUATED,
    "unevaluatedItems | unevaluatedItems can see annotations from if without then and else | "
    "invalid in case if is evaluated": _UNEVALUATED,
    "unevaluatedProperties | unevaluatedProperties with anyOf | "
    "when one matches and has unevaluated properties": _UNEVALUATED,
    "unevaluatedProperties | unevaluatedProperties with anyOf | "
    "when two match and has unevaluated properties": _UNEVALUATED,
    "unevaluatedProperties | unevaluatedProperties with if/then/else | "
    "when if is true and has unevaluated properties": _UNEVALUATED,
    "unevaluatedProperties | unevaluatedProperties with if/then/else | "
    "when if is false and has unevaluated properties": _UNEVALUATED,
    "unevaluatedProperties | unevaluatedProperties with if/then/else, then not defined | "
    "when if is false and has unevaluated properties": _UNEVALUATED,
    "unevaluatedProperties | unevaluatedProperties with dependentSchemas | "
    "with unevaluated properties": _UNEVALUATED,
    "unevaluatedProperties | dynamic evalation inside nested refs | xx + foo is invalid": (
        _UNEVALUATED
    ),
    "unevaluatedProperties | dependentSchemas with unevaluatedProperties | "
    "unevaluatedProperties doesn't see bar when foo2 is absent": _UNEVALUATED,
    "vocabulary | schema that uses custom metaschema with with no validation vocabulary | "
    "no validation: invalid number, but it still validates": _VOCABULARY,
}


@cache
def remote_documents() -> dict[str, Any]:
    """The suite's remote documents by the URI its tests refer to them with."""
    remotes = SUITE / "remotes"
    return {
        REMOTES_URI + path.relative_to(remotes).as_posix(): json.loads(path.read_text("utf-8"))
        for path in sorted(remotes.rglob("*.json"))
    }


def suite_cases() -> Iterator[tuple[str, Any, Any, bool]]:
    """Every case of the required draft 2020-12 tests: ``(id, schema, instance, valid)``; the
    cases of one group share their schema object, so it can be compiled once."""
    for path in sorted((SUITE / "tests" / "draft2020-12").glob("*.json")):
        for group in json.loads(path.read_text("utf-8")):
            for test in group["tests"]:
                case = f"{path.stem} | {group['description']} | {test['description']}"
                yield case, group["schema"], test["data"], test["valid"]


def mcpkit_check(schema: Any) -> Check:
    """The check ``arguments_validator`` compiles ``schema`` into, with the suite's remote
    documents known to the compiler as embedded resources are (mcpkit fetches nothing, so a
    tool's schema has to carry them; this is the one way to hand them over)."""
    compiler = _Compiler(schema)
    for uri, document in remote_documents().items():
        if uri not in compiler.resources:  # the schema's own resources come first
            compiler.resources[uri] = document
            compiler.roots[id(document)] = (uri, document)
            compiler._index(document, (uri, document))
    return compiler.compile(schema, "", None)


@cache  # both tests read it
def mcpkit_failures() -> tuple[int, dict[str, str]]:
    """How many cases ran, and what went wrong with each one that failed."""
    failures: dict[str, str] = {}
    count, compiled = 0, None
    check: Check | str | None = None
    for case, schema, instance, valid in suite_cases():
        count += 1
        if schema is not compiled:  # a group's cases come together
            compiled = schema
            try:
                check = mcpkit_check(schema)
            except ValueError as exc:
                check = f"refused: {exc}"
        if isinstance(check, str):
            failures[case] = check
            continue
        errors: list[tuple[str, str]] = []
        try:
            check(instance, "", errors)
        except Exception as exc:  # a crash is a failure of its own, not a verdict
            failures[case] = f"raised {exc!r}"
            continue
        if (not errors) != valid:
            failures[case] = "accepted an invalid value" if valid is False else f"refused: {errors}"
    return count, failures


def test_the_whole_required_suite_runs():
    count, _ = mcpkit_failures()
    assert count == CASE_COUNT
    assert len({case for case, *_ in suite_cases()}) == CASE_COUNT  # ids are unique


def test_only_the_known_failures_fail():
    _, failures = mcpkit_failures()
    new = {case: why for case, why in failures.items() if case not in KNOWN_FAILURES}
    fixed = sorted(KNOWN_FAILURES.keys() - failures.keys())
    assert not new, f"cases failing that KNOWN_FAILURES does not list: {new}"
    assert not fixed, f"KNOWN_FAILURES lists cases that pass now (take them out): {fixed}"

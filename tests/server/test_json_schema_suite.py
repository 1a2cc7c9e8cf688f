"""The validator ``input_schema={...}`` tools are checked with (``arguments_validator``, over
jsonschema-rs) against the official JSON-Schema-Test-Suite: every case of the required draft
2020-12 tests (vendored in ``tests/data/json_schema_test_suite``) passes, except those
``KNOWN_FAILURES`` names with the reason. A listed case that starts passing fails the test as
well, so the list stays true. The whole adapter runs, the errors of an invalid value turned
into the message a tool's caller gets, so a case its wording breaks on fails too.

The suite's remote documents are handed over in an in-memory registry, for this test only:
mcpkit itself fetches nothing, and a schema referring to them is refused
(tests/server/test_raw_input_schema.py).

``bench/json_schema.py`` reads the suite through ``suite_cases`` and ``suite_validator`` too.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema_rs

from mcpkit import InvalidParamsError
from mcpkit.server._schema.json_schema import arguments_validator

SUITE = Path(__file__).resolve().parents[1] / "data" / "json_schema_test_suite"
#: Where the suite says its ``remotes/`` directory is served.
REMOTES_URI = "http://localhost:1234/"
#: The cases of the vendored required draft 2020-12 tests: a suite read short fails.
CASE_COUNT = 1299

#: Case id (``file | group | test``) -> why mcpkit's validator gets it wrong.
KNOWN_FAILURES: dict[str, str] = {}


@cache
def remote_documents() -> dict[str, Any]:
    """The suite's remote documents by the URI its tests refer to them with."""
    remotes = SUITE / "remotes"
    return {
        REMOTES_URI + path.relative_to(remotes).as_posix(): json.loads(path.read_text("utf-8"))
        for path in sorted(remotes.rglob("*.json"))
    }


@cache
def remote_registry() -> jsonschema_rs.Registry:
    """The suite's remote documents as a registry: what a schema may refer to besides itself."""
    return jsonschema_rs.Registry(remote_documents().items())


def suite_validator(schema: Any) -> Any:
    """``arguments_validator`` of ``schema``, the suite's remote documents at hand."""
    return arguments_validator(schema, registry=remote_registry())


def suite_cases() -> Iterator[tuple[str, Any, Any, bool]]:
    """Every case of the required draft 2020-12 tests: ``(id, schema, instance, valid)``; the
    cases of one group share their schema object, so it can be compiled once."""
    for path in sorted((SUITE / "tests" / "draft2020-12").glob("*.json")):
        for group in json.loads(path.read_text("utf-8")):
            for test in group["tests"]:
                case = f"{path.stem} | {group['description']} | {test['description']}"
                yield case, group["schema"], test["data"], test["valid"]


def verdict(validate: Any, instance: Any) -> bool:
    """Whether ``validate`` takes ``instance``; its refusal has to be a finished message."""
    try:
        validate(instance)
    except InvalidParamsError as exc:
        assert exc.message and exc.data["errors"], exc
        return False
    except (TypeError, ValueError):  # taken, but no keyword arguments: not an object
        assert not isinstance(instance, dict)
        return True
    return True


@cache  # both tests read it
def mcpkit_failures() -> tuple[int, dict[str, str]]:
    """How many cases ran, and what went wrong with each one that failed."""
    failures: dict[str, str] = {}
    count, compiled = 0, None
    validate: Any = None
    for case, schema, instance, valid in suite_cases():
        count += 1
        if schema is not compiled:  # a group's cases come together
            compiled = schema
            try:
                validate = suite_validator(schema)
            except ValueError as exc:
                validate = f"refused: {exc}"
        if isinstance(validate, str):
            failures[case] = validate
            continue
        try:
            if verdict(validate, instance) != valid:
                failures[case] = "accepted an invalid value" if not valid else "refused"
        except Exception as exc:  # a crash is a failure of its own, not a verdict
            failures[case] = f"raised {exc!r}"
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

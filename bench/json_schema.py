"""mcpkit's JSON Schema validation (what checks the arguments of a tool whose
``input_schema={...}`` is given as it is: ``arguments_validator``, an adapter over
jsonschema-rs) against jsonschema-rs itself, fastjsonschema and python-jsonschema:
correctness on the official test suite, and the time a tool's arguments take to check.

    .venv/bin/python bench/json_schema.py [--rounds 7] [--seconds 0.2] [--cases]
                                          [--only mcpkit jsonschema-rs fastjsonschema jsonschema]

Correctness: every case of the JSON-Schema-Test-Suite's required draft 2020-12 tests
(vendored in tests/data/json_schema_test_suite, read as tests/server/test_json_schema_suite.py
reads it), remote references answered from its ``remotes/`` (nothing is fetched). A case is
passed, failed (the wrong verdict) or errored (the schema refused at compile time, or an
exception other than a verdict). ``--cases`` lists every case that did not pass. mcpkit's
verdict is the whole adapter's: an invalid value's errors are made into its message.

Speed: three tool input schemas (a flat object; a nested order with an array of objects,
enums, bounds and patterns; one of the size an OpenAPI operation gives, with ``$defs`` and
``$ref``), each compiled once, then checked against a valid and an invalid instance. What is
timed is what a server needs: the verdict and, for an invalid instance, every error with
its path and message (mcpkit: ``arguments_validator``'s call, which raises the finished
``InvalidParamsError``; the others: their error iteration). Each figure is the best of
``--rounds`` rounds of about ``--seconds`` each, the validators interleaved in every round.

jsonschema-rs is a dependency of mcpkit; the other peers are not: install them into the venv
to measure them (``.venv/bin/pip install fastjsonschema``); a missing one is left out.
Nothing is written into the repository.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.server.test_json_schema_suite import (
    remote_documents,
    suite_cases,
    suite_validator,
    verdict,
)

from mcpkit import InvalidParamsError, McpServerApp

#: A compiled schema's verdict on an instance.
Verdict = Callable[[Any], bool]
#: A compiled schema's errors for an instance: ``[(path, message), ...]``, none when valid.
Errors = Callable[[Any], list[tuple[Any, str]]]


def remote(uri: str) -> Any:
    """A document of the suite's ``remotes/``; anything else is not there (no network)."""
    try:
        return remote_documents()[uri]
    except KeyError:
        raise LookupError(f"not among the suite's remotes: {uri}") from None


# --------------------------------------------------------------------------- the validators


class Mcpkit:
    """mcpkit's: the check a tool given ``input_schema=`` gets (``arguments_validator``)."""

    name = "mcpkit"
    package = "mcpkit"

    def verdict(self, schema: Any) -> Verdict:
        validate = suite_validator(schema)
        return lambda instance: verdict(validate, instance)

    def errors(self, schema: Any) -> Errors:
        app = McpServerApp("bench")
        app.tool(input_schema=schema, name="check")(lambda **arguments: None)
        validate = app.catalog.get_tool("check").signature.validate  # type: ignore[union-attr]

        def errors(instance: Any) -> list[tuple[Any, str]]:
            try:
                validate(instance)
            except InvalidParamsError as exc:  # its message and data, as a tool's reply has them
                return [(error["path"], error["message"]) for error in exc.data["errors"]]
            return []

        return errors


class JsonschemaRs:
    """jsonschema-rs (Rust): its draft chosen by ``$schema``, 2020-12 without one."""

    name = "jsonschema-rs"
    package = "jsonschema-rs"

    def __init__(self) -> None:
        import jsonschema_rs

        self.lib = jsonschema_rs

    def verdict(self, schema: Any) -> Verdict:
        return self.lib.validator_for(schema, retriever=remote).is_valid

    def errors(self, schema: Any) -> Errors:
        validator = self.lib.validator_for(schema)
        return lambda instance: [
            (error.instance_path, error.message) for error in validator.iter_errors(instance)
        ]


class Fastjsonschema:
    """fastjsonschema (generated Python): drafts 4, 6, 7 and a "2019" it gives any other."""

    name = "fastjsonschema"
    package = "fastjsonschema"

    def __init__(self) -> None:
        import fastjsonschema

        self.lib = fastjsonschema
        # format is an annotation in 2020-12, and a default must not be written into the
        # instance (fastjsonschema does both unless told otherwise)
        self.options = {"use_formats": False, "use_default": False}

    def verdict(self, schema: Any) -> Verdict:
        handlers = {"http": remote, "https": remote}
        check = self.lib.compile(schema, handlers=handlers, **self.options)

        def is_valid(instance: Any) -> bool:
            try:
                check(instance)
            except self.lib.JsonSchemaValueException:
                return False
            return True

        return is_valid

    def errors(self, schema: Any) -> Errors:
        check = self.lib.compile(schema, fast_fail=False, **self.options)  # every error

        def errors(instance: Any) -> list[tuple[Any, str]]:
            try:
                check(instance)
            except self.lib.JsonSchemaValuesException as exc:
                return [(error.path, error.message) for error in exc.errors]
            return []

        return errors


class Jsonschema:
    """python-jsonschema: its draft chosen by ``$schema``, 2020-12 without one."""

    name = "jsonschema"
    package = "jsonschema"

    def __init__(self) -> None:
        import jsonschema
        from referencing import Registry, Resource
        from referencing.jsonschema import DRAFT202012

        self.lib = jsonschema
        self.registry = Registry(
            retrieve=lambda uri: Resource.from_contents(
                remote(uri), default_specification=DRAFT202012
            )
        )

    def _validator(self, schema: Any, **options: Any) -> Any:
        cls = self.lib.validators.validator_for(schema, default=self.lib.Draft202012Validator)
        return cls(schema, **options)

    def verdict(self, schema: Any) -> Verdict:
        return self._validator(schema, registry=self.registry).is_valid

    def errors(self, schema: Any) -> Errors:
        validator = self._validator(schema)
        return lambda instance: [
            (list(error.absolute_path), error.message) for error in validator.iter_errors(instance)
        ]


def available(only: list[str] | None) -> list[Any]:
    found = []
    for kind in (Mcpkit, JsonschemaRs, Fastjsonschema, Jsonschema):
        if only and kind.name not in only:
            continue
        try:
            found.append(kind())
        except ImportError:
            print(f"{kind.name}: not installed, left out", file=sys.stderr)
    return found


def version(validator: Any) -> str:
    return importlib.metadata.version(validator.package)


# --------------------------------------------------------------------------- correctness


def correctness(validator: Any) -> dict[str, str]:
    """Every suite case's outcome: ``passed``, ``failed`` or ``errored: why``."""
    outcomes: dict[str, str] = {}
    compiled: Any = None
    verdict: Verdict | str = ""
    for case, schema, instance, valid in suite_cases():
        if schema is not compiled:  # a group's cases come together: compile once
            compiled = schema
            try:
                verdict = validator.verdict(schema)
            except Exception as exc:
                verdict = f"errored: refused the schema: {type(exc).__name__}: {exc}"
        if isinstance(verdict, str):
            outcomes[case] = verdict
            continue
        try:
            outcomes[case] = "passed" if verdict(instance) == valid else "failed"
        except Exception as exc:
            outcomes[case] = f"errored: {type(exc).__name__}: {exc}"
    return outcomes


def print_correctness(validators: list[Any], list_cases: bool) -> None:
    results = {validator.name: correctness(validator) for validator in validators}
    print("\nRequired draft 2020-12 tests of the JSON-Schema-Test-Suite:\n")
    print("| validator | version | passed | failed | errored | cases |")
    print("|---|---|---|---|---|---|")
    for validator in validators:
        outcomes = results[validator.name]
        kinds = Counter(outcome.split(":")[0] for outcome in outcomes.values())
        print(
            f"| {validator.name} | {version(validator)} | {kinds['passed']} | {kinds['failed']} "
            f"| {kinds['errored']} | {len(outcomes)} |"
        )
    for name, outcomes in results.items():
        wrong = {case: outcome for case, outcome in outcomes.items() if outcome != "passed"}
        if not wrong:
            continue
        by_file = Counter(case.split(" | ")[0] for case in wrong)
        print(
            f"\n{name}, cases not passed by file: "
            + ", ".join(f"{f} {n}" for f, n in sorted(by_file.items()))
        )
        if list_cases:
            for case, outcome in wrong.items():
                print(f"  {case}: {outcome[:160]}")


# --------------------------------------------------------------------------- speed

FLAT = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "minLength": 1, "description": "What to search for"},
        "limit": {"type": "integer", "minimum": 1, "maximum": 100},
        "include_archived": {"type": "boolean"},
        "min_score": {"type": "number", "minimum": 0, "maximum": 1},
    },
    "required": ["query", "limit"],
    "additionalProperties": False,
}
FLAT_VALID = {"query": "quarterly report", "limit": 20, "include_archived": False}
FLAT_INVALID = {"limit": 500, "include_archived": "no", "min_score": 0.5}

ORDER_ITEM = {
    "type": "object",
    "properties": {
        "sku": {"type": "string", "pattern": "^[A-Z]{3}-[0-9]{4}$"},
        "quantity": {"type": "integer", "minimum": 1, "maximum": 999},
        "unit_price": {"type": "number", "exclusiveMinimum": 0},
        "gift_wrap": {"type": "boolean"},
    },
    "required": ["sku", "quantity"],
    "additionalProperties": False,
}
NESTED = {
    "type": "object",
    "properties": {
        "customer": {
            "type": "object",
            "properties": {
                "email": {"type": "string", "pattern": "^[^@\\s]+@[^@\\s]+\\.[a-z]{2,}$"},
                "name": {"type": "string", "maxLength": 100},
                "tier": {"enum": ["basic", "plus", "business"]},
            },
            "required": ["email"],
        },
        "items": {"type": "array", "minItems": 1, "maxItems": 50, "items": ORDER_ITEM},
        "shipping": {"type": "string", "enum": ["standard", "express", "overnight"]},
        "currency": {"enum": ["EUR", "USD", "GBP"]},
        "notes": {"type": ["string", "null"], "maxLength": 500},
    },
    "required": ["customer", "items", "shipping"],
}
NESTED_VALID = {
    "customer": {"email": "ada@example.org", "name": "Ada", "tier": "plus"},
    "items": [
        {"sku": "ABC-0001", "quantity": 2, "unit_price": 9.5},
        {"sku": "XYZ-1234", "quantity": 1, "unit_price": 120.0, "gift_wrap": True},
        {"sku": "DEF-4321", "quantity": 12},
        {"sku": "GHI-0042", "quantity": 3, "unit_price": 0.99},
        {"sku": "JKL-7777", "quantity": 1, "gift_wrap": False},
    ],
    "shipping": "express",
    "currency": "EUR",
    "notes": None,
}
NESTED_INVALID = {
    "customer": {"email": "not-an-address", "tier": "gold"},
    "items": [
        {"sku": "ABC-0001", "quantity": 2, "unit_price": 9.5},
        {"sku": "abc-1", "quantity": 0},
        {"sku": "DEF-4321", "quantity": 1, "unit_price": 0, "colour": "red"},
        {"quantity": 3},
        {"sku": "JKL-7777", "quantity": 1, "gift_wrap": "yes"},
    ],
    "shipping": "teleport",
}

# The shape McpServerApp.from_openapi gives an operation: path and query parameters beside
# the body's properties, the body's components shared through $defs.
OPENAPI = {
    "type": "object",
    "properties": {
        "owner": {"type": "string", "pattern": "^[A-Za-z0-9-]{1,39}$"},
        "repo": {"type": "string", "minLength": 1, "maxLength": 100},
        "issue_number": {"type": "integer", "minimum": 1},
        "dry_run": {"type": "boolean"},
        "title": {"type": "string", "minLength": 1, "maxLength": 256},
        "body": {"type": ["string", "null"], "maxLength": 65536},
        "state": {"type": "string", "enum": ["open", "closed"]},
        "state_reason": {
            "type": ["string", "null"],
            "enum": ["completed", "not_planned", "reopened", None],
        },
        "milestone": {"anyOf": [{"type": "integer", "minimum": 1}, {"type": "null"}]},
        "labels": {
            "type": "array",
            "maxItems": 100,
            "items": {"anyOf": [{"type": "string"}, {"$ref": "#/$defs/Label"}]},
        },
        "assignees": {"type": "array", "items": {"$ref": "#/$defs/Login"}, "uniqueItems": True},
        "author": {"$ref": "#/$defs/User"},
        "links": {"type": "array", "items": {"$ref": "#/$defs/Link"}},
        "custom_fields": {
            "type": "object",
            "additionalProperties": {"$ref": "#/$defs/FieldValue"},
            "maxProperties": 20,
        },
    },
    "required": ["owner", "repo", "issue_number"],
    "$defs": {
        "Login": {"type": "string", "pattern": "^[A-Za-z0-9-]{1,39}$"},
        "Label": {
            "type": "object",
            "properties": {
                "id": {"type": "integer"},
                "name": {"type": "string", "minLength": 1},
                "description": {"type": ["string", "null"]},
                "color": {"type": "string", "pattern": "^[0-9a-fA-F]{6}$"},
            },
            "required": ["name"],
            "additionalProperties": False,
        },
        "User": {
            "type": "object",
            "properties": {
                "login": {"$ref": "#/$defs/Login"},
                "id": {"type": "integer", "minimum": 1},
                "type": {"enum": ["User", "Bot", "Organization"]},
                "site_admin": {"type": "boolean"},
            },
            "required": ["login", "id"],
        },
        "Link": {
            "type": "object",
            "properties": {
                "rel": {"enum": ["duplicate", "blocks", "blocked_by", "relates"]},
                "href": {"type": "string", "format": "uri"},
                "target": {"$ref": "#/$defs/User"},
            },
            "required": ["rel", "href"],
        },
        "FieldValue": {
            "anyOf": [
                {"type": "string", "maxLength": 1024},
                {"type": "number"},
                {"type": "boolean"},
                {"type": "array", "items": {"type": "string"}, "maxItems": 50},
            ]
        },
    },
}
OPENAPI_VALID = {
    "owner": "octo-org",
    "repo": "hello-world",
    "issue_number": 1347,
    "title": "Crash when the cache is cold",
    "body": "Steps to reproduce: ...",
    "state": "closed",
    "state_reason": "completed",
    "milestone": 12,
    "labels": ["bug", {"id": 208045946, "name": "p1", "color": "f29513", "description": None}],
    "assignees": ["octocat", "hubot"],
    "author": {"login": "octocat", "id": 1, "type": "User", "site_admin": False},
    "links": [
        {"rel": "duplicate", "href": "https://example.com/issues/1200"},
        {
            "rel": "blocks",
            "href": "https://example.com/issues/1400",
            "target": {"login": "hubot", "id": 2},
        },
    ],
    "custom_fields": {
        "severity": "high",
        "estimate": 3,
        "customer_facing": True,
        "areas": ["cache"],
    },
}
OPENAPI_INVALID = {
    "owner": "octo org",
    "repo": "hello-world",
    "issue_number": 0,
    "state": "resolved",
    "milestone": "v2",
    "labels": ["bug", {"name": "p1", "color": "red"}],
    "assignees": ["octocat", "octocat"],
    "author": {"login": "octocat"},
    "links": [{"rel": "duplicate"}],
    "custom_fields": {"severity": {"level": "high"}},
}

SCHEMAS = {
    "flat (4 properties)": (FLAT, FLAT_VALID, FLAT_INVALID),
    "nested order": (NESTED, NESTED_VALID, NESTED_INVALID),
    "OpenAPI operation": (OPENAPI, OPENAPI_VALID, OPENAPI_INVALID),
}


def seconds_for(call: Callable[[Any], Any], instance: Any, count: int) -> float:
    started = time.perf_counter()
    for _ in range(count):
        call(instance)
    return time.perf_counter() - started


def calls_per_round(call: Callable[[Any], Any], instance: Any, seconds: float) -> int:
    """How many calls take about ``seconds``."""
    count = 10
    while (took := seconds_for(call, instance, count)) < seconds / 10:
        count *= 10
    return max(1, int(count * seconds / took))


def print_speed(validators: list[Any], rounds: int, seconds: float) -> None:
    runs: dict[tuple[str, str, str], tuple[Errors, Any, int]] = {}
    error_counts: dict[tuple[str, str], int] = {}
    for label, (schema, valid, invalid) in SCHEMAS.items():
        for validator in validators:
            errors = validator.errors(schema)
            if errors(valid):
                raise SystemExit(f"{validator.name} refuses the valid {label}: {errors(valid)}")
            found = errors(invalid)
            if not found:
                raise SystemExit(f"{validator.name} accepts the invalid {label}")
            error_counts[label, validator.name] = len(found)
            for kind, instance in (("valid", valid), ("invalid", invalid)):
                count = calls_per_round(errors, instance, seconds)
                runs[label, kind, validator.name] = (errors, instance, count)
    best: dict[tuple[str, str, str], float] = {}
    for _ in range(rounds):  # interleaved, so a busy phase of the machine hits every one
        for key, (errors, instance, count) in runs.items():
            took = seconds_for(errors, instance, count) / count * 1e6
            best[key] = min(best.get(key, took), took)
    names = [validator.name for validator in validators]
    print(f"\nµs per check, the best of {rounds} rounds (x mcpkit: that time over mcpkit's):\n")
    print("| schema | instance | " + " | ".join(names) + " |")
    print("|---|---|" + "---|" * len(names))
    for label, kind in dict.fromkeys((label, kind) for label, kind, _ in runs):
        ours = best.get((label, kind, "mcpkit"))
        cells = []
        for name in names:
            took = best[label, kind, name]
            ratio = f" ({took / ours:.2f}x)" if ours and name != "mcpkit" else ""
            cells.append(f"{took:.2f}{ratio}")
        print(f"| {label} | {kind} | " + " | ".join(cells) + " |")
    print("\nErrors each reports for the invalid instances:\n")
    print("| schema | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    for label in SCHEMAS:
        print(f"| {label} | " + " | ".join(str(error_counts[label, n]) for n in names) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--seconds", type=float, default=0.2, help="length of one timed round")
    parser.add_argument("--only", nargs="+", help="validators to run (default: every one)")
    parser.add_argument("--cases", action="store_true", help="list every case not passed")
    args = parser.parse_args()
    validators = available(args.only)
    print(
        f"Python {sys.version.split()[0]}; "
        + ", ".join(f"{v.name} {version(v)}" for v in validators)
    )
    print_correctness(validators, args.cases)
    print_speed(validators, args.rounds, args.seconds)


if __name__ == "__main__":
    main()

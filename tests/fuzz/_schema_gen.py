"""Random instances of a JSON Schema, for the live fuzzer: the MCP schema's definitions
(``ClientRequest`` members, results a client sends back) and tools' input schemas.

Covers the keywords the spec schemas and typical tool schemas use: ``$ref`` (JSON pointers
into the root), ``type`` (one or a list), ``const``, ``enum``, ``anyOf``/``oneOf``/``allOf``,
``properties``/``required``/``additionalProperties``, ``items``/``prefixItems``, the numeric
and length bounds, and a few ``format``s. Anything else is ignored, so an instance can miss
a rule (``pattern``, ``not``, ``if``): that is fine for a fuzzer, whose server must answer
either way. Seeded by the ``random.Random`` it is given; a depth bound keeps instances small.
"""

from __future__ import annotations

import base64
import copy
import random
from typing import Any

#: Strings worth trying anywhere a string goes: empty, spaces, unicode of every width,
#: controls, look-alikes of the protocol's own words, and path and URI syntax.
STRINGS = [
    "",
    " ",
    "a",
    "test",
    "0",
    "-1",
    "true",
    "null",
    "é",
    "日本語",
    "🙂",
    "\u202eRTL",
    "e\u0301",
    "\u0000",
    "\t\r\n",
    "\\",
    '"',
    "%00",
    "%zz",
    "../../etc/passwd",
    "test://static/resource/1",
    "=?base64?AAAA?=",
    "tools/call",
    "x" * 300,
]

_FORMATS = {
    "uri": ["test://static-text", "file:///tmp/x", "https://example.com/a?b=c#d", "x:", ""],
    "uri-template": ["test://template/{id}/data", "{", "x{?q}"],
    "byte": [base64.b64encode(b"\x89PNG").decode(), "AAAA", "not base64!", ""],
    "date-time": ["2026-07-28T00:00:00Z", "yesterday", ""],
    "email": ["a@example.com", "@", ""],
}


class SchemaInstances:
    """Instances of the schemas under ``root`` (a whole schema document)."""

    def __init__(self, root: dict[str, Any], rng: random.Random, *, max_depth: int = 5) -> None:
        self.root = root
        self.rng = rng
        self.max_depth = max_depth
        self.defs: dict[str, Any] = root.get("$defs") or root.get("definitions") or {}

    def of_definition(self, name: str) -> Any:
        return self.instance(self.defs[name])

    def instance(self, schema: Any, depth: int = 0) -> Any:
        """One random instance of ``schema`` (mostly valid)."""
        if schema is True or schema == {}:
            return self.any_json(depth)
        if not isinstance(schema, dict):
            return self.any_json(depth)
        if "$ref" in schema:
            return self.instance(self.resolve(schema["$ref"]), depth)
        # Copies: the schema documents are shared (and cached), and mutations edit in place.
        if "const" in schema:
            return copy.deepcopy(schema["const"])
        if schema.get("enum"):
            return copy.deepcopy(self.rng.choice(schema["enum"]))
        for key in ("anyOf", "oneOf"):
            if schema.get(key):
                return self.instance(self.rng.choice(schema[key]), depth)
        if schema.get("allOf"):
            merged: dict[str, Any] = {}
            for part in schema["allOf"]:
                value = self.instance(part, depth)
                if isinstance(value, dict):
                    merged.update(value)
            return merged
        kind = schema.get("type")
        if isinstance(kind, list):
            kind = self.rng.choice(kind) if kind else None
        if kind is None:
            if "properties" in schema or "additionalProperties" in schema:
                kind = "object"
            elif "items" in schema or "prefixItems" in schema:
                kind = "array"
            else:
                return self.any_json(depth)
        return getattr(self, f"_{kind}", self._unknown)(schema, depth)

    def resolve(self, ref: str) -> Any:
        """A ``#/...`` JSON pointer into the root document (others resolve to ``{}``)."""
        if not ref.startswith("#"):
            return {}
        node: Any = self.root
        for step in ref[1:].lstrip("/").split("/") if ref != "#" else []:
            step = step.replace("~1", "/").replace("~0", "~")
            node = node.get(step, {}) if isinstance(node, dict) else {}
        return node

    # -- per type -------------------------------------------------------------------------

    def _object(self, schema: dict[str, Any], depth: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        required = set(schema.get("required", ()))
        deep = depth >= self.max_depth
        for name, sub in (schema.get("properties") or {}).items():
            if name in required or (not deep and self.rng.random() < 0.5):
                out[name] = self.instance(sub, depth + 1)
        extra = schema.get("additionalProperties")
        if not deep and extra not in (None, False) and self.rng.random() < 0.3:
            for _ in range(self.rng.randint(1, 2)):
                out[self.string()[:12] or "k"] = self.instance(extra, depth + 1)
        return out

    def _array(self, schema: dict[str, Any], depth: int) -> list[Any]:
        prefix = schema.get("prefixItems") or []
        low = schema.get("minItems", 0)
        high = min(schema.get("maxItems", 3), low + 3)
        if depth >= self.max_depth:
            high = low
        count = self.rng.randint(low, max(low, high))
        items = schema.get("items", True)
        out = [self.instance(p, depth + 1) for p in prefix[:count]]
        out += [self.instance(items, depth + 1) for _ in range(count - len(out))]
        return out

    def _string(self, schema: dict[str, Any], depth: int) -> str:
        formats = _FORMATS.get(schema.get("format", ""))
        if formats and self.rng.random() < 0.8:
            return self.rng.choice(formats)
        text = self.string()
        low, high = schema.get("minLength", 0), schema.get("maxLength")
        if len(text) < low:
            text += "x" * (low - len(text))
        return text[:high] if high is not None else text

    def _integer(self, schema: dict[str, Any], depth: int) -> int:
        low = schema.get("minimum", schema.get("exclusiveMinimum", -(2**31)))
        high = schema.get("maximum", schema.get("exclusiveMaximum", 2**31))
        low, high = int(low), int(high)
        if self.rng.random() < 0.6:
            pick = self.rng.choice([0, 1, -1, 2, 100, low, high])
            return max(low, min(high, pick))
        return self.rng.randint(low, max(low, high))

    def _number(self, schema: dict[str, Any], depth: int) -> float | int:
        if self.rng.random() < 0.3:
            return self._integer(schema, depth)
        low = float(schema.get("minimum", -1e6))
        high = float(schema.get("maximum", 1e6))
        return self.rng.choice([0.0, 0.5, -0.0, 1e-9, low, high, self.rng.uniform(low, high)])

    def _boolean(self, schema: dict[str, Any], depth: int) -> bool:
        return self.rng.random() < 0.5

    def _null(self, schema: dict[str, Any], depth: int) -> None:
        return None

    def _unknown(self, schema: dict[str, Any], depth: int) -> Any:
        return self.any_json(depth)

    # -- free values ----------------------------------------------------------------------

    def string(self) -> str:
        roll = self.rng.random()
        if roll < 0.5:
            return self.rng.choice(STRINGS)
        if roll < 0.8:
            alphabet = "abcdefghijklmnopqrstuvwxyz0123456789_-./:"
            return "".join(self.rng.choice(alphabet) for _ in range(self.rng.randint(1, 12)))
        # Any code point but the lone surrogates, which UTF-8 cannot carry.
        chars = []
        for _ in range(self.rng.randint(1, 8)):
            code = self.rng.choice([self.rng.randint(0, 0x7F), self.rng.randint(0, 0x10FFFF)])
            chars.append(chr(code) if not 0xD800 <= code <= 0xDFFF else "?")
        return "".join(chars)

    def any_json(self, depth: int = 0) -> Any:
        """Any JSON value, nested at most to the depth bound."""
        roll = self.rng.random()
        if depth >= self.max_depth or roll < 0.6:
            return self.rng.choice(
                [None, True, False, 0, -1, 2**53, 1.5, -0.0, self.string(), self.string()]
            )
        if roll < 0.8:
            return [self.any_json(depth + 1) for _ in range(self.rng.randint(0, 3))]
        return {self.string()[:10]: self.any_json(depth + 1) for _ in range(self.rng.randint(0, 3))}

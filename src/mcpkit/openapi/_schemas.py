"""From OpenAPI schema objects to self-contained JSON Schema (draft 2020-12).

A tool's ``inputSchema`` and ``outputSchema`` must stand alone: an MCP client has no
OpenAPI document to resolve ``#/components/schemas/...`` against. ``SchemaConverter``:

* inlines every local ``$ref``, except one that refers back to a schema being inlined
  (a recursive schema), that sits deeper than ``MAX_INLINE_DEPTH`` inlined references, or
  that comes once the tool's schema holds ``max_schema_nodes`` schema objects: those
  become ``{"$ref": "#/$defs/<Name>"}``, the target converted once into ``$defs`` at the
  top of the tool's schema, so recursion is kept, never unrolled, and references that
  branch and join again (``A`` refers to ``B`` twice, ``B`` to ``C`` twice...) cannot
  multiply a small document into a huge schema;
* reads OpenAPI 3.0's dialect (``nullable``, boolean ``exclusiveMinimum``/``Maximum``,
  ``example``) into 2020-12, and leaves 3.1 schemas (already 2020-12) as they are, but
  for a lingering ``nullable``, read there too;
* drops what is OpenAPI's own and means nothing to a JSON Schema validator
  (``discriminator``, ``xml``, ``externalDocs``, ``x-*`` extensions, nested ``$defs``);
* in a request, leaves out ``readOnly`` properties; in a response, ``writeOnly`` ones.

In 3.1, ``#/$defs/X`` inside a component schema means that schema's own ``$defs`` (a
schema without ``$id`` has the document as its base, but authors write it meaning the
enclosing schema): such a reference is looked up in the enclosing schemas, innermost first,
when the document's root has no ``$defs``. External references (other files, URLs) are not
fetched: they become ``{}`` (anything), logged as a warning.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from typing import Any, Literal
from urllib.parse import unquote

from mcpkit.openapi._document import OpenApiDocument, walk_pointer

logger = logging.getLogger("mcpkit.openapi")

#: Nested ``$ref``s inlined before the next one becomes a ``$defs`` entry instead.
MAX_INLINE_DEPTH = 16

#: Schema objects nested in one another (through ``$ref``s too) before a schema is refused
#: (``SchemaTooDeep``): converting goes down them one call deeper each.
MAX_SCHEMA_DEPTH = 100

#: Schema objects one tool's input schema (or output schema) holds before further
#: ``$ref``s are no longer inlined but shared through ``$defs``.
DEFAULT_MAX_SCHEMA_NODES = 2000

Direction = Literal["request", "response"]

# Keywords whose value is one schema, a list of schemas, or a name -> schema mapping.
_ONE = frozenset(
    {
        "additionalProperties",
        "items",
        "not",
        "if",
        "then",
        "else",
        "contains",
        "propertyNames",
        "unevaluatedProperties",
        "unevaluatedItems",
        "contentSchema",
    }
)
_MANY = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_NAMED = frozenset({"properties", "patternProperties", "dependentSchemas"})
# OpenAPI's own keywords, and ones that make no sense in a schema cut out of its document.
_DROPPED = frozenset(
    {
        "discriminator",
        "xml",
        "externalDocs",
        "$defs",
        "definitions",
        "$schema",
        "$id",
        "$anchor",
        "$dynamicAnchor",
        "$comment",
        "nullable",
        "example",
    }
)
# Siblings of a ``$ref`` that only describe: merged into the inlined target.
_ANNOTATIONS = frozenset(
    {
        "title",
        "description",
        "default",
        "examples",
        "deprecated",
        "readOnly",
        "writeOnly",
        "format",
    }
)
_NAME_CHARS = re.compile(r"[^A-Za-z0-9_.-]+")


class SchemaTooDeep(ValueError):
    """A schema nested deeper than ``MAX_SCHEMA_DEPTH``."""


def _ref_name(ref: str) -> str:
    tail = unquote(ref.rsplit("/", 1)[-1]).replace("~1", "/").replace("~0", "~")
    return _NAME_CHARS.sub("_", tail).strip("_") or "Schema"


class SchemaConverter:
    """Converts the schemas of one tool (several parameters, a body, responses) into
    JSON Schema sharing one ``$defs`` table; ``finish`` attaches it."""

    def __init__(
        self,
        document: OpenApiDocument,
        direction: Direction,
        *,
        max_inline_depth: int = MAX_INLINE_DEPTH,
        max_schema_nodes: int = DEFAULT_MAX_SCHEMA_NODES,
    ) -> None:
        self.document = document
        self.direction = direction
        self.max_inline_depth = max_inline_depth
        self.max_schema_nodes = max_schema_nodes
        #: Schema objects made so far, inlined and ``$defs`` entries alike.
        self.nodes = 0
        #: The ``$defs`` entries made so far, by name.
        self.defs: dict[str, Any] = {}
        self._depth = 0  # schema objects being converted, one inside the other
        self._def_names: dict[int, str] = {}  # id(target schema) -> its $defs name
        self._def_refs: dict[str, int] = {}  # name -> id(target), to keep names unique

    # public -----------------------------------------------------------------------------

    def convert(self, schema: Any) -> Any:
        """The JSON Schema for ``schema`` (a schema object, a boolean, or a ``$ref``).
        ``SchemaTooDeep`` when it nests deeper than ``MAX_SCHEMA_DEPTH``."""
        return self._convert(schema, (), (schema,))

    def finish(self, schema: dict[str, Any]) -> dict[str, Any]:
        """``schema`` with the ``$defs`` the conversions needed (none: unchanged)."""
        if self.defs:
            schema = {**schema, "$defs": {**schema.get("$defs", {}), **self.defs}}
        return schema

    # references -------------------------------------------------------------------------

    def _resolve(self, ref: str, roots: tuple[Any, ...]) -> Any:
        try:
            return self.document.lookup(ref)
        except KeyError:
            pass
        if ref.startswith("#/"):
            pointer = unquote(ref[1:])
            for root in reversed(roots):  # 3.1: "#/$defs/X" of the enclosing schema
                try:
                    return walk_pointer(root, pointer)
                except KeyError:
                    continue
        raise KeyError(ref)

    def _def_ref(self, ref: str, target: Any, roots: tuple[Any, ...]) -> dict[str, Any]:
        """``{"$ref": "#/$defs/Name"}`` for ``target``, converting it into ``$defs`` the
        first time."""
        key = id(target)
        name = self._def_names.get(key)
        if name is None:
            base = name = _ref_name(ref)
            counter = 2
            while name in self._def_refs:
                name = f"{base}_{counter}"
                counter += 1
            self._def_names[key] = name
            self._def_refs[name] = key
            self.defs[name] = {}  # reserved: a reference inside the target finds the name
            self.defs[name] = self._convert(target, (key,), (*roots, target))
        return {"$ref": f"#/$defs/{name}"}

    def _convert_ref(
        self, node: Mapping[str, Any], stack: tuple[int, ...], roots: tuple[Any, ...]
    ) -> Any:
        ref = node["$ref"]
        siblings = {key: value for key, value in node.items() if key != "$ref"}
        try:
            target = self._resolve(ref, roots)
        except KeyError:
            logger.warning("cannot resolve $ref %r (only local references are read)", ref)
            target = {}
        key = id(target)
        if self._shares(key, stack):
            resolved: Any = self._def_ref(ref, target, roots)
        else:
            resolved = self._convert(target, (*stack, key), (*roots, target))
        if not siblings:
            return resolved
        extra = self._convert(siblings, stack, roots)
        if not isinstance(resolved, dict):  # a boolean schema
            return {"allOf": [resolved], **extra} if extra else resolved
        if siblings.get("nullable") is True:
            resolved = _nullable(resolved)
        if set(extra) <= _ANNOTATIONS or not set(extra) & set(resolved):
            return {**resolved, **extra}
        return {"allOf": [resolved], **extra}

    def _shares(self, key: int, stack: tuple[int, ...]) -> bool:
        """Whether the reference to target ``key`` becomes a ``$defs`` entry: it is
        recursive, already there, too deep, or the schema is already large."""
        return (
            key in stack
            or key in self._def_names
            or len(stack) >= self.max_inline_depth
            or self.nodes >= self.max_schema_nodes
        )

    # schemas ----------------------------------------------------------------------------

    def _convert(self, node: Any, stack: tuple[int, ...], roots: tuple[Any, ...]) -> Any:
        if isinstance(node, bool):
            return node
        if not isinstance(node, Mapping):
            return {}
        if isinstance(node.get("$ref"), str):
            return self._convert_ref(node, stack, roots)
        if self._depth >= MAX_SCHEMA_DEPTH:
            raise SchemaTooDeep(f"a schema is nested deeper than {MAX_SCHEMA_DEPTH} levels")
        self._depth += 1
        try:
            return self._convert_object(node, stack, roots)
        finally:
            self._depth -= 1

    def _convert_object(
        self, node: Mapping[str, Any], stack: tuple[int, ...], roots: tuple[Any, ...]
    ) -> Any:
        self.nodes += 1
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in _DROPPED or key.startswith("x-"):
                continue
            if key in _NAMED and isinstance(value, Mapping):
                out[key] = {
                    str(name): self._convert(sub, stack, roots) for name, sub in value.items()
                }
            elif key in _MANY and isinstance(value, list):
                out[key] = [self._convert(sub, stack, roots) for sub in value]
            elif key == "items" and isinstance(value, list):  # draft-04 tuple form
                out["prefixItems"] = [self._convert(sub, stack, roots) for sub in value]
            elif key in _ONE:
                out[key] = self._convert(value, stack, roots)
            else:
                out[key] = value
        if "example" in node and "examples" not in out:
            out["examples"] = [node["example"]]
        _exclusive_bounds(out)
        if node.get("nullable") is True:  # 3.0; read in 3.1 documents too, where it lingers
            out = _nullable(out)
        self._drop_one_way_properties(out)
        return out

    def _drop_one_way_properties(self, schema: dict[str, Any]) -> None:
        """Leave out ``readOnly`` properties of a request, ``writeOnly`` ones of a response."""
        properties = schema.get("properties")
        if not isinstance(properties, dict):
            return
        flag = "readOnly" if self.direction == "request" else "writeOnly"
        dropped = [
            name
            for name, sub in properties.items()
            if isinstance(sub, dict) and sub.get(flag) is True
        ]
        if not dropped:
            return
        schema["properties"] = {k: v for k, v in properties.items() if k not in dropped}
        required = schema.get("required")
        if isinstance(required, list):
            kept = [name for name in required if name not in dropped]
            if kept:
                schema["required"] = kept
            else:
                del schema["required"]


def _exclusive_bounds(schema: dict[str, Any]) -> None:
    """3.0's ``exclusiveMinimum: true`` beside ``minimum: n`` is 2020-12's
    ``exclusiveMinimum: n`` (and the same for the maximum)."""
    for bound, flag in (("minimum", "exclusiveMinimum"), ("maximum", "exclusiveMaximum")):
        value = schema.get(flag)
        if value is True and bound in schema:
            schema[flag] = schema.pop(bound)
        elif isinstance(value, bool):
            del schema[flag]


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` that also accepts ``null`` (3.0's ``nullable: true``)."""
    kind = schema.get("type")
    if isinstance(kind, str):
        schema = {**schema, "type": [kind, "null"] if kind != "null" else kind}
    elif isinstance(kind, list):
        schema = {**schema, "type": kind if "null" in kind else [*kind, "null"]}
    elif any(key in schema for key in ("$ref", "allOf", "anyOf", "oneOf", "enum", "const")):
        return {"anyOf": [schema, {"type": "null"}]}
    else:
        return schema  # no type: null is already allowed
    enum = schema.get("enum")
    if isinstance(enum, list) and None not in enum:
        schema["enum"] = [*enum, None]
    return schema


def is_object_schema(schema: Any) -> bool:
    """Whether every value ``schema`` accepts is a JSON object (what MCP asks of an
    ``outputSchema``)."""
    if not isinstance(schema, dict):
        return False
    kind = schema.get("type")
    if kind == "object":
        return True
    if kind is None:
        for key in ("anyOf", "oneOf"):
            branches = schema.get(key)
            if isinstance(branches, list) and branches:
                return all(is_object_schema(branch) for branch in branches)
        branches = schema.get("allOf")
        if isinstance(branches, list) and branches:
            return any(is_object_schema(branch) for branch in branches)
    return False

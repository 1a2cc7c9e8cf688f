#!/usr/bin/env python3
"""Generate mcpkit's protocol types from the MCP spec's ``schema.json`` files.

For every spec version directory ``<spec-dir>/<YYYY-MM-DD>/schema/schema.json`` this writes
``src/mcpkit/protocol/types/_v<YYYY_MM_DD>.py``: one ``msgspec.Struct`` per object definition,
one type alias per non-object definition, and an ``__all__``.

Mapping rules (the reasons matter to whoever reads the generated code):

* Field names are snake_case; ``rename`` maps them back to the exact wire names. ``_meta``
  becomes ``meta``; a prefixed key such as ``io.modelcontextprotocol/clientInfo`` becomes
  ``client_info``; Python keywords get a trailing underscore.
* Required properties have no default. Optional ones default to ``None`` and, because every
  struct is ``omit_defaults=True``, are left out of the encoded message while unset.
* A struct whose own schema has a required string ``const`` named ``type`` (else ``method``)
  is a *tagged* struct: the constant lives in the tag (and a ``ClassVar`` of the same name for
  reading), so ``TextContent(text="hi")`` needs no ``type=`` and unions of such structs decode.
* ``anyOf``/``oneOf`` unions keep their members when msgspec can tell them apart (tagged
  structs sharing one tag field with distinct tags, at most one array, scalars). Otherwise the
  union falls back to ``dict[str, Any]`` (all members objects) or ``Any``.
* Inline object schemas become nested structs named ``<Parent><Property>``, except when
  they are open maps (``additionalProperties``), carry no properties, are ``_meta`` (open by
  spec: arbitrary keys must survive a round trip) or are a JSON Schema document
  (``inputSchema``, ``outputSchema``, ``requestedSchema``) - those become ``dict[str, ...]``.
* An inline ``params`` object of a request/notification that lacks ``_meta`` gets an optional
  ``_meta``: the base ``Request``/``Notification`` declares it, the schema export drops it
  whenever a method overrides ``params``, and ``progressToken`` travels there.
* ``number`` is ``int | float`` so integral values survive a round trip unchanged.
* Aliases that refer to each other in a cycle (``JSONValue``/``JSONObject``) degrade to
  ``Any`` inside the cycle.

Usage: ``python tools/gen_types.py [--spec-dir DIR] [--out DIR] [--check]``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import keyword
import re
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT_DIR = REPO_ROOT / "src" / "mcpkit" / "protocol" / "types"
#: The schemas vendored in this repository (``spec/<version>/schema/schema.json``).
DEFAULT_SPEC_DIR = REPO_ROOT / "spec"

_VERSION_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_LINE = 100
#: Candidate tag fields, in order of preference.
_TAG_FIELDS = ("type", "method")
#: Field names that would shadow a name the generated annotations use.
_RESERVED_FIELD_NAMES = frozenset({"str", "int", "float", "bool", "list", "dict", "msgspec"})
_RESERVED_TYPE_NAMES = frozenset({"Any", "ClassVar", "Literal", "msgspec"})


# --------------------------------------------------------------------------- names and text


def snake_case(name: str) -> str:
    """``isError`` -> ``is_error``; non-identifier characters become underscores."""
    name = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    name = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)
    name = re.sub(r"[^0-9a-zA-Z]+", "_", name).strip("_").lower()
    if not name:
        name = "field"
    if name[0].isdigit():
        name = "f_" + name
    return name


def pascal_case(name: str) -> str:
    """``listChanged`` -> ``ListChanged``, ``_meta`` -> ``Meta``."""
    return "".join(part[:1].upper() + part[1:] for part in snake_case(name).split("_"))


def module_name(version: str) -> str:
    """``2025-11-25`` -> ``_v2025_11_25``."""
    return "_v" + version.replace("-", "_")


_LINK_RE = re.compile(r"\{@link\s+([A-Za-z0-9_./#-]+)([^}]*)\}")


def clean_text(text: str) -> str:
    """Description text with TypeDoc ``{@link X label}`` reduced to plain words."""

    def repl(m: re.Match[str]) -> str:
        label = m.group(2).strip()
        return label or m.group(1)

    return _LINK_RE.sub(repl, text).strip()


def short_doc(text: str | None, limit: int = 240) -> str | None:
    """The first paragraph of a description when it is short, else its first sentence."""
    if not text:
        return None
    para = " ".join(clean_text(text).split("\n\n")[0].split())
    if len(para) <= limit:
        return para
    sentence = re.split(r"(?<=[.!?])\s", para, maxsplit=1)[0]
    return sentence if len(sentence) <= limit else None


def docstring(text: str, indent: str) -> list[str]:
    """Lines of a triple-quoted docstring, wrapped, with quotes and backslashes escaped."""
    text = clean_text(text).replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    width = _LINE - len(indent)
    out: list[str] = []
    for raw in text.splitlines():
        if not raw.strip():
            out.append("")
            continue
        lead = re.match(r"\s*(?:[-*] |\d+\. )?", raw).group(0)  # hanging indent for list items
        first = '"""' if not out else ""
        wrapped = textwrap.wrap(
            first + raw, width, subsequent_indent=" " * len(lead), break_on_hyphens=False
        )
        out.extend(wrapped or [first])
    while out and not out[-1]:
        out.pop()
    # One line when it fits (and no trailing quote would merge with the closing quotes).
    if len(out) == 1 and len(out[0]) + 3 <= width and not out[0].endswith('"'):
        return [f'{indent}{out[0]}"""']
    return [f"{indent}{line}".rstrip() for line in out] + [f'{indent}"""']


def comment(text: str, indent: str) -> list[str]:
    """``#:`` comment lines (the attribute-doc convention Sphinx reads)."""
    prefix = f"{indent}#: "
    return textwrap.wrap(text, _LINE - len(prefix), initial_indent=prefix, subsequent_indent=prefix)


def py_literal(value: Any) -> str:
    """Python source for a JSON scalar, strings double-quoted."""
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    return repr(value)


# --------------------------------------------------------------------------- model


@dataclass(frozen=True)
class PyType:
    """A rendered annotation plus what the union logic needs to know about it."""

    text: str
    #: "any", "object", "array", "scalar", "null" or "union" (a mix of those).
    kind: str
    #: For kind "object": the struct names the value may be (empty for dicts).
    structs: tuple[str, ...] = ()
    #: Names of generated structs/aliases the text mentions (for alias ordering).
    refs: frozenset[str] = frozenset()
    #: The scalar annotations in this type (for union de-duplication).
    scalars: tuple[str, ...] = ()


ANY = PyType("Any", "any")
NONE = PyType("None", "null")
DICT_ANY = PyType("dict[str, Any]", "object")


@dataclass
class FieldSpec:
    py_name: str
    wire_name: str
    type: PyType
    required: bool
    doc: str | None


@dataclass
class StructSpec:
    name: str
    doc: str | None
    fields: list[FieldSpec] = field(default_factory=list)
    tag: tuple[str, str] | None = None  # (wire tag field, tag value)


@dataclass
class AliasSpec:
    name: str
    doc: str | None
    type: PyType


# --------------------------------------------------------------------------- generator


class ModuleGenerator:
    """Turns one version's schema definitions into the source of one module."""

    def __init__(self, schema: dict[str, Any]) -> None:
        defs = schema.get("$defs") or schema.get("definitions")
        if not isinstance(defs, dict):
            raise ValueError("schema has neither $defs nor definitions")
        self.defs: dict[str, dict[str, Any]] = defs
        for name in defs:
            if not name.isidentifier() or keyword.iskeyword(name) or name in _RESERVED_TYPE_NAMES:
                raise ValueError(f"definition name {name!r} is not usable as a Python name")
        # Which definitions are structs (objects with properties) and what they tag on.
        self.struct_defs: dict[str, dict[str, Any]] = {}
        for name, schema_ in defs.items():
            merged = self._merged_object(schema_)
            if merged is not None and merged["properties"]:
                self.struct_defs[name] = merged
        self.struct_tags: dict[str, tuple[str, str] | None] = {
            name: self._own_tag(merged) for name, merged in self.struct_defs.items()
        }
        self.cyclic_aliases = self._find_alias_cycles()
        self.structs: dict[str, StructSpec] = {}  # emission order: inline ones before parents
        self.aliases: dict[str, AliasSpec] = {}
        self._alias_types: dict[str, PyType] = {}
        self._resolving: list[str] = []
        #: Unions that fell back: (where, "dict" or "Any", member annotations).
        self.fallbacks: list[tuple[str, str, list[str]]] = []

    # -- schema helpers -------------------------------------------------------------------

    @staticmethod
    def ref_name(ref: str) -> str:
        prefix, _, name = ref.rpartition("/")
        if prefix not in ("#/$defs", "#/definitions"):
            raise ValueError(f"unsupported $ref {ref!r}")
        return name

    def _merged_object(self, schema: dict[str, Any]) -> dict[str, Any] | None:
        """Properties/required/description of an object schema, with ``allOf`` merged.

        None when the schema is not an object (or an ``allOf`` of objects).
        """
        if "allOf" in schema:
            props: dict[str, Any] = {}
            required: list[str] = []
            additional: Any = None
            for part in schema["allOf"]:
                if "$ref" in part:
                    part = self.defs[self.ref_name(part["$ref"])]
                sub = self._merged_object(part)
                if sub is None:
                    return None
                props.update(sub["properties"])  # later parts refine earlier ones
                required += [r for r in sub["required"] if r not in required]
                additional = sub["additionalProperties"] if additional is None else additional
            return {
                "properties": props,
                "required": required,
                "description": schema.get("description"),
                "additionalProperties": additional,
            }
        if schema.get("type") == "object" or "properties" in schema:
            return {
                "properties": dict(schema.get("properties") or {}),
                "required": list(schema.get("required") or []),
                "description": schema.get("description"),
                "additionalProperties": schema.get("additionalProperties"),
            }
        return None

    @staticmethod
    def _own_tag(merged: dict[str, Any]) -> tuple[str, str] | None:
        for tag_field in _TAG_FIELDS:
            prop = merged["properties"].get(tag_field)
            if (
                tag_field in merged["required"]
                and isinstance(prop, dict)
                and isinstance(prop.get("const"), str)
            ):
                return tag_field, prop["const"]
        return None

    def _find_alias_cycles(self) -> frozenset[str]:
        """Non-struct definitions that reach themselves through ``$ref``s."""
        graph: dict[str, set[str]] = {}

        def refs_in(node: Any, out: set[str]) -> None:
            if isinstance(node, dict):
                if isinstance(node.get("$ref"), str):
                    out.add(self.ref_name(node["$ref"]))
                for value in node.values():
                    refs_in(value, out)
            elif isinstance(node, list):
                for value in node:
                    refs_in(value, out)

        for name, schema in self.defs.items():
            if name not in self.struct_defs:
                targets: set[str] = set()
                refs_in(schema, targets)
                graph[name] = {t for t in targets if t not in self.struct_defs}

        cyclic: set[str] = set()
        for start in graph:
            stack, seen = list(graph[start]), set()
            while stack:
                node = stack.pop()
                if node == start:
                    cyclic.add(start)
                    break
                if node not in seen:
                    seen.add(node)
                    stack.extend(graph.get(node, ()))
        return frozenset(cyclic)

    def _unique_struct_name(self, hint: str) -> str:
        name, n = hint, 1
        while name in self.defs or name in self.structs or name in _RESERVED_TYPE_NAMES:
            n += 1
            name = f"{hint}{n}"
        return name

    # -- types ----------------------------------------------------------------------------

    def type_of(
        self, schema: Any, hint: str, *, prop: str = "", params_of_method: bool = False
    ) -> PyType:
        """The annotation for a property/items/member schema.

        ``hint`` names a nested struct if one is needed; ``prop`` is the wire property name.
        """
        if schema is True or not isinstance(schema, dict):
            return ANY
        if "$ref" in schema:
            return self._ref_type(self.ref_name(schema["$ref"]))
        if "allOf" in schema:
            merged = self._merged_object(schema)
            if merged is None or not merged["properties"]:
                return DICT_ANY
            return self._inline_struct(merged, hint, params_of_method=params_of_method)
        if "anyOf" in schema or "oneOf" in schema:
            members = schema.get("anyOf") or schema.get("oneOf")
            return self._union(
                [self.type_of(m, f"{hint}Option{i}") for i, m in enumerate(members, 1)], hint
            )
        if "const" in schema or "enum" in schema:
            options = [schema["const"]] if "const" in schema else schema["enum"]
            text = f"Literal[{', '.join(py_literal(v) for v in options)}]"
            return PyType(text, "scalar", scalars=(text,))
        json_type = schema.get("type")
        if isinstance(json_type, list):
            return self._union(
                [self.type_of({**schema, "type": t}, hint, prop=prop) for t in json_type], hint
            )
        if json_type == "string":
            return PyType("str", "scalar", scalars=("str",))
        if json_type == "integer":
            return PyType("int", "scalar", scalars=("int",))
        if json_type == "number":
            # int first: msgspec keeps integral JSON numbers as int, so they re-encode unchanged.
            return PyType("int | float", "scalar", scalars=("int", "float"))
        if json_type == "boolean":
            return PyType("bool", "scalar", scalars=("bool",))
        if json_type == "null":
            return NONE
        if json_type == "array":
            items = schema.get("items")
            item = self.type_of(items, f"{hint}Item") if items is not None else ANY
            return PyType(f"list[{item.text}]", "array", refs=item.refs)
        if json_type == "object" or "properties" in schema:
            return self._object_type(schema, hint, prop=prop, params_of_method=params_of_method)
        return ANY

    def _object_type(
        self, schema: dict[str, Any], hint: str, *, prop: str, params_of_method: bool
    ) -> PyType:
        properties = schema.get("properties") or {}
        additional = schema.get("additionalProperties")
        if prop == "_meta" or prop.endswith("Schema"):
            return DICT_ANY  # open by definition; see module docstring
        if not properties:
            if isinstance(additional, dict) and additional:
                value = self.type_of(additional, f"{hint}Value")
                return PyType(f"dict[str, {value.text}]", "object", refs=value.refs)
            return DICT_ANY
        if additional is not None and additional is not False:
            return DICT_ANY  # declared keys plus arbitrary others: a struct would drop the others
        merged = self._merged_object(schema)
        assert merged is not None
        return self._inline_struct(merged, hint, params_of_method=params_of_method)

    def _ref_type(self, name: str) -> PyType:
        if name not in self.defs:
            raise ValueError(f"$ref to unknown definition {name!r}")
        if name in self.struct_defs:
            return PyType(name, "object", structs=(name,), refs=frozenset({name}))
        target = self.alias_type(name)
        # Refer to the alias by name; keep what the union logic needs from its resolution.
        return PyType(name, target.kind, target.structs, frozenset({name}), target.scalars)

    def alias_type(self, name: str) -> PyType:
        """Resolve (once) the type of a non-struct definition."""
        if name in self._alias_types:
            return self._alias_types[name]
        if name in self._resolving:
            return ANY  # a cycle not caught above; Any is the safe reading
        self._resolving.append(name)
        try:
            schema = self.defs[name]
            if name in self.cyclic_aliases:
                resolved = self._cyclic_alias_type(schema)
            else:
                resolved = self.type_of(schema, name)
        finally:
            self._resolving.pop()
        self._alias_types[name] = resolved
        self.aliases[name] = AliasSpec(name, schema.get("description"), resolved)
        return resolved

    @staticmethod
    def _cyclic_alias_type(schema: dict[str, Any]) -> PyType:
        # A self-referential JSON value: keep the container shape, Any below it.
        if schema.get("type") == "object":
            return DICT_ANY
        if schema.get("type") == "array":
            return PyType("list[Any]", "array")
        return ANY

    def _union(self, members: list[PyType], where: str) -> PyType:
        """Combine union members, or fall back when msgspec could not tell them apart."""
        if any(m.kind in ("any", "union") for m in members):
            self.fallbacks.append((where, "Any", [m.text for m in members]))
            return ANY  # nested mixed unions: not worth flattening, Any decodes them all
        objects = [m for m in members if m.kind == "object"]
        arrays = [m for m in members if m.kind == "array"]
        scalars = [m for m in members if m.kind == "scalar"]
        nullable = any(m.kind == "null" for m in members)

        if len(objects) > 1:
            # Several object members: only tagged structs sharing one tag field will do.
            struct_names: list[str] = []
            for m in objects:
                if not m.structs:
                    struct_names = []
                    break
                struct_names += [s for s in m.structs if s not in struct_names]
            tags = [self.struct_tags.get(s) for s in struct_names]
            if not (
                struct_names
                and all(t is not None for t in tags)
                and len({t[0] for t in tags if t}) == 1
                and len({t[1] for t in tags if t}) == len(tags)
            ):
                self.fallbacks.append(
                    (where, "Any" if arrays or scalars else "dict", [m.text for m in members])
                )
                if arrays or scalars:
                    return ANY
                text = DICT_ANY.text + (" | None" if nullable else "")
                return PyType(text, "object")
            objects = [PyType(s, "object", (s,), frozenset({s})) for s in struct_names]
        if len(arrays) > 1:
            self.fallbacks.append((where, "Any", [m.text for m in members]))
            return ANY

        scalar_texts: list[str] = []
        for m in scalars:
            scalar_texts += [s for s in m.scalars if s not in scalar_texts]
        # A literal next to its base type adds nothing.
        scalar_texts = [s for s in scalar_texts if _literal_base(s) not in scalar_texts]

        parts = [m.text for m in objects] + [m.text for m in arrays]
        if len(scalars) == 1 and scalars[0].refs:
            parts.append(scalars[0].text)  # keep a named alias (e.g. ``Role``) readable
        else:
            parts += scalar_texts
        if not parts:
            return NONE if nullable else ANY
        if len(members) == 1:
            return members[0]
        if nullable:
            parts.append("None")
        refs = frozenset().union(*(m.refs for m in objects + arrays + scalars))
        structs = tuple(s for m in objects for s in m.structs)
        if objects and not (arrays or scalars):
            kind = "object"
        elif scalars and not (objects or arrays):
            kind = "scalar"
        elif arrays and not (objects or scalars):
            kind = "array"
        else:
            kind = "union"
        return PyType(" | ".join(parts), kind, structs, refs, tuple(scalar_texts))

    # -- structs --------------------------------------------------------------------------

    def _inline_struct(
        self, merged: dict[str, Any], hint: str, *, params_of_method: bool
    ) -> PyType:
        name = self._unique_struct_name(hint)
        self.structs[name] = StructSpec(name, None)  # reserve the name before recursing
        spec = self._build_struct(name, merged, params_of_method=params_of_method)
        del self.structs[name]
        self.structs[name] = spec  # re-insert after its own nested structs
        self.struct_tags[name] = spec.tag
        return PyType(name, "object", (name,), frozenset({name}))

    def _build_struct(
        self, name: str, merged: dict[str, Any], *, params_of_method: bool = False
    ) -> StructSpec:
        properties: dict[str, Any] = dict(merged["properties"])
        required = set(merged["required"])
        if params_of_method and "_meta" not in properties:
            properties = {
                "_meta": {"description": "Protocol-level metadata, e.g. `progressToken`."},
                **properties,
            }
        tag = self._own_tag(merged)
        spec = StructSpec(name, merged.get("description"), tag=tag)

        # Python names: the part after a reverse-DNS prefix, unless that collides.
        short = {w: snake_case(w.rpartition("/")[2]) for w in properties}
        taken: set[str] = set()
        for wire, prop_schema in properties.items():
            py = short[wire]
            if list(short.values()).count(py) > 1:
                py = snake_case(wire)
            while py in taken or keyword.iskeyword(py) or py in _RESERVED_FIELD_NAMES:
                py += "_"
            taken.add(py)
            if wire == "_meta":
                ftype = DICT_ANY
            else:
                ftype = self.type_of(
                    prop_schema,
                    name + pascal_case(wire.rpartition("/")[2]),
                    prop=wire,
                    params_of_method=(wire == "params" and "method" in properties),
                )
            description = prop_schema.get("description") if isinstance(prop_schema, dict) else None
            doc = short_doc(description)
            spec.fields.append(FieldSpec(py, wire, ftype, wire in required, doc))
        return spec

    def build(self) -> None:
        """Resolve every definition."""
        for name in self.defs:
            if name in self.struct_defs:
                spec = self._build_struct(name, self.struct_defs[name])
                self.structs.pop(name, None)
                self.structs[name] = spec
            else:
                self.alias_type(name)

    # -- rendering ------------------------------------------------------------------------

    def render(self, *, version: str, sha256: str) -> str:
        self.build()
        body: list[str] = []
        early, late = self._alias_order()
        for alias in early:
            body += self._render_alias(self.aliases[alias])
        for spec in self.structs.values():
            body += self._render_struct(spec)
        for alias in late:
            body += self._render_alias(self.aliases[alias])
        names = sorted([*self.structs, *self.aliases])
        text = "\n".join(body)
        imports = [n for n in ("Any", "ClassVar", "Literal") if re.search(rf"\b{n}\b", text)]
        head = [
            f"# Generated from schema.json (sha256 {sha256}) — do not edit.",
            f"# MCP specification {version}; regenerate with `python tools/gen_types.py`.",
            "# ruff: noqa: E501",
            f'"""MCP {version} protocol types as msgspec Structs, generated from its schema."""',
            "",
            "from __future__ import annotations",
            "",
        ]
        if imports:
            head.append(f"from typing import {', '.join(imports)}")
            head.append("")
        head += ["import msgspec", "", "__all__ = ["] + [f'    "{n}",' for n in names] + ["]"]
        return "\n".join(head + body).rstrip() + "\n"

    def _alias_order(self) -> tuple[list[str], list[str]]:
        """Aliases in dependency order, split into those needing no struct and the rest."""
        order: list[str] = []
        needs_struct: dict[str, bool] = {}

        def visit(name: str) -> bool:
            if name in needs_struct:
                return needs_struct[name]
            needs_struct[name] = False  # provisional, guards against cycles
            result = False
            for ref in sorted(self.aliases[name].type.refs):
                if ref in self.structs:
                    result = True
                elif ref in self.aliases and ref != name:
                    result = visit(ref) or result
            needs_struct[name] = result
            order.append(name)
            return result

        for name in self.defs:  # schema order, dependencies first
            if name in self.aliases:
                visit(name)
        return [n for n in order if not needs_struct[n]], [n for n in order if needs_struct[n]]

    def _render_alias(self, alias: AliasSpec) -> list[str]:
        lines = ["", ""]
        doc = short_doc(alias.doc)
        if doc:
            lines += comment(doc, "")
        line = f"{alias.name} = {alias.type.text}"
        parts = _split_top_level(alias.type.text, " | ")
        if len(line) > _LINE and len(parts) > 1:
            lines += [
                f"{alias.name} = (",
                *(f"    {p}" if i == 0 else f"    | {p}" for i, p in enumerate(parts)),
                ")",
            ]
        else:
            lines.append(line)
        return lines

    def _render_struct(self, spec: StructSpec) -> list[str]:
        kwargs = ["kw_only=True", "omit_defaults=True"]
        if spec.tag:
            kwargs += [f'tag_field="{spec.tag[0]}"', f"tag={py_literal(spec.tag[1])}"]
        renames = [(f.py_name, f.wire_name) for f in spec.fields if f.py_name != f.wire_name]
        if renames:
            pairs = ", ".join(f'"{p}": {json.dumps(w)}' for p, w in renames)
            kwargs.append("rename={" + pairs + "}")
        header = f"class {spec.name}(msgspec.Struct, {', '.join(kwargs)}):"
        lines = ["", ""]
        if len(header) <= _LINE:
            lines.append(header)
        else:
            lines += [f"class {spec.name}(", "    msgspec.Struct,"]
            for kw in kwargs:
                line = f"    {kw},"
                if len(line) > _LINE and kw.startswith("rename="):
                    lines.append("    rename={")
                    lines += [f'        "{p}": {json.dumps(w)},' for p, w in renames]
                    lines.append("    },")
                else:
                    lines.append(line)
            lines.append("):")
        body: list[str] = []
        if spec.doc:
            body += docstring(spec.doc, "    ")
        required = [f for f in spec.fields if f.required]
        optional = [f for f in spec.fields if not f.required]
        for f in required + optional:  # kw_only, so order is only for reading
            if spec.tag and f.wire_name == spec.tag[0]:
                body += self._field_lines(
                    f, f"ClassVar[Literal[{py_literal(spec.tag[1])}]] = {py_literal(spec.tag[1])}"
                )
                continue
            if f.required:
                annotation = f.type.text
            elif f.type.kind == "any":
                annotation = "Any = None"
            elif re.search(r"(^|\| )None$", f.type.text):
                annotation = f"{f.type.text} = None"
            else:
                annotation = f"{f.type.text} | None = None"
            body += self._field_lines(f, annotation)
        lines += body or ["    pass"]
        return lines

    @staticmethod
    def _field_lines(f: FieldSpec, annotation: str) -> list[str]:
        lines = comment(f.doc, "    ") if f.doc else []
        line = f"    {f.py_name}: {annotation}"
        if len(line) > _LINE and " | " in annotation:
            # Break a long union over lines inside parentheses.
            type_part, _, default = annotation.partition(" = ")
            parts = _split_top_level(type_part, " | ")
            lines.append(f"    {f.py_name}: (")
            lines.append(f"        {parts[0]}")
            lines += [f"        | {p}" for p in parts[1:]]
            lines.append(f"    ){' = ' + default if default else ''}")
            return lines
        lines.append(line)
        return lines


def _literal_base(text: str) -> str | None:
    """``Literal["x"]`` -> ``str``; ``Literal[1]`` -> ``int``; not a literal -> None."""
    if not text.startswith("Literal["):
        return None
    first = text[len("Literal[") :]
    if first.startswith('"'):
        return "str"
    if first.startswith(("True", "False")):
        return "bool"
    return "int"


def _split_top_level(text: str, sep: str) -> list[str]:
    """Split on ``sep`` outside brackets."""
    parts, depth, start, i = [], 0, 0, 0
    while i < len(text):
        ch = text[i]
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        elif depth == 0 and text.startswith(sep, i):
            parts.append(text[start:i])
            i += len(sep)
            start = i
            continue
        i += 1
    parts.append(text[start:])
    return parts


# --------------------------------------------------------------------------- driver


def discover_versions(spec_dir: Path) -> list[str]:
    """Spec version directories (``YYYY-MM-DD``) that hold a ``schema/schema.json``."""
    return sorted(
        p.name
        for p in spec_dir.iterdir()
        if _VERSION_RE.match(p.name) and (p / "schema" / "schema.json").is_file()
    )


def generate_module(schema_bytes: bytes, version: str) -> str:
    """Source of the module for one version's ``schema.json`` bytes."""
    sha = hashlib.sha256(schema_bytes).hexdigest()
    return ModuleGenerator(json.loads(schema_bytes)).render(version=version, sha256=sha)


def generate_all(spec_dir: Path) -> dict[str, str]:
    """File name -> source for every version under ``spec_dir``."""
    out: dict[str, str] = {}
    for version in discover_versions(spec_dir):
        data = (spec_dir / version / "schema" / "schema.json").read_bytes()
        out[module_name(version) + ".py"] = generate_module(data, version)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--spec-dir",
        type=Path,
        default=DEFAULT_SPEC_DIR,
        help="folder holding <version>/schema/schema.json (default: the vendored spec/)",
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT_DIR)
    parser.add_argument("--check", action="store_true", help="exit 1 if any file is stale")
    parser.add_argument(
        "--list-fallbacks",
        action="store_true",
        help="print the unions that fell back to dict/Any, write nothing",
    )
    args = parser.parse_args(argv)

    if args.list_fallbacks:
        for version in discover_versions(args.spec_dir):
            path = args.spec_dir / version / "schema" / "schema.json"
            generator = ModuleGenerator(json.loads(path.read_bytes()))
            generator.build()
            for where, fallback, members in generator.fallbacks:
                print(f"{version}  {where} -> {fallback}  ({' | '.join(members)})")
        return 0

    files = generate_all(args.spec_dir)
    if not files:
        print(f"no spec versions under {args.spec_dir}", file=sys.stderr)
        return 2
    stale = []
    for filename, source in files.items():
        path = args.out / filename
        current = path.read_text(encoding="utf-8") if path.exists() else None
        if current == source:
            continue
        stale.append(filename)
        if not args.check:
            args.out.mkdir(parents=True, exist_ok=True)
            path.write_text(source, encoding="utf-8")
    verb = "stale" if args.check else "written"
    for filename in stale:
        print(f"{verb}: {args.out / filename}")
    return 1 if (args.check and stale) else 0


if __name__ == "__main__":
    sys.exit(main())

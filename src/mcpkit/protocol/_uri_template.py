"""RFC 6570 URI templates: expansion (levels 1-4) and the inverse, matching.

``UriTemplate`` owns parsing a template, expanding it with values, and extracting values back
out of a concrete URI (what a server does for every ``resources/read`` of a templated
resource). Matching is the practical inverse of expansion, not a perfect one:

* ``{var}`` matches one non-empty path segment: no ``/``, ``?`` or ``#``; nor the ``;`` or
  ``&`` of a ``{;...}`` or ``{&...}`` right after it (expansion encodes its own).
* ``{+var}`` (reserved) may contain ``/`` but stops at ``?`` and ``#``; ``{#var}`` takes the
  rest of the URI. Both are non-empty when present.
* ``{.var}``, ``{/var}`` and the fragment are optional as a whole, as expansion omits them
  when their variables are undefined.
* ``{?a,b}``/``{&c}`` match query parameters in any order; each is optional, unknown
  parameters are ignored. ``{;a,b}`` path parameters work the same way.
* Exploded variables (``{/path*}``, ``{?tag*}``) come back as lists; everything else as a
  string - a non-exploded list comes back joined with commas, as it was sent.
* A value after a literal that the value before may also hold (``{a}-{b}``, ``{name}.{ext}``,
  ``{a}{.b}``) never holds that literal: the earlier takes all it can and the later the
  rest, and matching stays linear in the URI's length.
* Extracted values are percent-decoded.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, unquote

__all__ = ["UriTemplate"]

# RFC 3986 character classes.
_UNRESERVED = "-._~"  # plus ALPHA / DIGIT, which quote() never encodes
_RESERVED = ":/?#[]@!$&'()*+,;="
_PCT_TRIPLET = re.compile(r"%[0-9A-Fa-f]{2}")

_VARNAME = r"(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})(?:\.?(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2}))*"
_VARSPEC_RE = re.compile(rf"({_VARNAME})(?::([1-9][0-9]{{0,3}})|(\*))?")
_EXPRESSION_RE = re.compile(r"\{[^{}]+\}")
_OPERATORS = "+#./;?&"
_RESERVED_OPERATORS = "=,!@|"


@dataclass(frozen=True, slots=True)
class _Operator:
    """Expansion behaviour of one operator (RFC 6570 appendix A table)."""

    first: str
    sep: str
    named: bool
    ifemp: str
    allow_reserved: bool


_OPERATOR_TABLE: dict[str, _Operator] = {
    "": _Operator("", ",", False, "", False),
    "+": _Operator("", ",", False, "", True),
    "#": _Operator("#", ",", False, "", True),
    ".": _Operator(".", ".", False, "", False),
    "/": _Operator("/", "/", False, "", False),
    ";": _Operator(";", ";", True, "", False),
    "?": _Operator("?", "&", True, "=", False),
    "&": _Operator("&", "&", True, "=", False),
}


@dataclass(frozen=True, slots=True)
class _VarSpec:
    name: str
    prefix: int | None
    explode: bool


@dataclass(frozen=True, slots=True)
class _Expression:
    op: str
    varspecs: tuple[_VarSpec, ...]


@dataclass(frozen=True, slots=True)
class _Capture:
    """How to read one regex group back into variables."""

    kind: str  # "value" (one variable) or "pairs" (name=value list, for ; ? &)
    varspecs: tuple[_VarSpec, ...]
    split: str = ""  # for exploded "value" captures: the separator between list items


def _encode(text: str, allow_reserved: bool) -> str:
    """Percent-encode ``text``; reserved characters and ``%XX`` survive when allowed."""
    if not allow_reserved:
        return quote(text, safe=_UNRESERVED)
    out, pos = [], 0
    for m in _PCT_TRIPLET.finditer(text):
        out.append(quote(text[pos : m.start()], safe=_UNRESERVED + _RESERVED))
        out.append(m.group(0))
        pos = m.end()
    out.append(quote(text[pos:], safe=_UNRESERVED + _RESERVED))
    return "".join(out)


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else str(value)


def _is_undefined(value: Any) -> bool:
    # RFC 6570 2.3: null, empty lists and empty maps (or maps of only nulls) are undefined.
    if value is None:
        return True
    if isinstance(value, Mapping):
        return all(v is None for v in value.values())
    if isinstance(value, (list, tuple)):
        return all(v is None for v in value)
    return False


class UriTemplate:
    """A parsed RFC 6570 template that can expand values and match URIs."""

    __slots__ = ("_captures", "_parts", "_regex", "template", "variables")

    def __init__(self, template: str) -> None:
        """Parse ``template``; raises ``ValueError`` when it is malformed."""
        self.template = template
        self._parts = _parse(template)
        names: dict[str, None] = {}
        for part in self._parts:
            if isinstance(part, _Expression):
                names.update((spec.name, None) for spec in part.varspecs)
        #: Variable names in order of first appearance.
        self.variables: tuple[str, ...] = tuple(names)
        self._regex, self._captures = _compile(self._parts)

    def simple_exploded(self) -> tuple[str, ...]:
        """Variables with the explode modifier in simple expansion (``{path*}``): a list's
        items joined by ``,``, one path segment, never a ``/``: FastMCP's ``{path*}`` (a
        path of several segments) is ``{+path}`` here."""
        return tuple(
            spec.name
            for part in self._parts
            if isinstance(part, _Expression) and part.op == ""
            for spec in part.varspecs
            if spec.explode
        )

    @staticmethod
    def is_template(text: str) -> bool:
        """Whether ``text`` contains at least one ``{...}`` expression."""
        return _EXPRESSION_RE.search(text) is not None

    def expand(self, values: Mapping[str, Any]) -> str:
        """Expand with ``values``: strings/numbers, lists, or mappings (associative arrays).

        Missing or ``None`` variables are undefined and expand to nothing. A prefix modifier
        on a list or mapping raises ``ValueError`` (RFC 6570 2.4.1).
        """
        out: list[str] = []
        for part in self._parts:
            if isinstance(part, str):
                out.append(_encode(part, allow_reserved=True))
            else:
                out.append(_expand_expression(part, values))
        return "".join(out)

    def match(self, uri: str) -> dict[str, str | list[str]] | None:
        """The variables ``uri`` was expanded from, or None when it does not fit the template."""
        m = self._regex.fullmatch(uri)
        if m is None:
            return None
        result: dict[str, str | list[str]] = {}
        from_prefix: set[str] = set()  # names so far only known by a truncated {var:n}
        for index, capture in enumerate(self._captures):
            raw = m.group(index + 1)
            if raw is None:
                continue
            if capture.kind == "pairs":
                _read_pairs(raw, capture.varspecs, result)
                continue
            spec = capture.varspecs[0]
            if spec.name in result and spec.name not in from_prefix:
                continue
            if capture.split:
                result[spec.name] = [unquote(item) for item in raw.split(capture.split)]
            else:
                result[spec.name] = unquote(raw)
            if spec.prefix is not None:
                from_prefix.add(spec.name)
            else:
                from_prefix.discard(spec.name)
        return result

    def __repr__(self) -> str:
        return f"UriTemplate({self.template!r})"

    def __str__(self) -> str:
        return self.template

    def __eq__(self, other: object) -> bool:
        return isinstance(other, UriTemplate) and other.template == self.template

    def __hash__(self) -> int:
        return hash(self.template)


# --------------------------------------------------------------------------- parsing


def _parse(template: str) -> list[str | _Expression]:
    parts: list[str | _Expression] = []
    pos = 0
    while pos < len(template):
        start = template.find("{", pos)
        stray_close = template.find("}", pos, start if start != -1 else len(template))
        if stray_close != -1:
            raise ValueError(f"unmatched '}}' at {stray_close} in URI template {template!r}")
        if start == -1:
            parts.append(template[pos:])
            break
        if start > pos:
            parts.append(template[pos:start])
        end = template.find("}", start)
        nested = template.find("{", start + 1, end if end != -1 else len(template))
        if end == -1 or nested != -1:
            raise ValueError(f"unclosed '{{' at {start} in URI template {template!r}")
        parts.append(_parse_expression(template[start + 1 : end], template))
        pos = end + 1
    return parts


def _parse_expression(body: str, template: str) -> _Expression:
    op = ""
    if body and body[0] in _OPERATORS:
        op, body = body[0], body[1:]
    elif body and body[0] in _RESERVED_OPERATORS:
        raise ValueError(f"reserved operator {body[0]!r} in URI template {template!r}")
    if not body:
        raise ValueError(f"empty expression in URI template {template!r}")
    specs = []
    for raw in body.split(","):
        m = _VARSPEC_RE.fullmatch(raw)
        if m is None:
            raise ValueError(f"invalid variable {raw!r} in URI template {template!r}")
        prefix = int(m.group(2)) if m.group(2) else None
        specs.append(_VarSpec(m.group(1), prefix, m.group(3) is not None))
    return _Expression(op, tuple(specs))


# --------------------------------------------------------------------------- expansion


def _expand_expression(expr: _Expression, values: Mapping[str, Any]) -> str:
    op = _OPERATOR_TABLE[expr.op]
    enc = _encode
    items: list[str] = []
    for spec in expr.varspecs:
        value: Any = values.get(spec.name)
        if _is_undefined(value):
            continue
        composite = isinstance(value, (Mapping, list, tuple))
        if composite and spec.prefix is not None:
            raise ValueError(f"prefix modifier on composite variable {spec.name!r}")
        if not composite:
            text = _scalar(value)
            if spec.prefix is not None:
                text = text[: spec.prefix]
            if op.named:
                items.append(spec.name + ("=" + enc(text, op.allow_reserved) if text else op.ifemp))
            else:
                items.append(enc(text, op.allow_reserved))
            continue
        if isinstance(value, Mapping):
            pairs = [(_scalar(k), _scalar(v)) for k, v in value.items() if v is not None]
        else:
            pairs = [("", _scalar(v)) for v in value if v is not None]
        is_map = isinstance(value, Mapping)
        if not spec.explode:
            if is_map:
                joined = ",".join(
                    f"{enc(k, op.allow_reserved)},{enc(v, op.allow_reserved)}" for k, v in pairs
                )
            else:
                joined = ",".join(enc(v, op.allow_reserved) for _, v in pairs)
            items.append(f"{spec.name}={joined}" if op.named else joined)
            continue
        exploded = []
        for k, v in pairs:
            key = enc(k, op.allow_reserved) if is_map else spec.name
            if op.named:
                exploded.append(key + ("=" + enc(v, op.allow_reserved) if v else op.ifemp))
            elif is_map:
                exploded.append(f"{key}={enc(v, op.allow_reserved)}")
            else:
                exploded.append(enc(v, op.allow_reserved))
        items.append(op.sep.join(exploded))
    if not items:
        return ""
    return op.first + op.sep.join(items)


# --------------------------------------------------------------------------- matching


def _literal_pattern(literal: str) -> str:
    encoded = _encode(literal, allow_reserved=True)
    if encoded == literal:
        return re.escape(literal)
    return f"(?:{re.escape(literal)}|{re.escape(encoded)})"


def _compile(parts: list[str | _Expression]) -> tuple[re.Pattern[str], list[_Capture]]:
    """One regex for the whole template; group ``i + 1`` feeds ``captures[i]``."""
    pattern: list[str] = []
    captures: list[_Capture] = []
    previous: _Expression | str | None = None
    for index, part in enumerate(parts):
        if isinstance(part, str):
            pattern.append(_literal_pattern(part))
        elif (
            _run_kind(part)
            and isinstance(previous, _Expression)
            and (_run_kind(previous) == _run_kind(part))
        ):
            # {?a}{&b}: one run of name=value pairs, read together and in any order.
            captures[-1] = _Capture("pairs", captures[-1].varspecs + part.varspecs)
        elif _run_kind(part) == "query":
            pattern.append(r"((?:[?&][^#]*)?)")
            captures.append(_Capture("pairs", part.varspecs))
        elif _run_kind(part) == "params":
            pattern.append(r"((?:;[^;/?#" + _opener_after(parts, index) + r"]*)*)")
            captures.append(_Capture("pairs", part.varspecs))
        else:
            stop, after = _opener_after(parts, index), _after_a_value(parts, index)
            pattern.append(_positional_pattern(part, captures, stop, after))
        previous = part
    return re.compile("".join(pattern), re.DOTALL), captures


# Per operator: leading text, separator, value class for a single / several variables.
_POSITIONAL = {
    "": ("", ",", r"[^/?#]", r"[^/?#,]"),
    "+": ("", ",", r"[^?#]", r"[^?#,]"),
    "#": ("#", ",", r".", r"[^,]"),
    ".": (".", ".", r"[^/?#]", r"[^/?#.]"),
    "/": ("/", "/", r"[^/?#]", r"[^/?#]"),
}


def _run_kind(expr: _Expression) -> str | None:
    """Operators whose variables are matched as unordered name=value pairs."""
    if expr.op in ("?", "&"):
        return "query"
    if expr.op == ";":
        return "params"
    return None


def _opener_after(parts: list[str | _Expression], index: int) -> str:
    """The character opening a ``{;params}`` or ``{&query}`` expression that directly follows
    ``parts[index]`` (past the rest of its own run of pairs), else "". A value expanded
    without reserved characters never holds that character unencoded, so its class leaves
    it out: otherwise ``{id}{;v}`` reads ``1;v=2`` as the id ``1;v=2``."""
    current = parts[index]
    kind = _run_kind(current) if isinstance(current, _Expression) else None
    for part in parts[index + 1 :]:
        if kind is not None and isinstance(part, _Expression) and _run_kind(part) == kind:
            continue  # read together with parts[index]
        if isinstance(part, _Expression) and part.op in (";", "&"):
            return part.op
        return ""
    return ""


def _after_a_value(parts: list[str | _Expression], index: int) -> str:
    """A regex of the text that separates ``parts[index]`` from a value before it (``-`` in
    ``{a}-{b}``, ``.`` in ``{a}{.b}``), else "". The later value is then read as one
    without that text: the earlier takes all it can, as before, and a URI that fits
    nowhere is refused in linear time, not after trying every split (``{a}-{b}-{c}``
    took minutes over a few thousand characters, the event loop held all along)."""
    current = parts[index]
    before = parts[index - 1] if index else None
    if isinstance(current, _Expression) and current.op == "." and _may_hold(before, "."):
        return re.escape(".")
    if index < 2 or not isinstance(before, str) or not _may_hold(parts[index - 2], before):
        return ""
    if not isinstance(current, _Expression) or current.op not in ("", "+"):
        return ""  # its value comes after its own leading character
    return _literal_pattern(before)


def _may_hold(part: str | _Expression | None, text: str) -> bool:
    """Whether the value of ``part`` (a positional expression) may go on with ``text``."""
    if not isinstance(part, _Expression) or _run_kind(part) is not None or not text:
        return False
    return re.fullmatch(_POSITIONAL[part.op][2], text[0], re.DOTALL) is not None


def _positional_pattern(
    expr: _Expression, captures: list[_Capture], stop: str = "", after: str = ""
) -> str:
    first, sep, single_cls, multi_cls = _POSITIONAL[expr.op]
    if stop and expr.op in ("", ".", "/"):  # "+" and "#" pass reserved characters through
        single_cls, multi_cls = single_cls[:-1] + stop + "]", multi_cls[:-1] + stop + "]"
    if after:
        single_cls, multi_cls = f"(?:(?!{after}){single_cls})", f"(?:(?!{after}){multi_cls})"
    cls = single_cls if len(expr.varspecs) == 1 else multi_cls
    pieces = []
    for i, spec in enumerate(expr.varspecs):
        if spec.explode:
            # A list: items (which cannot hold the separator) joined by the separator.
            group = f"({multi_cls}+(?:{re.escape(sep)}{multi_cls}+)*)"
            captures.append(_Capture("value", (spec,), split=sep))
        else:
            group = f"({cls}+)"
            captures.append(_Capture("value", (spec,)))
        if i == 0:
            pieces.append(group)
        else:
            pieces.append(f"(?:{re.escape(sep)}{group})?")
    body = "".join(pieces)
    if expr.op in ("", "+"):
        return body  # a bare value: required
    return f"(?:{re.escape(first)}{body})?"


def _read_pairs(raw: str, specs: tuple[_VarSpec, ...], result: dict[str, str | list[str]]) -> None:
    """Fill ``result`` from ``;a=1;b`` or ``?a=1&b=2`` text, in any order."""
    if not raw:
        return
    wanted = {spec.name: spec for spec in specs}
    sep = ";" if raw[0] == ";" else "&"
    for item in raw[1:].split(sep):  # raw starts with its operator character
        name, has_value, value = item.partition("=")
        spec = wanted.get(name)
        if spec is None:
            continue  # a parameter the template does not name
        decoded = unquote(value) if has_value else ""
        if spec.explode:
            current = result.setdefault(name, [])
            if isinstance(current, list):
                current.append(decoded)
        elif name not in result:
            result[name] = decoded

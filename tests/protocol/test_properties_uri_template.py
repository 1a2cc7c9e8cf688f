"""Property tests of RFC 6570 URI templates (mcpkit.protocol._uri_template) over generated
templates: expansion always gives URI characters, matching gives back what was expanded
wherever the URI can tell (the module docstring lists where it cannot), and neither ever
fails other than as documented. tests/protocol/test_uri_template.py has the RFC examples."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from mcpkit.protocol._uri_template import UriTemplate
from tests.protocol._budget import fuzz_settings

# RFC 3986 section 2: what a URI is made of.
_URI = re.compile(r"(?:[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=]|%[0-9A-Fa-f]{2})*")

_any_text = st.text(st.characters(codec="utf-8"), max_size=12)
_some_text = _any_text.filter(bool)
# Reserved ({+var}) and fragment ({#var}) expansion pass reserved characters and %XX
# through as they are, so a value holding "%" cannot come back decoded; "?" and "#" would end
# the path and the query.
_reserved_text = st.text(
    st.characters(codec="utf-8", exclude_characters="%?#"),
    min_size=1,
    max_size=12,
)
_fragment_text = st.text(
    st.characters(codec="utf-8", exclude_characters="%"),
    min_size=1,
    max_size=12,
)


@dataclass
class _Case:
    """A template built piece by piece, the values it is expanded with, and what matching
    the expansion must give back."""

    template: str = "res://"
    values: dict[str, Any] = field(default_factory=dict)
    expected: dict[str, Any] = field(default_factory=dict)

    def add(self, pattern: str, *values: Any, expected: list[Any] | None = None) -> None:
        # Distinct names, some in the RFC's dotted and underscored forms.
        first = len(self.values)
        forms = ("v{}", "a.b{}", "_{}")
        names = [forms[n % 3].format(n) for n in range(first, first + len(values))]
        for name, value, back in zip(names, values, expected or list(values)):
            self.values[name] = value
            self.expected[name] = back
        self.template += pattern.format(*names)


@st.composite
def _cases(draw: st.DrawFn) -> _Case:
    case = _Case()
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        kind = draw(st.sampled_from(["literal", "simple", "pair", "prefix", "path", "label"]))
        if kind == "literal":
            case.template += "/" + draw(st.sampled_from(["files", "v1", "x-y", "~u", "a.b"]))
        elif kind == "simple":
            case.add("/{{{}}}", draw(_some_text))
        elif kind == "pair":
            case.add("/{{{},{}}}", draw(_some_text), draw(_some_text))
        elif kind == "prefix":
            length = draw(st.integers(min_value=1, max_value=5))
            value = draw(_some_text)
            case.add(f"/{{{{{{}}:{length}}}}}", value, expected=[value[:length]])
        elif kind == "path":
            case.add("{{/{},{}}}", draw(_some_text), draw(_some_text))
        else:
            case.add("/lbl{{.{}}}", draw(_some_text))
    tail = draw(st.sampled_from(["", "params", "reserved", "segments"]))
    if tail == "params":
        case.add("{{;{},{}}}", draw(_any_text), draw(_any_text))
    elif tail == "reserved":
        case.add("/{{+{}}}", draw(_reserved_text))
    elif tail == "segments":
        case.add("{{/{}*}}", draw(st.lists(_some_text, min_size=1, max_size=3)))
    query = draw(st.sampled_from(["", "form", "continuation"]))
    if query == "form":
        case.add("{{?{},{}}}", draw(_any_text), draw(_any_text))
        if draw(st.booleans()):
            case.add("{{&{}*}}", draw(st.lists(_any_text, min_size=1, max_size=3)))
    elif query == "continuation":
        # {&x} may also open the query itself, except after {+x}, whose value may hold "&".
        case.template += "?fixed=1" if tail == "reserved" else draw(st.sampled_from(["?k=1", ""]))
        case.add("{{&{}}}", draw(_any_text))
    if draw(st.booleans()):
        case.add("{{#{}}}", draw(_fragment_text))
    return case


@given(_cases())
@fuzz_settings
@example(_Case("res://{v0}{;a.b1}", {"v0": "1", "a.b1": "2"}, {"v0": "1", "a.b1": "2"}))
@example(_Case("res://{v0}{?a.b1}", {"v0": "?#&=", "a.b1": "&="}, {"v0": "?#&=", "a.b1": "&="}))
def test_matching_an_expansion_gives_the_values_back(case: _Case) -> None:
    template = UriTemplate(case.template)
    uri = template.expand(case.values)
    assert _URI.fullmatch(uri), uri
    assert template.match(uri) == case.expected
    assert template.variables == tuple(case.values)


# --------------------------------------------------------------------------- any template

_operators = st.sampled_from(["", "+", "#", ".", "/", ";", "?", "&"])
_varnames = st.sampled_from(["a", "b", "x.y", "_z", "%41b", "list", "keys"])
_varspecs = st.builds(
    lambda name, modifier: name + modifier,
    _varnames,
    st.sampled_from(["", "*", ":1", ":3", ":9999"]),
)
_expressions = st.builds(
    lambda op, specs: "{" + op + ",".join(specs) + "}",
    _operators,
    st.lists(_varspecs, min_size=1, max_size=3),
)
_literals = st.text(st.characters(codec="utf-8", exclude_characters="{}"), max_size=6)
_templates = st.lists(_expressions | _literals, max_size=5).map("".join)
_values = st.dictionaries(
    _varnames.map(lambda n: n.split(":")[0]),
    st.none()
    | st.integers()
    | st.booleans()
    | st.floats()
    | _any_text
    | st.lists(st.none() | _any_text, max_size=3)
    | st.dictionaries(_any_text, st.none() | _any_text, max_size=3),
    max_size=6,
)


@given(_templates, _values)
@fuzz_settings
@example("{keys:3}", {"keys": {"a": "b"}})
@example("50%{+a}é", {"a": "100%"})
def test_any_expansion_is_made_of_uri_characters_or_refuses_a_prefix_on_a_composite(
    text: str, values: dict[str, Any]
) -> None:
    template = UriTemplate(text)
    try:
        uri = template.expand(values)
    except ValueError as exc:
        assert "prefix" in str(exc)  # RFC 6570 2.4.1: no prefix on a list or a map
        return
    assert _URI.fullmatch(uri), uri


@given(
    _templates,
    st.text(max_size=40) | _cases().map(lambda c: UriTemplate(c.template).expand(c.values)),
)
@fuzz_settings
def test_matching_any_text_gives_strings_and_lists_of_the_template_variables_or_none(
    text: str, uri: str
) -> None:
    template = UriTemplate(text)
    result = template.match(uri)
    if result is None:
        return
    assert set(result) <= set(template.variables)
    for value in result.values():
        assert isinstance(value, str) or (
            isinstance(value, list) and all(isinstance(item, str) for item in value)
        )


@given(st.text(max_size=30))
@fuzz_settings
@example("{a}}")
@example("{{a}")
@example("{a:0}")
def test_parsing_any_text_gives_a_template_or_a_value_error(text: str) -> None:
    try:
        template = UriTemplate(text)
    except ValueError:
        assert "{" in text or "}" in text  # only an expression can be malformed
        return
    assert template.template == text
    assert UriTemplate.is_template(text) == bool(template.variables)


@pytest.mark.parametrize("op", ["", "+", "#", ".", "/", ";", "?", "&"])
def test_undefined_variables_expand_to_nothing_for_every_operator(op: str) -> None:
    template = UriTemplate("x{" + op + "a,b}y")
    assert template.expand({}) == "xy"
    assert template.expand({"a": None, "b": [], "c": "z"}) == "xy"

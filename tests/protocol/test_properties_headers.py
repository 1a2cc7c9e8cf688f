"""Property tests of the SEP-2243 request headers (mcpkit.protocol._headers): values the
client encodes are always legal HTTP field values and decode back; plain values stay plain;
the headers a client builds always pass the server's header-versus-body check, and a header
that disagrees with the body never does. The rules are the 2026-07-28 Streamable HTTP
"Value Encoding" and "Server Validation" sections (SEP-2243)."""

from __future__ import annotations

import base64
import re
from typing import Any

import pytest
from hypothesis import assume, example, given
from hypothesis import strategies as st

from mcpkit.protocol._headers import (
    NAME_FIELDS,
    check_request_headers,
    decode_value,
    encode_value,
    header_annotations,
    request_headers,
)
from tests.protocol._budget import fuzz_settings

# RFC 9110 5.5 field-value, as the SEP narrows it for what a client sends: visible ASCII and
# inner spaces only (no tab, no obs-text), nothing leading or trailing.
_FIELD_VALUE = re.compile(r"(?:[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?)?\Z")
_TCHAR = "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
_MAX_SAFE = 2**53 - 1

_text = st.text(st.characters(codec="utf-8"), max_size=20)
_ascii = st.text(st.characters(min_codepoint=0, max_codepoint=0x7F), max_size=20)
_tricky = st.sampled_from(
    [
        "",
        " ",
        "\t",
        "a\tb",
        "a\n",
        "line1\nline2",
        "line1\r\nline2",
        " us-west1 ",
        "us west 1",
        "=?base64?literal?=",
        "=?base64?=",
        "=?base64?",
        "?=",
        "=?BASE64?SGVsbG8=?=",
        "日本語",
        "\x00",
        "\x7f",
    ]
)
_values = _text | _ascii | _tricky


def _plain(value: str) -> bool:
    """SEP-2243 "Encoding Rules": sent as is unless it has leading/trailing whitespace, a
    character outside 0x20-0x7E (non-ASCII or control, tab included), or looks like the
    sentinel."""
    return (
        all(0x20 <= ord(c) <= 0x7E for c in value)
        and value == value.strip(" \t")
        and not (value.startswith("=?base64?") and value.endswith("?="))
    )


# --------------------------------------------------------------------------- value encoding


@given(_values)
@fuzz_settings
@example("a\n")
@example("a\tb")
@example("")
@example("=?base64?=")
def test_an_encoded_value_is_a_legal_header_that_decodes_back(value: str) -> None:
    encoded = encode_value(value)
    assert _FIELD_VALUE.match(encoded), f"{encoded!r} is not a header value a client may send"
    assert decode_value(encoded) == value
    # Intermediaries may add or trim surrounding whitespace: the value survives that too.
    assert decode_value(f" \t{encoded}\t ") == value
    if _plain(value):
        assert encoded == value
    else:
        assert encoded == "=?base64?" + base64.b64encode(value.encode()).decode() + "?="


@given(_text)
@fuzz_settings
@example("=?base64?SGVsbG8?=")  # bad padding
@example("=?base64?SGVs!!!bG8=?=")  # bad characters
@example("=?base64?/w==?=")  # not UTF-8
def test_decoding_any_text_gives_a_value_or_a_value_error(text: str) -> None:
    try:
        decoded = decode_value(text)
    except ValueError:
        assert text.strip(" \t").startswith("=?base64?")
        return
    if not re.fullmatch(r"=\?base64\?.*\?=", text.strip(" \t"), re.DOTALL):
        assert decoded == text.strip(" \t")  # anything else is a literal


# --------------------------------------------------------------------------- client vs server

_names = st.text(_TCHAR, min_size=1, max_size=8)
_scalars = _values | st.booleans() | st.integers(min_value=-_MAX_SAFE, max_value=_MAX_SAFE)


@st.composite
def _calls(draw: st.DrawFn) -> tuple[str, dict[str, Any], list[tuple[str, tuple[str, ...]]]]:
    """A request, its params, and x-mcp-header annotations over (nested) argument paths."""
    method = draw(st.sampled_from([*NAME_FIELDS, "tools/list", "ping"]))
    params: dict[str, Any] = {}
    if method in NAME_FIELDS:
        params[NAME_FIELDS[method]] = draw(_values)
    annotations: list[tuple[str, tuple[str, ...]]] = []
    if method == "tools/call":
        arguments: dict[str, Any] = {}
        header_names = draw(st.lists(_names, max_size=4, unique_by=lambda n: n.lower()).map(sorted))
        for i, header in enumerate(header_names):
            path = ("outer", f"p{i}") if i % 2 else (f"p{i}",)
            annotations.append((header, path))
            if draw(st.booleans()):  # a missing argument sends no header
                target = arguments.setdefault("outer", {}) if len(path) == 2 else arguments
                target[path[-1]] = draw(_scalars)
        params["arguments"] = arguments
    return method, params, annotations


def _lowered(headers: dict[str, str]) -> dict[str, str]:
    return {name.lower(): value for name, value in headers.items()}  # as ASGI gives them


@given(_calls())
@fuzz_settings
def test_the_headers_a_client_builds_pass_the_server_check(
    call: tuple[str, dict[str, Any], list[tuple[str, tuple[str, ...]]]],
) -> None:
    method, params, annotations = call
    headers = request_headers(method, params, annotations)
    for value in headers.values():
        assert _FIELD_VALUE.match(value), f"{value!r} is not a header value a client may send"
    assert check_request_headers(method, params, _lowered(headers), annotations) is None


@given(_calls(), _values, st.data())
@fuzz_settings
def test_a_header_that_disagrees_with_the_body_is_refused(
    call: tuple[str, dict[str, Any], list[tuple[str, tuple[str, ...]]]],
    other: str,
    data: st.DataObject,
) -> None:
    method, params, annotations = call
    headers = _lowered(request_headers(method, params, annotations))
    mirrored = sorted(name for name in headers if name != "mcp-method")
    assume(mirrored)
    name = data.draw(st.sampled_from(mirrored))
    assume(decode_value(headers[name]) != other)
    if name.startswith("mcp-param-"):
        # An integer is compared numerically: keep "other" from being the same number.
        assume(not re.fullmatch(r"[+-]?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?", other.strip(" \t")))
    headers[name] = encode_value(other)
    assert check_request_headers(method, params, headers, annotations) is not None
    del headers[name]  # a value in the body with no header is refused too
    assert check_request_headers(method, params, headers, annotations) is not None


@given(st.integers(min_value=-_MAX_SAFE, max_value=_MAX_SAFE), st.data())
@fuzz_settings
def test_an_integer_header_is_compared_numerically(number: int, data: st.DataObject) -> None:
    annotations = [("Count", ("count",))]
    params = {"name": "t", "arguments": {"count": number}}
    digits = str(abs(number))
    sign = "-" if number < 0 else data.draw(st.sampled_from(["", "+"]))
    same = data.draw(
        st.sampled_from(
            [f"{sign}{digits}", f"{sign}0{digits}", f"{sign}{digits}.0", f"{sign}{digits}.000"]
        )
    )
    headers = {"mcp-method": "tools/call", "mcp-name": "t", "mcp-param-count": same}
    assert check_request_headers("tools/call", params, headers, annotations) is None
    for different in (str(number + 1), f"{number}.5", f"{digits[:1]}_{digits[1:]}", "1e", ""):
        headers["mcp-param-count"] = different
        assert check_request_headers("tools/call", params, headers, annotations) is not None


@given(_text.filter(lambda v: not v.isascii()))
@fuzz_settings
@example("é")
def test_a_raw_header_with_characters_outside_ascii_is_refused_even_when_equal(
    value: str,
) -> None:
    # "Servers MUST reject requests with a recognized Mcp-Param-{Name} header that contains
    # invalid characters": ASGI hands over latin-1 text, which may equal the body's value.
    params = {"name": value, "arguments": {"r": value}}
    headers = {"mcp-method": "tools/call", "mcp-name": encode_value(value), "mcp-param-r": value}
    assert check_request_headers("tools/call", params, headers, [("R", ("r",))]) is not None
    headers = {"mcp-method": "tools/call", "mcp-name": value}
    assert check_request_headers("tools/call", params, headers) is not None


# --------------------------------------------------------------------------- annotations


@given(
    st.lists(_names, min_size=1, max_size=4, unique_by=lambda n: n.lower()),
    st.sampled_from(["string", "integer", "boolean"]),
)
@fuzz_settings
def test_token_names_on_primitive_properties_are_accepted(names: list[str], kind: str) -> None:
    schema = {
        "type": "object",
        "properties": {
            f"p{i}": {"type": kind, "x-mcp-header": name} for i, name in enumerate(names)
        },
    }
    assert header_annotations(schema) == [(name, (f"p{i}",)) for i, name in enumerate(names)]


@given(_names, _names, st.text(max_size=3))
@fuzz_settings
@example("Region", "", "\n")
@example("Region", "", " ")
@example("R", "gion", "é")
@example("", "", "")
def test_a_name_that_is_not_a_token_is_refused(before: str, after: str, bad: str) -> None:
    name = before + bad + after
    assume(not re.fullmatch(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+", name))
    schema = {"type": "object", "properties": {"r": {"type": "string", "x-mcp-header": name}}}
    with pytest.raises(ValueError):
        header_annotations(schema)


@given(_names)
@fuzz_settings
def test_names_differing_only_in_case_are_refused(name: str) -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "string", "x-mcp-header": name},
            "b": {"type": "string", "x-mcp-header": name.swapcase()},
        },
    }
    with pytest.raises(ValueError):
        header_annotations(schema)


@pytest.mark.parametrize(
    "place",
    [
        {"type": "array", "items": {"type": "string", "x-mcp-header": "H"}},
        {"anyOf": [{"type": "string", "x-mcp-header": "H"}]},
        {"type": "number", "x-mcp-header": "H"},
        {"type": "object", "x-mcp-header": "H"},
        {"type": "null", "x-mcp-header": "H"},
    ],
)
def test_an_annotation_off_a_primitive_properties_chain_is_refused(place: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        header_annotations({"type": "object", "properties": {"p": place}})

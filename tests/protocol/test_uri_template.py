"""RFC 6570 URI templates: the RFC's expansion examples, matching, and round-trip properties."""

from __future__ import annotations

import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpkit.protocol._uri_template import UriTemplate

# The variable set of RFC 6570 section 3.2.
RFC_VALUES = {
    "count": ["one", "two", "three"],
    "dom": ["example", "com"],
    "dub": "me/too",
    "hello": "Hello World!",
    "half": "50%",
    "var": "value",
    "who": "fred",
    "base": "http://example.com/home/",
    "path": "/foo/bar",
    "list": ["red", "green", "blue"],
    "keys": {"semi": ";", "dot": ".", "comma": ","},
    "v": "6",
    "x": "1024",
    "y": "768",
    "empty": "",
    "empty_keys": {},
    "undef": None,
}

RFC_EXAMPLES = [
    # 3.2.1 variable expansion
    ("{count}", "one,two,three"),
    ("{count*}", "one,two,three"),
    ("{/count}", "/one,two,three"),
    ("{/count*}", "/one/two/three"),
    ("{;count}", ";count=one,two,three"),
    ("{;count*}", ";count=one;count=two;count=three"),
    ("{?count}", "?count=one,two,three"),
    ("{?count*}", "?count=one&count=two&count=three"),
    ("{&count*}", "&count=one&count=two&count=three"),
    # 3.2.2 simple string expansion
    ("{var}", "value"),
    ("{hello}", "Hello%20World%21"),
    ("{half}", "50%25"),
    ("O{empty}X", "OX"),
    ("O{undef}X", "OX"),
    ("{x,y}", "1024,768"),
    ("{x,hello,y}", "1024,Hello%20World%21,768"),
    ("?{x,empty}", "?1024,"),
    ("?{x,undef}", "?1024"),
    ("?{undef,y}", "?768"),
    ("{var:3}", "val"),
    ("{var:30}", "value"),
    ("{list}", "red,green,blue"),
    ("{list*}", "red,green,blue"),
    ("{keys}", "semi,%3B,dot,.,comma,%2C"),
    ("{keys*}", "semi=%3B,dot=.,comma=%2C"),
    # 3.2.3 reserved expansion
    ("{+var}", "value"),
    ("{+hello}", "Hello%20World!"),
    ("{+half}", "50%25"),
    ("{base}index", "http%3A%2F%2Fexample.com%2Fhome%2Findex"),
    ("{+base}index", "http://example.com/home/index"),
    ("O{+empty}X", "OX"),
    ("O{+undef}X", "OX"),
    ("{+path}/here", "/foo/bar/here"),
    ("here?ref={+path}", "here?ref=/foo/bar"),
    ("up{+path}{var}/here", "up/foo/barvalue/here"),
    ("{+x,hello,y}", "1024,Hello%20World!,768"),
    ("{+path,x}/here", "/foo/bar,1024/here"),
    ("{+path:6}/here", "/foo/b/here"),
    ("{+list}", "red,green,blue"),
    ("{+list*}", "red,green,blue"),
    ("{+keys}", "semi,;,dot,.,comma,,"),
    ("{+keys*}", "semi=;,dot=.,comma=,"),
    # 3.2.4 fragment expansion
    ("{#var}", "#value"),
    ("{#hello}", "#Hello%20World!"),
    ("{#half}", "#50%25"),
    ("foo{#empty}", "foo#"),
    ("foo{#undef}", "foo"),
    ("{#x,hello,y}", "#1024,Hello%20World!,768"),
    ("{#path,x}/here", "#/foo/bar,1024/here"),
    ("{#path:6}/here", "#/foo/b/here"),
    ("{#list}", "#red,green,blue"),
    ("{#list*}", "#red,green,blue"),
    ("{#keys}", "#semi,;,dot,.,comma,,"),
    ("{#keys*}", "#semi=;,dot=.,comma=,"),
    # 3.2.5 label expansion
    ("{.who}", ".fred"),
    ("{.who,who}", ".fred.fred"),
    ("{.half,who}", ".50%25.fred"),
    ("www{.dom*}", "www.example.com"),
    ("X{.var}", "X.value"),
    ("X{.empty}", "X."),
    ("X{.undef}", "X"),
    ("X{.var:3}", "X.val"),
    ("X{.list}", "X.red,green,blue"),
    ("X{.list*}", "X.red.green.blue"),
    ("X{.keys}", "X.semi,%3B,dot,.,comma,%2C"),
    ("X{.keys*}", "X.semi=%3B.dot=..comma=%2C"),
    ("X{.empty_keys}", "X"),
    ("X{.empty_keys*}", "X"),
    # 3.2.6 path segment expansion
    ("{/who}", "/fred"),
    ("{/who,who}", "/fred/fred"),
    ("{/half,who}", "/50%25/fred"),
    ("{/who,dub}", "/fred/me%2Ftoo"),
    ("{/var}", "/value"),
    ("{/var,empty}", "/value/"),
    ("{/var,undef}", "/value"),
    ("{/var,x}/here", "/value/1024/here"),
    ("{/var:1,var}", "/v/value"),
    ("{/list}", "/red,green,blue"),
    ("{/list*}", "/red/green/blue"),
    ("{/list*,path:4}", "/red/green/blue/%2Ffoo"),
    ("{/keys}", "/semi,%3B,dot,.,comma,%2C"),
    ("{/keys*}", "/semi=%3B/dot=./comma=%2C"),
    # 3.2.7 path-style parameter expansion
    ("{;who}", ";who=fred"),
    ("{;half}", ";half=50%25"),
    ("{;empty}", ";empty"),
    ("{;v,empty,who}", ";v=6;empty;who=fred"),
    ("{;v,bar,who}", ";v=6;who=fred"),
    ("{;x,y}", ";x=1024;y=768"),
    ("{;x,y,empty}", ";x=1024;y=768;empty"),
    ("{;x,y,undef}", ";x=1024;y=768"),
    ("{;hello:5}", ";hello=Hello"),
    ("{;list}", ";list=red,green,blue"),
    ("{;list*}", ";list=red;list=green;list=blue"),
    ("{;keys}", ";keys=semi,%3B,dot,.,comma,%2C"),
    ("{;keys*}", ";semi=%3B;dot=.;comma=%2C"),
    # 3.2.8 form-style query expansion
    ("{?who}", "?who=fred"),
    ("{?half}", "?half=50%25"),
    ("{?x,y}", "?x=1024&y=768"),
    ("{?x,y,empty}", "?x=1024&y=768&empty="),
    ("{?x,y,undef}", "?x=1024&y=768"),
    ("{?var:3}", "?var=val"),
    ("{?list}", "?list=red,green,blue"),
    ("{?list*}", "?list=red&list=green&list=blue"),
    ("{?keys}", "?keys=semi,%3B,dot,.,comma,%2C"),
    ("{?keys*}", "?semi=%3B&dot=.&comma=%2C"),
    # 3.2.9 form-style query continuation
    ("{&who}", "&who=fred"),
    ("{&half}", "&half=50%25"),
    ("?fixed=yes{&x}", "?fixed=yes&x=1024"),
    ("{&x,y,empty}", "&x=1024&y=768&empty="),
    ("{&var:3}", "&var=val"),
    ("{&list}", "&list=red,green,blue"),
    ("{&list*}", "&list=red&list=green&list=blue"),
    ("{&keys}", "&keys=semi,%3B,dot,.,comma,%2C"),
    ("{&keys*}", "&semi=%3B&dot=.&comma=%2C"),
]


@pytest.mark.parametrize(("template", "expected"), RFC_EXAMPLES)
def test_rfc6570_expansion_examples(template: str, expected: str) -> None:
    assert UriTemplate(template).expand(RFC_VALUES) == expected


def test_expand_non_string_scalars_and_unicode() -> None:
    t = UriTemplate("res://{a}/{b}{?c}")
    assert t.expand({"a": 7, "b": True, "c": 1.5}) == "res://7/true?c=1.5"
    assert UriTemplate("{x}").expand({"x": "é/ü"}) == "%C3%A9%2F%C3%BC"
    assert UriTemplate("{x:1}").expand({"x": "éa"}) == "%C3%A9"  # prefix counts characters


def test_prefix_on_composite_value_is_an_error() -> None:
    with pytest.raises(ValueError):
        UriTemplate("{list:2}").expand({"list": ["a", "b"]})


def test_literals_outside_the_allowed_set_are_encoded() -> None:
    assert UriTemplate("a b/{x}").expand({"x": "1"}) == "a%20b/1"
    assert UriTemplate("a b/{x}").match("a b/1") == {"x": "1"}
    assert UriTemplate("a b/{x}").match("a%20b/1") == {"x": "1"}


@pytest.mark.parametrize(
    "template",
    [
        "{",
        "}",
        "a{b",
        "a}b",
        "{a{b}}",
        "{}",
        "{+}",
        "{a,}",
        "{=a}",
        "{|a}",
        "{a b}",
        "{a:0}",
        "{a:10000}",
        "{a*:3}",
        "{a.}",
        "{.a..b}",
        "{-a}",
    ],
)
def test_malformed_templates_raise(template: str) -> None:
    with pytest.raises(ValueError):
        UriTemplate(template)


def test_variables_in_order_of_first_appearance() -> None:
    t = UriTemplate("{a}/{+b}{/a,c*}{?d,b}")
    assert t.variables == ("a", "b", "c", "d")
    assert t.template == "{a}/{+b}{/a,c*}{?d,b}"


def test_is_template() -> None:
    assert UriTemplate.is_template("file:///{path}")
    assert UriTemplate.is_template("x{?q}")
    assert not UriTemplate.is_template("file:///etc/hosts")
    assert not UriTemplate.is_template("weird{}")


# --------------------------------------------------------------------------- matching


@pytest.mark.parametrize(
    ("template", "uri", "expected"),
    [
        ("file:///{name}", "file:///notes.txt", {"name": "notes.txt"}),
        ("file:///{name}", "file:///a/b", None),  # a simple variable is one segment
        ("file:///{name}", "file:///", None),  # ...and not empty
        ("file:///{+path}", "file:///a/b/c.txt", {"path": "a/b/c.txt"}),
        ("users://{id}/profile", "users://42/profile", {"id": "42"}),
        ("users://{id}/profile", "users://42/settings", None),
        ("users://{id}", "users://a%20b%2Fc", {"id": "a b/c"}),
        ("db://{table}/{id}.json", "db://users/7.json", {"table": "users", "id": "7"}),
        ("api://{x,y}", "api://1,2", {"x": "1", "y": "2"}),
        ("api://{x,y}", "api://1", {"x": "1"}),
        ("p{/seg*}", "p/a/b/c", {"seg": ["a", "b", "c"]}),
        ("p{/seg*}", "p", {}),
        ("p{/a,b}", "p/1/2", {"a": "1", "b": "2"}),
        ("host{.dom*}", "host.example.com", {"dom": ["example", "com"]}),
        ("doc{#frag}", "doc#sec/1,2", {"frag": "sec/1,2"}),
        ("doc{#frag}", "doc", {}),
        ("m{;x,y}", "m;y=2;x=1", {"x": "1", "y": "2"}),
        ("m{;x,y}", "m;x", {"x": ""}),
        ("s://q{?query,limit}", "s://q?limit=10&query=cats", {"query": "cats", "limit": "10"}),
        ("s://q{?query,limit}", "s://q?query=a%26b", {"query": "a&b"}),
        ("s://q{?query,limit}", "s://q", {}),
        ("s://q{?query,limit}", "s://q?other=1&query=x", {"query": "x"}),
        ("s://q{?query}{&page}", "s://q?page=2&query=x", {"query": "x", "page": "2"}),
        ("s://q{?tag*}", "s://q?tag=a&tag=b", {"tag": ["a", "b"]}),
        ("s://q?fixed=1{&page}", "s://q?fixed=1&page=3", {"page": "3"}),
        ("s://q{?query}", "s://r?query=x", None),
        (
            "r://{owner}/{repo}/{+path}{?ref}",
            "r://me/proj/src/a.py?ref=main",
            {"owner": "me", "repo": "proj", "path": "src/a.py", "ref": "main"},
        ),
        ("static://readme", "static://readme", {}),
        ("static://readme", "static://readme2", None),
        ("{/var:1,var}", "/v/value", {"var": "value"}),
    ],
)
def test_match(template: str, uri: str, expected: dict | None) -> None:
    assert UriTemplate(template).match(uri) == expected


# --------------------------------------------------------------------------- properties

_any_value = st.text(min_size=1, max_size=30)
# Reserved expansion passes reserved characters through: keep '?', '#' (query/fragment
# boundaries), '%' (would read as an escape) and ',' (the separator) out of the values.
_reserved_value = st.text(
    alphabet=st.characters(blacklist_characters="?#%,", blacklist_categories=("Cs",)),
    min_size=1,
    max_size=30,
)
_names = st.sampled_from(["a", "b", "id", "user_id", "x1"])


@given(st.dictionaries(_names, _any_value, min_size=1, max_size=4))
@settings(max_examples=300)
def test_simple_template_round_trips(values: dict[str, str]) -> None:
    # Simple expansion percent-encodes everything but unreserved characters, so any text works.
    names = list(values)
    template = UriTemplate("res://" + "/".join("{" + n + "}" for n in names) + "/end")
    assert template.match(template.expand(values)) == values
    joined = UriTemplate("res://{" + ",".join(names) + "}")
    assert joined.match(joined.expand(values)) == values


@given(
    _any_value,
    _reserved_value,
    st.dictionaries(st.sampled_from(["q", "limit", "page"]), _any_value, max_size=3),
)
@settings(max_examples=300)
def test_reserved_and_query_template_round_trips(
    owner: str, path: str, query: dict[str, str]
) -> None:
    template = UriTemplate("repo://{owner}/tree/{+path}{?q,limit,page}")
    values = {"owner": owner, "path": path, **query}
    assert template.match(template.expand(values)) == values


@given(st.lists(_any_value, min_size=1, max_size=5), st.lists(_any_value, min_size=1, max_size=3))
def test_exploded_lists_round_trip(segments: list[str], tags: list[str]) -> None:
    template = UriTemplate("files{/segments*}{?tag*}")
    values = {"segments": segments, "tag": tags}
    assert template.match(template.expand(values)) == values


_templates = st.sampled_from(
    [t for t, _ in RFC_EXAMPLES]
    + ["file:///{+path}", "users://{id}/profile{?fields*}", "x{#f}", "m{;a,b}{?c}{&d}"]
)


@given(_templates, st.text(max_size=60))
@settings(max_examples=500)
def test_match_never_raises(template: str, uri: str) -> None:
    result = UriTemplate(template).match(uri)
    assert result is None or isinstance(result, dict)


@given(st.text(max_size=40))
def test_parse_either_succeeds_or_raises_value_error(text: str) -> None:
    try:
        template = UriTemplate(text)
    except ValueError:
        return
    assert template.match(text) is None or isinstance(template.match(text), dict)


def test_simple_exploded_names_only_the_simple_expansion_stars() -> None:
    # What the server warns about: FastMCP's {path*} wildcard, which RFC 6570 reads otherwise.
    assert UriTemplate("f://{path*}").simple_exploded() == ("path",)
    assert UriTemplate("f://{a,b*}/{c}").simple_exploded() == ("b",)
    assert UriTemplate("f://{+path}{/seg*}{.ext*}{?tag*}{#frag*}").simple_exploded() == ()
    assert UriTemplate("f://{path*}").match("f://a/b") is None  # one segment, as RFC 6570


def test_match_is_cheap_on_long_input() -> None:
    # Adversarial input for adjacent variables must not blow up (classes exclude separators).
    t = UriTemplate("r://{a}/{b}/{+c}{?q}")
    uri = "r://" + "x" * 5000 + "/" + "y" * 5000 + "/" + "z/" * 2000 + "?q=" + "w" * 5000
    assert t.match(uri) is not None
    assert t.match("r://" + "x" * 20000) is None


LINEAR = [
    ("w://{city}-{date}-{unit}", "-", {"city": "new-york-2024", "date": "01", "unit": "c"}),
    ("f://{name}.{ext}", ".", {"name": "archive.tar", "ext": "gz"}),
    ("f://{name}{.ext}", ".", {"name": "archive.tar.gz"}),
    ("t://{+dir}/{+name}", "/", {"dir": "a/b", "name": "c"}),
    ("u://{user}@{host}:{port}", "@", {"user": "a@b", "host": "h", "port": "1"}),
]


@pytest.mark.parametrize(("template", "separator", "expected"), LINEAR)
def test_values_split_by_a_literal_match_in_linear_time(
    template: str, separator: str, expected: dict[str, str]
) -> None:
    """Each split was tried in turn: a URI that fits nowhere cost the square (two values)
    or the cube (three) of its length, minutes for a few thousand characters, on the
    server's event loop. The earlier value still takes all it can."""
    t = UriTemplate(template)
    assert t.match(t.expand(expected)) == expected
    prefix = template.split("{", 1)[0]
    assert t.match(prefix + ("x" + separator) * 100_000 + "x?#/") is None
    assert t.match(prefix + ("x" + separator) * 100_000 + "/") is None


def test_alphabet_sanity() -> None:
    assert set(string.ascii_letters) <= set(UriTemplate("{x}").expand({"x": string.ascii_letters}))

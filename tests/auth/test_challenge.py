"""``WWW-Authenticate`` parsing and building (RFC 9110 §11.6.1, RFC 6750 §3, RFC 9449 §7.1)."""

from __future__ import annotations

from mcpkit.auth import build_challenge, find_challenge, parse_www_authenticate


def test_parameters_quoted_and_plain():
    [c] = parse_www_authenticate(
        'Bearer resource_metadata="https://h/prm", scope="a b", error=invalid_token'
    )
    assert c.is_scheme("bearer")
    assert (
        c.resource_metadata == "https://h/prm"
        and c.scopes == ["a", "b"]
        and c.error == "invalid_token"
    )


def test_several_challenges_in_one_value_and_in_several():
    value = (
        'Bearer realm="x", error="invalid_token", DPoP algs="ES256 PS256", error="use_dpop_nonce"'
    )
    bearer, dpop = parse_www_authenticate(value)
    assert bearer.error == "invalid_token" and bearer.get("realm") == "x"
    assert (
        dpop.is_scheme("DPoP")
        and dpop.error == "use_dpop_nonce"
        and dpop.get("algs") == "ES256 PS256"
    )
    both = parse_www_authenticate(["Basic realm=a", 'Bearer scope="s"'])
    assert [c.scheme for c in both] == ["Basic", "Bearer"]
    assert find_challenge(both, "DPoP", "Bearer").scopes == ["s"]


def test_token68_bare_schemes_escapes_and_junk():
    negotiate, bearer = parse_www_authenticate("Negotiate abc==, Bearer scope=a")
    assert negotiate.token68 == "abc==" and bearer.scopes == ["a"]
    assert [c.scheme for c in parse_www_authenticate("Bearer,DPoP algs=ES256")] == [
        "Bearer",
        "DPoP",
    ]
    [c] = parse_www_authenticate('Bearer error_description="say \\"hi\\""')
    assert c.get("error_description") == 'say "hi"'
    assert parse_www_authenticate("") == [] and parse_www_authenticate(None) == []
    [c] = parse_www_authenticate('Bearer scope="unterminated')
    assert c.get("scope") == "unterminated"
    assert parse_www_authenticate("@@@, Bearer")[-1].is_scheme("Bearer")


def test_build_round_trips():
    value = build_challenge(
        "Bearer",
        [
            ("error", "insufficient_scope"),
            ("scope", "a b"),
            ("resource_metadata", "https://h/.well-known/oauth-protected-resource"),
            ("error_description", None),
        ],
    )
    assert value == (
        'Bearer error="insufficient_scope", scope="a b", '
        'resource_metadata="https://h/.well-known/oauth-protected-resource"'
    )
    [c] = parse_www_authenticate(value)
    assert c.error == "insufficient_scope" and c.scopes == ["a", "b"]
    assert build_challenge("Bearer", []) == "Bearer"
    weird = build_challenge("Bearer", [("error_description", 'caf\u00e9 "q"\r\n')])
    weird.encode("latin-1")
    assert parse_www_authenticate(weird)[0].get("error_description") == 'caf? "q"'

"""``WWW-Authenticate`` challenges (RFC 9110 §11.6.1, RFC 6750 §3, RFC 9449 §7.1): parse
and build.

A header value holds one or more challenges, each a scheme followed by either a token68
or a comma-separated list of ``name=value`` parameters (value a token or quoted string).
Commas separate both parameters and challenges, so a name not followed by ``=`` starts
the next challenge.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

_TCHAR = frozenset("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_TOKEN68 = frozenset("-._~+/0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_SPACE = " \t"

#: Longest header value parsed; anything past it is ignored.
MAX_CHALLENGE_LENGTH = 16 * 1024


@dataclass(slots=True)
class Challenge:
    """One challenge: ``scheme`` as sent, parameter names lower-cased."""

    scheme: str
    params: dict[str, str] = field(default_factory=dict)
    token68: str | None = None

    def is_scheme(self, name: str) -> bool:
        """Whether the challenge is of the scheme ``name`` (compared without case)."""
        return self.scheme.lower() == name.lower()

    def get(self, name: str, default: str | None = None) -> str | None:
        """An auth-param's value by name (without case), else ``default``."""
        return self.params.get(name.lower(), default)

    @property
    def error(self) -> str | None:
        """The ``error`` auth-param (``invalid_token``, ``insufficient_scope``, ...), if any."""
        return self.params.get("error")

    @property
    def scopes(self) -> list[str]:
        """The scopes the ``scope`` auth-param asks for (none when absent)."""
        return (self.params.get("scope") or "").split()

    @property
    def resource_metadata(self) -> str | None:
        """The URL of the protected resource metadata (RFC 9728), if the challenge names one."""
        return self.params.get("resource_metadata")


def _read_token(text: str, pos: int) -> tuple[str, int]:
    start = pos
    while pos < len(text) and text[pos] in _TCHAR:
        pos += 1
    return text[start:pos], pos


def _skip(text: str, pos: int, chars: str = _SPACE) -> int:
    while pos < len(text) and text[pos] in chars:
        pos += 1
    return pos


def _read_quoted(text: str, pos: int) -> tuple[str, int]:
    """``pos`` at the opening quote; returns the unescaped value and the position after it."""
    out: list[str] = []
    pos += 1
    while pos < len(text):
        ch = text[pos]
        if ch == "\\" and pos + 1 < len(text):
            out.append(text[pos + 1])
            pos += 2
            continue
        if ch == '"':
            return "".join(out), pos + 1
        out.append(ch)
        pos += 1
    return "".join(out), pos  # unterminated: take what there is


def parse_www_authenticate(values: str | Iterable[str] | None) -> list[Challenge]:
    """Every challenge in one or more ``WWW-Authenticate`` values; lenient, never raises."""
    if values is None:
        return []
    if isinstance(values, str):
        values = [values]
    challenges: list[Challenge] = []
    for value in values:
        challenges.extend(_parse_one(value[:MAX_CHALLENGE_LENGTH]))
    return challenges


def _parse_one(text: str) -> list[Challenge]:
    challenges: list[Challenge] = []
    pos = 0
    n = len(text)
    while pos < n:
        pos = _skip(text, pos, _SPACE + ",")
        if pos >= n:
            break
        scheme, pos = _read_token(text, pos)
        if not scheme:  # junk: skip to the next comma
            while pos < n and text[pos] != ",":
                pos += 1
            continue
        challenge = Challenge(scheme)
        challenges.append(challenge)
        pos = _skip(text, pos)
        # "scheme token68": token68 characters, optional "=" padding, then a comma or the end.
        # ("name=value" has a value after the "=", so it is not mistaken for one.)
        t68_end = pos
        while t68_end < n and text[t68_end] in _TOKEN68:
            t68_end += 1
        eq_end = t68_end
        while eq_end < n and text[eq_end] == "=":
            eq_end += 1
        after = _skip(text, eq_end)
        if t68_end > pos and (after >= n or text[after] == ","):
            challenge.token68 = text[pos:eq_end]
            pos = after
            continue
        # parameters
        while pos < n:
            pos = _skip(text, pos, _SPACE + ",")
            if pos >= n:
                break
            name, name_end = _read_token(text, pos)
            if not name:
                while pos < n and text[pos] != ",":
                    pos += 1
                continue
            look = _skip(text, name_end)
            if look >= n or text[look] != "=":
                # Not a parameter: the next challenge starts here.
                break
            look = _skip(text, look + 1)
            if look < n and text[look] == '"':
                value, pos = _read_quoted(text, look)
            else:
                start = look
                while look < n and text[look] not in ", \t":
                    look += 1
                value, pos = text[start:look], look
            challenge.params.setdefault(name.lower(), value)
    return challenges


def find_challenge(challenges: list[Challenge], *schemes: str) -> Challenge | None:
    """The first challenge of one of ``schemes`` (in the order given)."""
    for scheme in schemes:
        for challenge in challenges:
            if challenge.is_scheme(scheme):
                return challenge
    return None


def _quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def build_challenge(scheme: str, params: Iterable[tuple[str, str | None]]) -> str:
    """``scheme name="value", ...``; parameters whose value is None are left out.

    Values are made header-safe: control characters are dropped, non-ASCII ones become "?".
    """
    parts = []
    for name, value in params:
        if value is None:
            continue
        clean = "".join(ch if ch < "\x7f" else "?" for ch in value if ch >= " " and ch != "\x7f")
        parts.append(f"{name}={_quote(clean)}")
    return f"{scheme} {', '.join(parts)}" if parts else scheme


__all__ = ["Challenge", "build_challenge", "find_challenge", "parse_www_authenticate"]

"""How a mount prefix renames what a mounted app offers.

Names (tools, prompts): ``weather`` + ``forecast`` is ``weather_forecast``.
URIs and URI templates: the prefix becomes the first path segment after the scheme,
``scheme://path`` is ``scheme://weather/path`` (``file:///etc/x`` is
``file://weather//etc/x``, ``urn:isbn:1`` is ``urn:weather/isbn:1``, a URI without a
scheme gets ``weather/`` in front). ``unprefix_uri`` undoes ``prefix_uri`` exactly.
"""

from __future__ import annotations

import re

#: What a prefix may be made of: it ends up in tool names and inside URIs.
PREFIX_PATTERN = re.compile(r"[A-Za-z0-9_.\-]+")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:(?://)?")


def check_prefix(prefix: object) -> str | None:
    """``prefix`` itself when it is None or a usable prefix; ``ValueError``/``TypeError`` else."""
    if prefix is None:
        return None
    if not isinstance(prefix, str):
        raise TypeError(f"a mount prefix is a string or None, not {type(prefix).__name__}")
    if PREFIX_PATTERN.fullmatch(prefix) is None:
        raise ValueError(
            f"mount prefix {prefix!r} must be made of letters, digits, '_', '.' and '-'"
        )
    return prefix


def prefix_name(prefix: str | None, name: str) -> str:
    """The name a mounted tool or prompt has in the app it is mounted in."""
    return name if prefix is None else f"{prefix}_{name}"


def unprefix_name(prefix: str | None, name: str) -> str | None:
    """The mounted app's own name for ``name``, or None when ``name`` is not under ``prefix``."""
    if prefix is None:
        return name
    head = f"{prefix}_"
    return name[len(head) :] if name.startswith(head) else None


def _split(uri: str) -> tuple[str, str]:
    match = _SCHEME.match(uri)
    head = match.group(0) if match else ""
    return head, uri[len(head) :]


def prefix_uri(prefix: str | None, uri: str) -> str:
    """The URI (or URI template) a mounted resource has in the app it is mounted in."""
    if prefix is None:
        return uri
    head, rest = _split(uri)
    return f"{head}{prefix}/{rest}"


def unprefix_uri(prefix: str | None, uri: str) -> str | None:
    """The mounted app's own URI for ``uri``, or None when ``uri`` is not under ``prefix``."""
    if prefix is None:
        return uri
    head, rest = _split(uri)
    marker = f"{prefix}/"
    return head + rest[len(marker) :] if rest.startswith(marker) else None

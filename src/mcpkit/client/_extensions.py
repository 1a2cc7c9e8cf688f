"""Protocol extensions on the client's side: the ones it declares, the ones a server announces.

Both sides name extensions in ``capabilities.extensions``: a map of extension identifiers
(``io.modelcontextprotocol/ui``) to settings objects (``{}``: support without settings).
The client declares its own in ``initialize`` (handshake era) and in every request's
``_meta`` client capabilities (2026-07-28); a server announces its own in the
``initialize`` result or the ``server/discover`` one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import msgspec

__all__ = ["NO_EXTENSIONS", "announced_extensions", "declared_extensions"]

#: An extension identifier follows the ``_meta`` key rules with the prefix required:
#: dot-separated labels (a letter first, a letter or digit last), a slash, then a name.
_IDENTIFIER = re.compile(
    r"[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*"
    r"/[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?"
)

#: What a server that announces no extension (or a client that declares none) has.
NO_EXTENSIONS: Mapping[str, dict[str, Any]] = MappingProxyType({})


def declared_extensions(extensions: object) -> dict[str, dict[str, Any]]:
    """The ``extensions`` a client was given, checked and copied as plain JSON values (the
    caller's objects are never sent nor changed later). ``TypeError`` for what is not a
    mapping of identifiers to settings objects, ``ValueError`` for a malformed identifier."""
    if extensions is None:
        return {}
    if not isinstance(extensions, Mapping):
        raise TypeError(
            "extensions must be a dict of extension identifiers to settings dicts, e.g."
            " {'io.modelcontextprotocol/ui': {'mimeTypes': ['text/html;profile=mcp-app']}},"
            f" not {type(extensions).__name__}"
        )
    checked: dict[str, dict[str, Any]] = {}
    for name, settings in extensions.items():
        if not isinstance(name, str):
            raise TypeError(f"extensions: an identifier must be a str, not {name!r}")
        if not _IDENTIFIER.fullmatch(name):
            raise ValueError(
                f"extensions: {name!r} is not an extension identifier: a prefix of dotted"
                " labels, a slash and a name, such as 'io.modelcontextprotocol/ui' or"
                " 'com.example/feature'"
            )
        if not isinstance(settings, Mapping):
            raise TypeError(
                f"extensions[{name!r}] must be a dict of the extension's settings ({{}} for"
                f" none), not {type(settings).__name__}"
            )
        try:
            checked[name] = msgspec.json.decode(msgspec.json.encode(dict(settings)))
        except (TypeError, msgspec.EncodeError) as exc:
            raise TypeError(f"extensions[{name!r}] is not JSON: {exc}") from None
    return checked


def announced_extensions(capabilities: object) -> Mapping[str, dict[str, Any]]:
    """The extensions in a server's raw ``capabilities`` (read-only; empty when it announces
    none). An entry whose settings are not an object is not an extension and is left out."""
    extensions = capabilities.get("extensions") if isinstance(capabilities, Mapping) else None
    if not isinstance(extensions, Mapping):
        return NO_EXTENSIONS
    return MappingProxyType(
        {
            name: dict(settings)
            for name, settings in extensions.items()
            if isinstance(name, str) and isinstance(settings, Mapping)
        }
    )

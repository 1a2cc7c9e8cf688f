"""Loading an OpenAPI document and reading its ``$ref``s.

This module owns turning what the caller gives (a dict, JSON text, YAML text) into an
``OpenApiDocument``, and following local JSON-pointer references inside it. Schemas are not
converted here (``_schemas`` does that); only the objects around them (path items,
parameters, request bodies, responses) are dereferenced.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote

from mcpkit._extras import require

logger = logging.getLogger("mcpkit.openapi")

#: What ``McpServerApp.from_openapi`` accepts as the document: the parsed mapping, or its
#: JSON (or YAML, with PyYAML installed) text.
OpenApiSource = Mapping[str, Any] | str | bytes

#: Most ``$ref`` hops followed for one non-schema object (a chain longer than this is a loop).
MAX_REF_HOPS = 32

_YAML_FEATURE = "an OpenAPI document that is not JSON (YAML text)"


def _parse_text(text: str) -> Any:
    try:
        return _json_or_yaml(text)
    except RecursionError:  # either parser, too deep for it
        raise ValueError("the OpenAPI document is nested too deeply to parse") from None


def _json_or_yaml(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        pass
    yaml = require("yaml", "openapi", _YAML_FEATURE)  # PyYAML
    return yaml.safe_load(text)


def load_document(source: OpenApiSource | OpenApiDocument) -> OpenApiDocument:
    """Parse ``source`` into an ``OpenApiDocument``.

    A mapping is used as it is (not copied: it is only read). Text (``str`` or UTF-8
    ``bytes``) is parsed as JSON, or as YAML when it is not JSON and PyYAML is installed
    (an ``ImportError`` naming PyYAML otherwise). Raises ``ValueError`` for a document that
    is not OpenAPI 3.x (Swagger 2.0 included). An ``OpenApiDocument`` is returned as it is.
    """
    if isinstance(source, OpenApiDocument):
        return source
    if isinstance(source, (bytes, bytearray)):
        source = bytes(source).decode("utf-8")
    raw = _parse_text(source) if isinstance(source, str) else source
    if not isinstance(raw, Mapping):
        raise ValueError("an OpenAPI document must be a JSON object")
    return OpenApiDocument(raw)


def _unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def walk_pointer(root: Any, pointer: str) -> Any:
    """The value at JSON pointer ``pointer`` (``/a/b``, already without ``#``) in ``root``;
    ``KeyError`` when there is none."""
    node = root
    if not pointer:
        return node
    if not pointer.startswith("/"):
        raise KeyError(pointer)
    for token in pointer[1:].split("/"):
        key = _unescape(token)
        if isinstance(node, Mapping) and key in node:
            node = node[key]
        elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
            node = node[int(key)]
        else:
            raise KeyError(pointer)
    return node


class OpenApiDocument:
    """A parsed OpenAPI 3.0 or 3.1 document and the local references inside it."""

    __slots__ = ("openapi", "raw")

    def __init__(self, raw: Mapping[str, Any]) -> None:
        if "swagger" in raw:
            raise ValueError(
                f"Swagger {raw.get('swagger')} is not supported: convert the document to "
                "OpenAPI 3.0 or 3.1 first"
            )
        version = raw.get("openapi")
        if not isinstance(version, str) or not version.startswith("3."):
            raise ValueError(f"not an OpenAPI 3.x document (openapi: {version!r})")
        self.raw = raw
        #: The ``openapi`` field, such as ``"3.1.0"``.
        self.openapi = version

    @property
    def is_30(self) -> bool:
        """Whether schemas follow OpenAPI 3.0's dialect (``nullable``, boolean
        ``exclusiveMinimum``...) rather than JSON Schema 2020-12 (3.1 and later)."""
        return self.openapi.startswith("3.0")

    @property
    def info(self) -> Mapping[str, Any]:
        """The ``info`` object (empty when missing)."""
        info = self.raw.get("info")
        return info if isinstance(info, Mapping) else {}

    @property
    def title(self) -> str | None:
        """``info.title``, when it is a non-empty string."""
        title = self.info.get("title")
        return title if isinstance(title, str) and title else None

    def lookup(self, ref: str) -> Any:
        """The value a local ``$ref`` (``#/components/...``) points at; ``KeyError`` when
        it points nowhere or at another document."""
        if not ref.startswith("#"):
            raise KeyError(ref)
        return walk_pointer(self.raw, unquote(ref[1:]))

    def deref(self, node: Any) -> Any:
        """``node`` with its ``$ref`` chain followed (for parameters, request bodies,
        responses and path items, not schemas). An unresolvable reference gives ``{}``,
        logged as a warning."""
        hops = 0
        while isinstance(node, Mapping) and isinstance(node.get("$ref"), str):
            ref = node["$ref"]
            hops += 1
            if hops > MAX_REF_HOPS:
                logger.warning("$ref loop at %s", ref)
                return {}
            try:
                node = self.lookup(ref)
            except KeyError:
                logger.warning("cannot resolve $ref %r (only local references are read)", ref)
                return {}
        return node

    def server_url(self) -> str | None:
        """The first ``servers`` URL, its variables replaced by their defaults; ``None``
        when there is none."""
        servers = self.raw.get("servers")
        if not isinstance(servers, list) or not servers or not isinstance(servers[0], Mapping):
            return None
        server = servers[0]
        url = server.get("url")
        if not isinstance(url, str):
            return None
        variables = server.get("variables")
        if isinstance(variables, Mapping):
            for name, variable in variables.items():
                if isinstance(variable, Mapping) and "default" in variable:
                    url = url.replace("{" + str(name) + "}", str(variable["default"]))
        return url

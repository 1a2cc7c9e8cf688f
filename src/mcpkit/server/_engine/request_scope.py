"""The HTTP request a call arrived on, as guards and injected parameters see it.

The HTTP transports put the ASGI scope of the request on the call's binding
(``TransportBinding.http_scope``), nothing parsed. ``McpRequestScope`` reads it lazily, so
only a guard or a provider that asks pays for the parsing. Over stdio and in memory there
is no request: ``binding.request`` is None.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any
from urllib.parse import parse_qs

#: Where the parsed view of a scope is kept in the scope itself (parsed once per request).
_VIEW_KEY = "mcpkit.request_scope"


class McpRequestScope:
    """A read-only view of one HTTP request: ``transport``, ``method``, ``path``, ``query``,
    ``client`` and ``headers`` (lower-case names). Made from the ASGI scope on first use."""

    __slots__ = ("_headers", "_query", "_scope")

    def __init__(self, scope: Mapping[str, Any]) -> None:
        self._scope = scope
        self._headers: Mapping[str, str] | None = None
        self._query: Mapping[str, tuple[str, ...]] | None = None

    @property
    def transport(self) -> str:
        """``"http"`` for a plain request (Streamable HTTP, legacy SSE), ``"websocket"``
        for an upgrade."""
        return str(self._scope.get("type", "http"))

    @property
    def method(self) -> str:
        """The HTTP method (``GET`` for a WebSocket upgrade)."""
        return str(self._scope.get("method", "GET"))

    @property
    def path(self) -> str:
        """The request's path (as the ASGI scope has it)."""
        return str(self._scope.get("path", ""))

    @property
    def root_path(self) -> str:
        """The prefix the app is mounted under ("" when it is not)."""
        return str(self._scope.get("root_path", ""))

    @property
    def query_string(self) -> str:
        """The request's query string, undecoded."""
        raw = self._scope.get("query_string", b"")
        return raw.decode("latin-1") if isinstance(raw, bytes) else str(raw)

    @property
    def query(self) -> Mapping[str, tuple[str, ...]]:
        """The query parameters, each name with every value it was given."""
        if self._query is None:
            parsed = parse_qs(self.query_string, keep_blank_values=True)
            self._query = MappingProxyType({k: tuple(v) for k, v in parsed.items()})
        return self._query

    @property
    def client(self) -> tuple[str, int] | None:
        """``(host, port)`` of the peer, as the ASGI server reports it (None if unknown)."""
        peer = self._scope.get("client")
        if not peer:
            return None
        host, port = peer[0], peer[1]
        return str(host), int(port)

    @property
    def headers(self) -> Mapping[str, str]:
        """The request headers, lower-case names; repeated headers joined with ", "."""
        if self._headers is None:
            found: dict[str, str] = {}
            for raw_name, raw_value in self._scope.get("headers", ()):
                name = raw_name.decode("latin-1").lower()
                value = raw_value.decode("latin-1")
                found[name] = f"{found[name]}, {value}" if name in found else value
            self._headers = MappingProxyType(found)
        return self._headers

    def __repr__(self) -> str:
        return f"McpRequestScope({self.method} {self.path!r}, client={self.client!r})"


def request_scope_of(scope: dict[str, Any]) -> McpRequestScope:
    """The view of ``scope``, made once and kept in it."""
    view: McpRequestScope | None = scope.get(_VIEW_KEY)
    if view is None:
        view = scope[_VIEW_KEY] = McpRequestScope(scope)
    return view

"""POST in the 2026-07-28 era: one stateless request per POST, its HTTP headers checked
against its body (SEP-2243) before it runs, and protocol errors mapped to HTTP statuses.

The request's ``Mcp-Param-*`` header values reach it in ``_meta["x-mcp-headers"]`` (a
tool reads them as ``ctx.meta["x-mcp-headers"]``): keyed by the lower-cased name after
``Mcp-Param-``, Base64 sentinels decoded. Only the transport sets that key: one the client
put in the body itself is dropped, so what a tool finds there came in HTTP headers."""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any

from mcpkit._codes import ErrorCode
from mcpkit._exceptions import InvalidParamsError, ProtocolError
from mcpkit.auth._types import CURRENT_AUTH
from mcpkit.protocol._headers import (
    NAME_FIELDS,
    PARAM_HEADERS_META_KEY,
    check_request_headers,
    param_headers,
)
from mcpkit.protocol._jsonrpc import (
    JsonRpcErrorResponse,
    JsonRpcNotification,
    JsonRpcRequest,
    JsonRpcResponse,
    error_response,
)
from mcpkit.protocol._modern import PROTOCOL_VERSION_KEY
from mcpkit.protocol._versions import (
    LATEST_VERSION,
    MODERN_VERSION_SET,
    MODERN_VERSIONS,
    SUPPORTED_VERSION_SET,
)
from mcpkit.server._binding import CURRENT_BINDING, TransportBinding
from mcpkit.server._modern import (
    HeaderMismatchError,
    check_meta,
    modern_version,
    request_meta,
)
from mcpkit.transports.http._asgi import KNOWN_HEADER_NAMES, error_body

if TYPE_CHECKING:
    from mcpkit.transports.http._streamable import StreamableHttpHandler

#: HTTP statuses of 2026-07-28 errors (Streamable HTTP, "Protocol Version Header").
MODERN_ERROR_STATUS = {
    ErrorCode.METHOD_NOT_FOUND: 404,
    ErrorCode.HEADER_MISMATCH: 400,
    ErrorCode.MISSING_REQUIRED_CAPABILITY: 400,
    ErrorCode.UNSUPPORTED_PROTOCOL_VERSION: 400,
}

_VERSION_HEADER_VALUES: dict[str | None, bytes] = {
    version: version.encode() for version in MODERN_VERSIONS
}
_LATEST_VALUE = LATEST_VERSION.encode()


def is_modern_post(decoded: Any, headers: dict[str, str], version: str | None) -> bool:
    """The era of this POST: a modern version header, or modern ``_meta`` in the body,
    or a version header we don't know on a request without a session (a modern
    client's probe gets a modern error)."""
    if version in MODERN_VERSION_SET:
        return True
    params = getattr(decoded, "params", None)
    if params and "_meta" in params and modern_version(params) is not None:
        return True
    return (
        version is not None
        and version not in SUPPORTED_VERSION_SET
        and "mcp-session-id" not in headers
        and (isinstance(decoded, JsonRpcRequest) and decoded.method != "initialize")
    )


def modern_response_headers(
    headers: dict[str, str], version: str | None
) -> list[tuple[bytes, bytes]]:
    """``MCP-Protocol-Version``, and ``Mcp-Method`` / ``Mcp-Name`` echoed as sent.
    ``version`` may come from the body (``_meta``), so may be any JSON value. The lists
    repeat (one per version, method and tool): made once, shared by the answers, never
    changed by a user."""
    shown = _VERSION_HEADER_VALUES.get(version, _LATEST_VALUE) if type(version) is str else None
    key = (shown, headers.get("mcp-method"), headers.get("mcp-name"))
    made = _MADE.get(key)
    if made is None:
        made = _make(key)
    return made


#: Answer headers already made, by (version header value, Mcp-Method, Mcp-Name); cleared
#: when full.
_MADE: dict[tuple[bytes | None, str | None, str | None], list[tuple[bytes, bytes]]] = {}
MAX_MADE_HEADERS = 1024


def _make(key: tuple[bytes | None, str | None, str | None]) -> list[tuple[bytes, bytes]]:
    if len(_MADE) >= MAX_MADE_HEADERS:
        _MADE.clear()
    shown, method, name = key
    made = [(b"mcp-protocol-version", shown or _LATEST_VALUE)]
    made.extend(
        (header, value.strip(" \t").encode("latin-1"))
        for header, value in ((b"mcp-method", method), (b"mcp-name", name))
        if value is not None
    )
    _MADE[key] = made
    return made


def _hand_over_param_headers(meta: dict[str, Any], headers: dict[str, str]) -> None:
    """Put the request's ``Mcp-Param-*`` values in its ``_meta`` (the seed's
    ``_meta.x-mcp-headers``); a body-supplied value under that key is dropped."""
    found = {} if KNOWN_HEADER_NAMES.issuperset(headers) else param_headers(headers)
    if found:
        meta[PARAM_HEADERS_META_KEY] = found
    elif PARAM_HEADERS_META_KEY in meta:
        del meta[PARAM_HEADERS_META_KEY]


class ModernPosts:
    """Admits the POSTs of the 2026-07-28 era for a ``StreamableHttpHandler``."""

    def __init__(self, handler: StreamableHttpHandler) -> None:
        self.catalog = handler.app.catalog
        self._ids = itertools.count(1)

    def admit(
        self, decoded: Any, headers: dict[str, str], version: str | None
    ) -> tuple[TransportBinding | None, list[tuple[bytes, bytes]], tuple[int, Any] | None]:
        """``(binding, response headers, None)`` for a request that may run, else
        ``(None, response headers, (status, body))``: the answer to send instead (a body of
        ``None`` is an empty one). Synchronous: it runs for every modern POST."""
        if type(decoded) is not JsonRpcRequest:
            if isinstance(decoded, (list, JsonRpcResponse, JsonRpcErrorResponse)):
                body = error_body(
                    ErrorCode.INVALID_REQUEST,
                    "2026-07-28 accepts one request or notification per POST",
                )
                return None, [(b"mcp-protocol-version", LATEST_VERSION.encode())], (400, body)
            if isinstance(decoded, JsonRpcNotification):
                return (
                    None,
                    [(b"mcp-protocol-version", (version or LATEST_VERSION).encode())],
                    (202, None),
                )
        request: JsonRpcRequest = decoded
        meta = request_meta(request.params)
        body_version = meta.get(PROTOCOL_VERSION_KEY) if meta is not None else None
        response_headers = modern_response_headers(headers, body_version or version)
        problem = self._problem(request, meta, headers, version, body_version)
        if problem is not None:
            return None, response_headers, (400, error_response(request.id, problem))
        if meta is not None:  # always, once _problem passed: a modern request carries _meta
            _hand_over_param_headers(meta, headers)
        # Marked modern with its _meta checked: the engine fills in the request's session.
        binding = TransportBinding(
            headers=headers,
            connection_key=f"m{next(self._ids)}",
            modern=True,
            auth=CURRENT_AUTH.get(),
        )
        CURRENT_BINDING.set(binding)  # as for a handshake-era POST: the call's own binding
        return binding, response_headers, None

    def _problem(
        self,
        request: JsonRpcRequest,
        meta: dict[str, Any] | None,
        headers: dict[str, str],
        version: str | None,
        body_version: Any,
    ) -> ProtocolError | None:
        """Why this request is refused before it runs (None: it may run). Nothing of the
        body is trusted to be of its type: a value that is not is refused, -32602, before
        it reaches a lookup (a dict key must be hashable)."""
        if body_version is not None and type(body_version) is not str:
            return InvalidParamsError(
                f"Invalid _meta: {PROTOCOL_VERSION_KEY} must be a string",
                {"field": PROTOCOL_VERSION_KEY},
            )
        if body_version is not None and version != body_version:
            return HeaderMismatchError(
                f"MCP-Protocol-Version header {version!r} does not match _meta protocolVersion {body_version!r}"
            )
        problem = check_meta(meta)
        if problem is not None:
            return problem
        params = request.params
        tool = None
        if params:
            field = NAME_FIELDS.get(request.method)
            if field is not None:
                name = params.get(field)
                if name is not None and type(name) is not str:
                    return InvalidParamsError(f'"{field}" must be a string', {"field": field})
                if request.method == "tools/call" and name is not None:
                    tool = self.catalog.get_tool(name)
        mismatch = check_request_headers(
            request.method, params, headers, tool.header_params if tool else ()
        )
        if mismatch is not None:
            return HeaderMismatchError(f"Header mismatch: {mismatch}")
        return None

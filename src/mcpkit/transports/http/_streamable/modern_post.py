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
from mcpkit.auth._types import CURRENT_AUTH, AuthInfo
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
from mcpkit.server._engine.binding import CURRENT_BINDING, TransportBinding
from mcpkit.server._engine.session import McpSession
from mcpkit.server._eras.modern import (
    HeaderMismatchError,
    MetaSessions,
    modern_version,
)
from mcpkit.transports.http._asgi import KNOWN_HEADER_NAMES, error_body

if TYPE_CHECKING:
    from mcpkit.server._engine.engine import McpEngine

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


#: Answer header lists a handler keeps made, by (version header value, Mcp-Method,
#: Mcp-Name): the lists repeat (one per version, method and tool). Cleared when full.
MAX_MADE_HEADERS = 1024


class ResponseHeaders:
    """``MCP-Protocol-Version``, and ``Mcp-Method`` / ``Mcp-Name`` echoed as sent, made once
    per kind of request and shared by its answers (never changed by a user); one per handler,
    so nothing a client sent outlives its server."""

    __slots__ = ("_made",)

    def __init__(self) -> None:
        self._made: dict[tuple[bytes | None, str | None, str | None], list[tuple[bytes, bytes]]]
        self._made = {}

    def of(self, headers: dict[str, str], version: str | None) -> list[tuple[bytes, bytes]]:
        """The answer's headers; ``version`` may come from the body (``_meta``), so may be any
        JSON value."""
        shown = _VERSION_HEADER_VALUES.get(version, _LATEST_VALUE) if type(version) is str else None
        key = (shown, headers.get("mcp-method"), headers.get("mcp-name"))
        made = self._made.get(key)
        if made is None:
            made = self._make(key)
        return made

    def _make(self, key: tuple[bytes | None, str | None, str | None]) -> list[tuple[bytes, bytes]]:
        if len(self._made) >= MAX_MADE_HEADERS:
            self._made.clear()
        shown, method, name = key
        made = [(b"mcp-protocol-version", shown or _LATEST_VALUE)]
        made.extend(
            (header, value.strip(" \t").encode("latin-1"))
            for header, value in ((b"mcp-method", method), (b"mcp-name", name))
            if value is not None
        )
        self._made[key] = made
        return made


class ModernPosts:
    """Admits the POSTs of the 2026-07-28 era to an engine's Streamable HTTP endpoint."""

    def __init__(self, engine: McpEngine) -> None:
        self.tool_header_params = engine.tool_header_params
        self._ids = itertools.count(1)
        self.response_headers = ResponseHeaders()
        #: The request sessions, made from each request's ``_meta``.
        self.meta_sessions = MetaSessions()

    def admit(
        self, decoded: Any, scope: dict[str, Any], headers: dict[str, str], version: str | None
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
        params = request.params
        meta = params.get("_meta") if params else None  # request_meta(), inline
        if type(meta) is not dict:
            meta = None
        body_version = meta.get(PROTOCOL_VERSION_KEY) if meta is not None else None
        response_headers = self.response_headers.of(headers, body_version or version)
        key = f"m{next(self._ids)}"
        auth = CURRENT_AUTH.get()
        session = self._session(request, meta, headers, version, body_version, key, auth)
        if type(session) is not McpSession:
            return None, response_headers, (400, error_response(request.id, session))
        # _meta is there once its session is made: a modern request carries it. The
        # request's Mcp-Param-* values go in it (a body-supplied value under that key is
        # dropped).
        carried: dict[str, Any] = meta  # type: ignore[assignment]
        found = None if KNOWN_HEADER_NAMES.issuperset(headers) else param_headers(headers)
        if found:
            carried[PARAM_HEADERS_META_KEY] = found
        elif PARAM_HEADERS_META_KEY in carried:
            del carried[PARAM_HEADERS_META_KEY]
        # Marked modern, with the session its _meta gave: the engine takes it as it is.
        binding = TransportBinding(
            session=session,
            headers=headers,
            connection_key=key,
            modern=True,
            auth=auth,
            http_scope=scope,
        )
        CURRENT_BINDING.set(binding)  # as for a handshake-era POST: the call's own binding
        return binding, response_headers, None

    def _session(
        self,
        request: JsonRpcRequest,
        meta: dict[str, Any] | None,
        headers: dict[str, str],
        version: str | None,
        body_version: Any,
        key: str,
        auth: AuthInfo | None,
    ) -> McpSession | ProtocolError:
        """The request's session (under ``key``), made from its ``_meta``; or why the request
        is refused before it runs. Nothing of the body is trusted to be of its type: a value
        that is not is refused, -32602, before it reaches a lookup (a dict key must be
        hashable). ``auth`` is the caller's identity: a tool it may not call has its headers
        checked as an unknown tool's."""
        if body_version is not None:
            if type(body_version) is not str:
                return InvalidParamsError(
                    f"Invalid _meta: {PROTOCOL_VERSION_KEY} must be a string",
                    {"field": PROTOCOL_VERSION_KEY},
                )
            if version != body_version:
                return HeaderMismatchError(
                    f"MCP-Protocol-Version header {version!r} does not match _meta protocolVersion {body_version!r}"
                )
        session = self.meta_sessions.session(meta, key)
        if type(session) is not McpSession:
            return session
        params = request.params
        method = request.method
        annotations: Any = ()
        field = NAME_FIELDS.get(method)
        if field is not None and params:
            name = params.get(field)
            if name is not None:
                if type(name) is not str:
                    return InvalidParamsError(f'"{field}" must be a string', {"field": field})
                if method == "tools/call":
                    annotations = self.tool_header_params(name, auth)
                # The usual request: both headers sent verbatim and nothing more to compare
                # (what check_request_headers concludes first, without its call).
                if (
                    not annotations
                    and headers.get("mcp-method") == method
                    and headers.get("mcp-name") == name
                    and name.isascii()
                ):
                    return session
        mismatch = check_request_headers(method, params, headers, annotations)
        if mismatch is not None:
            return HeaderMismatchError(f"Header mismatch: {mismatch}")
        return session

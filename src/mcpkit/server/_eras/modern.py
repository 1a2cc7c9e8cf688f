"""The 2026-07-28 era on the engine side: no handshake, no session; every request names
its protocol version and client capabilities in ``_meta`` and every result says what it
is (``resultType``) and who answered (``serverInfo``)."""

from __future__ import annotations

import uuid
from typing import Any

from msgspec.structs import replace

from mcpkit._codes import ErrorCode
from mcpkit._exceptions import InvalidParamsError, ProtocolError
from mcpkit.protocol._modern import (
    CACHEABLE_METHODS,
    CLIENT_CAPABILITIES_KEY,
    CLIENT_INFO_KEY,
    LOG_LEVEL_KEY,
    MODERN_METHODS,
    PROTOCOL_VERSION_KEY,
    SERVER_INFO_KEY,
)
from mcpkit.protocol._versions import MODERN_VERSION_SET, MODERN_VERSIONS, SUPPORTED_VERSIONS
from mcpkit.server._engine.session import LOG_LEVELS, McpSession
from mcpkit.server._eras.mrtr import RoundInputs, round_inputs
from mcpkit.server._eras.state_binding import RequestStates, principal_of

#: Requests whose handlers may ask the client for input (multi round-trip requests).
_ROUND_TRIP_METHODS = frozenset({"tools/call", "prompts/get", "resources/read"})


class UnsupportedProtocolVersionError(ProtocolError):
    code = ErrorCode.UNSUPPORTED_PROTOCOL_VERSION

    def __init__(self, requested: Any) -> None:
        super().__init__(
            f"Unsupported protocol version: {requested}",
            {"supported": list(SUPPORTED_VERSIONS), "requested": str(requested)},
        )


class HeaderMismatchError(ProtocolError):
    """SEP-2243: HTTP headers missing, malformed or disagreeing with the body."""

    code = ErrorCode.HEADER_MISMATCH


def request_meta(params: dict[str, Any] | None) -> dict[str, Any] | None:
    meta = params.get("_meta") if params else None
    return meta if isinstance(meta, dict) else None


def modern_version(params: dict[str, Any] | None) -> Any:
    """The ``_meta`` protocol version of a request, or None (a handshake-era request)."""
    meta = request_meta(params)
    return meta.get(PROTOCOL_VERSION_KEY) if meta is not None else None


def meta_session(meta: dict[str, Any] | None, key: str) -> McpSession | ProtocolError:
    """The session of a modern request under ``key``, made from its ``_meta`` object; or what
    is wrong with that object (each member read once: every 2026-07-28 request)."""
    if meta is None:
        return InvalidParamsError(
            "Invalid _meta: a 2026-07-28 request must carry _meta", {"field": "_meta"}
        )
    version = meta.get(PROTOCOL_VERSION_KEY)
    if version is None:
        return InvalidParamsError(
            f"Invalid _meta: missing {PROTOCOL_VERSION_KEY}", {"field": PROTOCOL_VERSION_KEY}
        )
    if type(version) is not str:
        return InvalidParamsError(
            f"Invalid _meta: {PROTOCOL_VERSION_KEY} must be a string",
            {"field": PROTOCOL_VERSION_KEY},
        )
    if version not in MODERN_VERSION_SET:  # a str: checked above
        return UnsupportedProtocolVersionError(version)
    capabilities = meta.get(CLIENT_CAPABILITIES_KEY)
    if type(capabilities) is not dict:  # decoded JSON: a dict is a dict
        return InvalidParamsError(
            f"Invalid _meta: missing {CLIENT_CAPABILITIES_KEY}", {"field": CLIENT_CAPABILITIES_KEY}
        )
    info = meta.get(CLIENT_INFO_KEY)
    if info is not None and type(info) is not dict:
        return InvalidParamsError(
            f"Invalid _meta: {CLIENT_INFO_KEY} must be an object", {"field": CLIENT_INFO_KEY}
        )
    level = meta.get(LOG_LEVEL_KEY)
    if level is not None and level not in LOG_LEVELS:  # as logging/setLevel does
        return InvalidParamsError(
            f"Unknown log level: {level!r}", {"field": LOG_LEVEL_KEY, "levels": list(LOG_LEVELS)}
        )
    return McpSession.for_request(key, version, capabilities, info, level, modern=True)


#: How many request sessions a ``MetaSessions`` keeps made: one per (protocol version, log
#: level) a 2026-07-28 ``_meta`` may name and pass its checks, so never more than this.
MAX_META_SESSIONS = len(MODERN_VERSIONS) * (len(LOG_LEVELS) + 1)


class MetaSessions:
    """``meta_session`` for one admitter of 2026-07-28 requests (an HTTP endpoint), where every
    request makes one: what a request's session takes from its ``_meta`` besides the client's
    capabilities and info is its version and log level, so the session of each (version,
    level) pair that passed the checks is made once and each request gets a copy under its
    own key, with its own capabilities and info (never another request's objects). A
    ``_meta`` not made that way (a bad one, an unhashable level) takes ``meta_session``,
    which says what is wrong. At most ``MAX_META_SESSIONS`` kept."""

    __slots__ = ("_made",)

    def __init__(self) -> None:
        self._made: dict[tuple[str, str | None], McpSession] = {}

    def session(self, meta: dict[str, Any] | None, key: str) -> McpSession | ProtocolError:
        """The session of a request under ``key``, as ``meta_session(meta, key)`` makes it."""
        if meta is None:
            return meta_session(meta, key)
        version = meta.get(PROTOCOL_VERSION_KEY)
        level = meta.get(LOG_LEVEL_KEY)
        capabilities = meta.get(CLIENT_CAPABILITIES_KEY)
        info = meta.get(CLIENT_INFO_KEY)
        made = (
            self._made.get((version, level))
            if type(version) is str and (level is None or type(level) is str)
            else None
        )
        if (
            made is None
            or type(capabilities) is not dict
            or (info is not None and type(info) is not dict)
        ):
            checked = meta_session(meta, key)
            # Checked: a modern version, a known level or none.
            if isinstance(checked, McpSession) and len(self._made) < MAX_META_SESSIONS:
                made_version: str = checked.protocol_version  # type: ignore[assignment]
                self._made[(made_version, checked.log_level)] = McpSession.for_request(
                    "-", made_version, None, None, checked.log_level, modern=True
                )
            return checked
        # A copy (in C) of one fresh from for_request: no container of it is shared.
        return replace(made, key=key, client_capabilities=capabilities, client_info=info)


def complete_result(
    result: dict[str, Any], method: str, server_info: dict[str, Any], ttl_ms: int, cache_scope: str
) -> dict[str, Any]:
    """Add what every modern result carries: ``resultType``, ``serverInfo`` in ``_meta``,
    and for cacheable results ``ttlMs`` / ``cacheScope``. ``result`` is not changed."""
    result = {**result}
    result_type = result.setdefault("resultType", "complete")
    meta = result.get("_meta")
    if not meta:
        result["_meta"] = {SERVER_INFO_KEY: server_info}
    elif SERVER_INFO_KEY not in meta:
        result["_meta"] = {**meta, SERVER_INFO_KEY: server_info}
    if result_type == "complete" and method in CACHEABLE_METHODS:
        result.setdefault("ttlMs", ttl_ms)
        result.setdefault("cacheScope", cache_scope)
    return result


class ModernEra:
    """Turns a modern request's ``_meta`` into a per-request session and binding, and
    dresses its result; installed on the dispatcher by the app."""

    def __init__(
        self, app: Any, *, ttl_ms: int, cache_scope: str, request_states: RequestStates
    ) -> None:
        self.app = app
        self.ttl_ms = ttl_ms
        self.cache_scope = cache_scope
        #: Issues and accepts ``requestState`` (bound, single use); ``codec`` signs it.
        self.request_states = request_states
        self.codec = request_states.codec
        #: The ``_meta`` of a result that brings none: ``serverInfo`` alone, made once and
        #: shared by those results (never changed once made, like ``serverInfo`` itself).
        self._result_meta: dict[str, Any] | None = None

    @staticmethod
    def applies(params: dict[str, Any] | None, binding: Any) -> bool:
        if binding.modern:
            return True
        meta = params.get("_meta") if params else None
        return type(meta) is dict and meta.get(PROTOCOL_VERSION_KEY) is not None

    def enter(self, request: Any, binding: Any) -> Any:
        """The binding of this request, with a session made from its ``_meta``; raises
        ``ProtocolError`` for a bad request.

        A transport that made ``binding`` for this request alone marks it ``modern``, with
        the session its ``_meta`` gave (``meta_session``, which checked it): it is used as
        it is. Any other binding (a stdio connection's, shared by its requests) is copied.
        """
        params = request.params or {}
        method = request.method
        if binding.session is None or not binding.modern:
            made = meta_session(request_meta(params), binding.connection_key or uuid.uuid4().hex)
            if isinstance(made, ProtocolError):
                raise made
            binding = replace(binding, session=made, modern=True)
        if method not in MODERN_METHODS or method not in self.app.dispatcher._handlers:
            from mcpkit._exceptions import MethodNotFoundError

            raise MethodNotFoundError(f"Method not found: {method}")
        if method in _ROUND_TRIP_METHODS:
            if "requestState" in params or "inputResponses" in params:  # is_retry(), inline
                binding.round_inputs = RoundInputs.from_request(
                    self.request_states, method, params, principal_of(binding.auth)
                )
            else:
                binding.round_inputs = (method, params)  # see round_inputs()
        return binding

    async def confirm(self, binding: Any) -> None:
        """A retry's state taken in the record shared with other instances too (where
        ``request_states.shared`` is set)."""
        inputs = binding.round_inputs
        if type(inputs) is RoundInputs and inputs.spent is not None:
            await self.request_states.confirm(inputs.spent)
            inputs.spent = None

    def leave(self, method: str, result: dict[str, Any]) -> dict[str, Any]:
        meta = self._result_meta
        if meta is None:  # the app's identity is fixed once it serves
            meta = self._result_meta = {SERVER_INFO_KEY: self.app.server_info()}
        if "_meta" in result or "resultType" in result or method in CACHEABLE_METHODS:
            info = meta[SERVER_INFO_KEY]
            return complete_result(result, method, info, self.ttl_ms, self.cache_scope)
        # The usual result (a tool's): what complete_result makes of it, without its steps.
        return {**result, "resultType": "complete", "_meta": meta}

    def input_required(self, binding: Any, requests: dict[str, Any]) -> dict[str, Any]:
        inputs = round_inputs(binding)
        return self.leave(inputs.method, inputs.result_for(self.request_states, requests))  # type: ignore[union-attr]

    @staticmethod
    def convert_error(exc: ProtocolError) -> ProtocolError:
        """Resource not found is -32602 in this era (was -32002)."""
        from mcpkit._exceptions import ResourceNotFoundError

        if isinstance(exc, ResourceNotFoundError):
            return InvalidParamsError(exc.message, exc.data)
        return exc

"""The request channel of ``McpClient``: one request in the era spoken.

Handshake era: the request as it is. 2026-07-28: every request carries the protocol version, the client's capabilities and identity (and
the log level, when one is set) in ``_meta``. A result whose ``resultType`` is
``input_required`` is a multi round-trip request (SEP-2322): the client's handlers answer
its ``inputRequests`` and the request is sent again (new id) with ``inputResponses`` and the
echoed ``requestState``, up to ``max_input_rounds`` times. Three errors are retried once
each: an unsupported version (-32022: another version from the server's list), a header
mismatch on ``tools/call`` (-32020: the tools' ``x-mcp-header`` annotations are listed
afresh), and a response stream that broke before the response (not resumable in this era).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from mcpkit._codes import ErrorCode
from mcpkit._exceptions import McpCallError
from mcpkit.client._call_headers import sending_with
from mcpkit.client._errors import STREAM_BROKEN, InputRequestError, ProtocolEraError
from mcpkit.client._version_choice import latest_common, supported_versions
from mcpkit.protocol._modern import (
    CLIENT_CAPABILITIES_KEY,
    CLIENT_INFO_KEY,
    LOG_LEVEL_KEY,
    PROTOCOL_VERSION_KEY,
)
from mcpkit.protocol._versions import MODERN_VERSIONS, Era

if TYPE_CHECKING:
    from mcpkit.client._server_messages import ServerMessageHandler
    from mcpkit.client._session import ClientSession, ProgressCallback
    from mcpkit.client._state import ClientState
    from mcpkit.client._tool_headers import ToolHeaderMirror

__all__ = ["DEFAULT_MAX_INPUT_ROUNDS", "RequestChannel"]

#: Rounds of input one multi round-trip request may ask for before the client gives up.
DEFAULT_MAX_INPUT_ROUNDS = 8


class RequestChannel:
    """Sends the client's requests in the era its ``ClientState`` says, answering a
    2026-07-28 request's input rounds with the client's handlers."""

    def __init__(
        self,
        session: ClientSession,
        state: ClientState,
        handlers: ServerMessageHandler,
        tool_headers: ToolHeaderMirror,
    ) -> None:
        self.session = session
        self.state = state
        self._handlers = handlers
        self._tool_headers = tool_headers

    def require_modern(self, what: str) -> None:
        """Refuse ``what`` (``ProtocolEraError``) outside the 2026-07-28 era."""
        if self.state.era is not Era.MODERN:
            raise ProtocolEraError(
                f"{what} exists only in the 2026-07-28 era (this connection: {self.state.era})"
            )

    def meta_for(
        self,
        version: str,
        extra: dict[str, Any] | None = None,
        extensions: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """A modern request's ``_meta``: ``extra`` plus version, capabilities (with
        ``extensions`` declared for this request only), identity, log level."""
        meta = dict(extra or {})
        caps = self._handlers.capabilities()
        if extensions:
            caps["extensions"] = {**(caps.get("extensions") or {}), **extensions}
        if "roots" in caps:
            # No notifications/roots/list_changed in this era (also while probing).
            caps["roots"] = {}
        meta[PROTOCOL_VERSION_KEY] = version
        meta[CLIENT_CAPABILITIES_KEY] = caps
        meta[CLIENT_INFO_KEY] = self.state.client_info
        if self.state.log_level is not None:
            meta[LOG_LEVEL_KEY] = self.state.log_level
        return meta

    async def send(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        progress: ProgressCallback | None = None,
        extensions: dict[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> Any:
        """One request in the era spoken; 2026-07-28: ``_meta`` (``extensions`` added to the
        capabilities it declares), MRTR rounds, and one retry each for an unsupported
        version, a (``tools/call``) header mismatch, and a response stream that broke before
        the response (not resumable in this era). ``headers``: HTTP headers of this request
        alone (``_call_headers``)."""
        with sending_with(headers):
            return await self._send(method, params, timeout, progress, extensions)

    async def _send(
        self,
        method: str,
        params: dict[str, Any] | None,
        timeout: float | None,
        progress: ProgressCallback | None,
        extensions: dict[str, Any] | None,
    ) -> Any:
        state = self.state
        if state.era is not Era.MODERN:
            return await self.session.request(method, params, timeout=timeout, progress=progress)
        base = dict(params or {})
        user_meta = base.pop("_meta", None)
        retry: dict[str, Any] = {}
        rounds = 0
        version_retried = header_retried = reissued = False
        while True:
            body = {
                **base,
                **retry,
                "_meta": self.meta_for(state.protocol_version, user_meta, extensions),
            }
            try:
                result = await self.session.request(
                    method, body, timeout=timeout, progress=progress
                )
            except McpCallError as exc:
                if exc.code == ErrorCode.UNSUPPORTED_PROTOCOL_VERSION and not version_retried:
                    version = latest_common(MODERN_VERSIONS, supported_versions(exc.data))
                    if version is not None:
                        version_retried = True
                        state.protocol_version = version
                        continue
                if (
                    exc.code == ErrorCode.HEADER_MISMATCH
                    and method == "tools/call"
                    and not header_retried
                    and self._tool_headers.mirrors()
                ):
                    # SEP-2243: the tool's x-mcp-header annotations may have changed.
                    header_retried = True
                    await self._tool_headers.relist(timeout)
                    continue
                if isinstance(exc.data, dict) and exc.data.get(STREAM_BROKEN) and not reissued:
                    # A broken 2026-07-28 response stream loses the request: send it again.
                    reissued = True
                    continue
                raise
            if (
                not isinstance(result, dict)
                or result.get("resultType", "complete") != "input_required"
            ):
                return result
            rounds += 1
            if rounds > state.max_input_rounds:
                raise InputRequestError(
                    f"{method}: the server still asked for input after {state.max_input_rounds} rounds "
                    "(max_input_rounds)"
                )
            retry = {}
            requests = result.get("inputRequests")
            if requests is not None:
                retry["inputResponses"] = await self._handlers.answer_inputs(method, requests)
            if "requestState" in result:
                retry["requestState"] = result["requestState"]  # echoed exactly, never read

"""One request in the 2026-07-28 era, as ``McpClient`` sends it.

Every request carries the protocol version, the client's capabilities and identity (and
the log level, when one is set) in ``_meta``. A result whose ``resultType`` is
``input_required`` is a multi round-trip request (SEP-2322): the client's handlers answer
its ``inputRequests`` and the request is sent again (new id) with ``inputResponses`` and the
echoed ``requestState``, up to ``max_input_rounds`` times. Three errors are retried once
each: an unsupported version (-32022: another version from the server's list), a header
mismatch on ``tools/call`` (-32020: the tools' ``x-mcp-header`` annotations are listed
afresh), and a response stream that broke before the response (not resumable in this era).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from mcpkit._codes import ErrorCode
from mcpkit._exceptions import McpCallError
from mcpkit.client._era_negotiation import latest_common, supported_versions
from mcpkit.client._errors import InputRequestError, ProtocolEraError
from mcpkit.client._modern_http import STREAM_BROKEN
from mcpkit.client._server_messages import INPUT_CAPABILITY
from mcpkit.protocol._modern import (
    CLIENT_CAPABILITIES_KEY,
    CLIENT_INFO_KEY,
    LOG_LEVEL_KEY,
    PROTOCOL_VERSION_KEY,
)
from mcpkit.protocol._versions import MODERN_VERSIONS, Era

if TYPE_CHECKING:
    from mcpkit.client._session import ClientSession, ProgressCallback

__all__ = ["DEFAULT_MAX_INPUT_ROUNDS", "ModernRequests"]

#: Rounds of input one multi round-trip request may ask for before the client gives up.
DEFAULT_MAX_INPUT_ROUNDS = 8


class ModernRequests:
    """The request path of ``McpClient`` (a mixin: it answers input requests with the
    client's handlers and refreshes header annotations with its ``list_tools``)."""

    era: Era | None
    session: ClientSession
    protocol_version: str
    client_info: dict[str, str]
    log_level: str | None
    max_input_rounds: int
    capabilities: Callable[[], dict[str, Any]]
    list_tools: Callable[..., Awaitable[Any]]
    _mirrors_headers: Callable[[], bool]
    _can_serve: Callable[[str], bool]

    if TYPE_CHECKING:  # given by ServerMessageHandling; declared as a method so the mixins agree

        async def _serve(self, method: str, params: dict[str, Any]) -> dict[str, Any]: ...

    def _require_modern(self, what: str) -> None:
        if self.era is not Era.MODERN:
            raise ProtocolEraError(
                f"{what} exists only in the 2026-07-28 era (this connection: {self.era})"
            )

    def _meta_for(
        self,
        version: str,
        extra: dict[str, Any] | None = None,
        extensions: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """A modern request's ``_meta``: ``extra`` plus version, capabilities (with
        ``extensions`` declared for this request only), identity, log level."""
        meta = dict(extra or {})
        caps = self.capabilities()
        if extensions:
            caps["extensions"] = {**(caps.get("extensions") or {}), **extensions}
        if "roots" in caps:
            caps[
                "roots"
            ] = {}  # no notifications/roots/list_changed in this era (also while probing)
        meta[PROTOCOL_VERSION_KEY] = version
        meta[CLIENT_CAPABILITIES_KEY] = caps
        meta[CLIENT_INFO_KEY] = self.client_info
        if self.log_level is not None:
            meta[LOG_LEVEL_KEY] = self.log_level
        return meta

    async def _rpc(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        progress: ProgressCallback | None = None,
        extensions: dict[str, Any] | None = None,
    ) -> Any:
        """One request in the era spoken; 2026-07-28: ``_meta`` (``extensions`` added to the
        capabilities it declares), MRTR rounds, and one retry each for an unsupported
        version, a (``tools/call``) header mismatch, and a response stream that broke before
        the response (not resumable in this era)."""
        if self.era is not Era.MODERN:
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
                "_meta": self._meta_for(self.protocol_version, user_meta, extensions),
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
                        self.protocol_version = version
                        continue
                if (
                    exc.code == ErrorCode.HEADER_MISMATCH
                    and method == "tools/call"
                    and not header_retried
                    and self._mirrors_headers()
                ):
                    # SEP-2243: the tool's x-mcp-header annotations may have changed.
                    header_retried = True
                    await self.list_tools(timeout=timeout)
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
            if rounds > self.max_input_rounds:
                raise InputRequestError(
                    f"{method}: the server still asked for input after {self.max_input_rounds} rounds "
                    "(max_input_rounds)"
                )
            retry = {}
            requests = result.get("inputRequests")
            if requests is not None:
                retry["inputResponses"] = await self._answer_inputs(method, requests)
            if "requestState" in result:
                retry["requestState"] = result["requestState"]  # echoed exactly, never read

    async def _answer_inputs(self, method: str, requests: Any) -> dict[str, Any]:
        """Answer a multi round-trip request's ``inputRequests`` with the handlers."""
        if not isinstance(requests, dict):
            raise InputRequestError(f"{method}: inputRequests is not an object: {requests!r}")
        answers: dict[str, Any] = {}
        for key, request in requests.items():
            kind = request.get("method") if isinstance(request, dict) else None
            params = request.get("params") if isinstance(request, dict) else None
            if kind not in INPUT_CAPABILITY or not isinstance(params, (dict, type(None))):
                raise InputRequestError(
                    f"{method}: input request {key!r} is not a sampling, elicitation or roots request: {request!r}",
                    method=kind if isinstance(kind, str) else None,
                    key=key,
                )
            if not self._can_serve(kind):
                raise InputRequestError(
                    f"{method}: the server asked for {kind} (input request {key!r}), but this client did "
                    f"not declare the {INPUT_CAPABILITY[kind]} capability, so the server must not ask for "
                    "it (SEP-2322); give the client a handler for it",
                    method=kind,
                    key=key,
                )
            answers[key] = await self._serve(kind, params or {})
        return answers

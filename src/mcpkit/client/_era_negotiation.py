"""Which era ``McpClient.connect()`` speaks, and how it settles it.

Handshake era (2025-11-25 and earlier): ``initialize`` / ``notifications/initialized``, then
requests. 2026-07-28 ("modern"): no handshake; ``server/discover`` says what the server
offers, and every request carries the client's ``_meta`` (``_modern_requests``).

``protocol_mode`` picks the era: ``"legacy"`` (handshake), ``"modern"``, or ``"auto"``: probe
with ``server/discover``; a ``DiscoverResult`` (or a recognized modern error such as -32022)
means modern, anything else (or no answer within ``probe_timeout``) means the handshake era
(versioning, "Backward Compatibility"). An ``UnsupportedProtocolVersionError`` (-32022) makes
the client pick a version from the server's ``supported`` list and retry once. The era
found is remembered per endpoint (``_eras``), so the next client skips the probe.

A transport with a ``known_session_id`` (Streamable HTTP) resumes that session instead:
no probe and no ``initialize``, the handshake era at the client's ``protocol_version``
(2025-11-25 unless told) until the server's first answer names the session's own, and a
``ping`` to check the session is there.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mcpkit._codes import ErrorCode
from mcpkit._exceptions import McpCallError, RequestTimeoutError, TransportError
from mcpkit.client._eras import detected_era, forget_era, remember_era
from mcpkit.client._errors import ProtocolEraError
from mcpkit.client._results import ServerDiscovery, convert
from mcpkit.protocol import types as t
from mcpkit.protocol._versions import HANDSHAKE_VERSIONS, MODERN_VERSIONS, Era

if TYPE_CHECKING:
    from mcpkit.client._session import ClientSession

logger = logging.getLogger("mcpkit.client")

__all__ = [
    "DEFAULT_PROBE_TIMEOUT",
    "MODERN_ERROR_CODES",
    "PROTOCOL_MODES",
    "EraNegotiation",
    "latest_common",
    "supported_versions",
]

PROTOCOL_MODES = ("auto", "legacy", "modern")
#: Seconds the ``server/discover`` probe of ``protocol_mode="auto"`` waits before deciding
#: the server is of the handshake era (some never answer a request before ``initialize``).
DEFAULT_PROBE_TIMEOUT = 10.0
#: Errors only a 2026-07-28 server sends: a probe answered with one found a modern server.
MODERN_ERROR_CODES = frozenset(
    {
        ErrorCode.HEADER_MISMATCH,
        ErrorCode.MISSING_REQUIRED_CAPABILITY,
        ErrorCode.UNSUPPORTED_PROTOCOL_VERSION,
    }
)


def supported_versions(data: Any) -> list[str]:
    """The ``supported`` list of an ``UnsupportedProtocolVersionError``'s data."""
    supported = data.get("supported") if isinstance(data, dict) else None
    return [v for v in supported if isinstance(v, str)] if isinstance(supported, list) else []


def latest_common(ours: tuple[str, ...], theirs: list[str]) -> str | None:
    """The latest of ``ours`` that ``theirs`` has too."""
    common = [v for v in ours if v in theirs]
    return common[-1] if common else None


class EraNegotiation:
    """Era settlement of ``McpClient`` (a mixin: it sends with the client's session and
    ``_meta``, and fills in its ``era``, ``protocol_version`` and ``server_info``)."""

    session: ClientSession
    protocol_mode: str
    protocol_version: str
    probe_timeout: float
    client_info: dict[str, str]
    log_level: str | None
    era: Era | None
    discovery: ServerDiscovery | None
    server_info: t.InitializeResult | None
    _handshake_version: str
    _modern_version: str
    capabilities: Callable[[], dict[str, Any]]
    _meta_for: Callable[..., dict[str, Any]]
    _require_modern: Callable[[str], None]

    if TYPE_CHECKING:  # given by ModernRequests; declared as a method so the mixins agree

        async def _rpc(
            self,
            method: str,
            params: dict[str, Any] | None = None,
            *,
            timeout: float | None = None,
            progress: Any = None,
            extensions: dict[str, Any] | None = None,
        ) -> Any: ...

    async def _settle_era(self) -> t.InitializeResult | None:
        """Probe or handshake as ``protocol_mode`` (and what is remembered) says; or resume
        the transport's known session (then None: no ``initialize`` result to give)."""
        mode = self.protocol_mode
        stream = self.session.stream
        known = getattr(stream, "known_session_id", None)
        if isinstance(known, str) and known:
            await self._resume(known)
            return None
        if mode == "auto" and not getattr(stream, "modern_capable", True):
            mode = "legacy"
        key = getattr(stream, "era_key", None)
        cached = detected_era(key) if mode == "auto" and isinstance(key, str) else None
        if cached is not None and cached[0] is Era.HANDSHAKE:
            try:
                return await self._handshake(cached[1])
            except McpCallError:
                # Remembered as a handshake-era server, but it is not (any more): probe.
                forget_era(key)  # type: ignore[arg-type]
        if mode in ("auto", "modern") and await self._probe(strict=mode == "modern"):
            assert self.server_info is not None
            return self.server_info
        return await self._handshake(
            self.protocol_version
            if self.protocol_version in HANDSHAKE_VERSIONS
            else self._handshake_version
        )

    async def _resume(self, session_id: str) -> None:
        """Speak in a session another client opened: no ``initialize`` (the server already
        has this session's capabilities and version), only a ``ping`` to check it is there
        (an unknown one fails with ``SessionExpiredError``)."""
        if self.protocol_mode == "modern":
            raise ProtocolEraError(
                "known_session_id resumes a handshake-era session; 2026-07-28 has no sessions "
                "(protocol_mode='modern')"
            )
        resume = getattr(self.session.stream, "resume_session", None)
        if resume is None:
            raise TransportError("this transport cannot resume a known session")
        version = (
            self.protocol_version
            if self.protocol_version in HANDSHAKE_VERSIONS
            else self._handshake_version
        )
        await resume(version)
        self.era = Era.HANDSHAKE
        self.protocol_version = version
        self.server_info = None  # the initialize result went to the client that opened it
        await self.session.request("ping")
        confirmed = getattr(self.session.stream, "protocol_version", None)
        if isinstance(confirmed, str) and confirmed in HANDSHAKE_VERSIONS:
            self.protocol_version = confirmed
        logger.debug("resumed session %s (protocol version %s)", session_id, self.protocol_version)
        if self.log_level is not None:
            try:
                await self.session.request("logging/setLevel", {"level": self.log_level})
            except McpCallError as exc:
                logger.debug("logging/setLevel in the resumed session failed: %s", exc)

    async def _handshake(self, version: str) -> t.InitializeResult:
        raw = await self.session.request(
            "initialize",
            {
                "protocolVersion": version,
                "capabilities": self.capabilities(),
                "clientInfo": self.client_info,
            },
        )
        self.server_info = convert(raw, t.InitializeResult)
        self.protocol_version = self.server_info.protocol_version
        self.era = Era.HANDSHAKE
        await self.session.notify("notifications/initialized")
        self._remember_era()
        if self.log_level is not None and self.server_info.capabilities.logging is not None:
            await self.session.request("logging/setLevel", {"level": self.log_level})
        return self.server_info

    async def _probe(self, *, strict: bool) -> bool:
        """``server/discover``; True when the server speaks a modern version (then adopted).

        Not strict (``auto``): an answer that is not a ``DiscoverResult`` nor a modern error,
        or no answer within ``probe_timeout``, means the handshake era (False). A -32022 is
        followed: a mutually supported modern version is tried once, a handshake one is
        taken to ``initialize``.
        """
        version = self._modern_version
        for attempt in range(2):
            try:
                raw = await self.session.request(
                    "server/discover",
                    {"_meta": self._meta_for(version)},
                    timeout=None
                    if strict
                    else min(self.probe_timeout, self.session.request_timeout),
                )
            except RequestTimeoutError:
                if strict:
                    raise
                logger.debug("server/discover got no answer in time: a handshake-era server")
                return False
            except McpCallError as exc:
                if exc.code == ErrorCode.UNSUPPORTED_PROTOCOL_VERSION:
                    supported = supported_versions(exc.data)
                    modern = latest_common(MODERN_VERSIONS, supported)
                    if modern is not None and attempt == 0:
                        version = modern
                        continue
                    if self._fall_back_to_handshake(supported, strict=strict):
                        return False
                    raise ProtocolEraError(
                        f"the server supports protocol versions {supported or '(none named)'}; this client "
                        f"speaks {', '.join(MODERN_VERSIONS + (() if strict else HANDSHAKE_VERSIONS))}"
                    ) from exc
                if exc.code in MODERN_ERROR_CODES or strict:
                    raise
                logger.debug("server/discover answered %s: a handshake-era server", exc)
                return False
            if not isinstance(raw, dict) or not isinstance(raw.get("supportedVersions"), list):
                if strict:
                    raise ProtocolEraError(
                        f"server/discover answered something that is not a DiscoverResult: {raw!r}"
                    )
                return False
            discovery = ServerDiscovery.from_result(raw)
            chosen = latest_common(MODERN_VERSIONS, discovery.supported_versions)
            if chosen is None:
                if self._fall_back_to_handshake(discovery.supported_versions, strict=strict):
                    return False
                raise ProtocolEraError(
                    f"the server supports protocol versions {discovery.supported_versions}; no modern one "
                    f"this client speaks ({', '.join(MODERN_VERSIONS)})"
                )
            self._adopt_modern(chosen, discovery)
            return True
        return False  # pragma: no cover - the loop returns or raises

    def _fall_back_to_handshake(self, supported: list[str], *, strict: bool) -> bool:
        """Not strict, and the server names a handshake version this client speaks: take
        it to ``initialize`` (True)."""
        handshake = latest_common(HANDSHAKE_VERSIONS, supported)
        if handshake is None or strict:
            return False
        self.protocol_version = handshake
        return True

    def _adopt_modern(self, version: str, discovery: ServerDiscovery) -> None:
        self.era = Era.MODERN
        self.protocol_version = version
        self.discovery = discovery
        self.server_info = t.InitializeResult(
            capabilities=discovery.capabilities,
            protocol_version=version,
            server_info=discovery.server_info or t.Implementation(name="", version=""),
            instructions=discovery.instructions,
            meta=discovery.meta,
        )
        settle = getattr(self.session.stream, "settle_modern", None)
        if settle is not None:
            settle()
        self._remember_era()

    def _remember_era(self) -> None:
        key = getattr(self.session.stream, "era_key", None)
        if isinstance(key, str) and self.era is not None and self.protocol_version:
            remember_era(key, self.era, self.protocol_version)

    async def discover(self, *, timeout: float | None = None) -> ServerDiscovery:
        """``server/discover`` again (2026-07-28): refreshes ``discovery`` and ``server_info``."""
        self._require_modern("server/discover")
        raw = await self._rpc("server/discover", None, timeout=timeout)
        discovery = ServerDiscovery.from_result(raw)
        self._adopt_modern(self.protocol_version, discovery)
        return discovery

"""Which era ``McpClient.connect()`` speaks, and how it settles it.

Handshake era (2025-11-25 and earlier): ``initialize`` / ``notifications/initialized``, then
requests. 2026-07-28 ("modern"): no handshake; ``server/discover`` says what the server
offers, and every request carries the client's ``_meta`` (``_modern_requests``).

``protocol_mode`` picks the era: ``"legacy"`` (handshake), ``"modern"``, or ``"auto"``: probe
with ``server/discover``; a ``DiscoverResult`` (or a recognized modern error such as -32022)
means modern, anything else (or no answer within ``probe_timeout``) means the handshake era
(versioning, "Backward Compatibility"). An ``UnsupportedProtocolVersionError`` (-32022) makes
the client pick a version from the server's ``supported`` list and retry once. The era
found is remembered in the transport's ``EndpointMemory`` (HTTP), per endpoint and
credentials; a client sharing that memory with one that already probed skips the probe.

A transport with a ``known_session_id`` (Streamable HTTP) resumes that session instead:
no probe and no ``initialize``, the handshake era at the client's ``protocol_version``
(2025-11-25 unless told) until the server's first answer names the session's own, and a
``ping`` to check the session is there.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from mcpkit._codes import ErrorCode
from mcpkit._exceptions import McpCallError, RequestTimeoutError, TransportError
from mcpkit.client._endpoint_memory import EndpointMemory
from mcpkit.client._errors import ProtocolEraError
from mcpkit.client._extensions import NO_EXTENSIONS, announced_extensions
from mcpkit.client._results import ServerDiscovery, convert
from mcpkit.client._version_choice import latest_common, supported_versions
from mcpkit.protocol import types as t
from mcpkit.protocol._versions import HANDSHAKE_VERSIONS, MODERN_VERSIONS, Era

if TYPE_CHECKING:
    from mcpkit.client._modern_requests import RequestChannel
    from mcpkit.client._server_messages import ServerMessageHandler
    from mcpkit.client._session import ClientSession
    from mcpkit.client._state import ClientState

logger = logging.getLogger("mcpkit.client")

__all__ = [
    "DEFAULT_PROBE_TIMEOUT",
    "MODERN_ERROR_CODES",
    "PROTOCOL_MODES",
    "EraNegotiator",
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


class EraNegotiator:
    """Settles the era of one client's connection and records it in its ``ClientState``
    (``era``, ``protocol_version``, ``server_info``, ``server_extensions``, ``discovery``)."""

    def __init__(
        self,
        session: ClientSession,
        state: ClientState,
        channel: RequestChannel,
        handlers: ServerMessageHandler,
    ) -> None:
        self._session = session
        self._state = state
        self._channel = channel
        self._handlers = handlers

    async def settle(self) -> t.InitializeResult | None:
        """Probe or handshake as ``protocol_mode`` (and what is remembered) says; or resume
        the transport's known session (then None: no ``initialize`` result to give)."""
        mode = self._state.protocol_mode
        stream = self._session.stream
        known = getattr(stream, "known_session_id", None)
        if isinstance(known, str) and known:
            await self._resume(known)
            return None
        if mode == "auto" and not getattr(stream, "modern_capable", True):
            mode = "legacy"
        found = self._memory() if mode == "auto" else None
        if found is not None:
            memory, key = found
            cached = memory.detected_era(key)
            if cached is not None and cached[0] is Era.HANDSHAKE:
                try:
                    return await self.handshake(cached[1])
                except McpCallError:
                    # Remembered as a handshake-era server, but it is not (any more): probe.
                    memory.forget_era(key)
        if mode in ("auto", "modern") and await self._probe(strict=mode == "modern"):
            assert self._state.server_info is not None
            return self._state.server_info
        return await self.handshake(
            self._state.protocol_version
            if self._state.protocol_version in HANDSHAKE_VERSIONS
            else self._state.handshake_version
        )

    async def _resume(self, session_id: str) -> None:
        """Speak in a session another client opened: no ``initialize`` (the server already
        has this session's capabilities and version), only a ``ping`` to check it is there
        (an unknown one fails with ``SessionExpiredError``)."""
        if self._state.protocol_mode == "modern":
            raise ProtocolEraError(
                "known_session_id resumes a handshake-era session; 2026-07-28 has no sessions "
                "(protocol_mode='modern')"
            )
        resume = getattr(self._session.stream, "resume_session", None)
        if resume is None:
            raise TransportError("this transport cannot resume a known session")
        version = (
            self._state.protocol_version
            if self._state.protocol_version in HANDSHAKE_VERSIONS
            else self._state.handshake_version
        )
        await resume(version)
        self._state.era = Era.HANDSHAKE
        self._state.protocol_version = version
        self._state.server_info = None  # the initialize result went to the client that opened it
        self._state.server_extensions = NO_EXTENSIONS
        await self._session.request("ping")
        confirmed = getattr(self._session.stream, "protocol_version", None)
        if isinstance(confirmed, str) and confirmed in HANDSHAKE_VERSIONS:
            self._state.protocol_version = confirmed
        logger.debug(
            "resumed session %s (protocol version %s)", session_id, self._state.protocol_version
        )
        if self._state.log_level is not None:
            try:
                await self._session.request("logging/setLevel", {"level": self._state.log_level})
            except McpCallError as exc:
                logger.debug("logging/setLevel in the resumed session failed: %s", exc)

    async def handshake(self, version: str) -> t.InitializeResult:
        """``initialize`` at ``version``, then ``notifications/initialized``."""
        raw = await self._session.request(
            "initialize",
            {
                "protocolVersion": version,
                "capabilities": self._handlers.capabilities(),
                "clientInfo": self._state.client_info,
            },
        )
        self._state.server_info = convert(raw, t.InitializeResult)
        # The handshake era's types have no member for them: read from the raw result.
        self._state.server_extensions = announced_extensions(
            raw.get("capabilities") if isinstance(raw, dict) else None
        )
        self._state.protocol_version = self._state.server_info.protocol_version
        self._state.era = Era.HANDSHAKE
        await self._session.notify("notifications/initialized")
        self._remember_era()
        if (
            self._state.log_level is not None
            and self._state.server_info.capabilities.logging is not None
        ):
            await self._session.request("logging/setLevel", {"level": self._state.log_level})
        return self._state.server_info

    async def _probe(self, *, strict: bool) -> bool:
        """``server/discover``; True when the server speaks a modern version (then adopted).

        Not strict (``auto``): an answer that is not a ``DiscoverResult`` nor a modern error,
        or no answer within ``probe_timeout``, means the handshake era (False). A -32022 is
        followed: a mutually supported modern version is tried once, a handshake one is
        taken to ``initialize``.
        """
        version = self._state.modern_version
        for attempt in range(2):
            try:
                raw = await self._session.request(
                    "server/discover",
                    {"_meta": self._channel.meta_for(version)},
                    timeout=None
                    if strict
                    else min(self._state.probe_timeout, self._session.request_timeout),
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
        self._state.protocol_version = handshake
        return True

    def _adopt_modern(self, version: str, discovery: ServerDiscovery) -> None:
        self._state.era = Era.MODERN
        self._state.protocol_version = version
        self._state.discovery = discovery
        self._state.server_extensions = announced_extensions(
            {"extensions": discovery.capabilities.extensions}
        )
        self._state.server_info = t.InitializeResult(
            capabilities=discovery.capabilities,
            protocol_version=version,
            server_info=discovery.server_info or t.Implementation(name="", version=""),
            instructions=discovery.instructions,
            meta=discovery.meta,
        )
        settle = getattr(self._session.stream, "settle_modern", None)
        if settle is not None:
            settle()
        self._remember_era()

    def _memory(self) -> tuple[EndpointMemory, str] | None:
        """The transport's memory and its key there (None: a transport without one)."""
        stream = self._session.stream
        memory = getattr(stream, "endpoint_memory", None)
        key = getattr(stream, "memory_key", None)
        if isinstance(memory, EndpointMemory) and isinstance(key, str):
            return memory, key
        return None

    def _remember_era(self) -> None:
        found = self._memory()
        if found is not None and self._state.era is not None and self._state.protocol_version:
            memory, key = found
            memory.remember_era(key, self._state.era, self._state.protocol_version)

    async def discover(self, *, timeout: float | None = None) -> ServerDiscovery:
        """``server/discover`` again (2026-07-28): refreshes ``discovery`` and ``server_info``."""
        self._channel.require_modern("server/discover")
        raw = await self._channel.send("server/discover", None, timeout=timeout)
        discovery = ServerDiscovery.from_result(raw)
        self._adopt_modern(self._state.protocol_version, discovery)
        return discovery

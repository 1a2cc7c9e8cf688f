"""The 2026-07-28 era's wire names: the ``_meta`` keys every request and result carries,
and which methods the era has. Shared by the server engine and the client."""

from __future__ import annotations

PREFIX = "io.modelcontextprotocol/"
PROTOCOL_VERSION_KEY = PREFIX + "protocolVersion"
CLIENT_CAPABILITIES_KEY = PREFIX + "clientCapabilities"
CLIENT_INFO_KEY = PREFIX + "clientInfo"
LOG_LEVEL_KEY = PREFIX + "logLevel"
SERVER_INFO_KEY = PREFIX + "serverInfo"
SUBSCRIPTION_ID_KEY = PREFIX + "subscriptionId"

#: Methods of the modern era; anything else (initialize, ping, logging/setLevel,
#: resources/subscribe...) is "method not found" there.
MODERN_METHODS = frozenset(
    {
        "server/discover",
        "tools/list",
        "tools/call",
        "resources/list",
        "resources/templates/list",
        "resources/read",
        "prompts/list",
        "prompts/get",
        "completion/complete",
        "subscriptions/listen",
        "tasks/get",
        "tasks/update",
        "tasks/cancel",
    }
)

#: Results that carry ``ttlMs`` and ``cacheScope`` (SEP-2549).
CACHEABLE_METHODS = frozenset(
    {
        "server/discover",
        "tools/list",
        "prompts/list",
        "resources/list",
        "resources/templates/list",
        "resources/read",
    }
)

__all__ = [
    "CACHEABLE_METHODS",
    "CLIENT_CAPABILITIES_KEY",
    "CLIENT_INFO_KEY",
    "LOG_LEVEL_KEY",
    "MODERN_METHODS",
    "PREFIX",
    "PROTOCOL_VERSION_KEY",
    "SERVER_INFO_KEY",
    "SUBSCRIPTION_ID_KEY",
]

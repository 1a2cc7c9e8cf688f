"""The OAuth client for MCP servers that require authorization: ``OAuthClientProvider``."""

from mcpkit.auth.client._discovery import (
    AuthorizationServerMetadata,
    ProtectedResourceMetadata,
    as_metadata_candidates,
    discover_authorization_server,
    discover_protected_resource,
    prm_candidates,
    resource_matches_server,
)
from mcpkit.auth.client._grants import (
    ID_JAG_TOKEN_TYPE,
    JWT_BEARER_GRANT,
    TOKEN_EXCHANGE_GRANT,
    AssertionContext,
    IdJagTokenExchange,
)
from mcpkit.auth.client._provider import (
    AuthorizeCallback,
    OAuthClientMetadata,
    OAuthClientProvider,
    pkce_pair,
)
from mcpkit.auth.client._storage import (
    JsonFileTokenStorage,
    MemoryTokenStorage,
    OAuthClientInformation,
    OAuthToken,
    TokenStorage,
)

__all__ = [
    "ID_JAG_TOKEN_TYPE",
    "JWT_BEARER_GRANT",
    "TOKEN_EXCHANGE_GRANT",
    "AssertionContext",
    "AuthorizationServerMetadata",
    "AuthorizeCallback",
    "IdJagTokenExchange",
    "JsonFileTokenStorage",
    "MemoryTokenStorage",
    "OAuthClientInformation",
    "OAuthClientMetadata",
    "OAuthClientProvider",
    "OAuthToken",
    "ProtectedResourceMetadata",
    "TokenStorage",
    "as_metadata_candidates",
    "discover_authorization_server",
    "discover_protected_resource",
    "pkce_pair",
    "prm_candidates",
    "resource_matches_server",
]

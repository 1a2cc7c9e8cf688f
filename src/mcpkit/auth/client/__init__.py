"""The OAuth client for MCP servers that require authorization: ``OAuthClientProvider``,
and ``OAuthLogin``, a user's login from a script or the command line."""

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
from mcpkit.auth.client._login import OAuthLogin, default_token_file
from mcpkit.auth.client._loopback import LoopbackReceiver
from mcpkit.auth.client._provider import (
    AuthorizeCallback,
    OAuthClientMetadata,
    OAuthClientProvider,
    pkce_pair,
)
from mcpkit.auth.client._settings import RedirectReceiver
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
    "LoopbackReceiver",
    "MemoryTokenStorage",
    "OAuthClientInformation",
    "OAuthClientMetadata",
    "OAuthClientProvider",
    "OAuthLogin",
    "OAuthToken",
    "ProtectedResourceMetadata",
    "RedirectReceiver",
    "TokenStorage",
    "as_metadata_candidates",
    "default_token_file",
    "discover_authorization_server",
    "discover_protected_resource",
    "pkce_pair",
    "prm_candidates",
    "resource_matches_server",
]

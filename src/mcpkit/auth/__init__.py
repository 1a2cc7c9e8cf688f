"""Authorization for MCP over HTTP (the ``mcpkit[auth]`` extra).

Server side: ``BearerAuthConfig`` (set as ``StreamableHttpServerOptions.bearer_auth``)
gates every HTTP transport and serves the protected-resource metadata; ``JwtVerifier`` is
a ready token verifier; DPoP (RFC 9449) proofs and nonces are checked when enabled. The
identity of an accepted request is an ``AuthInfo``.

Client side: ``mcpkit.auth.client.OAuthClientProvider``.
"""

from mcpkit.auth._challenge import (
    Challenge,
    build_challenge,
    find_challenge,
    parse_www_authenticate,
)
from mcpkit.auth._dpop import (
    DPoPError,
    DPoPNonceManager,
    DPoPProof,
    DPoPProofFactory,
    DPoPProofVerifier,
    access_token_hash,
    jwk_thumbprint,
)
from mcpkit.auth._jwt import JwksCache, JwksError, JwtVerifier
from mcpkit.auth._server import WELL_KNOWN_PRM, BearerAuthConfig, BearerAuthGate
from mcpkit.auth._types import (
    CURRENT_AUTH,
    SCOPE_KEY,
    AuthInfo,
    AuthResult,
    OAuthError,
    current_auth,
)

__all__ = [
    "AuthInfo",
    "AuthResult",
    "BearerAuthConfig",
    "BearerAuthGate",
    "CURRENT_AUTH",
    "Challenge",
    "DPoPError",
    "DPoPNonceManager",
    "DPoPProof",
    "DPoPProofFactory",
    "DPoPProofVerifier",
    "JwksCache",
    "JwksError",
    "JwtVerifier",
    "OAuthError",
    "SCOPE_KEY",
    "WELL_KNOWN_PRM",
    "access_token_hash",
    "build_challenge",
    "current_auth",
    "find_challenge",
    "jwk_thumbprint",
    "parse_www_authenticate",
]

"""Finding the authorization server: protected-resource metadata (RFC 9728) and
authorization-server metadata (RFC 8414, OpenID Connect Discovery), in the spec's order."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from mcpkit.auth._types import OAuthError

logger = logging.getLogger("mcpkit.auth.client")

WELL_KNOWN_PRM = "/.well-known/oauth-protected-resource"
WELL_KNOWN_OAUTH = "/.well-known/oauth-authorization-server"
WELL_KNOWN_OIDC = "/.well-known/openid-configuration"
#: Largest metadata document read.
MAX_METADATA_BYTES = 256 * 1024


@dataclass(slots=True)
class ProtectedResourceMetadata:
    """A server's protected-resource metadata (RFC 9728): the URL it was read from, the
    resource, its authorization servers and scopes, and the document as it came (``raw``)."""

    url: str
    resource: str
    authorization_servers: list[str]
    scopes_supported: list[str] | None
    raw: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class AuthorizationServerMetadata:
    """An authorization server's endpoints; ``fallback`` when none was published (the
    2025-03-26 default endpoints at the server's origin)."""

    issuer: str | None
    authorization_endpoint: str | None
    token_endpoint: str
    registration_endpoint: str | None = None
    raw: dict[str, Any] = field(default_factory=dict)
    fallback: bool = False
    url: str | None = None

    def get(self, name: str, default: Any = None) -> Any:
        """A metadata member by its RFC 8414 name, else ``default``."""
        return self.raw.get(name, default)

    @property
    def code_challenge_methods(self) -> list[str]:
        """The PKCE methods the server supports (``S256`` is required by MCP)."""
        methods = self.raw.get("code_challenge_methods_supported")
        return [m for m in methods if isinstance(m, str)] if isinstance(methods, list) else []

    @property
    def token_auth_methods(self) -> list[str]:
        """The token endpoint's client authentication methods (RFC 8414's default when omitted)."""
        methods = self.raw.get("token_endpoint_auth_methods_supported")
        if isinstance(methods, list):
            return [m for m in methods if isinstance(m, str)]
        return ["client_secret_basic"]  # RFC 8414 §2: the default when omitted

    @property
    def scopes_supported(self) -> list[str]:
        """The scopes the server advertises (none when it does not say)."""
        scopes = self.raw.get("scopes_supported")
        return [s for s in scopes if isinstance(s, str)] if isinstance(scopes, list) else []

    @property
    def iss_parameter_supported(self) -> bool:
        """Whether authorization responses carry ``iss`` (RFC 9207), which the client then
        checks."""
        return self.raw.get("authorization_response_iss_parameter_supported") is True

    @property
    def supports_cimd(self) -> bool:
        """Whether the server accepts client ID metadata documents (a URL as ``client_id``)."""
        return self.raw.get("client_id_metadata_document_supported") is True


def origin(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, "", "", ""))


def prm_candidates(server_url: str) -> list[str]:
    """Well-known protected-resource metadata URLs for ``server_url``: path-suffixed
    first (when the server has a path), then the root."""
    parts = urlsplit(server_url)
    base = origin(server_url)
    path = parts.path.rstrip("/")
    urls = []
    if path:
        urls.append(f"{base}{WELL_KNOWN_PRM}{path}")
    urls.append(f"{base}{WELL_KNOWN_PRM}")
    return urls


def as_metadata_candidates(issuer: str) -> list[str]:
    """RFC 8414 / OIDC discovery URLs for ``issuer`` in the order the MCP spec requires."""
    parts = urlsplit(issuer)
    base = origin(issuer)
    path = parts.path.rstrip("/")
    if path:
        return [
            f"{base}{WELL_KNOWN_OAUTH}{path}",
            f"{base}{WELL_KNOWN_OIDC}{path}",
            f"{base}{path}{WELL_KNOWN_OIDC}",
        ]
    return [f"{base}{WELL_KNOWN_OAUTH}", f"{base}{WELL_KNOWN_OIDC}"]


def _default_port(scheme: str) -> int | None:
    return {"http": 80, "https": 443}.get(scheme)


def resource_matches_server(resource: str, server_url: str) -> bool:
    """True when the metadata's ``resource`` names this server: same origin, and the
    server's path lies at or under the resource's path (RFC 8707 allows a less specific
    resource identifier)."""
    try:
        r, s = urlsplit(resource), urlsplit(server_url)
        r_port = r.port or _default_port(r.scheme.lower())
        s_port = s.port or _default_port(s.scheme.lower())
    except ValueError:
        return False
    if (
        r.scheme.lower() != s.scheme.lower()
        or (r.hostname or "").lower() != (s.hostname or "").lower()
    ):
        return False
    if r_port != s_port or r.fragment:
        return False
    r_path = r.path.rstrip("/")
    s_path = s.path.rstrip("/")
    return s_path == r_path or s_path.startswith(r_path + "/")


async def fetch_json(
    http: httpx.AsyncClient, url: str, headers: dict[str, str] | None = None
) -> tuple[int, Any]:
    """(status, parsed JSON body or None); connection failures give status 0."""
    try:
        async with http.stream(
            "GET", url, headers={"accept": "application/json", **(headers or {})}
        ) as response:
            if response.status_code != 200:
                return response.status_code, None
            body = bytearray()
            async for chunk in response.aiter_bytes():
                body += chunk
                if len(body) > MAX_METADATA_BYTES:
                    return response.status_code, None
    except httpx.HTTPError as exc:
        logger.debug("GET %s failed: %r", url, exc)
        return 0, None
    try:
        return 200, json.loads(bytes(body))
    except ValueError:
        return 200, None


async def discover_protected_resource(
    http: httpx.AsyncClient, server_url: str, resource_metadata_url: str | None = None
) -> ProtectedResourceMetadata | None:
    """The protected-resource metadata: from the challenge's ``resource_metadata`` when
    given, else the path-suffixed well-known URL, then the root one. None when none answers."""
    candidates = [resource_metadata_url] if resource_metadata_url else []
    candidates += [u for u in prm_candidates(server_url) if u not in candidates]
    for url in candidates:
        status, doc = await fetch_json(http, url)
        if status != 200 or not isinstance(doc, dict):
            logger.debug("no protected-resource metadata at %s (HTTP %s)", url, status)
            continue
        resource = doc.get("resource")
        servers = doc.get("authorization_servers")
        if not isinstance(resource, str) or not resource:
            raise OAuthError(f"protected-resource metadata at {url} has no resource")
        scopes = doc.get("scopes_supported")
        return ProtectedResourceMetadata(
            url=url,
            resource=resource,
            authorization_servers=[s for s in servers if isinstance(s, str)]
            if isinstance(servers, list)
            else [],
            scopes_supported=[s for s in scopes if isinstance(s, str)]
            if isinstance(scopes, list)
            else None,
            raw=doc,
        )
    return None


async def discover_authorization_server(
    http: httpx.AsyncClient, issuer: str, *, same_origin_issuer: bool = False
) -> AuthorizationServerMetadata | None:
    """The authorization server's metadata, validated (its ``issuer`` must be exactly the
    issuer the URL was built from). None when no well-known URL answers; ``OAuthError``
    when one answers with metadata for another issuer.

    ``same_origin_issuer`` is for the 2025-03-26 rules only, where the issuer is not known
    beforehand (the MCP server's origin stands in for it): an issuer on that same origin
    is accepted."""
    refused: str | None = None
    for url in as_metadata_candidates(issuer):
        status, doc = await fetch_json(http, url)
        if status != 200 or not isinstance(doc, dict):
            continue
        published = doc.get("issuer")
        if not _same_issuer(published, issuer) and not (
            same_origin_issuer
            and isinstance(published, str)
            and origin(published) == origin(issuer)
        ):
            refused = f"authorization server metadata at {url} names issuer {published!r}, not {issuer!r}; refusing it"
            logger.warning("%s", refused)
            continue
        token_endpoint = doc.get("token_endpoint")
        if not isinstance(token_endpoint, str):
            raise OAuthError(f"authorization server metadata at {url} has no token_endpoint")
        authorization_endpoint = doc.get("authorization_endpoint")
        registration = doc.get("registration_endpoint")
        return AuthorizationServerMetadata(
            issuer=published,
            authorization_endpoint=authorization_endpoint
            if isinstance(authorization_endpoint, str)
            else None,
            token_endpoint=token_endpoint,
            registration_endpoint=registration if isinstance(registration, str) else None,
            raw=doc,
            url=url,
        )
    if refused is not None:
        raise OAuthError(refused, error="invalid_issuer")
    return None


def _same_issuer(published: Any, issuer: str) -> bool:
    """Identical, allowing only the empty-path form of an issuer given with a bare "/"."""
    if not isinstance(published, str):
        return False
    if published == issuer:
        return True
    return urlsplit(issuer).path == "/" and published == issuer[:-1]


def fallback_metadata(server_url: str) -> AuthorizationServerMetadata:
    """The 2025-03-26 defaults: ``/authorize``, ``/token``, ``/register`` at the server's origin."""
    base = origin(server_url)
    return AuthorizationServerMetadata(
        issuer=None,
        authorization_endpoint=f"{base}/authorize",
        token_endpoint=f"{base}/token",
        registration_endpoint=f"{base}/register",
        raw={"code_challenge_methods_supported": ["S256"]},
        fallback=True,
    )


__all__ = [
    "AuthorizationServerMetadata",
    "ProtectedResourceMetadata",
    "as_metadata_candidates",
    "discover_authorization_server",
    "discover_protected_resource",
    "fallback_metadata",
    "prm_candidates",
    "resource_matches_server",
]

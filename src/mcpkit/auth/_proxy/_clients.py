"""The proxy's clients: dynamic registration (RFC 7591) with its checks, clients found by
their client metadata document (``_cimd``), and client authentication at the token and
revocation endpoints (``none`` for public clients, ``client_secret_basic`` or
``client_secret_post`` for confidential ones)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any
from urllib.parse import unquote, urlsplit

from mcpkit.auth._proxy._cimd import ClientDocuments, is_document_client_id
from mcpkit.auth._proxy._http import LOOPBACK_HOSTS, OAuthEndpointError
from mcpkit.auth._proxy._records import ClientRecord
from mcpkit.auth._proxy._store import ProxyStore, StoreFullError

#: Redirect URIs one client may register.
MAX_REDIRECT_URIS = 10
#: Longest redirect URI, client name or URI accepted at registration.
MAX_METADATA_VALUE = 2048
AUTH_METHODS = ("none", "client_secret_basic", "client_secret_post")
GRANT_TYPES = ("authorization_code", "refresh_token")


def secret_hash(secret: str) -> str:
    """What the store keeps of a client secret, a code or a refresh token: its SHA-256."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def registered_redirect(uri: str, registered: tuple[str, ...]) -> bool:
    """Whether ``uri`` is one of the ``registered`` redirect URIs: the same string, or, for
    plain http on a loopback host, the same but for the port, which a native app picks
    when it listens (RFC 8252 §7.3, OAuth 2.1 §8.4.2: any port is allowed there)."""
    if uri in registered:
        return True
    try:
        parts = urlsplit(uri)
        host = (parts.hostname or "").lower()
        parts.port  # noqa: B018 - a port that is not a number raises here
    except ValueError:
        return False
    if parts.scheme != "http" or host not in LOOPBACK_HOSTS:
        return False
    for known in registered:
        try:
            other = urlsplit(known)
            other.port  # noqa: B018
        except ValueError:
            continue
        if (
            other.scheme == "http"
            and (other.hostname or "").lower() == host
            and (other.path, other.query) == (parts.path, parts.query)
            and other.username is None
            and parts.username is None
        ):
            return True
    return False


def _metadata_error(description: str) -> OAuthEndpointError:
    return OAuthEndpointError("invalid_client_metadata", description)


def check_redirect_uri(uri: Any) -> str:
    """A redirect URI a client may register: absolute, no fragment, https, or http on a
    loopback host only (RFC 8252 §7.3, OAuth 2.1 §2.3.1)."""
    if not isinstance(uri, str) or not uri or len(uri) > MAX_METADATA_VALUE:
        raise OAuthEndpointError("invalid_redirect_uri", "a redirect URI must be a URL")
    try:
        parts = urlsplit(uri)
        host = (parts.hostname or "").lower()
    except ValueError:
        raise OAuthEndpointError("invalid_redirect_uri", f"{uri!r} is not a URL") from None
    if parts.fragment or "#" in uri:
        raise OAuthEndpointError("invalid_redirect_uri", f"{uri} has a fragment")
    if parts.scheme == "https" and host:
        return uri
    if parts.scheme == "http" and host in LOOPBACK_HOSTS:
        return uri
    raise OAuthEndpointError(
        "invalid_redirect_uri",
        f"{uri} is neither https nor http on a loopback host (localhost, 127.0.0.1, [::1])",
    )


def _strings(data: Mapping[str, Any], name: str, default: Sequence[str]) -> tuple[str, ...]:
    value = data.get(name, list(default))
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _metadata_error(f"{name} must be an array of strings")
    return tuple(value)


def _text(data: Mapping[str, Any], name: str) -> str:
    value = data.get(name, "")
    if not isinstance(value, str) or len(value) > MAX_METADATA_VALUE:
        raise _metadata_error(f"{name} must be a string of at most {MAX_METADATA_VALUE} characters")
    return value


def client_from_metadata(
    data: Mapping[str, Any],
    scopes_supported: Sequence[str],
    *,
    client_id: str,
    created_at: float,
    default_method: str = "client_secret_basic",
) -> ClientRecord:
    """The client RFC 7591 metadata describe (a registration's body, or a client metadata
    document's), checked; raises ``OAuthEndpointError`` (``invalid_client_metadata``,
    ``invalid_redirect_uri``)."""
    uris = data.get("redirect_uris")
    if not isinstance(uris, list) or not uris:
        raise OAuthEndpointError("invalid_redirect_uri", "redirect_uris must list at least one URI")
    if len(uris) > MAX_REDIRECT_URIS:
        raise OAuthEndpointError(
            "invalid_redirect_uri", f"at most {MAX_REDIRECT_URIS} redirect URIs"
        )
    redirect_uris = tuple(check_redirect_uri(uri) for uri in uris)
    method = data.get("token_endpoint_auth_method", default_method)
    if method not in AUTH_METHODS:
        raise _metadata_error(
            f"token_endpoint_auth_method must be one of {', '.join(AUTH_METHODS)}"
        )
    grant_types = _strings(data, "grant_types", ["authorization_code"])
    unknown = [g for g in grant_types if g not in GRANT_TYPES]
    if unknown or "authorization_code" not in grant_types:
        raise _metadata_error(
            "grant_types must include authorization_code and may add refresh_token"
        )
    if any(r != "code" for r in _strings(data, "response_types", ["code"])):
        raise _metadata_error("response_types may only be code")
    scope = _text(data, "scope")
    if scopes_supported:
        extra = [s for s in scope.split() if s not in scopes_supported]
        if extra:
            raise _metadata_error(f"scope names unknown scopes: {' '.join(extra)}")
    client_uri = _text(data, "client_uri")
    if client_uri and urlsplit(client_uri).scheme not in ("https", "http"):
        raise _metadata_error("client_uri must be an http(s) URL")
    return ClientRecord(
        client_id=client_id,
        redirect_uris=redirect_uris,
        client_name=_text(data, "client_name"),
        token_endpoint_auth_method=method,
        grant_types=tuple(dict.fromkeys(grant_types)),
        scope=scope,
        client_uri=client_uri,
        created_at=created_at,
    )


class ClientRegistry:
    """Finds clients (registered in the store, or described by a client metadata
    document: ``documents``, None when those are not accepted), registers clients and
    authenticates them."""

    def __init__(
        self,
        store: ProxyStore,
        scopes_supported: Sequence[str],
        clock: Callable[[], float] = time.time,
        *,
        documents: bool = True,
        **document_options: Any,
    ) -> None:
        self.store = store
        self.scopes_supported = tuple(scopes_supported)
        self.clock = clock
        self.documents = (
            ClientDocuments(self._document_client, clock=clock, **document_options)
            if documents
            else None
        )

    def _document_client(self, document: dict[str, Any], url: str) -> ClientRecord:
        return client_from_metadata(
            document, self.scopes_supported, client_id=url, created_at=self.clock()
        )

    async def get(self, client_id: str) -> ClientRecord | None:
        """The client: registered (dynamically, or by the application through the store),
        else the one its client metadata document describes when ``client_id`` is a URL.
        None when unknown; ``OAuthEndpointError`` when its document cannot be used."""
        client = await self.store.get_client(client_id)
        if client is None and self.documents is not None and is_document_client_id(client_id):
            client = await self.documents.client(client_id)
        return client

    async def register(self, body: bytes) -> dict[str, Any]:
        """The registration response (RFC 7591 §3.2.1) for a request body; raises
        ``OAuthEndpointError`` (``invalid_client_metadata``, ``invalid_redirect_uri``)."""
        try:
            data = json.loads(body)
        except ValueError:
            raise _metadata_error("the body is not JSON") from None
        if not isinstance(data, dict):
            raise _metadata_error("the body must be a JSON object")
        client = client_from_metadata(
            data,
            self.scopes_supported,
            client_id=secrets.token_urlsafe(16),
            created_at=self.clock(),
        )
        secret = None
        if client.token_endpoint_auth_method != "none":
            secret = secrets.token_urlsafe(32)
            client = replace(client, client_secret_hash=secret_hash(secret))
        try:
            await self.store.save_client(client)
        except StoreFullError:
            raise OAuthEndpointError(
                "temporarily_unavailable", "no more clients can be registered now", 503
            ) from None
        answer: dict[str, Any] = {
            "client_id": client.client_id,
            "client_id_issued_at": int(client.created_at),
            "redirect_uris": list(client.redirect_uris),
            "token_endpoint_auth_method": client.token_endpoint_auth_method,
            "grant_types": list(client.grant_types),
            "response_types": ["code"],
        }
        if secret is not None:
            answer["client_secret"] = secret
            answer["client_secret_expires_at"] = 0
        for name in ("client_name", "scope", "client_uri"):
            if getattr(client, name):
                answer[name] = getattr(client, name)
        return answer

    async def authenticate(
        self, params: Mapping[str, str], headers: Mapping[str, str]
    ) -> ClientRecord:
        """The client a token or revocation request comes from; ``invalid_client`` (401)
        when it is unknown or its credentials are wrong."""
        client_id, secret, method = params.get("client_id"), params.get("client_secret"), "none"
        authorization = headers.get("authorization", "")
        if authorization[:6].lower() == "basic ":
            try:
                raw = base64.b64decode(authorization[6:].strip(), validate=True).decode("utf-8")
                basic_id, _, basic_secret = raw.partition(":")
            except (ValueError, UnicodeDecodeError):
                raise OAuthEndpointError(
                    "invalid_client", "malformed Basic credentials", 401
                ) from None
            if client_id is not None and client_id != unquote(basic_id):
                raise OAuthEndpointError("invalid_request", "two different client ids", 400)
            client_id, secret, method = (
                unquote(basic_id),
                unquote(basic_secret),
                "client_secret_basic",
            )
        elif secret is not None:
            method = "client_secret_post"
        if not client_id:
            raise OAuthEndpointError("invalid_client", "the client is not identified", 401)
        try:
            client = await self.get(client_id)
        except OAuthEndpointError as exc:
            raise OAuthEndpointError("invalid_client", exc.description, 401) from None
        if client is None:
            raise OAuthEndpointError("invalid_client", "unknown client", 401)
        if client.client_secret_hash:
            if secret is None or not hmac.compare_digest(
                secret_hash(secret), client.client_secret_hash
            ):
                raise OAuthEndpointError("invalid_client", "client authentication failed", 401)
            if method != client.token_endpoint_auth_method:
                raise OAuthEndpointError(
                    "invalid_client",
                    f"the client authenticates with {client.token_endpoint_auth_method}",
                    401,
                )
        elif secret:
            raise OAuthEndpointError("invalid_client", "a public client has no secret", 401)
        return client


__all__ = [
    "AUTH_METHODS",
    "MAX_REDIRECT_URIS",
    "ClientRegistry",
    "check_redirect_uri",
    "client_from_metadata",
    "registered_redirect",
    "secret_hash",
]

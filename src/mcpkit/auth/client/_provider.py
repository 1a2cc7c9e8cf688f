"""``OAuthClientProvider``: the MCP client's side of authorization.

It plugs into the HTTP client transport through three hooks
(``HttpClientTransportOptions``): ``apply_per_request_headers`` puts the access token
(and, for DPoP-bound tokens, a fresh DPoP proof) on every request;
``observe_response_challenge`` collects ``DPoP-Nonce`` values; ``auth_challenge_handler``
answers a 401 (or a 403 ``insufficient_scope``) by authorizing and returning the
``Authorization`` value to retry with. ``provider.install(options)`` sets all three.

What a challenge sets off, in the spec's order:

1. protected-resource metadata: the challenge's ``resource_metadata``, else the
   path-suffixed well-known URL, else the root one (none at all: the 2025-03-26 rules, the
   server's origin is the authorization server); its ``resource`` must name this server;
2. authorization-server metadata: RFC 8414 then OpenID discovery (path-inserted, then
   path-appended), its ``issuer`` identical to the one asked for;
3. a client identity at that server: pre-registered, else a Client ID Metadata Document
   URL when the server supports them, else dynamic registration (RFC 7591) with an
   ``application_type``; registrations are kept per authorization server;
4. a token: authorization code with PKCE S256 (refused when the server does not list
   S256), ``state``, RFC 8707 ``resource`` and the RFC 9207 ``iss`` check; or the client
   credentials grant; or the JWT-bearer grant with an assertion; refresh when a refresh
   token is at hand;
5. scopes: the challenge's ``scope``, else the metadata's ``scopes_supported``, else none;
   a step-up (``insufficient_scope``) asks for the union of what was asked before and what
   the challenge names, at most ``max_authorizations_per_scope`` times per scope set.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import inspect
import logging
import secrets
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode, urlsplit

import httpx

from mcpkit.auth._challenge import Challenge, find_challenge, parse_www_authenticate
from mcpkit.auth._dpop import DPoPProofFactory, b64url
from mcpkit.auth._types import OAuthError
from mcpkit.auth.client._discovery import (
    AuthorizationServerMetadata,
    ProtectedResourceMetadata,
    discover_authorization_server,
    discover_protected_resource,
    fallback_metadata,
    origin,
    resource_matches_server,
)
from mcpkit.auth.client._grants import JWT_BEARER_GRANT, AssertionContext
from mcpkit.auth.client._responses import json_object, refusal
from mcpkit.auth.client._storage import (
    MemoryTokenStorage,
    OAuthClientInformation,
    OAuthToken,
    TokenStorage,
)

logger = logging.getLogger("mcpkit.auth.client")

#: Authorization attempts for one scope set before a challenge is treated as final.
DEFAULT_MAX_AUTHORIZATIONS_PER_SCOPE = 2
CLIENT_ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
_LOOPBACK = ("localhost", "127.0.0.1", "::1")

#: ``authorize(url)`` shows the user the authorization URL and returns where the
#: authorization server sent them back: the full redirect URL (or its query parameters).
AuthorizeCallback = Callable[[str], Awaitable["str | Mapping[str, str]"]]


@dataclass(slots=True)
class OAuthClientMetadata:
    """What the client says about itself when registering (RFC 7591) or in its Client ID
    Metadata Document."""

    redirect_uris: Sequence[str] = ()
    client_name: str = "mcpkit client"
    grant_types: Sequence[str] = ("authorization_code", "refresh_token")
    response_types: Sequence[str] = ("code",)
    #: None: the provider picks from what the authorization server supports.
    token_endpoint_auth_method: str | None = None
    #: None: "native" when every redirect URI is loopback or a private scheme, else "web".
    application_type: str | None = None
    scope: str | None = None
    client_uri: str | None = None
    logo_uri: str | None = None
    software_id: str | None = None
    software_version: str | None = None
    contacts: Sequence[str] = ()
    extra: Mapping[str, Any] = field(default_factory=dict)

    def resolved_application_type(self) -> str:
        if self.application_type:
            return self.application_type
        for uri in self.redirect_uris:
            parts = urlsplit(uri)
            if parts.scheme in ("http", "https") and (parts.hostname or "") not in _LOOPBACK:
                return "web"
        return "native"

    def registration_request(self, auth_method: str) -> dict[str, Any]:
        body: dict[str, Any] = {
            "client_name": self.client_name,
            "redirect_uris": list(self.redirect_uris),
            "grant_types": list(self.grant_types),
            "response_types": list(self.response_types),
            "token_endpoint_auth_method": auth_method,
            "application_type": self.resolved_application_type(),
        }
        for name in ("scope", "client_uri", "logo_uri", "software_id", "software_version"):
            value = getattr(self, name)
            if value:
                body[name] = value
        if self.contacts:
            body["contacts"] = list(self.contacts)
        body.update(self.extra)
        return body


def pkce_pair() -> tuple[str, str]:
    """(code_verifier, S256 code_challenge) — RFC 7636."""
    verifier = secrets.token_urlsafe(48)  # 64 unreserved characters
    challenge = b64url(hashlib.sha256(verifier.encode("ascii")).digest())
    return verifier, challenge


def _basic_credentials(client_id: str, secret: str) -> str:
    # RFC 6749 §2.3.1: form-urlencode each part before joining.
    raw = f"{quote(client_id, safe='')}:{quote(secret, safe='')}".encode()
    return "Basic " + base64.b64encode(raw).decode("ascii")


def _merge_scopes(*groups: Sequence[str] | None) -> list[str]:
    out: list[str] = []
    for group in groups:
        for scope in group or ():
            if scope and scope not in out:
                out.append(scope)
    return out


class OAuthClientProvider:
    """OAuth 2.1 for one MCP server (``server_url``); see the module docstring.

    Give ``authorize`` (an async callable that takes the authorization URL and returns the
    redirect it ended at) for the authorization code grant, or ``grant_type=
    "client_credentials"`` with ``client_id``/``client_secret`` (or ``private_key`` for
    ``private_key_jwt``). ``client_id`` alone is a pre-registered public client;
    ``client_issuer`` binds pre-registered credentials to their authorization server.
    ``grant_type="jwt_bearer"`` with ``assertion`` (a JWT, or a callable given an
    ``AssertionContext``, e.g. ``IdJagTokenExchange``) uses RFC 7523 (workload identity
    federation, enterprise-managed authorization).
    ``dpop=True`` makes a P-256 key and asks for DPoP-bound tokens (RFC 9449).
    """

    def __init__(
        self,
        server_url: str,
        *,
        client_metadata: OAuthClientMetadata | None = None,
        authorize: AuthorizeCallback | None = None,
        client_id: str | None = None,
        client_secret: str | None = None,
        client_issuer: str | None = None,
        token_endpoint_auth_method: str | None = None,
        client_metadata_url: str | None = None,
        grant_type: str = "authorization_code",
        assertion: Any = None,
        private_key: Any = None,
        signing_algorithm: str | None = None,
        scopes: Sequence[str] | None = None,
        storage: TokenStorage | None = None,
        dpop: bool | DPoPProofFactory = False,
        http_client: httpx.AsyncClient | None = None,
        max_authorizations_per_scope: int = DEFAULT_MAX_AUTHORIZATIONS_PER_SCOPE,
        request_offline_access: bool = True,
        timeout: float = 30.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if grant_type in ("jwt_bearer", JWT_BEARER_GRANT):
            grant_type = "jwt_bearer"
            if assertion is None:
                raise ValueError(
                    "the JWT-bearer grant needs an assertion (a JWT, or a callable making one)"
                )
        if grant_type not in ("authorization_code", "client_credentials", "jwt_bearer"):
            raise ValueError(f"unsupported grant type {grant_type!r}")
        if client_metadata_url is not None:
            parts = urlsplit(client_metadata_url)
            if parts.scheme != "https" or parts.path in ("", "/"):
                raise ValueError("a Client ID Metadata Document URL must be https with a path")
        self.server_url = server_url.split("#", 1)[0]
        self.client_metadata = client_metadata or OAuthClientMetadata()
        self.authorize_callback = authorize
        self.client_id = client_id
        self.client_secret = client_secret
        self.client_issuer = client_issuer
        self.token_endpoint_auth_method = token_endpoint_auth_method
        self.client_metadata_url = client_metadata_url
        self.grant_type = grant_type
        self.assertion = assertion
        self.private_key = self._load_private_key(private_key)
        self.signing_algorithm = signing_algorithm
        self.scopes = list(scopes) if scopes else None
        self.storage: TokenStorage = storage or MemoryTokenStorage()
        if dpop is True:
            self.dpop: DPoPProofFactory | None = DPoPProofFactory(clock=clock)
        else:
            self.dpop = dpop or None
        self.max_authorizations_per_scope = max_authorizations_per_scope
        self.request_offline_access = request_offline_access
        self.clock = clock
        self._http = http_client
        self._own_http = http_client is None
        self._timeout = timeout
        self._token: OAuthToken | None = None
        self._loaded = False
        self._prm: ProtectedResourceMetadata | None = None
        self._as: AuthorizationServerMetadata | None = None
        self._client: OAuthClientInformation | None = None
        self._resource: str | None = None
        self._requested: list[str] = []
        self._attempts: dict[frozenset[str], int] = {}
        self._nonces: dict[str, str] = {}
        self._lock = asyncio.Lock()
        #: Every authorization URL handed to ``authorize`` (newest last), for inspection.
        self.authorization_requests: list[str] = []

    # -- plumbing -----------------------------------------------------------------------

    @staticmethod
    def _load_private_key(key: Any) -> Any:
        """A joserfc key from a PEM (EC, RSA or OKP), or the key given."""
        if key is None or not isinstance(key, (str, bytes)):
            return key
        from joserfc.errors import JoseError
        from joserfc.jwk import import_key

        data = key.encode() if isinstance(key, str) else key
        for key_type in ("EC", "RSA", "OKP"):
            try:
                return import_key(data, key_type)
            except (JoseError, ValueError, TypeError):
                continue
        raise ValueError("private_key is not a PEM EC, RSA or OKP private key")

    @property
    def http(self) -> httpx.AsyncClient:
        if self._http is None:
            self._http = httpx.AsyncClient(timeout=self._timeout, follow_redirects=False)
        return self._http

    async def aclose(self) -> None:
        if self._own_http and self._http is not None:
            await self._http.aclose()
            self._http = None

    async def __aenter__(self) -> OAuthClientProvider:
        await self.load()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()

    @property
    def _token_key(self) -> str:
        return self.server_url

    async def load(self) -> OAuthToken | None:
        """Read a stored token so the first request already carries it."""
        if not self._loaded:
            self._loaded = True
            stored = await self.storage.get_tokens(self._token_key)
            if stored is not None and self._token is None:
                self._token = stored
        return self._token

    @property
    def token(self) -> OAuthToken | None:
        return self._token

    def authorization_value(self) -> str | None:
        token = self._token
        return f"{token.scheme} {token.access_token}" if token is not None else None

    async def _set_token(self, token: OAuthToken | None) -> None:
        self._token = token
        await self.storage.set_tokens(self._token_key, token)

    # -- transport hooks ----------------------------------------------------------------

    def install(self, options: Any) -> Any:
        """Set the three hooks on ``HttpClientTransportOptions``; returns the options."""
        options.apply_per_request_headers = self.apply_per_request_headers
        options.observe_response_challenge = self.observe_response_challenge
        options.auth_challenge_handler = self.auth_challenge_handler
        return options

    def _same_server(self, url: str) -> bool:
        return origin(url) == origin(self.server_url)

    def apply_per_request_headers(self, context: Any, headers: dict[str, str]) -> None:
        """Put the access token (and a DPoP proof) on a request to this server."""
        token = self._token
        if token is None or not self._same_server(context.url):
            return
        headers["Authorization"] = f"{token.scheme} {token.access_token}"
        self.apply_dpop_proof(context, headers)

    def apply_dpop_proof(self, context: Any, headers: dict[str, str]) -> None:
        """A fresh DPoP proof for this request, when the token is DPoP-bound."""
        token = self._token
        if self.dpop is None or token is None or not token.is_dpop:
            return
        headers["DPoP"] = self.dpop.proof(
            context.method,
            context.url,
            access_token=token.access_token,
            nonce=self._nonces.get(origin(context.url)),
        )

    def observe_dpop_nonce(self, context: Any) -> None:
        """Remember a ``DPoP-Nonce`` a response carried (2xx and SSE included)."""
        nonce = getattr(context, "dpop_nonce", None)
        if nonce:
            self._nonces[origin(context.url)] = nonce

    observe_response_challenge = observe_dpop_nonce

    async def auth_challenge_handler(
        self, www_authenticate: str, status_code: int | None = None
    ) -> str:
        """The transport's hook: the ``Authorization`` value to retry with, or "" for none."""
        if status_code is None:
            status_code = 403 if "insufficient_scope" in (www_authenticate or "") else 401
        return await self.handle_challenge(www_authenticate, status_code) or ""

    # -- challenges ---------------------------------------------------------------------

    async def handle_challenge(
        self, www_authenticate: str | Sequence[str] | None, status_code: int = 401
    ) -> str | None:
        """React to a 401/403 challenge; the ``Authorization`` value to retry with, or None
        when retrying would not help. Raises ``OAuthError`` when authorization fails."""
        challenges = parse_www_authenticate(www_authenticate)
        challenge = (
            find_challenge(challenges, "DPoP", "Bearer")
            if self.dpop
            else find_challenge(challenges, "Bearer", "DPoP")
        )
        challenge = challenge or Challenge("Bearer")
        used = self._token
        async with self._lock:
            await self.load()
            if (
                self._token is not None
                and self._token is not used
                and not self._token.expired(self.clock())
            ):
                return self.authorization_value()  # renewed meanwhile (or loaded from storage)
            if challenge.error == "use_dpop_nonce":
                return self.authorization_value() if self._token is not None else None
            if status_code == 403:
                if challenge.error != "insufficient_scope":
                    return None
                wanted = _merge_scopes(self._requested, challenge.scopes)
                return await self._authorize_limited(
                    wanted, challenge.resource_metadata, step_up=True
                )
            # Discover again on every 401: the resource may have moved to another
            # authorization server, whose tokens (and client ids) are not the old one's.
            discovered = await self._discover(challenge.resource_metadata)
            if used is not None and used.refresh_token and self.grant_type == "authorization_code":
                refreshed = await self._try_refresh(None, discovered[0], discovered[1])
                if refreshed is not None:
                    return self.authorization_value()
            return await self._authorize_limited(
                challenge.scopes or None, challenge.resource_metadata, discovered=discovered
            )

    async def _authorize_limited(
        self,
        scopes: list[str] | None,
        resource_metadata: str | None,
        step_up: bool = False,
        discovered: tuple[AuthorizationServerMetadata, str, list[str] | None] | None = None,
    ) -> str | None:
        key = frozenset(scopes or ())
        count = self._attempts.get(key, 0)
        if count >= self.max_authorizations_per_scope:
            logger.warning(
                "authorization for scopes %s already tried %d times; giving up", sorted(key), count
            )
            return None
        self._attempts[key] = count + 1
        await self._authorize(scopes, resource_metadata, step_up=step_up, discovered=discovered)
        return self.authorization_value()

    async def ensure_token(self) -> OAuthToken:
        """A usable token, authorizing now (discovery via the well-known URLs) when there
        is none: for clients that authorize before their first request."""
        async with self._lock:
            await self.load()
            token = self._token
            if token is not None and not token.expired(self.clock()):
                return token
            if token is not None and token.refresh_token:
                refreshed = await self._try_refresh(None)
                if refreshed is not None:
                    return refreshed
            await self._authorize(self.scopes, None)
            assert self._token is not None
            return self._token

    # -- discovery ----------------------------------------------------------------------

    async def _discover(
        self, resource_metadata: str | None
    ) -> tuple[AuthorizationServerMetadata, str, list[str] | None]:
        """(authorization server, resource identifier, scopes_supported of the resource)."""
        prm = await discover_protected_resource(self.http, self.server_url, resource_metadata)
        self._prm = prm
        if prm is not None:
            if not resource_matches_server(prm.resource, self.server_url):
                raise OAuthError(
                    f"protected-resource metadata names resource {prm.resource!r}, not this server "
                    f"({self.server_url}); refusing to authorize",
                    error="invalid_resource",
                )
            if not prm.authorization_servers:
                raise OAuthError(
                    f"protected-resource metadata at {prm.url} lists no authorization server"
                )
            issuer = prm.authorization_servers[0]
            metadata = await discover_authorization_server(self.http, issuer)
            if metadata is None:
                raise OAuthError(f"no authorization server metadata found for {issuer}")
            resource = prm.resource
            scopes = prm.scopes_supported
        else:
            # 2025-03-26: no resource metadata; the server's origin is the authorization server.
            logger.info(
                "no protected-resource metadata for %s; using its origin as authorization server",
                self.server_url,
            )
            metadata = await discover_authorization_server(
                self.http, origin(self.server_url), same_origin_issuer=True
            ) or fallback_metadata(self.server_url)
            resource = self.server_url
            scopes = None
        if self._as is not None and self._as.issuer != metadata.issuer:
            logger.info(
                "authorization server changed from %s to %s", self._as.issuer, metadata.issuer
            )
            self._client = None
        self._as = metadata
        self._resource = resource
        return metadata, resource, scopes

    # -- client identity ----------------------------------------------------------------

    def _issuer_key(self, metadata: AuthorizationServerMetadata) -> str:
        return metadata.issuer or origin(metadata.token_endpoint)

    async def _client_for(self, metadata: AuthorizationServerMetadata) -> OAuthClientInformation:
        key = self._issuer_key(metadata)
        if self.client_id is not None:
            if (
                self.client_issuer is not None
                and metadata.issuer is not None
                and self.client_issuer != metadata.issuer
            ):
                raise OAuthError(
                    f"the pre-registered client is for {self.client_issuer}, but this server now uses "
                    f"{metadata.issuer}; refusing to use its credentials there",
                    error="invalid_client",
                )
            return OAuthClientInformation(
                client_id=self.client_id,
                client_secret=self.client_secret,
                token_endpoint_auth_method=self.token_endpoint_auth_method,
                issuer=key,
            )
        if self._client is not None and self._client.issuer == key:
            return self._client
        stored = await self.storage.get_client(key)
        if (
            stored is not None
            and stored.issuer == key
            and not (
                stored.client_secret_expires_at and stored.client_secret_expires_at <= self.clock()
            )
        ):
            self._client = stored
            return stored
        if self.client_metadata_url is not None and metadata.supports_cimd:
            method = "private_key_jwt" if self.private_key is not None else "none"
            self._client = OAuthClientInformation(self.client_metadata_url, None, method, key)
            return self._client
        if metadata.registration_endpoint:
            self._client = await self._register(metadata, key)
            await self.storage.set_client(key, self._client)
            return self._client
        raise OAuthError(
            f"cannot get a client id at {key}: it supports neither Client ID Metadata Documents "
            "(or none was configured) nor dynamic registration; configure a pre-registered client_id",
            error="invalid_client",
        )

    def _registration_auth_method(self, metadata: AuthorizationServerMetadata) -> str:
        if self.client_metadata.token_endpoint_auth_method:
            return self.client_metadata.token_endpoint_auth_method
        supported = metadata.token_auth_methods
        for method in ("none", "client_secret_basic", "client_secret_post"):
            if method in supported:
                return method
        return supported[0] if supported else "client_secret_basic"

    async def _register(
        self, metadata: AuthorizationServerMetadata, key: str
    ) -> OAuthClientInformation:
        assert metadata.registration_endpoint is not None
        if self.grant_type == "authorization_code" and not self.client_metadata.redirect_uris:
            raise OAuthError("dynamic registration needs client_metadata.redirect_uris")
        method = self._registration_auth_method(metadata)
        body = self.client_metadata.registration_request(method)
        if self.grant_type == "client_credentials":
            body["grant_types"] = ["client_credentials"]
            body["response_types"] = []
        elif self.grant_type == "jwt_bearer":
            body["grant_types"] = [JWT_BEARER_GRANT]
            body["response_types"] = []
        try:
            response = await self.http.post(
                metadata.registration_endpoint, json=body, headers={"accept": "application/json"}
            )
        except httpx.HTTPError as exc:
            raise OAuthError(
                f"dynamic registration at {metadata.registration_endpoint} failed: {exc!r}"
            ) from exc
        data = json_object(response)
        if response.status_code not in (200, 201) or not isinstance(data.get("client_id"), str):
            raise refusal("dynamic registration", response, data)
        expires = data.get("client_secret_expires_at")
        return OAuthClientInformation(
            client_id=data["client_id"],
            client_secret=data.get("client_secret")
            if isinstance(data.get("client_secret"), str)
            else None,
            token_endpoint_auth_method=data.get("token_endpoint_auth_method") or method,
            issuer=key,
            client_secret_expires_at=float(expires)
            if isinstance(expires, (int, float)) and expires > 0
            else None,
            registration=data,
        )

    # -- authorization ------------------------------------------------------------------

    async def _authorize(
        self,
        scope_hint: list[str] | None,
        resource_metadata: str | None,
        step_up: bool = False,
        discovered: tuple[AuthorizationServerMetadata, str, list[str] | None] | None = None,
    ) -> None:
        metadata, resource, resource_scopes = discovered or await self._discover(resource_metadata)
        if scope_hint:
            scopes = list(scope_hint)
        elif resource_scopes:
            scopes = list(resource_scopes)
        else:
            scopes = list(self.scopes or ())
        if step_up:
            scopes = _merge_scopes(self._requested, scopes)
        if self.grant_type == "client_credentials":
            token = await self._client_credentials(metadata, resource, scopes)
        elif self.grant_type == "jwt_bearer":
            token = await self._jwt_bearer(metadata, resource, scopes)
        else:
            token = await self._authorization_code(metadata, resource, scopes)
        self._requested = [s for s in scopes if s != "offline_access"]
        await self._set_token(token)

    async def _authorization_code(
        self, metadata: AuthorizationServerMetadata, resource: str, scopes: list[str]
    ) -> OAuthToken:
        if self.authorize_callback is None:
            raise OAuthError("the authorization code grant needs an authorize callback")
        if not metadata.authorization_endpoint:
            raise OAuthError("the authorization server publishes no authorization_endpoint")
        if "S256" not in metadata.code_challenge_methods:
            raise OAuthError(
                f"the authorization server {metadata.issuer} does not list S256 in "
                "code_challenge_methods_supported; refusing to proceed without PKCE",
                error="pkce_unsupported",
            )
        if not self.client_metadata.redirect_uris:
            raise OAuthError("the authorization code grant needs client_metadata.redirect_uris")
        client = await self._client_for(metadata)
        redirect_uri = self.client_metadata.redirect_uris[0]
        if (
            self.request_offline_access
            and "refresh_token" in self.client_metadata.grant_types
            and "offline_access" in metadata.scopes_supported
        ):
            scopes = _merge_scopes(scopes, ["offline_access"])
        verifier, challenge = pkce_pair()
        state = secrets.token_urlsafe(24)
        expected_issuer = metadata.issuer  # recorded with the verifier and state (RFC 9207)
        params = {
            "response_type": "code",
            "client_id": client.client_id,
            "redirect_uri": redirect_uri,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            "state": state,
            "resource": resource,
        }
        if scopes:
            params["scope"] = " ".join(scopes)
        endpoint = metadata.authorization_endpoint
        url = f"{endpoint}{'&' if urlsplit(endpoint).query else '?'}{urlencode(params)}"
        self.authorization_requests.append(url)
        answer = await self.authorize_callback(url)
        response = (
            dict(parse_qsl(urlsplit(answer).query, keep_blank_values=True))
            if isinstance(answer, str)
            else dict(answer)
        )
        self._check_authorization_response(response, metadata, expected_issuer, state)
        code = response.get("code")
        if not code:
            raise OAuthError("the authorization response carries no code")
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": redirect_uri,
            "code_verifier": verifier,
            "resource": resource,
        }
        return await self._token_request(metadata, client, form, resource)

    @staticmethod
    def _check_authorization_response(
        response: Mapping[str, str],
        metadata: AuthorizationServerMetadata,
        expected_issuer: str | None,
        state: str,
    ) -> None:
        """RFC 9207 §2.4 as the MCP spec tabulates it, before anything else is looked at."""
        iss = response.get("iss")
        if expected_issuer is not None:
            if iss is not None:
                if iss != expected_issuer:  # simple string comparison, no normalization
                    raise OAuthError(
                        f"authorization response iss {iss!r} is not the authorization server {expected_issuer!r}; "
                        "discarding it (possible mix-up attack)",
                        error="invalid_issuer",
                    )
            elif metadata.iss_parameter_supported:
                raise OAuthError(
                    "the authorization server advertises the iss parameter but the response has none; discarding it",
                    error="invalid_issuer",
                )
        if response.get("state") != state:
            raise OAuthError(
                "authorization response state does not match the request; discarding it",
                error="invalid_state",
            )
        if response.get("error"):
            raise OAuthError(
                f"authorization refused: {response['error']} {response.get('error_description', '')}".strip(),
                error=response["error"],
            )

    async def _client_credentials(
        self, metadata: AuthorizationServerMetadata, resource: str, scopes: list[str]
    ) -> OAuthToken:
        client = await self._client_for(metadata)
        form = {"grant_type": "client_credentials", "resource": resource}
        if scopes:
            form["scope"] = " ".join(scopes)
        return await self._token_request(metadata, client, form, resource)

    async def _jwt_bearer(
        self, metadata: AuthorizationServerMetadata, resource: str, scopes: list[str]
    ) -> OAuthToken:
        """RFC 7523 §2.1: the assertion is the grant. A refusal is final: no retry with
        another grant type."""
        client = await self._client_for(metadata)
        assertion = self.assertion
        if callable(assertion):
            context = AssertionContext(
                metadata.issuer, metadata.token_endpoint, resource, tuple(scopes), self.http
            )
            assertion = assertion(context)
            if inspect.isawaitable(assertion):
                assertion = await assertion
        if not isinstance(assertion, str) or not assertion:
            raise OAuthError("the assertion source gave no assertion")
        form = {"grant_type": JWT_BEARER_GRANT, "assertion": assertion, "resource": resource}
        if scopes:
            form["scope"] = " ".join(scopes)
        return await self._token_request(metadata, client, form, resource)

    async def _try_refresh(
        self,
        resource_metadata: str | None,
        metadata: AuthorizationServerMetadata | None = None,
        resource: str | None = None,
    ) -> OAuthToken | None:
        token = self._token
        if token is None or not token.refresh_token:
            return None
        try:
            if metadata is None or resource is None:
                metadata, resource = self._as, self._resource
            if metadata is None or resource is None:
                metadata, resource, _ = await self._discover(resource_metadata)
            if token.issuer and metadata.issuer and token.issuer != metadata.issuer:
                return None  # another authorization server now: its refresh token is no use
            client = await self._client_for(metadata)
            form = {
                "grant_type": "refresh_token",
                "refresh_token": token.refresh_token,
                "resource": resource,
            }
            fresh = await self._token_request(metadata, client, form, resource)
        except OAuthError as exc:
            logger.info("token refresh failed (%s); authorizing again", exc)
            await self._set_token(None)
            return None
        if fresh.refresh_token is None:
            fresh.refresh_token = token.refresh_token
        if fresh.scope is None:
            fresh.scope = token.scope
        await self._set_token(fresh)
        return fresh

    async def refresh(self) -> OAuthToken | None:
        """Use the refresh token now; None when there is none or it was refused."""
        async with self._lock:
            await self.load()
            return await self._try_refresh(None)

    # -- the token endpoint ---------------------------------------------------------------

    def _client_assertion(
        self, client: OAuthClientInformation, metadata: AuthorizationServerMetadata
    ) -> str:
        from joserfc import jwt

        key = self.private_key
        alg = self.signing_algorithm or (
            "ES256" if getattr(key, "key_type", "") == "EC" else "RS256"
        )
        now = int(self.clock())
        audience = metadata.issuer or metadata.token_endpoint
        claims = {
            "iss": client.client_id,
            "sub": client.client_id,
            "aud": audience,
            "iat": now,
            "exp": now + 300,
            "jti": uuid.uuid4().hex,
        }
        return jwt.encode({"alg": alg}, claims, key, algorithms=[alg])

    async def _token_request(
        self,
        metadata: AuthorizationServerMetadata,
        client: OAuthClientInformation,
        form: dict[str, str],
        resource: str,
    ) -> OAuthToken:
        form = dict(form)
        headers = {
            "accept": "application/json",
            "content-type": "application/x-www-form-urlencoded",
        }
        method = client.token_endpoint_auth_method or (
            "client_secret_basic" if client.client_secret else "none"
        )
        if method == "private_key_jwt" and self.private_key is None:
            raise OAuthError("private_key_jwt needs a private_key")
        if method == "client_secret_basic" and client.client_secret:
            headers["authorization"] = _basic_credentials(client.client_id, client.client_secret)
        elif method == "client_secret_post" and client.client_secret:
            form["client_id"] = client.client_id
            form["client_secret"] = client.client_secret
        elif method == "private_key_jwt":
            form["client_id"] = client.client_id
            form["client_assertion_type"] = CLIENT_ASSERTION_TYPE
            form["client_assertion"] = self._client_assertion(client, metadata)
        else:
            form["client_id"] = client.client_id
        endpoint = metadata.token_endpoint
        where = origin(endpoint)
        response: httpx.Response | None = None
        for attempt in range(2):
            if self.dpop is not None:
                headers["DPoP"] = self.dpop.proof("POST", endpoint, nonce=self._nonces.get(where))
            try:
                response = await self.http.post(endpoint, content=urlencode(form), headers=headers)
            except httpx.HTTPError as exc:
                raise OAuthError(f"token request to {endpoint} failed: {exc!r}") from exc
            nonce = response.headers.get("dpop-nonce")
            if nonce:
                self._nonces[where] = nonce
            body = json_object(response)
            if (
                attempt == 0
                and self.dpop is not None
                and nonce
                and response.status_code in (400, 401)
                and body.get("error") == "use_dpop_nonce"
            ):
                continue  # RFC 9449 §8: once more, with the server's nonce
            break
        assert response is not None
        if response.status_code != 200 or not isinstance(body.get("access_token"), str):
            raise refusal("token request", response, body)
        token_type = str(body.get("token_type") or "Bearer")
        if token_type.lower() not in ("bearer", "dpop"):
            raise OAuthError(f"unsupported token type {token_type!r}")
        if token_type.lower() == "dpop" and self.dpop is None:
            raise OAuthError("the authorization server issued a DPoP-bound token, but DPoP is off")
        return OAuthToken.from_response(
            body, issuer=metadata.issuer, resource=resource, now=self.clock()
        )


__all__ = ["AuthorizeCallback", "OAuthClientMetadata", "OAuthClientProvider", "pkce_pair"]

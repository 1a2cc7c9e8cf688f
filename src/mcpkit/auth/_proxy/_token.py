"""The token endpoint (``authorization_code`` with PKCE S256, ``refresh_token`` with
rotation) and the revocation endpoint (RFC 7009).

With DPoP on (``OAuthProxy(dpop=True)``), a token request carrying a ``DPoP`` proof gets
tokens bound to the proof's key (RFC 9449): the access token names its thumbprint
(``cnf.jkt``, ``token_type: DPoP``), and a public client's refresh token is bound to it, so
a refresh must prove the same key. A proof's ``jti`` is refused twice by this process; a
proof replayed to another instance still needs the code or refresh token it came with,
and both are good once.

A code is good once: a second use is refused and revokes the tokens the first one gave
(OAuth 2.1 §4.1.3). A refresh token is good once too: each use gives a new one of the same
family, and a used one presented again (a stolen copy, or the thief's) revokes the whole
family, access tokens included (OAuth 2.1 §6.1, the Security BCP's reuse detection).
"""

from __future__ import annotations

import hmac
import re
import secrets
from collections.abc import Mapping
from typing import Any

from mcpkit.auth._dpop import DPoPError, DPoPProofVerifier
from mcpkit.auth._proxy._access import AccessTokens
from mcpkit.auth._proxy._authorize import s256
from mcpkit.auth._proxy._clients import ClientRegistry, secret_hash
from mcpkit.auth._proxy._http import (
    OAuthEndpointError,
    Receive,
    Scope,
    Send,
    form_params,
    headers_of,
    send,
    send_error,
    send_json,
)
from mcpkit.auth._proxy._records import ClientRecord, RefreshRecord, UpstreamIdentity
from mcpkit.auth._proxy._settings import TOKEN_PATH, ProxySettings
from mcpkit.auth._proxy._store import ProxyStore
from mcpkit.auth._server import same_resource

#: A PKCE verifier: 43 to 128 unreserved characters (RFC 7636 §4.1).
_VERIFIER = re.compile(r"^[A-Za-z0-9._~-]{43,128}$")


def _grant_error(description: str) -> OAuthEndpointError:
    return OAuthEndpointError("invalid_grant", description)


class TokenService:
    """``/token`` and ``/revoke``."""

    def __init__(
        self,
        settings: ProxySettings,
        store: ProxyStore,
        clients: ClientRegistry,
        tokens: AccessTokens,
    ) -> None:
        self.settings = settings
        self.store = store
        self.clients = clients
        self.tokens = tokens
        algorithms = settings.dpop_algorithms
        #: Checks the proofs token requests carry (None: DPoP off, proofs ignored).
        self.dpop = (
            DPoPProofVerifier(algorithms=algorithms, clock=settings.clock)
            if algorithms is not None
            else None
        )

    def _proof(self, scope: Scope) -> str:
        """The thumbprint of the key the request's DPoP proof proves ("" without DPoP, or
        without a proof); ``invalid_dpop_proof`` for a bad one or several."""
        if self.dpop is None:
            return ""
        proofs = [v for k, v in scope.get("headers", ()) if k.lower() == b"dpop"]
        if not proofs:
            return ""
        if len(proofs) > 1:
            raise OAuthEndpointError("invalid_dpop_proof", "one DPoP proof per request")
        try:
            proof = self.dpop.verify(
                proofs[0].decode("latin-1"), method="POST", url=self.settings.url(TOKEN_PATH)
            )
        except DPoPError as exc:
            raise OAuthEndpointError("invalid_dpop_proof", exc.description) from None
        return proof.jkt

    async def token(self, scope: Scope, receive: Receive, send_: Send) -> None:
        """A token request (form POST)."""
        try:
            params = await form_params(scope, receive, self.settings.max_form_bytes)
            client = await self.clients.authenticate(params, headers_of(scope))
            jkt = self._proof(scope)
            grant = params.get("grant_type")
            if grant == "authorization_code":
                answer = await self._authorization_code(params, client, jkt)
            elif grant == "refresh_token":
                answer = await self._refresh(params, client, jkt)
            elif not grant:
                raise OAuthEndpointError("invalid_request", "grant_type is missing")
            else:
                raise OAuthEndpointError(
                    "unsupported_grant_type", f"the grant type {grant} is not supported"
                )
        except OAuthEndpointError as exc:
            await send_error(send_, exc)
            return
        await send_json(send_, 200, answer)

    def _allowed(self, client: ClientRecord, grant: str) -> None:
        if grant not in client.grant_types:
            raise OAuthEndpointError("unauthorized_client", f"the client may not use {grant}")

    async def _authorization_code(
        self, params: Mapping[str, str], client: ClientRecord, jkt: str
    ) -> dict[str, Any]:
        self._allowed(client, "authorization_code")
        code, verifier = params.get("code"), params.get("code_verifier")
        if not code:
            raise OAuthEndpointError("invalid_request", "code is missing")
        if not verifier:
            raise OAuthEndpointError("invalid_request", "code_verifier is missing (PKCE)")
        record = await self.store.take_code(secret_hash(code))
        if record is None:
            raise _grant_error("the code is unknown or expired")
        if record.used:
            await self._revoke_family(record.family)
            raise _grant_error("the code was already used; the tokens it gave are revoked")
        if record.client_id != client.client_id:
            raise _grant_error("the code was issued to another client")
        if params.get("redirect_uri", record.redirect_uri) != record.redirect_uri:
            raise _grant_error("redirect_uri is not the one of the authorization request")
        if not _VERIFIER.match(verifier) or not hmac.compare_digest(
            s256(verifier), record.code_challenge
        ):
            raise _grant_error("the code_verifier does not match the code_challenge (PKCE)")
        self._check_resource(params, record.resource)
        return await self._issue(
            client, record.identity, record.scopes, record.resource, record.family, jkt
        )

    def _check_resource(self, params: Mapping[str, str], resource: str) -> None:
        asked = params.get("resource")
        if asked is not None and not same_resource(asked, resource):
            raise OAuthEndpointError("invalid_target", f"tokens here are for {resource} only")

    async def _refresh(
        self, params: Mapping[str, str], client: ClientRecord, jkt: str
    ) -> dict[str, Any]:
        self._allowed(client, "refresh_token")
        token = params.get("refresh_token")
        if not token:
            raise OAuthEndpointError("invalid_request", "refresh_token is missing")
        key = secret_hash(token)
        # A bound token presented without its key is refused before it is taken: whoever
        # holds a copy but not the key cannot spend it (and so revoke the family).
        seen = await self.store.get_refresh(key)
        if seen is not None and seen.jkt and not hmac.compare_digest(seen.jkt, jkt):
            raise OAuthEndpointError(
                "invalid_dpop_proof", "the refresh token is bound to another DPoP key"
            )
        record = await self.store.take_refresh(key)
        if record is None:
            raise _grant_error("the refresh token is unknown or expired")
        if record.used:
            await self._revoke_family(record.family)
            raise _grant_error("the refresh token was already used; its family is revoked")
        if record.client_id != client.client_id:
            raise _grant_error("the refresh token was issued to another client")
        if await self.store.family_revoked(record.family):
            raise _grant_error("the refresh token was revoked")
        if record.jkt and not hmac.compare_digest(record.jkt, jkt):
            raise OAuthEndpointError(
                "invalid_dpop_proof", "the refresh token is bound to another DPoP key"
            )
        self._check_resource(params, record.resource)
        scopes = record.scopes
        if "scope" in params:
            asked = tuple(dict.fromkeys(params["scope"].split()))
            if any(s not in record.scopes for s in asked):
                raise OAuthEndpointError("invalid_scope", "more scopes than the grant holds")
            scopes = asked
        return await self._issue(
            client, record.identity, scopes, record.resource, record.family, jkt
        )

    async def _issue(
        self,
        client: ClientRecord,
        identity: UpstreamIdentity,
        scopes: tuple[str, ...],
        resource: str,
        family: str,
        jkt: str,
    ) -> dict[str, Any]:
        access, ttl = self.tokens.mint(identity, client.client_id, scopes, resource, family, jkt)
        answer: dict[str, Any] = {
            "access_token": access,
            "token_type": "DPoP" if jkt else "Bearer",
            "expires_in": ttl,
            "scope": " ".join(scopes),
        }
        if "refresh_token" in client.grant_types:
            refresh = secrets.token_urlsafe(32)
            await self.store.save_refresh(
                secret_hash(refresh),
                RefreshRecord(
                    client_id=client.client_id,
                    scopes=scopes,
                    resource=resource,
                    identity=identity,
                    family=family,
                    expires_at=self.settings.clock() + self.settings.refresh_token_ttl,
                    # A public client's refresh token is bound to its key (RFC 9449 §5).
                    jkt=jkt if client.token_endpoint_auth_method == "none" else "",
                ),
            )
            answer["refresh_token"] = refresh
        return answer

    async def _revoke_family(self, family: str) -> None:
        s = self.settings
        until = s.clock() + max(s.refresh_token_ttl, self.tokens.ttl)
        await self.store.revoke_family(family, until)

    # -- /revoke ----------------------------------------------------------------------------

    async def revoke(self, scope: Scope, receive: Receive, send_: Send) -> None:
        """RFC 7009: a refresh token revokes its family, an access token itself. Unknown
        tokens, and other clients' tokens, are answered 200 all the same (§2.2)."""
        try:
            params = await form_params(scope, receive, self.settings.max_form_bytes)
            client = await self.clients.authenticate(params, headers_of(scope))
            token = params.get("token")
            if not token:
                raise OAuthEndpointError("invalid_request", "token is missing")
        except OAuthEndpointError as exc:
            await send_error(send_, exc)
            return
        record = await self.store.get_refresh(secret_hash(token))
        if record is not None:
            if record.client_id == client.client_id:
                await self._revoke_family(record.family)
        else:
            result = await self.tokens.verifier().jwt.verify(token)
            jti = result.claims.get("jti") if result.ok else None
            if isinstance(jti, str) and result.client_id == client.client_id:
                await self.store.revoke_access_token(
                    jti, result.expires_at or self.settings.clock() + self.tokens.ttl
                )
        await send(send_, 200, b"", [(b"cache-control", b"no-store")])


__all__ = ["TokenService"]

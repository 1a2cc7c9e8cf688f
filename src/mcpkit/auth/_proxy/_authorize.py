"""The browser's part of the flow: the client's ``/authorize`` request, the consent form,
and the provider's redirect back to the proxy's callback.

1. ``/authorize`` checks the client (registered, or its client metadata document fetched
   and checked), its exact redirect URI (a mismatch is never
   redirected to), PKCE (S256 only), the scopes and the RFC 8707 ``resource``, and keeps
   the request as a pending authorization (``pending_ttl``) bound to the browser's cookie.
2. A browser that has not approved this client (the confused-deputy rule: consent is per
   client, never carried over from another) gets the consent page; its form carries a
   one-time CSRF token and is good only from the same browser.
3. Approved, the browser goes to the provider with the proxy's own PKCE challenge, state
   and nonce.
4. At the callback, the state names the pending authorization (taken: good once), the
   browser must be the one that started it, and the provider's code becomes an identity;
   the client gets a one-time code of the proxy's (``code_ttl``) at its redirect URI, with
   its ``state`` and the proxy's ``iss`` (RFC 9207).
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import replace

from mcpkit.auth._dpop import b64url
from mcpkit.auth._proxy._clients import ClientRegistry, registered_redirect, secret_hash
from mcpkit.auth._proxy._consent import consent_page
from mcpkit.auth._proxy._http import (
    OAuthEndpointError,
    Receive,
    Scope,
    Send,
    cookies_of,
    error_page,
    form_params,
    query_params,
    redirect,
    send_page,
    set_cookie,
    with_query,
)
from mcpkit.auth._proxy._records import AuthorizationCode, ClientRecord, PendingAuthorization
from mcpkit.auth._proxy._settings import CALLBACK_PATH, CONSENT_PATH, ProxySettings
from mcpkit.auth._proxy._store import ProxyStore
from mcpkit.auth._proxy._upstream import Upstream
from mcpkit.auth._server import same_resource

#: Seconds the browser cookie lasts.
BROWSER_COOKIE_AGE = 400 * 24 * 3600
#: What a PKCE challenge (S256: 43 base64url characters) looks like.
_CHALLENGE = re.compile(r"^[A-Za-z0-9_-]{43}$")
_BROWSER = re.compile(r"^[A-Za-z0-9_-]{20,64}$")


def s256(verifier: str) -> str:
    """The S256 code challenge of a PKCE verifier (RFC 7636 §4.2)."""
    return b64url(hashlib.sha256(verifier.encode("ascii")).digest())


class _Redirectable(Exception):
    """An error sent back to the client at its (checked) redirect URI."""

    def __init__(self, error: str, description: str) -> None:
        super().__init__(description)
        self.error = error
        self.description = description


class BrowserFlow:
    """``/authorize``, the consent form and the upstream callback."""

    def __init__(
        self,
        settings: ProxySettings,
        store: ProxyStore,
        upstream: Upstream,
        clients: ClientRegistry,
    ) -> None:
        self.settings = settings
        self.store = store
        self.upstream = upstream
        self.clients = clients

    # -- /authorize ---------------------------------------------------------------------

    async def authorize(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The client's authorization request (GET, or a form POST)."""
        try:
            if scope["method"] == "POST":
                params = await form_params(scope, receive, self.settings.max_form_bytes)
            else:
                params = query_params(scope)
            client, redirect_uri = await self._client_and_redirect(params)
        except OAuthEndpointError as exc:
            await send_page(send, exc.status, error_page(exc.description))
            return
        state = params.get("state")
        try:
            pending = await self._pending(params, client, redirect_uri, self._browser(scope))
        except _Redirectable as exc:
            await self._send_back(send, redirect_uri, state, exc.error, exc.description)
            return
        cookie = self._browser_cookie(pending.browser)
        if await self.store.has_consent(pending.browser, client.client_id, pending.scopes):
            await self._to_upstream(send, pending, [cookie])
            return
        pending = replace(pending, csrf=secrets.token_urlsafe(24))
        await self.store.save_pending(pending)
        page = consent_page(client, pending, self.settings.url(CONSENT_PATH), self.upstream.name)
        await send_page(send, 200, page, [cookie])

    async def _client_and_redirect(self, params: dict[str, str]) -> tuple[ClientRecord, str]:
        """The client and its redirect URI, or an error shown here (never redirected to)."""
        client_id = params.get("client_id")
        if not client_id:
            raise OAuthEndpointError("invalid_request", "the request names no client_id")
        client = await self.clients.get(client_id)
        if client is None:
            raise OAuthEndpointError("invalid_client", "unknown client_id")
        redirect_uri = params.get("redirect_uri")
        if redirect_uri is None:
            if len(client.redirect_uris) != 1:
                raise OAuthEndpointError("invalid_request", "the request names no redirect_uri")
            redirect_uri = client.redirect_uris[0]
        if not registered_redirect(redirect_uri, client.redirect_uris):
            raise OAuthEndpointError(
                "invalid_request", "redirect_uri is not one the client registered"
            )
        return client, redirect_uri

    def _browser(self, scope: Scope) -> str:
        """The browser's id from its cookie, or a new one."""
        value = cookies_of(scope).get(self.settings.browser_cookie, "")
        return value if _BROWSER.match(value) else secrets.token_urlsafe(24)

    def _browser_cookie(self, browser: str) -> tuple[bytes, bytes]:
        s = self.settings
        return set_cookie(
            s.browser_cookie,
            browser,
            path=s.cookie_path,
            max_age=BROWSER_COOKIE_AGE,
            secure=s.secure,
        )

    async def _pending(
        self, params: dict[str, str], client: ClientRecord, redirect_uri: str, browser: str
    ) -> PendingAuthorization:
        """The request checked; errors here go back to the client (``_Redirectable``)."""
        if params.get("response_type") != "code":
            raise _Redirectable("unsupported_response_type", "response_type must be code")
        if "authorization_code" not in client.grant_types:
            raise _Redirectable("unauthorized_client", "the client may not use authorization codes")
        challenge = params.get("code_challenge")
        method = params.get("code_challenge_method", "plain")
        if not challenge:
            raise _Redirectable("invalid_request", "PKCE is required: send code_challenge (S256)")
        if method != "S256":
            raise _Redirectable("invalid_request", "code_challenge_method must be S256")
        if not _CHALLENGE.match(challenge):
            raise _Redirectable("invalid_request", "code_challenge is not an S256 challenge")
        resource = params.get("resource", self.settings.resource)
        if not same_resource(resource, self.settings.resource):
            raise _Redirectable(
                "invalid_target", f"this server issues tokens for {self.settings.resource} only"
            )
        return PendingAuthorization(
            id=secrets.token_urlsafe(24),
            client_id=client.client_id,
            redirect_uri=redirect_uri,
            code_challenge=challenge,
            state=params.get("state"),
            scopes=self._scopes(params.get("scope"), client),
            resource=self.settings.resource,
            browser=browser,
            expires_at=self.settings.clock() + self.settings.pending_ttl,
        )

    def _scopes(self, asked: str | None, client: ClientRecord) -> tuple[str, ...]:
        supported = self.settings.scopes_supported
        if asked is None:
            asked = client.scope or " ".join(supported)
        scopes = tuple(dict.fromkeys(asked.split()))
        unknown = [s for s in scopes if supported and s not in supported]
        if unknown:
            raise _Redirectable("invalid_scope", f"unknown scopes: {' '.join(unknown)}")
        if client.scope and any(s not in client.scope.split() for s in scopes):
            raise _Redirectable("invalid_scope", "the client did not register these scopes")
        return scopes

    async def _send_back(
        self,
        send: Send,
        redirect_uri: str,
        state: str | None,
        error: str,
        description: str,
        headers: list[tuple[bytes, bytes]] | None = None,
    ) -> None:
        """An error to the client at its redirect URI, with its state and our issuer."""
        params = {
            "error": error,
            "error_description": description,
            "state": state,
            "iss": self.settings.issuer,
        }
        await redirect(send, with_query(redirect_uri, params), headers)

    async def _to_upstream(
        self, send: Send, pending: PendingAuthorization, headers: list[tuple[bytes, bytes]]
    ) -> None:
        """Send the browser to the provider, with the proxy's own PKCE, state and nonce."""
        verifier = secrets.token_urlsafe(48)
        nonce = secrets.token_urlsafe(16)
        token = secrets.token_urlsafe(24)
        pending = replace(
            pending,
            csrf="",
            upstream_state=secret_hash(token),
            upstream_verifier=verifier,
            upstream_nonce=nonce,
        )
        await self.store.save_pending(pending)
        try:
            url = await self.upstream.authorization_url(
                self.settings.url(CALLBACK_PATH), f"{pending.id}.{token}", s256(verifier), nonce
            )
        except OAuthEndpointError as exc:
            await self.store.take_pending(pending.id)
            await self._send_back(
                send,
                pending.redirect_uri,
                pending.state,
                "temporarily_unavailable",
                exc.description,
            )
            return
        await redirect(send, url, headers)

    # -- the consent form -----------------------------------------------------------------

    async def consent(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The consent form's answer (POST): approve sends the browser upstream, deny back
        to the client with ``access_denied``."""
        try:
            params = await form_params(scope, receive, self.settings.max_form_bytes)
        except OAuthEndpointError as exc:
            await send_page(send, exc.status, error_page(exc.description))
            return
        pending = await self.store.get_pending(params.get("request", ""))
        browser = cookies_of(scope).get(self.settings.browser_cookie, "")
        csrf = params.get("csrf", "")
        if (
            pending is None
            or not pending.csrf
            or not hmac.compare_digest(pending.csrf, csrf)
            or not hmac.compare_digest(pending.browser, browser)
        ):
            await send_page(
                send, 400, error_page("This consent form has expired or was already used.")
            )
            return
        decision = params.get("decision")
        if decision != "approve":
            await self.store.take_pending(pending.id)
            await self._send_back(
                send, pending.redirect_uri, pending.state, "access_denied", "the user denied access"
            )
            return
        s = self.settings
        until = s.clock() + s.consent_ttl
        await self.store.save_consent(browser, pending.client_id, until, pending.scopes)
        await self._to_upstream(send, pending, [])

    # -- the provider's redirect back ---------------------------------------------------------

    async def callback(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The provider sent the browser back: trade its code, issue the proxy's own."""
        try:
            params = query_params(scope)
        except OAuthEndpointError as exc:
            await send_page(send, exc.status, error_page(exc.description))
            return
        pending_id, _, token = params.get("state", "").partition(".")
        pending = await self.store.take_pending(pending_id) if pending_id else None
        browser = cookies_of(scope).get(self.settings.browser_cookie, "")
        if (
            pending is None
            or not pending.upstream_state
            or not hmac.compare_digest(pending.upstream_state, secret_hash(token))
        ):
            await send_page(send, 400, error_page("This sign-in has expired or was already used."))
            return
        if not hmac.compare_digest(pending.browser, browser):
            await send_page(send, 400, error_page("This sign-in was started in another browser."))
            return
        if "error" in params or "code" not in params:
            await self._send_back(
                send,
                pending.redirect_uri,
                pending.state,
                "access_denied",
                f"the identity provider refused: {params.get('error', 'no code')}",
            )
            return
        try:
            identity = await self.upstream.identify(
                params["code"],
                self.settings.url(CALLBACK_PATH),
                pending.upstream_verifier,
                pending.upstream_nonce,
            )
        except OAuthEndpointError as exc:
            await self._send_back(
                send, pending.redirect_uri, pending.state, exc.error, exc.description
            )
            return
        code = secrets.token_urlsafe(32)
        s = self.settings
        await self.store.save_code(
            secret_hash(code),
            AuthorizationCode(
                client_id=pending.client_id,
                redirect_uri=pending.redirect_uri,
                code_challenge=pending.code_challenge,
                scopes=pending.scopes,
                resource=pending.resource,
                identity=identity,
                family=secrets.token_urlsafe(16),
                expires_at=s.clock() + s.code_ttl,
            ),
        )
        location = with_query(
            pending.redirect_uri, {"code": code, "state": pending.state, "iss": s.issuer}
        )
        await redirect(send, location)


__all__ = ["BrowserFlow", "s256"]

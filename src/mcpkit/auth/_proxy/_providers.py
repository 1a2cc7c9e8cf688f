"""Presets for the usual providers: GitHub (plain OAuth 2.0), and Google, Microsoft Entra
ID, Auth0, Okta and Keycloak (OpenID Connect, each from its documented discovery URL).

Each is registered at the provider once, with the redirect URI ``{base_url}/oauth/callback``
(``base_url`` being the ``OAuthProxy``'s), and gives the proxy its client id and secret.
Each takes the base of its URLs as a parameter (``base_url``, ``issuer``, ``authority``,
or a ``domain`` given as a full URL): another deployment of the provider (GitHub Enterprise
Server, a sovereign cloud), or a stand-in for tests.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote

import httpx

from mcpkit.auth._proxy._oauth2 import OAuth2Upstream, subject_of
from mcpkit.auth._proxy._records import UpstreamIdentity
from mcpkit.auth._proxy._upstream import TOKEN_ONLY_CLAIMS, OidcUpstream, text_claim
from mcpkit.auth._proxy._upstream_http import DEFAULT_UPSTREAM_TIMEOUT, upstream_failure

_DISCOVERY = "/.well-known/openid-configuration"
#: What the issuer of Entra's multi-tenant discovery documents holds in the tenant's place.
_TENANT_PLACEHOLDER = "{tenantid}"
_GUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
#: The members of GitHub's user object kept as the identity's claims.
_GITHUB_CLAIMS = ("id", "login", "name", "email", "avatar_url", "html_url", "type")


def _origin(domain: str) -> str:
    """``https://{domain}``, or ``domain`` as it is when it is a URL already."""
    return domain.rstrip("/") if "://" in domain else f"https://{domain.strip('/')}"


class GitHubUpstream(OAuth2Upstream):
    """GitHub sign-in (plain OAuth 2.0: GitHub has no OpenID Connect for users).

    The browser goes to ``{base_url}/login/oauth/authorize``; the code is traded at
    ``{base_url}/login/oauth/access_token`` (JSON asked for, PKCE S256 sent); the user is
    read from ``GET {api_url}/user``. The subject is the user's numeric ``id`` (stable: a
    login can be renamed and then taken by someone else), ``name`` the profile's name (else
    the login), ``preferred_username`` the login. The email is the profile's public one;
    when it has none and the ``user:email`` (or ``user``) scope was granted, the primary
    verified address from ``GET {api_url}/user/emails`` (``email_verified`` true).

    On GitHub: Settings → Developer settings → OAuth Apps → New OAuth App, *Authorization
    callback URL* ``{base_url}/oauth/callback`` (the proxy's ``base_url``); then generate a
    client secret. A GitHub App works too (its *Callback URL*; the *Email addresses*
    read permission instead of the ``user:email`` scope).

    ``scopes``: ``read:user`` and ``user:email`` by default. ``base_url``: GitHub's web
    host (``https://github.com``; a GitHub Enterprise Server's URL, or a stand-in in
    tests); ``api_url``: its REST API (by default ``https://api.github.com`` for
    github.com, ``{base_url}/api/v3`` for any other).
    """

    def __init__(
        self,
        client_id: str,
        client_secret: str,
        scopes: Sequence[str] = ("read:user", "user:email"),
        *,
        base_url: str = "https://github.com",
        api_url: str | None = None,
        name: str = "github",
        http_client: httpx.AsyncClient | None = None,
        timeout: float = DEFAULT_UPSTREAM_TIMEOUT,
    ) -> None:
        base = base_url.rstrip("/")
        if api_url is None:
            api_url = "https://api.github.com" if base == "https://github.com" else f"{base}/api/v3"
        self.api_url = api_url.rstrip("/")
        super().__init__(
            authorization_endpoint=f"{base}/login/oauth/authorize",
            token_endpoint=f"{base}/login/oauth/access_token",
            userinfo_endpoint=f"{self.api_url}/user",
            client_id=client_id,
            client_secret=client_secret,
            scopes=scopes,
            name=name,
            subject_claim="id",
            token_auth="client_secret_post",
            api_headers={
                "accept": "application/vnd.github+json",
                "x-github-api-version": "2022-11-28",
            },
            http_client=http_client,
            timeout=timeout,
        )

    async def profile(self, tokens: Mapping[str, Any]) -> dict[str, Any]:
        """``/user``, its email completed from ``/user/emails`` where GitHub allows."""
        profile = await super().profile(tokens)
        granted = self.granted_scopes(tokens)
        if text_claim(profile, "email") is None and ("user:email" in granted or "user" in granted):
            email = await self._primary_email(tokens["access_token"])
            if email is not None:
                profile = {**profile, "email": email, "email_verified": True}
        return profile

    async def _primary_email(self, access_token: str) -> str | None:
        emails = await self.get_json(
            f"{self.api_url}/user/emails?per_page=100", access_token, "the email list"
        )
        if not isinstance(emails, list):
            raise upstream_failure("answered an email list that is not a list")
        for entry in emails:
            if (
                isinstance(entry, dict)
                and entry.get("primary") is True
                and entry.get("verified") is True
                and text_claim(entry, "email") is not None
            ):
                return str(entry["email"])
        return None

    def identity_of(self, profile: Mapping[str, Any]) -> UpstreamIdentity:
        """The GitHub user: ``id`` the subject, the login as ``preferred_username``."""
        subject = subject_of(profile, "id")
        login = text_claim(profile, "login")
        claims = {k: profile[k] for k in _GITHUB_CLAIMS if profile.get(k) is not None}
        claims["sub"] = subject
        if login is not None:
            claims["preferred_username"] = login
        if "email_verified" in profile:
            claims["email_verified"] = profile["email_verified"]
        return UpstreamIdentity(
            subject=subject,
            provider=self.name,
            email=text_claim(profile, "email"),
            name=text_claim(profile, "name") or login,
            claims=claims,
        )


class GoogleUpstream(OidcUpstream):
    """Google sign-in (OpenID Connect, ``https://accounts.google.com``).

    Who the user is: the ID token's ``sub`` (stable), ``email``, ``email_verified``,
    ``name``. Google's ID tokens name their issuer ``https://accounts.google.com`` or
    ``accounts.google.com``, as Google documents: both are accepted. ``hosted_domain``: a
    Google Workspace domain; the sign-in page is limited to it (``hd``) and, since that
    parameter alone proves nothing, the ID token's ``hd`` claim must name it.

    In the Google Cloud console: APIs & Services → Credentials → Create credentials → OAuth
    client ID, type *Web application*, *Authorized redirect URIs* ``{base_url}/oauth/callback``.

    ``scopes``: ``openid email profile``. ``issuer``: Google's issuer URL (its discovery
    document is ``{issuer}/.well-known/openid-configuration``), changed for a stand-in in
    tests.
    """

    def __init__(
        self,
        client_id: str,
        client_secret: str,
        scopes: Sequence[str] = ("openid", "email", "profile"),
        *,
        hosted_domain: str | None = None,
        issuer: str = "https://accounts.google.com",
        name: str = "google",
        **options: Any,
    ) -> None:
        params = dict(options.pop("authorize_params", None) or {})
        if hosted_domain is not None:
            params["hd"] = hosted_domain
        super().__init__(
            issuer.rstrip("/") + _DISCOVERY,
            client_id,
            client_secret,
            scopes,
            name=name,
            authorize_params=params,
            **options,
        )
        self.hosted_domain = hosted_domain

    def issuer_ok(self, claims: Mapping[str, Any], issuer: str) -> bool:
        """The discovery document's issuer, with or without its ``https://``."""
        return claims.get("iss") in (issuer, issuer.removeprefix("https://"))

    def identity_of(self, claims: Mapping[str, Any]) -> UpstreamIdentity:
        """The generic mapping, once the ``hd`` claim names ``hosted_domain`` (when set)."""
        if self.hosted_domain is not None and claims.get("hd") != self.hosted_domain:
            raise upstream_failure(f"signed in a user outside {self.hosted_domain}")
        return super().identity_of(claims)


class EntraUpstream(OidcUpstream):
    """Microsoft Entra ID sign-in (OpenID Connect, the Microsoft identity platform v2.0).

    ``tenant``: the directory whose users sign in: its tenant id or a domain of it (single
    tenant), ``organizations`` (work and school accounts of any tenant), ``common`` (those
    and personal Microsoft accounts) or ``consumers``. The discovery document is
    ``{authority}/{tenant}/v2.0/.well-known/openid-configuration``.

    For ``common`` and ``organizations`` the document's issuer is a template,
    ``https://login.microsoftonline.com/{tenantid}/v2.0``: as Microsoft documents, the ID
    token's ``iss`` must be that template with the token's own ``tid`` claim (a GUID) in
    place. ``allowed_tenants``: tenant ids whose users may sign in (empty: any the
    ``tenant`` admits); set it for a multi-tenant registration that serves some tenants.

    Who the user is: ``{oid}.{tid}`` (the object id, stable across the tenant's apps, and
    the tenant: an ``oid`` is unique within its tenant alone; MSAL's home account id has
    this form), else ``sub`` when the token carries no ``oid``; ``name``; ``email`` the
    ``email`` claim, else ``preferred_username`` when it is an address (the sign-in name:
    neither is verified by Entra, so authorize on the subject, not on these).
    Entra's ID token says all it will, so userinfo is not read.

    In the Microsoft Entra admin center: App registrations → New registration, the
    *Supported account types* matching ``tenant``, platform *Web* with the *Redirect URI*
    ``{base_url}/oauth/callback``; then Certificates & secrets → New client secret.

    ``scopes``: ``openid profile email``. ``authority``: the login host
    (``https://login.microsoftonline.com``; a national cloud's, or a stand-in in tests).
    """

    use_userinfo = False

    def __init__(
        self,
        client_id: str,
        client_secret: str,
        scopes: Sequence[str] = ("openid", "profile", "email"),
        *,
        tenant: str,
        allowed_tenants: Sequence[str] = (),
        authority: str = "https://login.microsoftonline.com",
        name: str = "entra",
        **options: Any,
    ) -> None:
        if not tenant or "/" in tenant:
            raise ValueError("tenant is a tenant id, a domain, organizations, common or consumers")
        super().__init__(
            f"{authority.rstrip('/')}/{quote(tenant)}/v2.0{_DISCOVERY}",
            client_id,
            client_secret,
            scopes,
            name=name,
            **options,
        )
        self.tenant = tenant
        self.allowed_tenants = tuple(t.lower() for t in allowed_tenants)

    def issuer_ok(self, claims: Mapping[str, Any], issuer: str) -> bool:
        """The issuer, its ``{tenantid}`` (multi-tenant documents) replaced by the token's
        ``tid``; ``tid`` one of ``allowed_tenants`` when they are set."""
        tid = claims.get("tid")
        if self.allowed_tenants and tid not in self.allowed_tenants:
            return False
        if _TENANT_PLACEHOLDER in issuer:
            if not isinstance(tid, str) or not _GUID.match(tid):
                return False
            issuer = issuer.replace(_TENANT_PLACEHOLDER, tid)
        return claims.get("iss") == issuer

    def identity_of(self, claims: Mapping[str, Any]) -> UpstreamIdentity:
        """``{oid}.{tid}`` (else ``sub``), ``name``, ``email`` (else an address-like
        ``preferred_username``)."""
        oid, tid = text_claim(claims, "oid"), text_claim(claims, "tid")
        subject = f"{oid}.{tid}" if oid and tid else text_claim(claims, "sub")
        if subject is None:
            raise upstream_failure("did not say who the user is (no oid or sub)")
        email = text_claim(claims, "email")
        username = text_claim(claims, "preferred_username")
        if email is None and username is not None and "@" in username:
            email = username
        return UpstreamIdentity(
            subject=subject,
            provider=self.name,
            email=email,
            name=text_claim(claims, "name"),
            claims={k: v for k, v in claims.items() if k not in TOKEN_ONLY_CLAIMS},
        )


class Auth0Upstream(OidcUpstream):
    """Auth0 sign-in (OpenID Connect, ``https://{domain}``).

    ``domain``: the tenant's domain (``example.us.auth0.com``) or a custom domain; a full
    URL (with its scheme) is used as it is, for a stand-in in tests. The discovery document
    is ``https://{domain}/.well-known/openid-configuration``. Who the user is: ``sub``
    (``connection|id``, such as ``auth0|64f...`` or ``google-oauth2|10...``), ``email``,
    ``name``, completed from userinfo when the ID token lacks them.

    In the Auth0 dashboard: Applications → Create Application → *Regular Web Application*;
    in its settings, *Allowed Callback URLs* ``{base_url}/oauth/callback``.

    ``scopes``: ``openid email profile``.
    """

    def __init__(
        self,
        client_id: str,
        client_secret: str,
        scopes: Sequence[str] = ("openid", "email", "profile"),
        *,
        domain: str,
        name: str = "auth0",
        **options: Any,
    ) -> None:
        super().__init__(
            _origin(domain) + _DISCOVERY, client_id, client_secret, scopes, name=name, **options
        )


class OktaUpstream(OidcUpstream):
    """Okta sign-in (OpenID Connect).

    ``domain``: the Okta org's domain (``example.okta.com``); a full URL is used as it is.
    ``authorization_server``: the custom authorization server's id (``default``, which
    the discovery URL ``https://{domain}/oauth2/default/.well-known/openid-configuration``
    names), or None for the org authorization server
    (``https://{domain}/.well-known/openid-configuration``). Who the user is: ``sub`` (the
    Okta user id), ``email``, ``name``, read from userinfo where the ID token carries only
    the base claims.

    In the Okta Admin Console: Applications → Create App Integration → *OIDC - OpenID
    Connect*, *Web Application*, *Sign-in redirect URIs* ``{base_url}/oauth/callback``;
    assign the users or groups who may sign in.

    ``scopes``: ``openid email profile``.
    """

    def __init__(
        self,
        client_id: str,
        client_secret: str,
        scopes: Sequence[str] = ("openid", "email", "profile"),
        *,
        domain: str,
        authorization_server: str | None = "default",
        name: str = "okta",
        **options: Any,
    ) -> None:
        base = _origin(domain)
        if authorization_server:
            base = f"{base}/oauth2/{quote(authorization_server)}"
        super().__init__(base + _DISCOVERY, client_id, client_secret, scopes, name=name, **options)


class KeycloakUpstream(OidcUpstream):
    """Keycloak sign-in (OpenID Connect, one realm).

    ``base_url``: where Keycloak is served (``https://sso.example.com``; add ``/auth`` for
    a Keycloak before 17); ``realm``: the realm. The discovery document is
    ``{base_url}/realms/{realm}/.well-known/openid-configuration``. Who the user is:
    ``sub`` (the user's id in the realm), ``email``, ``name``, ``preferred_username``.

    In the realm's admin console: Clients → Create client, *OpenID Connect*, *Client
    authentication* on, *Standard flow* on, *Valid redirect URIs*
    ``{base_url}/oauth/callback`` (the proxy's); the secret is on the client's *Credentials*
    tab.

    ``scopes``: ``openid email profile``.
    """

    def __init__(
        self,
        client_id: str,
        client_secret: str,
        scopes: Sequence[str] = ("openid", "email", "profile"),
        *,
        base_url: str,
        realm: str,
        name: str = "keycloak",
        **options: Any,
    ) -> None:
        discovery = f"{base_url.rstrip('/')}/realms/{quote(realm, safe='')}{_DISCOVERY}"
        super().__init__(discovery, client_id, client_secret, scopes, name=name, **options)


__all__ = [
    "Auth0Upstream",
    "EntraUpstream",
    "GitHubUpstream",
    "GoogleUpstream",
    "KeycloakUpstream",
    "OktaUpstream",
]

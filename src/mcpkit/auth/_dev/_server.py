"""A development identity provider: OpenID Connect with users in memory, a login page,
discovery, ``/authorize``, ``/token``, ``/jwks`` and ``/userinfo``. An ASGI app, served on a
port of its own, and reached over HTTP exactly as a real provider is: ``OAuthProxy`` signs
users in with it through ``OidcUpstream(f"{issuer}/.well-known/openid-configuration", ...)``.

Not for production: passwords are kept as given, and nothing survives a restart.
"""

from __future__ import annotations

import hmac
import html
import re
import secrets
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from joserfc import jwt
from joserfc.jwk import ECKey, KeySet

from mcpkit.auth._proxy._authorize import s256
from mcpkit.auth._proxy._clients import secret_hash
from mcpkit.auth._proxy._http import (
    OAuthEndpointError,
    Receive,
    Route,
    Scope,
    Send,
    error_page,
    form_params,
    headers_of,
    page,
    query_params,
    redirect,
    send,
    send_error,
    send_json,
    send_page,
    with_query,
)
from mcpkit.auth._proxy._store import ExpiringTable

#: Seconds a code of the dev server is good for.
DEV_CODE_TTL = 60.0
#: Seconds its access tokens (good at ``/userinfo`` only) last.
DEV_TOKEN_TTL = 3600.0
#: Codes and access tokens kept at once (the oldest dropped past it).
DEV_MAX_ENTRIES = 10_000
_VERIFIER = re.compile(r"^[A-Za-z0-9._~-]{43,128}$")
#: The parameters of an authorization request the login form carries along.
_CARRIED = (
    "client_id",
    "redirect_uri",
    "state",
    "nonce",
    "scope",
    "code_challenge",
    "code_challenge_method",
    "response_type",
)


@dataclass(frozen=True, slots=True)
class DevUser:
    """A user of ``DevAuthServer``: the name and password typed at its login page, and the
    claims its ID tokens and userinfo carry (``subject`` defaults to the username)."""

    username: str
    password: str
    email: str | None = None
    name: str | None = None
    subject: str | None = None
    claims: Mapping[str, Any] = field(default_factory=dict)

    def id_claims(self) -> dict[str, Any]:
        """What the provider says about the user."""
        claims: dict[str, Any] = {
            "sub": self.subject or self.username,
            "preferred_username": self.username,
        }
        if self.email is not None:
            claims["email"] = self.email
            claims["email_verified"] = True
        if self.name is not None:
            claims["name"] = self.name
        claims.update(self.claims)
        return claims


@dataclass(frozen=True, slots=True)
class _Client:
    secret: str | None
    redirect_uris: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class _Grant:
    client_id: str
    redirect_uri: str
    user: DevUser
    nonce: str | None
    challenge: str | None
    scope: str


class DevAuthServer:
    """A development OpenID Connect provider at ``issuer`` (the URL it is served at).

    ``users``: ``DevUser`` values, or a mapping of username to password. Clients are
    added with ``add_client`` (the proxy's id, secret and callback URL).
    """

    def __init__(
        self,
        issuer: str,
        users: Iterable[DevUser] | Mapping[str, str] = (),
        *,
        max_entries: int = DEV_MAX_ENTRIES,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.issuer = issuer.rstrip("/")
        if isinstance(users, Mapping):
            users = [DevUser(name, password) for name, password in users.items()]
        self.users: dict[str, DevUser] = {user.username: user for user in users}
        self.clients: dict[str, _Client] = {}
        self.clock = clock
        self.key = ECKey.generate_key("P-256", parameters={"kid": secrets.token_urlsafe(8)})
        self.codes: ExpiringTable[_Grant] = ExpiringTable(max_entries, clock)
        self.access_tokens: ExpiringTable[DevUser] = ExpiringTable(max_entries, clock)
        self._routes: Mapping[str, tuple[tuple[str, ...], Callable[..., Any]]] = MappingProxyType(
            {
                "/.well-known/openid-configuration": (("GET",), self._discovery),
                "/.well-known/oauth-authorization-server": (("GET",), self._discovery),
                "/authorize": (("GET", "POST"), self._authorize),
                "/token": (("POST",), self._token),
                "/userinfo": (("GET", "POST"), self._userinfo),
                "/jwks": (("GET",), self._jwks),
            }
        )

    @property
    def discovery_url(self) -> str:
        """The OpenID discovery URL (what ``OidcUpstream`` takes)."""
        return f"{self.issuer}/.well-known/openid-configuration"

    def add_user(self, user: DevUser) -> None:
        """Add (or replace) a user."""
        self.users[user.username] = user

    def add_client(
        self, client_id: str, client_secret: str | None = None, redirect_uris: Sequence[str] = ()
    ) -> None:
        """Register a client (a public one without ``client_secret``)."""
        self.clients[client_id] = _Client(client_secret, tuple(redirect_uris))

    def metadata(self) -> dict[str, Any]:
        """The OpenID discovery document."""
        base = self.issuer
        return {
            "issuer": base,
            "authorization_endpoint": f"{base}/authorize",
            "token_endpoint": f"{base}/token",
            "userinfo_endpoint": f"{base}/userinfo",
            "jwks_uri": f"{base}/jwks",
            "response_types_supported": ["code"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["ES256"],
            "scopes_supported": ["openid", "email", "profile"],
            "grant_types_supported": ["authorization_code"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": [
                "client_secret_basic",
                "client_secret_post",
                "none",
            ],
        }

    async def __call__(self, scope: Scope, receive: Receive, send_: Send) -> None:
        """The ASGI app."""
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send_({"type": "lifespan.startup.complete"})
            await send_({"type": "lifespan.shutdown.complete"})
            return
        if scope["type"] != "http":
            return
        path = scope["path"].rstrip("/")
        if path not in self._routes:
            await send(send_, 404, b"Not Found", [(b"content-type", b"text/plain")])
            return
        await self.serve(path, scope, receive, send_)

    async def serve(self, path: str, scope: Scope, receive: Receive, send_: Send) -> None:
        """Serve the route at ``path`` (one of ``endpoints()``' own, unprefixed), its method
        checked first."""
        methods, handler = self._routes[path]
        if scope["method"] not in methods:
            await send(send_, 405, b"", [(b"allow", ", ".join(methods).encode())])
            return
        await handler(scope, receive, send_)

    def endpoints(self, prefix: str = "") -> Mapping[str, Callable[[Scope, Receive, Send], Any]]:
        """Path -> ASGI app, for a router serving the provider beside other routes, each path
        under ``prefix`` (the path of ``issuer``, when the provider shares a server with the
        app: ``DevAuthServer("http://127.0.0.1:8000/dev-idp")`` and ``prefix="/dev-idp"``)."""
        return {prefix + path: Route(self, path) for path in self._routes}

    async def _discovery(self, scope: Scope, receive: Receive, send_: Send) -> None:
        await send_json(send_, 200, self.metadata(), cacheable=True)

    async def _jwks(self, scope: Scope, receive: Receive, send_: Send) -> None:
        keys = KeySet([self.key]).as_dict(private=False)
        for entry in keys["keys"]:
            entry.update(use="sig", alg="ES256")
        await send_json(send_, 200, keys, cacheable=True)

    # -- sign-in ----------------------------------------------------------------------------

    def _check_request(self, params: Mapping[str, str]) -> _Client:
        client = self.clients.get(params.get("client_id", ""))
        if client is None:
            raise OAuthEndpointError("invalid_client", "unknown client_id")
        if params.get("redirect_uri") not in client.redirect_uris:
            raise OAuthEndpointError("invalid_request", "redirect_uri is not registered")
        if params.get("response_type") != "code":
            raise OAuthEndpointError("unsupported_response_type", "response_type must be code")
        if "code_challenge" in params and params.get("code_challenge_method") != "S256":
            raise OAuthEndpointError("invalid_request", "code_challenge_method must be S256")
        return client

    async def _authorize(self, scope: Scope, receive: Receive, send_: Send) -> None:
        try:
            if scope["method"] == "POST":
                params = await form_params(scope, receive, 16 * 1024)
            else:
                params = query_params(scope)
            self._check_request(params)
        except OAuthEndpointError as exc:
            await send_page(send_, exc.status, error_page(exc.description))
            return
        if scope["method"] == "GET":
            await send_page(send_, 200, self._login_page(params, None))
            return
        user = self.users.get(params.get("username", ""))
        if user is None or not hmac.compare_digest(
            user.password.encode(), params.get("password", "").encode()
        ):
            await send_page(send_, 401, self._login_page(params, "Wrong username or password."))
            return
        code = secrets.token_urlsafe(32)
        grant = _Grant(
            client_id=params["client_id"],
            redirect_uri=params["redirect_uri"],
            user=user,
            nonce=params.get("nonce"),
            challenge=params.get("code_challenge"),
            scope=params.get("scope", "openid"),
        )
        self.codes.put(secret_hash(code), grant, self.clock() + DEV_CODE_TTL)
        location = with_query(
            params["redirect_uri"], {"code": code, "state": params.get("state"), "iss": self.issuer}
        )
        await redirect(send_, location)

    def _login_page(self, params: Mapping[str, str], error: str | None) -> str:
        hidden = "".join(
            f"<input type='hidden' name='{name}' value='{html.escape(params[name])}'>"
            for name in _CARRIED
            if name in params
        )
        message = f"<p><strong>{html.escape(error)}</strong></p>" if error else ""
        body = (
            f"<p>Development sign-in at <code>{html.escape(self.issuer)}</code>.</p>{message}"
            "<form method='post' action='authorize'>"
            f"{hidden}"
            "<label>Username <input name='username' autocomplete='username'></label>"
            "<label>Password <input name='password' type='password'"
            " autocomplete='current-password'></label>"
            "<button type='submit'>Sign in</button></form>"
        )
        return page("Sign in", body)

    # -- tokens ---------------------------------------------------------------------------------

    def _client_of(self, params: Mapping[str, str], headers: Mapping[str, str]) -> str:
        import base64
        from urllib.parse import unquote

        client_id, secret = params.get("client_id"), params.get("client_secret")
        authorization = headers.get("authorization", "")
        if authorization[:6].lower() == "basic ":
            try:
                raw = base64.b64decode(authorization[6:].strip()).decode()
            except (ValueError, UnicodeDecodeError):
                raise OAuthEndpointError(
                    "invalid_client", "malformed Basic credentials", 401
                ) from None
            basic_id, _, basic_secret = raw.partition(":")
            client_id, secret = unquote(basic_id), unquote(basic_secret)
        client = self.clients.get(client_id or "")
        if client is None:
            raise OAuthEndpointError("invalid_client", "unknown client", 401)
        if client.secret is not None and not hmac.compare_digest(
            client.secret.encode(), (secret or "").encode()
        ):
            raise OAuthEndpointError("invalid_client", "client authentication failed", 401)
        assert client_id is not None
        return client_id

    async def _token(self, scope: Scope, receive: Receive, send_: Send) -> None:
        try:
            params = await form_params(scope, receive, 16 * 1024)
            client_id = self._client_of(params, headers_of(scope))
            if params.get("grant_type") != "authorization_code":
                raise OAuthEndpointError("unsupported_grant_type", "only authorization_code")
            grant = self.codes.pop(secret_hash(params.get("code", "")))
            if grant is None or grant.client_id != client_id:
                raise OAuthEndpointError("invalid_grant", "the code is unknown, used or expired")
            if params.get("redirect_uri") != grant.redirect_uri:
                raise OAuthEndpointError("invalid_grant", "redirect_uri does not match")
            if grant.challenge is not None:
                verifier = params.get("code_verifier", "")
                if not _VERIFIER.match(verifier) or s256(verifier) != grant.challenge:
                    raise OAuthEndpointError("invalid_grant", "PKCE verification failed")
        except OAuthEndpointError as exc:
            await send_error(send_, exc)
            return
        access = secrets.token_urlsafe(32)
        self.access_tokens.put(secret_hash(access), grant.user, self.clock() + DEV_TOKEN_TTL)
        now = int(self.clock())
        claims = {
            **grant.user.id_claims(),
            "iss": self.issuer,
            "aud": client_id,
            "iat": now,
            "exp": now + int(DEV_TOKEN_TTL),
        }
        if grant.nonce is not None:
            claims["nonce"] = grant.nonce
        id_token = jwt.encode({"alg": "ES256", "kid": self.key.kid}, claims, self.key)
        answer = {
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": int(DEV_TOKEN_TTL),
            "id_token": id_token,
            "scope": grant.scope,
        }
        await send_json(send_, 200, answer)

    async def _userinfo(self, scope: Scope, receive: Receive, send_: Send) -> None:
        authorization = headers_of(scope).get("authorization", "")
        user = None
        if authorization[:7].lower() == "bearer ":
            user = self.access_tokens.get(secret_hash(authorization[7:].strip()))
        if user is None:
            await send(send_, 401, b"", [(b"www-authenticate", b'Bearer error="invalid_token"')])
            return
        await send_json(send_, 200, user.id_claims())


__all__ = ["DevAuthServer", "DevUser"]

"""``OAuth2Upstream``: a provider that speaks plain OAuth 2.0, without OpenID Connect (no
ID token, no discovery): its endpoints given, the user read from a profile endpoint of its
API with the access token. ``GitHubUpstream`` is one.

The proxy sends its PKCE challenge (S256) and state as with any provider; there is no
nonce, since there is no ID token to carry it. The provider's access token is used once,
for the profile, and dropped.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import httpx

from mcpkit.auth._proxy._http import with_query
from mcpkit.auth._proxy._records import UpstreamIdentity
from mcpkit.auth._proxy._upstream import text_claim
from mcpkit.auth._proxy._upstream_http import (
    DEFAULT_UPSTREAM_TIMEOUT,
    UpstreamClient,
    code_exchange,
    upstream_failure,
)

#: How the proxy authenticates at the token endpoint.
TOKEN_AUTH_METHODS = ("client_secret_post", "client_secret_basic", "none")


class OAuth2Upstream(UpstreamClient):
    """A plain OAuth 2.0 provider, from its endpoints.

    ``authorization_endpoint`` and ``token_endpoint``: the provider's; ``userinfo_endpoint``:
    the API URL that answers, for the access token, a JSON object describing the user.
    ``subject_claim``, ``email_claim``, ``name_claim``: the members of that object holding
    the user's stable id (a string or an integer), email and display name. ``scopes``: what
    the proxy asks for, space-separated in the request. ``token_auth``: how the proxy
    authenticates at the token endpoint (``client_secret_post``: id and secret in the form;
    ``client_secret_basic``: HTTP Basic; ``none``: the client id alone). ``api_headers``:
    sent with each API call. ``name``: the provider's name in the access tokens.

    A subclass reads more than one endpoint (``profile``) or maps the answer its own way
    (``identity_of``), as ``GitHubUpstream`` does.
    """

    def __init__(
        self,
        *,
        authorization_endpoint: str,
        token_endpoint: str,
        userinfo_endpoint: str,
        client_id: str,
        client_secret: str | None = None,
        scopes: Sequence[str] = (),
        name: str,
        subject_claim: str = "sub",
        email_claim: str = "email",
        name_claim: str = "name",
        token_auth: str = "client_secret_post",
        authorize_params: Mapping[str, str] | None = None,
        api_headers: Mapping[str, str] | None = None,
        http_client: httpx.AsyncClient | None = None,
        timeout: float = DEFAULT_UPSTREAM_TIMEOUT,
    ) -> None:
        if token_auth not in TOKEN_AUTH_METHODS:
            raise ValueError(f"token_auth must be one of {', '.join(TOKEN_AUTH_METHODS)}")
        if token_auth != "none" and client_secret is None:
            raise ValueError(f"token_auth={token_auth!r} needs a client_secret")
        super().__init__(http_client, timeout)
        self.authorization_endpoint = authorization_endpoint
        self.token_endpoint = token_endpoint
        self.userinfo_endpoint = userinfo_endpoint
        self.client_id = client_id
        self.client_secret = client_secret
        self.scopes = tuple(dict.fromkeys(scopes))
        self.name = name
        self.subject_claim = subject_claim
        self.email_claim = email_claim
        self.name_claim = name_claim
        self.token_auth = token_auth
        self.authorize_params = dict(authorize_params or {})
        self._api_headers = dict(api_headers or {})

    def api_headers(self) -> dict[str, str]:
        """The headers sent with each API call (``api_headers``)."""
        return dict(self._api_headers)

    async def authorization_url(
        self, redirect_uri: str, state: str, code_challenge: str, nonce: str
    ) -> str:
        """The authorization endpoint with the proxy's request (no nonce: no ID token)."""
        params: dict[str, str | None] = {
            **self.authorize_params,
            "response_type": "code",
            "client_id": self.client_id,
            "redirect_uri": redirect_uri,
            "scope": " ".join(self.scopes) or None,
            "state": state,
            "code_challenge": code_challenge,
            "code_challenge_method": "S256",
        }
        return with_query(self.authorization_endpoint, params)

    async def identify(
        self, code: str, redirect_uri: str, code_verifier: str, nonce: str
    ) -> UpstreamIdentity:
        """The code traded for an access token, the user read with it (``profile``)."""
        tokens = await self.exchange(code, redirect_uri, code_verifier)
        return self.identity_of(await self.profile(tokens))

    async def exchange(self, code: str, redirect_uri: str, code_verifier: str) -> dict[str, Any]:
        """The token endpoint's answer for the code (it holds an ``access_token``)."""
        form, headers = code_exchange(
            code, redirect_uri, code_verifier, self.client_id, self.client_secret, self.token_auth
        )
        tokens = await self.post_token_request(self.token_endpoint, form, headers)
        if not isinstance(tokens.get("access_token"), str):
            raise upstream_failure("gave no access token")
        return tokens

    async def profile(self, tokens: Mapping[str, Any]) -> dict[str, Any]:
        """The JSON object ``userinfo_endpoint`` answers for the access token."""
        body = await self.get_json(self.userinfo_endpoint, tokens["access_token"], "the profile")
        if not isinstance(body, dict):
            raise upstream_failure("answered a profile that is not an object")
        return body

    def identity_of(self, profile: Mapping[str, Any]) -> UpstreamIdentity:
        """The user the profile describes: its ``subject_claim`` (a number becomes its
        decimal text), ``email_claim`` and ``name_claim``; the profile as the claims."""
        subject = subject_of(profile, self.subject_claim)
        return UpstreamIdentity(
            subject=subject,
            provider=self.name,
            email=text_claim(profile, self.email_claim),
            name=text_claim(profile, self.name_claim),
            claims=dict(profile),
        )

    def granted_scopes(self, tokens: Mapping[str, Any]) -> tuple[str, ...]:
        """The scopes the token answer says were granted (space- or comma-separated), or
        those asked for when it does not say."""
        scope = tokens.get("scope")
        if not isinstance(scope, str):
            return self.scopes
        return tuple(s for s in scope.replace(",", " ").split() if s)


def subject_of(profile: Mapping[str, Any], member: str) -> str:
    """The user's id at ``member``: a non-empty string, or an integer as its decimal text."""
    value = profile.get(member)
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, str) and value:
        return value
    raise upstream_failure(f"did not say who the user is (no {member})")


__all__ = ["TOKEN_AUTH_METHODS", "OAuth2Upstream", "subject_of"]

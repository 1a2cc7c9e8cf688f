"""The authorization code grant with PKCE S256 (OAuth 2.1 §4.1, RFC 7636): the user goes
to the authorization endpoint through the ``authorize`` callback, and the code that comes
back (``state`` and the RFC 9207 ``iss`` checked first) is traded for a token.

Which scopes to ask for is the caller's choice; the client id is ``ClientRegistration``'s.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import replace
from urllib.parse import parse_qsl, urlencode, urlsplit

from mcpkit.auth._dpop import b64url
from mcpkit.auth._types import OAuthError
from mcpkit.auth.client._discovery import AuthorizationServerMetadata
from mcpkit.auth.client._registration import ClientRegistration
from mcpkit.auth.client._settings import AuthorizeCallback, ProviderSettings
from mcpkit.auth.client._storage import OAuthClientInformation, OAuthToken
from mcpkit.auth.client._token_endpoint import TokenEndpoint


def pkce_pair() -> tuple[str, str]:
    """(code_verifier, S256 code_challenge) — RFC 7636."""
    verifier = secrets.token_urlsafe(48)  # 64 unreserved characters
    challenge = b64url(hashlib.sha256(verifier.encode("ascii")).digest())
    return verifier, challenge


def _web_url(url: str) -> bool:
    try:
        parts = urlsplit(url)
        return parts.scheme.lower() in ("http", "https") and bool(parts.hostname)
    except ValueError:
        return False


def merge_scopes(*groups: Sequence[str] | None) -> list[str]:
    """The scopes of every group, each once, in the order first seen."""
    out: list[str] = []
    for group in groups:
        for scope in group or ():
            if scope and scope not in out:
                out.append(scope)
    return out


def check_authorization_response(
    response: Mapping[str, str],
    metadata: AuthorizationServerMetadata,
    expected_issuer: str | None,
    state: str,
) -> None:
    """RFC 9207 §2.4 as the MCP spec tabulates it, before anything else is looked at.
    Raises ``OAuthError`` for a response to discard or a refusal."""
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


class AuthorizationCodeFlow:
    """Runs the authorization code grant for the provider, one authorization at a time."""

    def __init__(
        self, settings: ProviderSettings, registration: ClientRegistration, endpoint: TokenEndpoint
    ) -> None:
        self._settings = settings
        self._registration = registration
        self._endpoint = endpoint

    async def run(
        self, metadata: AuthorizationServerMetadata, resource: str, scopes: list[str]
    ) -> OAuthToken:
        """A token for ``scopes`` (plus ``offline_access`` when refresh tokens are wanted
        and offered). Raises ``OAuthError`` when the grant cannot be run or fails."""
        authorize = self._check_preconditions(metadata)
        receiver = self._settings.redirect_receiver
        if receiver is None:
            return await self._run(metadata, resource, scopes, authorize)
        registered = await self._registration.registered_redirect_uris(metadata)
        redirect_uri = await receiver.open(registered)
        self._settings.client_metadata = replace(
            self._settings.client_metadata, redirect_uris=[redirect_uri]
        )
        try:
            return await self._run(metadata, resource, scopes, authorize)
        finally:
            await receiver.close()

    async def _run(
        self,
        metadata: AuthorizationServerMetadata,
        resource: str,
        scopes: list[str],
        authorize: AuthorizeCallback,
    ) -> OAuthToken:
        client = await self._registration.client_for(metadata)
        redirect_uri = self._settings.client_metadata.redirect_uris[0]
        if (
            self._settings.request_offline_access
            and "refresh_token" in self._settings.client_metadata.grant_types
            and "offline_access" in metadata.scopes_supported
        ):
            scopes = merge_scopes(scopes, ["offline_access"])
        verifier, challenge = pkce_pair()
        state = secrets.token_urlsafe(24)
        expected_issuer = metadata.issuer  # recorded with the verifier and state (RFC 9207)
        url = self._authorization_url(
            metadata, client, redirect_uri, challenge, state, resource, scopes
        )
        self._settings.authorization_requests.append(url)
        answer = await authorize(url)
        response = (
            dict(parse_qsl(urlsplit(answer).query, keep_blank_values=True))
            if isinstance(answer, str)
            else dict(answer)
        )
        check_authorization_response(response, metadata, expected_issuer, state)
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
        return await self._endpoint.request(metadata, client, form, resource)

    def _check_preconditions(self, metadata: AuthorizationServerMetadata) -> AuthorizeCallback:
        """The ``authorize`` callback, once the grant is known to be possible here."""
        authorize = self._settings.authorize_callback
        if authorize is None:
            raise OAuthError("the authorization code grant needs an authorize callback")
        endpoint = metadata.authorization_endpoint
        if not endpoint:
            raise OAuthError("the authorization server publishes no authorization_endpoint")
        if not _web_url(endpoint):
            # The URL goes to a browser, which hands other schemes (file:, a program's
            # own) to whatever the desktop runs for them.
            raise OAuthError(
                f"the authorization server's authorization_endpoint {endpoint!r} is not an "
                "http or https URL; refusing to open it",
                error="invalid_authorization_endpoint",
            )
        if "S256" not in metadata.code_challenge_methods:
            raise OAuthError(
                f"the authorization server {metadata.issuer} does not list S256 in "
                "code_challenge_methods_supported; refusing to proceed without PKCE",
                error="pkce_unsupported",
            )
        if (
            not self._settings.client_metadata.redirect_uris
            and self._settings.redirect_receiver is None
        ):
            raise OAuthError("the authorization code grant needs client_metadata.redirect_uris")
        return authorize

    @staticmethod
    def _authorization_url(
        metadata: AuthorizationServerMetadata,
        client: OAuthClientInformation,
        redirect_uri: str,
        challenge: str,
        state: str,
        resource: str,
        scopes: list[str],
    ) -> str:
        """The authorization request (with RFC 8707 ``resource``) as a URL."""
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
        assert endpoint is not None
        return f"{endpoint}{'&' if urlsplit(endpoint).query else '?'}{urlencode(params)}"

"""Requests to the authorization server's token endpoint (RFC 6749 §3.2): the client's
authentication there, the DPoP proof with one retry on ``use_dpop_nonce``, and the checks
on the token that comes back.

Which grant to send, and what to do with the token, is for the callers.
"""

from __future__ import annotations

import base64
import uuid
from typing import Any
from urllib.parse import quote, urlencode

import httpx

from mcpkit.auth._types import OAuthError
from mcpkit.auth.client._discovery import AuthorizationServerMetadata
from mcpkit.auth.client._dpop_proofs import DPoPProofs
from mcpkit.auth.client._responses import post_json, refusal
from mcpkit.auth.client._settings import ProviderSettings
from mcpkit.auth.client._storage import OAuthClientInformation, OAuthToken

CLIENT_ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"


def basic_credentials(client_id: str, secret: str) -> str:
    """The ``Authorization`` value of ``client_secret_basic``."""
    # RFC 6749 §2.3.1: form-urlencode each part before joining.
    raw = f"{quote(client_id, safe='')}:{quote(secret, safe='')}".encode()
    return "Basic " + base64.b64encode(raw).decode("ascii")


def load_private_key(key: Any) -> Any:
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


class TokenEndpoint:
    """Sends a grant's form to the token endpoint and reads the token it answers with."""

    def __init__(self, settings: ProviderSettings, proofs: DPoPProofs) -> None:
        self._settings = settings
        self._proofs = proofs

    async def request(
        self,
        metadata: AuthorizationServerMetadata,
        client: OAuthClientInformation,
        form: dict[str, str],
        resource: str,
    ) -> OAuthToken:
        """The token for ``form`` (the grant's parameters). Raises ``OAuthError`` when the
        request fails or is refused, or the token is of a type the provider cannot use."""
        form = dict(form)
        headers = {
            "accept": "application/json",
            "content-type": "application/x-www-form-urlencoded",
        }
        self._authenticate(client, metadata, form, headers)
        response, body = await self._post(metadata.token_endpoint, form, headers)
        if response.status_code != 200 or not isinstance(body.get("access_token"), str):
            raise refusal("token request", response, body)
        token_type = str(body.get("token_type") or "Bearer")
        if token_type.lower() not in ("bearer", "dpop"):
            raise OAuthError(f"unsupported token type {token_type!r}")
        if token_type.lower() == "dpop" and not self._proofs.enabled:
            raise OAuthError("the authorization server issued a DPoP-bound token, but DPoP is off")
        return OAuthToken.from_response(
            body, issuer=metadata.issuer, resource=resource, now=self._settings.clock()
        )

    def _authenticate(
        self,
        client: OAuthClientInformation,
        metadata: AuthorizationServerMetadata,
        form: dict[str, str],
        headers: dict[str, str],
    ) -> None:
        """Add the client's credentials by its ``token_endpoint_auth_method``."""
        method = client.token_endpoint_auth_method or (
            "client_secret_basic" if client.client_secret else "none"
        )
        if method == "private_key_jwt" and self._settings.private_key is None:
            raise OAuthError("private_key_jwt needs a private_key")
        if method == "client_secret_basic" and client.client_secret:
            headers["authorization"] = basic_credentials(client.client_id, client.client_secret)
        elif method == "client_secret_post" and client.client_secret:
            form["client_id"] = client.client_id
            form["client_secret"] = client.client_secret
        elif method == "private_key_jwt":
            form["client_id"] = client.client_id
            form["client_assertion_type"] = CLIENT_ASSERTION_TYPE
            form["client_assertion"] = self._client_assertion(client, metadata)
        else:
            form["client_id"] = client.client_id

    def _client_assertion(
        self, client: OAuthClientInformation, metadata: AuthorizationServerMetadata
    ) -> str:
        """The ``private_key_jwt`` assertion (RFC 7523 §3), valid for five minutes."""
        from joserfc import jwt

        key = self._settings.private_key
        alg = self._settings.signing_algorithm or (
            "ES256" if getattr(key, "key_type", "") == "EC" else "RS256"
        )
        now = int(self._settings.clock())
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

    async def _post(
        self, endpoint: str, form: dict[str, str], headers: dict[str, str]
    ) -> tuple[httpx.Response, dict[str, Any]]:
        """POST the form; the response and its JSON object."""
        response: httpx.Response | None = None
        for attempt in range(2):
            self._proofs.apply_to_token_request(headers, endpoint)
            try:
                response, body = await post_json(
                    self._settings.http,
                    endpoint,
                    "token request",
                    content=urlencode(form),
                    headers=headers,
                )
            except httpx.HTTPError as exc:
                raise OAuthError(f"token request to {endpoint} failed: {exc!r}") from exc
            nonce = response.headers.get("dpop-nonce")
            if nonce:
                self._proofs.remember(endpoint, nonce)
            if (
                attempt == 0
                and self._proofs.enabled
                and nonce
                and response.status_code in (400, 401)
                and body.get("error") == "use_dpop_nonce"
            ):
                continue  # RFC 9449 §8: once more, with the server's nonce
            break
        assert response is not None
        return response, body

"""Assertions for the JWT-bearer grant (RFC 7523): a workload's own JWT (workload identity
federation), or an Identity Assertion JWT Authorization Grant (ID-JAG) obtained from the
enterprise identity provider by token exchange (RFC 8693; enterprise-managed
authorization)."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import httpx

from mcpkit.auth._types import OAuthError
from mcpkit.auth.client._responses import post_json, refusal

#: The JWT-bearer grant type (RFC 7523).
JWT_BEARER_GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer"
#: The token-exchange grant type (RFC 8693), which obtains an ID-JAG.
TOKEN_EXCHANGE_GRANT = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:id_token"
#: The token type of an Identity Assertion JWT Authorization Grant (ID-JAG).
ID_JAG_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:id-jag"


@dataclass(frozen=True, slots=True)
class AssertionContext:
    """What an assertion source is told: which authorization server the assertion is for
    (its ``issuer`` is the audience), which resource, which scopes."""

    issuer: str | None
    token_endpoint: str
    resource: str
    scopes: Sequence[str]
    http: httpx.AsyncClient


#: A JWT-bearer assertion: a fixed string, or made per authorization server.
AssertionSource = "str | Callable[[AssertionContext], str | Awaitable[str]]"


class IdJagTokenExchange:
    """An assertion source for enterprise-managed authorization: exchanges the user's ID
    token at the identity provider for an ID-JAG addressed to the MCP server's
    authorization server and resource."""

    def __init__(
        self,
        token_endpoint: str,
        id_token: str | Callable[[], str | Awaitable[str]],
        *,
        client_id: str | None = None,
        client_secret: str | None = None,
    ) -> None:
        self.token_endpoint = token_endpoint
        self.id_token = id_token
        self.client_id = client_id
        self.client_secret = client_secret

    async def __call__(self, context: AssertionContext) -> str:
        id_token: Any = self.id_token
        if callable(id_token):
            id_token = id_token()
            if inspect.isawaitable(id_token):
                id_token = await id_token
        form: dict[str, str] = {
            "grant_type": TOKEN_EXCHANGE_GRANT,
            "subject_token": str(id_token),
            "subject_token_type": ID_TOKEN_TYPE,
            "requested_token_type": ID_JAG_TOKEN_TYPE,
            "audience": context.issuer or context.token_endpoint,
            "resource": context.resource,
        }
        if context.scopes:
            form["scope"] = " ".join(context.scopes)
        auth: httpx.Auth = httpx.Auth()  # no authentication (not the client's default)
        if self.client_id is not None:
            if self.client_secret is not None:
                auth = httpx.BasicAuth(self.client_id, self.client_secret)
            else:
                form["client_id"] = self.client_id
        try:
            response, body = await post_json(
                context.http,
                self.token_endpoint,
                "token exchange",
                content=urlencode(form),
                headers={
                    "accept": "application/json",
                    "content-type": "application/x-www-form-urlencoded",
                },
                auth=auth,
            )
        except httpx.HTTPError as exc:
            raise OAuthError(f"token exchange at {self.token_endpoint} failed: {exc!r}") from exc
        if response.status_code != 200 or not isinstance(body.get("access_token"), str):
            raise refusal("token exchange", response, body)
        issued = body.get("issued_token_type")
        if issued is not None and issued != ID_JAG_TOKEN_TYPE:
            raise OAuthError(f"token exchange issued {issued!r}, not an ID-JAG")
        token: str = body["access_token"]
        return token


__all__ = [
    "ID_JAG_TOKEN_TYPE",
    "JWT_BEARER_GRANT",
    "TOKEN_EXCHANGE_GRANT",
    "AssertionContext",
    "IdJagTokenExchange",
]

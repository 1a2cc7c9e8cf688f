"""What every upstream provider shares: its HTTP client (made on first use unless given), and
requests to the provider bounded in time (``timeout`` for the whole exchange) and in size
(``MAX_UPSTREAM_ANSWER_BYTES``), their answers read as JSON."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Any

import httpx

from mcpkit.auth._proxy._http import OAuthEndpointError
from mcpkit.auth._unavailable import bounded_body
from mcpkit.auth.client._token_endpoint import basic_credentials

#: Seconds one request to the provider may take.
DEFAULT_UPSTREAM_TIMEOUT = 15.0
#: Largest token, userinfo or profile answer read from the provider.
MAX_UPSTREAM_ANSWER_BYTES = 256 * 1024


def upstream_failure(description: str) -> OAuthEndpointError:
    """The error sent back to the client when the provider fails (``access_denied``, 502)."""
    return OAuthEndpointError("access_denied", f"the identity provider {description}", 502)


def code_exchange(
    code: str,
    redirect_uri: str,
    code_verifier: str,
    client_id: str,
    client_secret: str | None,
    method: str,
) -> tuple[dict[str, str], dict[str, str]]:
    """(form, headers) of the token request trading ``code``: the client authenticated by
    ``method`` (``client_secret_basic``, ``client_secret_post``, or ``none``: its id alone)."""
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": redirect_uri,
        "code_verifier": code_verifier,
    }
    headers: dict[str, str] = {}
    if method == "client_secret_basic" and client_secret is not None:
        headers["authorization"] = basic_credentials(client_id, client_secret)
        return form, headers
    form["client_id"] = client_id
    if method == "client_secret_post" and client_secret is not None:
        form["client_secret"] = client_secret
    return form, headers


class UpstreamClient:
    """The HTTP side of an upstream provider: one client, bounded JSON requests."""

    #: The provider's name, as the access tokens' ``upstream`` claim carries it.
    name: str

    def __init__(self, http_client: httpx.AsyncClient | None, timeout: float) -> None:
        self.timeout = timeout
        self._http = http_client

    @property
    def http(self) -> httpx.AsyncClient:
        """The HTTP client for the provider (made on first use unless given)."""
        if self._http is None:
            self._http = httpx.AsyncClient(timeout=self.timeout, follow_redirects=False)
        return self._http

    async def aclose(self) -> None:
        """Close the HTTP client the upstream made (or was given)."""
        if self._http is not None:
            await self._http.aclose()
            self._http = None

    async def request_json(
        self,
        method: str,
        url: str,
        *,
        form: Mapping[str, str] | None = None,
        headers: Mapping[str, str] | None = None,
        params: Mapping[str, str] | None = None,
    ) -> tuple[int, Any]:
        """(status, the answer as JSON or None when it is not JSON). Past ``timeout`` seconds,
        past ``MAX_UPSTREAM_ANSWER_BYTES``, or unreachable: an ``OAuthEndpointError``."""
        sent = {"accept": "application/json", **(headers or {})}
        try:
            async with asyncio.timeout(self.timeout):
                async with self.http.stream(
                    method, url, data=form, headers=sent, params=params
                ) as response:
                    status = response.status_code
                    raw = await bounded_body(response, MAX_UPSTREAM_ANSWER_BYTES)
                    if raw is None:
                        raise upstream_failure("answered too much")
        except (httpx.HTTPError, TimeoutError) as exc:
            raise upstream_failure(f"could not be reached ({type(exc).__name__})") from exc
        try:
            return status, json.loads(raw)
        except ValueError:
            return status, None

    async def post_token_request(
        self, url: str, form: Mapping[str, str], headers: Mapping[str, str]
    ) -> dict[str, Any]:
        """The token endpoint's answer to ``form``: a JSON object with an ``access_token`` or
        an ``id_token``, else an ``OAuthEndpointError`` (a refusal answered with 200 too, as
        GitHub answers one)."""
        status, body = await self.request_json("POST", url, form=form, headers=headers)
        if (
            status != 200
            or not isinstance(body, dict)
            or "error" in body
            or not (
                isinstance(body.get("access_token"), str) or isinstance(body.get("id_token"), str)
            )
        ):
            error = body.get("error") if isinstance(body, dict) else None
            raise upstream_failure(f"refused the code (HTTP {status} {error or ''})".rstrip())
        return body

    async def get_json(self, url: str, access_token: str, what: str) -> Any:
        """GET ``url`` with the provider's access token; the JSON answer (``what`` names it in
        the error when it is not a 200 JSON answer)."""
        status, body = await self.request_json(
            "GET", url, headers={**self.api_headers(), "authorization": f"Bearer {access_token}"}
        )
        if status != 200 or body is None:
            raise upstream_failure(f"{what} could not be read (HTTP {status})")
        return body

    def api_headers(self) -> dict[str, str]:
        """Headers sent with every API call made with the provider's access token."""
        return {}


__all__ = [
    "DEFAULT_UPSTREAM_TIMEOUT",
    "MAX_UPSTREAM_ANSWER_BYTES",
    "UpstreamClient",
    "code_exchange",
    "upstream_failure",
]

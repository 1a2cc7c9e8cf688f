"""Reading an authorization server's JSON answers (token, token exchange, registration)."""

from __future__ import annotations

import json
from typing import Any

import httpx

from mcpkit.auth._types import OAuthError
from mcpkit.auth._unavailable import bounded_body

#: Bytes of an authorization server's answer read; past it the answer is refused.
MAX_AUTH_RESPONSE_BYTES = 256 * 1024


async def post_json(
    http: httpx.AsyncClient, url: str, what: str, **request: Any
) -> tuple[httpx.Response, dict[str, Any]]:
    """POST to ``url``; the response and its JSON object (``{}`` when it is not one). Its
    body is read up to ``MAX_AUTH_RESPONSE_BYTES``: past that, an ``OAuthError`` naming
    ``what``. ``httpx.HTTPError`` when the server cannot be reached."""
    async with http.stream("POST", url, **request) as response:
        raw = await bounded_body(response, MAX_AUTH_RESPONSE_BYTES)
    if raw is None:
        raise OAuthError(
            f"{what} at {url}: the answer is larger than {MAX_AUTH_RESPONSE_BYTES} bytes; refused",
            status_code=response.status_code,
        )
    return response, json_object(raw)


def json_object(raw: bytes) -> dict[str, Any]:
    """The JSON object ``raw`` holds; ``{}`` when it is not one."""
    try:
        data = json.loads(raw)
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def refusal(what: str, response: httpx.Response, body: dict[str, Any]) -> OAuthError:
    """The ``OAuthError`` of a refused ``what``, carrying the server's ``error`` code."""
    error = body.get("error")
    return OAuthError(
        f"{what} refused (HTTP {response.status_code}): {body.get('error', '')} {body.get('error_description', '')}".strip(),
        error=error if isinstance(error, str) else None,
        status_code=response.status_code,
    )

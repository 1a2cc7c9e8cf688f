"""Reading an authorization server's JSON answers (token, token exchange, registration)."""

from __future__ import annotations

import json
from typing import Any

import httpx

from mcpkit.auth._types import OAuthError

#: Bytes of an authorization server's answer read as JSON; past it the answer counts as empty.
MAX_AUTH_RESPONSE_BYTES = 256 * 1024


def json_object(response: httpx.Response) -> dict[str, Any]:
    """The answer's JSON object; ``{}`` when it is not one."""
    try:
        data = json.loads(response.content[:MAX_AUTH_RESPONSE_BYTES])
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

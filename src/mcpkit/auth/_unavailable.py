"""The verdict a verifier gives when it cannot judge a token at all."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from mcpkit._exceptions import AuthError

#: Seconds a client is told to wait (``Retry-After``) when tokens cannot be checked.
DEFAULT_RETRY_AFTER = 5


class VerifierUnavailableError(AuthError):
    """A token verifier could not reach what it checks tokens against (the introspection
    endpoint, the discovery document, the key set). ``BearerAuthGate`` answers the request
    503 ``temporarily_unavailable`` with ``Retry-After``, not 401: the token may be fine,
    and a client that dropped it and re-authorized would gain nothing."""

    def __init__(self, message: str, *, retry_after: int = DEFAULT_RETRY_AFTER) -> None:
        super().__init__(message)
        self.retry_after = retry_after


async def bounded_body(response: Any, max_bytes: int) -> bytes | None:
    """The body of a streamed ``httpx`` response, None once it passes ``max_bytes`` (read no
    further): what an authorization server answers is bounded wherever it is read."""
    body = bytearray()
    async for chunk in response.aiter_bytes():
        body += chunk
        if len(body) > max_bytes:
            return None
    return bytes(body)


async def fetch_json(
    client: Any,
    method: str,
    url: str,
    *,
    timeout: float,
    max_bytes: int,
    unavailable: Callable[[str], VerifierUnavailableError],
    **request: Any,
) -> Any:
    """The JSON of a 200 answer from an authorization server (``client``: an
    ``httpx.AsyncClient``; None: one made for this request, without redirects), read within
    ``timeout`` seconds and ``max_bytes``; anything else (no answer in time, unreachable,
    another status, too big, not JSON) raises what ``unavailable(reason)`` makes: the token
    cannot be judged."""
    import httpx

    if client is None:
        async with httpx.AsyncClient(follow_redirects=False) as own:
            return await fetch_json(
                own,
                method,
                url,
                timeout=timeout,
                max_bytes=max_bytes,
                unavailable=unavailable,
                **request,
            )
    try:
        async with asyncio.timeout(timeout):
            async with client.stream(
                method, url, headers={"accept": "application/json"}, timeout=timeout, **request
            ) as response:
                status = response.status_code
                body = await bounded_body(response, max_bytes)
                if body is None:
                    raise unavailable(f"answered more than {max_bytes} bytes")
    except TimeoutError:
        raise unavailable(f"did not answer within {timeout} s") from None
    except httpx.HTTPError as exc:
        raise unavailable(f"could not be reached ({type(exc).__name__})") from exc
    if status != 200:
        # 401/403: the verifier's own credentials are wrong; 5xx: the server is unwell.
        raise unavailable(f"answered HTTP {status}")
    try:
        return json.loads(body)
    except ValueError:
        raise unavailable("answered something that is not JSON") from None


__all__ = ["DEFAULT_RETRY_AFTER", "VerifierUnavailableError", "bounded_body", "fetch_json"]

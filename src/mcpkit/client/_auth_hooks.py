"""The authorization hooks of the client transport options, applied one way by every
transport whose requests are HTTP requests: Streamable HTTP, legacy HTTP+SSE, and the
WebSocket upgrade.

The options name them (``HttpClientTransportOptions``, ``WebSocketClientTransportOptions``):
``additional_headers`` go on every request; ``apply_per_request_headers(context, headers)``
adds to them last (the access token, a DPoP proof); ``observe_response_challenge(context)``
sees every response's status and challenge headers; ``auth_challenge_handler(challenge)``
answers a 401 (or a 403 ``insufficient_scope``) with the ``Authorization`` value to send
the request once more with. ``OAuthClientProvider.install(options)`` sets the three hooks.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Protocol

from mcpkit._exceptions import TransportError
from mcpkit.client._call_headers import CALL_HEADERS

__all__ = [
    "CREDENTIAL_HEADERS",
    "AuthHookOptions",
    "HttpRequestHeaderContext",
    "HttpResponseChallengeContext",
    "authorization_retry",
    "joined_challenge",
    "observe_response",
    "request_headers",
]

#: Headers never carried across a redirect to another origin.
CREDENTIAL_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie", "dpop"})
#: Statuses a request may be sent once more after (a DPoP nonce, an auth challenge).
AUTH_RETRY_STATUSES = frozenset({400, 401, 403})
USE_DPOP_NONCE = "use_dpop_nonce"
INSUFFICIENT_SCOPE = "insufficient_scope"


@dataclass(frozen=True, slots=True)
class HttpRequestHeaderContext:
    """What ``apply_per_request_headers`` is told about the request about to be sent."""

    method: str
    url: str
    #: 0 for the first send of a request; counts redirect hops after that.
    attempt: int = 0


@dataclass(frozen=True, slots=True)
class HttpResponseChallengeContext:
    """What ``observe_response_challenge`` is told about each response (2xx and SSE too)."""

    method: str
    url: str
    status_code: int
    www_authenticate: str | None = None
    dpop_nonce: str | None = None


ChallengeHandler = Callable[[str], "str | Awaitable[str]"]
HeaderHook = Callable[[HttpRequestHeaderContext, dict[str, str]], None]
ChallengeObserver = Callable[[HttpResponseChallengeContext], None]


class AuthHookOptions(Protocol):
    """The part of a transport's options these helpers read."""

    additional_headers: dict[str, str]
    auth_challenge_handler: ChallengeHandler | None
    apply_per_request_headers: HeaderHook | None
    observe_response_challenge: ChallengeObserver | None


def request_headers(
    options: AuthHookOptions,
    context: HttpRequestHeaderContext,
    own: Mapping[str, str],
    *,
    authorization: str | None = None,
    crossed: bool = False,
) -> dict[str, str]:
    """The headers one request goes out with.

    ``additional_headers``, then the call's own (``CALL_HEADERS``), then ``authorization``
    (what the challenge handler last gave, unless the call named one), then the
    transport's ``own`` headers (each replacing same-named ones whatever their case);
    without credentials once a redirect ``crossed`` to another origin; the per-request
    hook last, so a provider's fresh token and proof win."""
    own_names = {k.lower() for k in own}
    call = CALL_HEADERS.get()
    if call:
        own_names |= {k.lower() for k in call}  # the call's replace the static ones
    merged = {k: v for k, v in options.additional_headers.items() if k.lower() not in own_names}
    if call:
        merged.update(call)
    if authorization and "authorization" not in own_names:
        merged = {k: v for k, v in merged.items() if k.lower() != "authorization"}
        merged["Authorization"] = authorization
    merged = {k: v for k, v in merged.items() if k.lower() not in {n.lower() for n in own}}
    merged.update(own)
    if crossed:
        merged = {k: v for k, v in merged.items() if k.lower() not in CREDENTIAL_HEADERS}
    hook = options.apply_per_request_headers
    if hook is not None:
        hook(context, merged)
    return merged


def observe_response(
    options: AuthHookOptions,
    method: str,
    url: str,
    status_code: int,
    *,
    www_authenticate: str | None,
    dpop_nonce: str | None,
) -> None:
    """Show one response to ``observe_response_challenge`` (it keeps DPoP nonces)."""
    hook = options.observe_response_challenge
    if hook is not None:
        hook(HttpResponseChallengeContext(method, url, status_code, www_authenticate, dpop_nonce))


def joined_challenge(values: Iterable[str]) -> str:
    """Every ``WWW-Authenticate`` value of a response as one challenge list."""
    return ", ".join(values)


async def authorization_retry(
    options: AuthHookOptions,
    status_code: int,
    challenge: str,
    *,
    dpop_nonce: str | None,
    body_preview: Callable[[], Awaitable[bytes]],
    request: str,
) -> str | None:
    """Whether a refused request is worth sending once more, and with what.

    None: no. "": as it was, headers rebuilt (a ``use_dpop_nonce`` challenge: the header
    hook makes a new proof with the nonce the observer just saw). Else the
    ``Authorization`` value ``auth_challenge_handler`` gave, for the retry and the requests
    after it. ``body_preview`` is read only when the nonce marker may be in the body.
    A failing handler raises ``TransportError`` naming ``request``."""
    if status_code not in AUTH_RETRY_STATUSES:
        return None
    if (
        status_code in (400, 401)
        and dpop_nonce
        and await _names_use_dpop_nonce(challenge, body_preview)
    ):
        return ""
    if not _handler_answers(options, status_code, challenge):
        return None
    return await _ask_handler(options, challenge, request) or None


async def _names_use_dpop_nonce(
    challenge: str, body_preview: Callable[[], Awaitable[bytes]]
) -> bool:
    # RFC 9449 §8-9: the marker is in the challenge (resource server) or the body (token endpoint).
    return USE_DPOP_NONCE in challenge or USE_DPOP_NONCE.encode() in await body_preview()


def _handler_answers(options: AuthHookOptions, status_code: int, challenge: str) -> bool:
    # A plain 403 is a verdict, not a challenge: new credentials would not change it.
    if options.auth_challenge_handler is None:
        return False
    return status_code == 401 or (status_code == 403 and INSUFFICIENT_SCOPE in challenge)


async def _ask_handler(options: AuthHookOptions, challenge: str, request: str) -> str:
    handler = options.auth_challenge_handler
    assert handler is not None
    try:
        value = handler(challenge)
        if inspect.isawaitable(value):
            value = await value
    except Exception as exc:
        raise TransportError(f"{request}: authorization failed: {exc}") from exc
    return value or ""

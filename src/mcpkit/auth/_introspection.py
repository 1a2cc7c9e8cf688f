"""``IntrospectionVerifier``: asks the authorization server about each token (RFC 7662).

For opaque tokens (or JWTs the resource server should not judge alone): the token is POSTed
to the introspection endpoint with the resource server's client credentials, and the answer
(``active``, ``scope``, ``exp``, ``aud``, ...) decides. Answers are kept in a bounded cache
for a short while, never past the token's own expiry.

Outcomes: an inactive, expired or foreign token is refused (the gate answers 401
``invalid_token``); an endpoint that cannot be reached, times out, answers other than 200
or with something that is not an introspection response raises
``VerifierUnavailableError`` (the gate answers 503 with ``Retry-After``): that says nothing
about the token.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

import httpx

from mcpkit.auth._jwt import claim_audiences
from mcpkit.auth._types import AuthResult
from mcpkit.auth._unavailable import DEFAULT_RETRY_AFTER, VerifierUnavailableError, fetch_json

logger = logging.getLogger("mcpkit.auth")

#: Longest a verdict is reused (seconds); never past the token's ``exp``.
DEFAULT_INTROSPECTION_CACHE_TTL = 60.0
#: Longest a refusal (``active: false``) is reused: a bad token retried in a loop does not
#: reach the authorization server each time.
DEFAULT_INACTIVE_CACHE_TTL = 10.0
#: Verdicts kept at once (least recently used dropped first).
DEFAULT_INTROSPECTION_CACHE_SIZE = 10_000
#: Seconds one introspection request may take.
DEFAULT_INTROSPECTION_TIMEOUT = 5.0
#: Largest introspection response read.
DEFAULT_MAX_INTROSPECTION_BYTES = 64 * 1024
#: Largest token sent for introspection, in characters.
MAX_INTROSPECTED_TOKEN_LENGTH = 16 * 1024
#: Clock skew allowed on ``exp``/``nbf`` (seconds).
DEFAULT_INTROSPECTION_LEEWAY = 30.0

ClientAuthMethod = Literal["client_secret_basic", "client_secret_post", "none"]


class IntrospectionVerifier:
    """Checks bearer tokens by RFC 7662 introspection; ``verify(token)`` is a ready
    ``BearerAuthConfig.verify``.

    ``client_id``/``client_secret`` authenticate this resource server to the endpoint
    (``client_secret_basic`` by default, or ``client_secret_post``; ``none`` sends no
    credentials). A token is accepted when the answer says ``active: true`` and, as far as
    the answer has them: ``exp`` is ahead and ``nbf`` behind (``leeway`` seconds of skew),
    ``iss`` is ``issuer`` (when given), and ``aud`` names one of ``audience`` (when given;
    a configured audience with an answer naming none is refused). Scopes come from
    ``scope``; subject, client and DPoP binding from ``sub``, ``client_id`` and
    ``cnf.jkt``.

    Verdicts are cached by the token's SHA-256 (tokens are not kept): an accepted one for
    ``cache_ttl`` seconds at most and never past ``exp``, a refused one for
    ``inactive_cache_ttl``; at most ``max_cache_entries`` of them. Concurrent checks of
    one token share one request.
    """

    def __init__(
        self,
        introspection_endpoint: str,
        *,
        client_id: str | None = None,
        client_secret: str | None = None,
        client_auth_method: ClientAuthMethod = "client_secret_basic",
        audience: str | Sequence[str] | None = None,
        issuer: str | None = None,
        leeway: float = DEFAULT_INTROSPECTION_LEEWAY,
        cache_ttl: float = DEFAULT_INTROSPECTION_CACHE_TTL,
        inactive_cache_ttl: float = DEFAULT_INACTIVE_CACHE_TTL,
        max_cache_entries: int = DEFAULT_INTROSPECTION_CACHE_SIZE,
        timeout: float = DEFAULT_INTROSPECTION_TIMEOUT,
        max_response_bytes: int = DEFAULT_MAX_INTROSPECTION_BYTES,
        retry_after: int = DEFAULT_RETRY_AFTER,
        http_client: httpx.AsyncClient | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if not introspection_endpoint.startswith(("https://", "http://")):
            raise ValueError("introspection_endpoint must be an http(s) URL")
        if client_auth_method not in ("client_secret_basic", "client_secret_post", "none"):
            raise ValueError(f"unknown client_auth_method {client_auth_method!r}")
        if client_auth_method != "none" and (client_id is None or client_secret is None):
            raise ValueError(f"{client_auth_method} needs client_id and client_secret")
        if max_cache_entries < 1:
            raise ValueError("max_cache_entries must be at least 1")
        self.endpoint = introspection_endpoint
        self.client_id = client_id
        self.client_secret = client_secret
        self.client_auth_method = client_auth_method
        self.audiences = (audience,) if isinstance(audience, str) else tuple(audience or ())
        self.issuer = issuer
        self.leeway = leeway
        self.cache_ttl = cache_ttl
        self.inactive_cache_ttl = inactive_cache_ttl
        self.max_cache_entries = max_cache_entries
        self.timeout = timeout
        self.max_response_bytes = max_response_bytes
        self.retry_after = retry_after
        self.clock = clock
        self._http = http_client
        self._cache: OrderedDict[str, tuple[AuthResult, float]] = OrderedDict()
        self._inflight: dict[str, asyncio.Future[AuthResult]] = {}
        #: Introspection requests sent (for monitoring and tests).
        self.requests = 0

    async def __call__(self, token: str) -> AuthResult:
        return await self.verify(token)

    async def verify(self, token: str) -> AuthResult:
        """The verdict on ``token``: from the cache, or from the introspection endpoint."""
        if not token or len(token) > MAX_INTROSPECTED_TOKEN_LENGTH:
            return AuthResult.reject("the access token is malformed")
        key = hashlib.sha256(token.encode("utf-8")).hexdigest()
        cached = self._cached(key)
        if cached is not None:
            return self._still_valid(cached)
        pending = self._inflight.get(key)
        if pending is not None:
            try:
                return self._still_valid(await asyncio.shield(pending))
            except asyncio.CancelledError:
                if not pending.cancelled():
                    raise  # this request itself was cancelled
                # the request it waited on was cancelled, not this one: ask on its own
        future: asyncio.Future[AuthResult] = asyncio.get_running_loop().create_future()
        self._inflight[key] = future
        try:
            result = await self._introspect(token)
        except asyncio.CancelledError:
            future.cancel()
            raise
        except Exception as exc:
            future.set_exception(exc)
            future.exception()  # retrieved: waiters re-raise it, nobody logs it as lost
            raise
        else:
            future.set_result(result)
        finally:
            if self._inflight.get(key) is future:
                del self._inflight[key]
        self._remember(key, result)
        return result

    # the cache -------------------------------------------------------------------------

    def _cached(self, key: str) -> AuthResult | None:
        found = self._cache.get(key)
        if found is None:
            return None
        result, until = found
        if self.clock() >= until:
            del self._cache[key]
            return None
        self._cache.move_to_end(key)
        return result

    def _remember(self, key: str, result: AuthResult) -> None:
        now = self.clock()
        if result.ok:
            until = now + self.cache_ttl
            if result.expires_at is not None:
                until = min(until, result.expires_at)
        else:
            until = now + self.inactive_cache_ttl
        if until <= now:
            return
        self._cache[key] = (result, until)
        self._cache.move_to_end(key)
        while len(self._cache) > self.max_cache_entries:
            self._cache.popitem(last=False)

    def _still_valid(self, result: AuthResult) -> AuthResult:
        expires = result.expires_at
        if result.ok and expires is not None and self.clock() >= expires + self.leeway:
            return AuthResult.reject("the access token has expired")
        return result

    # the request -----------------------------------------------------------------------

    async def _introspect(self, token: str) -> AuthResult:
        form = {"token": token, "token_type_hint": "access_token"}
        auth: httpx.BasicAuth | None = None
        if self.client_auth_method == "client_secret_basic":
            assert self.client_id is not None and self.client_secret is not None
            auth = httpx.BasicAuth(self.client_id, self.client_secret)
        elif self.client_auth_method == "client_secret_post":
            assert self.client_id is not None and self.client_secret is not None
            form.update(client_id=self.client_id, client_secret=self.client_secret)
        self.requests += 1
        answer = await fetch_json(
            self._http,
            "POST",
            self.endpoint,
            timeout=self.timeout,
            max_bytes=self.max_response_bytes,
            unavailable=self._unavailable,
            data=form,
            auth=auth if auth is not None else httpx.USE_CLIENT_DEFAULT,
        )
        if not isinstance(answer, dict) or not isinstance(answer.get("active"), bool):
            raise self._unavailable("answered without a boolean 'active'")
        return self._judge(answer)

    def _unavailable(self, what: str) -> VerifierUnavailableError:
        return VerifierUnavailableError(
            f"the introspection endpoint {self.endpoint} {what}", retry_after=self.retry_after
        )

    def _judge(self, answer: Mapping[str, Any]) -> AuthResult:
        if answer.get("active") is not True:
            return AuthResult.reject("the access token is not active")
        now = self.clock()

        def number(name: str) -> float | None:
            value = answer.get(name)
            if value is None:
                return None
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ValueError(name)
            return float(value)

        try:
            exp, nbf = number("exp"), number("nbf")
        except ValueError as exc:
            return AuthResult.reject(f"the introspected {exc} is not a number")
        if exp is not None and now >= exp + self.leeway:
            return AuthResult.reject("the access token has expired")
        if nbf is not None and now < nbf - self.leeway:
            return AuthResult.reject("the access token is not valid yet")
        if self.issuer is not None and answer.get("iss") != self.issuer:
            return AuthResult.reject("the access token was issued by another authorization server")
        audiences = claim_audiences(answer.get("aud"))
        if self.audiences and not set(audiences).intersection(self.audiences):
            return AuthResult.reject("the access token was not issued for this resource")
        scope = answer.get("scope")
        scopes = tuple(scope.split()) if isinstance(scope, str) else ()
        cnf = answer.get("cnf")
        jkt = cnf.get("jkt") if isinstance(cnf, dict) and isinstance(cnf.get("jkt"), str) else None
        sub = answer.get("sub")
        client_id = answer.get("client_id")
        return AuthResult(
            ok=True,
            scopes=scopes,
            resource=audiences[0] if len(audiences) == 1 else (audiences or None),
            subject=sub if isinstance(sub, str) else None,
            client_id=client_id if isinstance(client_id, str) else None,
            claims=dict(answer),
            jkt=jkt,
            expires_at=exp,
        )


__all__ = [
    "DEFAULT_INACTIVE_CACHE_TTL",
    "DEFAULT_INTROSPECTION_CACHE_SIZE",
    "DEFAULT_INTROSPECTION_CACHE_TTL",
    "DEFAULT_INTROSPECTION_TIMEOUT",
    "IntrospectionVerifier",
]

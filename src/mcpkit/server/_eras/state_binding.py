"""What a ``requestState`` is bound to, and the check of a retry against it.

The 2026-07-28 MRTR page asks servers to put in the signed state, and verify on receipt,
the authenticated principal, a short expiry and an identifier of the originating request;
and to enforce single use server-side where a state must be consumed at most once. So the
state this server issues names who asked (``principal_of``), a digest of the request
(``request_digest``), when it expires and a random id, and ``RequestStates.accept`` takes
it once only: bob cannot finish alice's call, changed arguments cannot reuse an approval,
and a state is not good a second time.
"""

from __future__ import annotations

import hashlib
import secrets
import time
from typing import TYPE_CHECKING, Any, Protocol

import msgspec

from mcpkit._exceptions import InvalidParamsError
from mcpkit.auth._types import session_owner
from mcpkit.server._eras.used_states import DEFAULT_MAX_USED_REQUEST_STATES, UsedRequestStates

if TYPE_CHECKING:
    from mcpkit.auth._types import AuthInfo
    from mcpkit.server._eras.state_codec import RequestStateCodec


class SharedUsedStates(Protocol):
    """The accepted states' ids where several instances (or workers) see them: a state
    accepted by one is refused by the others (``mcpkit.stores.RedisUsedRequestStates``)."""

    async def spend(self, state_id: str, expires_at: float) -> bool:
        """Record ``state_id`` until ``expires_at`` (a Unix time); False when it already was."""
        ...


#: Seconds a ``requestState`` stays good: long enough for a person to answer a question,
#: short enough to bound how long a leaked one is worth anything.
DEFAULT_REQUEST_STATE_TTL = 300.0

#: The principal of a request made without authentication.
ANONYMOUS = "anonymous"

#: The version of the payload; a state without it (or with another) is refused. 1 was the
#: unbound payload (no principal, digest, expiry or id).
STATE_FORMAT = 2

#: Members of a request's params that change from one round to the next (the answers and the
#: state themselves, the per-request ``_meta``): left out of its digest.
ROUND_MEMBERS = frozenset({"_meta", "requestState", "inputResponses"})


def principal_of(auth: AuthInfo | None) -> str:
    """Who a state belongs to: the digest ``session_owner`` makes of the token's issuer,
    client and subject (sessions are bound the same way), or ``ANONYMOUS`` without auth."""
    return session_owner(auth) or ANONYMOUS


def request_digest(method: str, params: dict[str, Any]) -> str:
    """SHA-256 of the request a state belongs to: its method and its params (the tool or
    prompt name or resource uri, the arguments) but ``ROUND_MEMBERS``, as JSON with sorted
    keys, so the same request gives the same digest whatever order its members came in."""
    salient = {key: value for key, value in params.items() if key not in ROUND_MEMBERS}
    return hashlib.sha256(msgspec.json.encode([method, salient], order="sorted")).hexdigest()


def _refused(reason: str) -> InvalidParamsError:
    return InvalidParamsError(f"Invalid requestState: {reason}")


class RequestStates:
    """Issues the ``requestState`` of an ``InputRequiredResult`` and accepts it back on the
    retry: signed by ``codec``, good for ``ttl`` seconds, for the principal and the request
    it was issued to, once (``used`` remembers the ids of those accepted, in this process).
    """

    def __init__(
        self,
        codec: RequestStateCodec,
        *,
        ttl: float = DEFAULT_REQUEST_STATE_TTL,
        max_used: int = DEFAULT_MAX_USED_REQUEST_STATES,
    ) -> None:
        if not ttl > 0:
            raise ValueError(f"request_state_ttl must be a positive number of seconds: {ttl!r}")
        self.codec = codec
        self.ttl = ttl
        self.used = UsedRequestStates(max_used)
        #: The record shared with other instances, None: this process's alone. Set by whoever
        #: configures the shared stores (``mcpkit run --redis-url``).
        self.shared: SharedUsedStates | None = None

    async def confirm(self, spent: tuple[str, float] | None) -> None:
        """Take an accepted state's id (``RoundInputs.spent``) in the shared record too:
        ``InvalidParamsError`` when another instance accepted it first."""
        shared = self.shared
        if shared is None or spent is None:
            return
        if not await shared.spend(*spent):  # StoreUnavailableError: 503, the state kept
            raise _refused("already used; send the request again without it")

    def issue(self, payload: dict[str, Any], *, principal: str, digest: str) -> str:
        """``payload`` (the call's rounds so far) signed, bound to ``principal`` and the
        request of ``digest``, expiring ``ttl`` seconds from now, with an id of its own."""
        bound = {
            **payload,
            "v": STATE_FORMAT,
            "p": principal,
            "d": digest,
            "x": time.time() + self.ttl,
            "n": secrets.token_urlsafe(16),
        }
        return self.codec.encode(bound)

    def accept(
        self, state: Any, *, method: str, target: str | None, principal: str, digest: str
    ) -> dict[str, Any]:
        """The payload of ``state`` when this server issued it to ``principal`` for this
        request, it has not expired and was not accepted before; else ``InvalidParamsError``
        (-32602), and nothing is recorded (a refused state stays good for its owner)."""
        payload = self.codec.decode(state)
        if payload.get("v") != STATE_FORMAT:
            raise _refused(
                "issued by an earlier version of this server; send the request again without it"
            )
        if payload.get("m") != method or payload.get("t") != target:
            raise _refused("issued for another request")
        if payload.get("p") != principal:
            raise _refused("issued to another principal")
        if payload.get("d") != digest:
            raise _refused("issued for other arguments")
        expires_at, state_id = payload.get("x"), payload.get("n")
        if not isinstance(expires_at, (int, float)) or not isinstance(state_id, str):
            raise _refused("malformed")
        now = time.time()
        if now >= expires_at:
            raise _refused("expired; send the request again without it")
        if not self.used.spend(state_id, expires_at, now):
            raise _refused("already used; send the request again without it")
        return payload

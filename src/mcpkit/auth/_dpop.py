"""DPoP (RFC 9449): proofs made by clients, checked by resource servers, and server nonces.

A proof is a JWS (``typ: dpop+jwt``) signed with the client's key, whose public half rides
in the ``jwk`` header. It names the request (``htm`` method, ``htu`` URI without query or
fragment), when it was made (``iat``), a unique ``jti``, the hash of the access token it
accompanies (``ath``) and, when the server asked for one, the server's ``nonce``. A
DPoP-bound access token carries the thumbprint of that key (``cnf.jkt``).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import quote, unquote, urlsplit

from joserfc import jws
from joserfc.errors import JoseError
from joserfc.jwk import ECKey, OKPKey, RSAKey, import_key
from joserfc.jws import JWSRegistry

from mcpkit._exceptions import AuthError

Clock = Callable[[], float]

#: Asymmetric algorithms accepted in DPoP proofs by default ("none" and MACs never are).
DEFAULT_DPOP_ALGORITHMS: tuple[str, ...] = (
    "ES256",
    "ES384",
    "ES512",
    "PS256",
    "PS384",
    "PS512",
    "RS256",
    "EdDSA",
)
_NEVER = frozenset({"none", "HS256", "HS384", "HS512"})
#: Seconds a proof's ``iat`` may lie in the past.
DEFAULT_DPOP_MAX_AGE = 120.0
#: Seconds of clock difference tolerated in either direction.
DEFAULT_DPOP_CLOCK_SKEW = 30.0
#: Proof ``jti`` values remembered to refuse replays.
DEFAULT_REPLAY_CACHE_SIZE = 100_000
#: Seconds one server nonce is current; it is still accepted for one more period after.
DEFAULT_NONCE_LIFETIME = 300.0
#: Periods a nonce key from a shared store is kept for: its own, the next (its nonces are
#: still accepted) and one of margin. Also how many such keys one manager holds at once.
NONCE_KEY_PERIODS = 3
#: Largest proof accepted, in bytes.
MAX_PROOF_BYTES = 8 * 1024
_DEFAULT_PORTS = {"http": 80, "https": 443}
_UNRESERVED = "-._~"


class _ProofRegistry(JWSRegistry):
    """joserfc's limits, with room for an RSA public key in the header."""

    max_header_length = 4096
    max_payload_length = MAX_PROOF_BYTES


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def access_token_hash(token: str) -> str:
    """``ath``: base64url of the SHA-256 of the access token's ASCII bytes."""
    return b64url(hashlib.sha256(token.encode("ascii", "replace")).digest())


def jwk_thumbprint(jwk: Mapping[str, Any]) -> str:
    """RFC 7638 SHA-256 thumbprint of a public JWK (what ``cnf.jkt`` carries)."""
    return import_key(dict(jwk)).thumbprint()


def normalize_htu(url: str) -> str:
    """The form ``htu`` values are compared in (RFC 9449 §4.3 step 9 with RFC 3986 §6.2.2-3).

    Scheme and host lower-cased, the default port dropped, an empty path made ``/``,
    percent-encoding normalized; query and fragment removed. ``ws``/``wss`` compare as
    ``http``/``https`` (a WebSocket upgrade is an HTTP GET).
    """
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    scheme = {"ws": "http", "wss": "https"}.get(scheme, scheme)
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:
        port = None
    netloc = host if port is None or _DEFAULT_PORTS.get(scheme) == port else f"{host}:{port}"
    path = quote(unquote(parts.path), safe="/!$&'()*+,;=:@" + _UNRESERVED) or "/"
    return f"{scheme}://{netloc}{path}"


def has_query_or_fragment(url: str) -> bool:
    return "?" in url or "#" in url


class DPoPError(AuthError):
    """A proof was refused; ``error`` is ``invalid_dpop_proof`` or ``use_dpop_nonce``."""

    def __init__(self, description: str, error: str = "invalid_dpop_proof") -> None:
        super().__init__(description)
        self.error = error
        self.description = description


@dataclass(frozen=True, slots=True)
class DPoPProof:
    """A proof that passed every check."""

    jkt: str
    jti: str
    htm: str
    htu: str
    iat: float
    nonce: str | None
    ath: str | None
    jwk: Mapping[str, Any]


class ReplayCache:
    """``jti`` values seen within the acceptance window: bounded in size and in time.

    Entries expire ``ttl`` seconds after they were added; past ``max_entries`` the oldest
    is dropped (a proof that old is close to falling out of the ``iat`` window anyway).
    """

    def __init__(
        self, ttl: float, max_entries: int = DEFAULT_REPLAY_CACHE_SIZE, clock: Clock = time.time
    ) -> None:
        self.ttl = ttl
        self.max_entries = max(1, max_entries)
        self.clock = clock
        self._seen: OrderedDict[str, float] = OrderedDict()
        self._lock = threading.Lock()

    def add(self, key: str, ttl: float | None = None) -> bool:
        """Record ``key`` for ``ttl`` seconds (the cache's own by default); False when it
        was already there (a replay)."""
        now = self.clock()
        with self._lock:
            self._purge(now)
            expires = self._seen.get(key)
            if expires is not None and expires > now:
                return False
            self._seen[key] = now + (self.ttl if ttl is None else ttl)
            self._seen.move_to_end(key)
            while len(self._seen) > self.max_entries:
                self._seen.popitem(last=False)
            return True

    def _purge(self, now: float) -> None:
        seen = self._seen
        while seen:
            _key, expires = next(iter(seen.items()))
            if expires > now:
                break
            seen.popitem(last=False)

    def __len__(self) -> int:
        return len(self._seen)


class NonceKeys(Protocol):
    """Where the key of each nonce period comes from when several instances share them (a
    ``DPoPStateStore``): the first instance to ask makes it, every other one reads it."""

    def nonce_key(self, period: int, ttl: float) -> Awaitable[bytes]: ...


class DPoPNonceManager:
    """Server-provided nonces (RFC 9449 §8-9) that rotate every ``lifetime`` seconds.

    A nonce is the rotation period's number, MACed with that period's key: ``secret`` for
    every period, or (``keys``) a key per period held in a store every instance shares, so
    each worker accepts the nonces the others issue and a key serves three periods at most.
    The current nonce and the one before it are accepted (a client that fetched a nonce
    just before the rotation is not bounced), and the next one (another instance whose
    clock is a little ahead rotated first); anything else is answered with
    ``use_dpop_nonce`` and a fresh one.

    ``issue()`` and ``accepts()`` work with either; the synchronous ``current()``,
    ``is_valid()`` and ``is_current()`` only with a ``secret`` (nothing to fetch).
    """

    def __init__(
        self,
        lifetime: float = DEFAULT_NONCE_LIFETIME,
        secret: bytes | None = None,
        clock: Clock = time.time,
        *,
        keys: NonceKeys | None = None,
    ) -> None:
        if lifetime <= 0:
            raise ValueError("nonce lifetime must be positive")
        if secret is not None and keys is not None:
            raise ValueError("give a nonce secret or a shared key store, not both")
        self.lifetime = lifetime
        self.clock = clock
        self._keys = keys
        self._secret = None if keys is not None else (secret or secrets.token_bytes(32))
        #: Keys fetched from ``keys`` by period, oldest first; at most NONCE_KEY_PERIODS.
        self._fetched: OrderedDict[int, bytes] = OrderedDict()

    def _period(self) -> int:
        return int(self.clock() // self.lifetime)

    @staticmethod
    def _make(period: int, key: bytes) -> str:
        raw = period.to_bytes(8, "big", signed=True)
        mac = hmac.new(key, raw, hashlib.sha256).digest()[:16]
        return b64url(raw + mac)

    @staticmethod
    def _claimed_period(nonce: str | None) -> int | None:
        """The period a well-formed nonce names (its MAC not checked yet)."""
        if not nonce or len(nonce) > 64:
            return None
        try:
            raw = base64.urlsafe_b64decode(nonce + "=" * (-len(nonce) % 4))
        except (ValueError, TypeError):
            return None
        if len(raw) != 24:
            return None
        return int.from_bytes(raw[:8], "big", signed=True)

    def _in_window(self, period: int) -> bool:
        return -1 <= self._period() - period <= 1

    async def _key(self, period: int) -> bytes:
        if self._secret is not None:
            return self._secret
        key = self._fetched.get(period)
        if key is None:
            assert self._keys is not None
            key = await self._keys.nonce_key(period, self.lifetime * NONCE_KEY_PERIODS)
            self._fetched[period] = key
            while len(self._fetched) > NONCE_KEY_PERIODS:
                self._fetched.popitem(last=False)
        return key

    async def issue(self) -> str:
        """The nonce clients should use now (it changes every period)."""
        period = self._period()
        return self._make(period, await self._key(period))

    async def accepts(self, nonce: str | None) -> bool:
        """Whether ``nonce`` was issued, by this instance or one sharing its keys, in the
        previous, the current or the next period."""
        period = self._claimed_period(nonce)
        if period is None or not self._in_window(period):
            return False
        assert nonce is not None
        return hmac.compare_digest(self._make(period, await self._key(period)), nonce)

    def _static_secret(self) -> bytes:
        if self._secret is None:
            raise RuntimeError("these nonces' keys are in a shared store: use issue()/accepts()")
        return self._secret

    def current(self) -> str:
        """The nonce clients should use now (with a ``secret`` only)."""
        return self._make(self._period(), self._static_secret())

    def is_valid(self, nonce: str | None) -> bool:
        """``accepts`` without awaiting (with a ``secret`` only)."""
        period = self._claimed_period(nonce)
        if period is None or not self._in_window(period):
            return False
        assert nonce is not None
        return hmac.compare_digest(self._make(period, self._static_secret()), nonce)

    def is_current(self, nonce: str | None) -> bool:
        """Whether ``nonce`` is the one of the current period (with a ``secret`` only)."""
        return bool(nonce) and nonce == self.current()


class DPoPProofVerifier:
    """Checks DPoP proofs as RFC 9449 §4.3 lists, refusing replays of a ``jti``.

    ``check()`` is every check but the replay one, which needs state: ``verify()`` adds it
    with this verifier's own ``replays`` cache. The HTTP gate calls ``check()``, and records
    the proof (``replay_key``, ``replay_ttl``) in the store every instance shares, once the
    token it binds is verified.
    """

    def __init__(
        self,
        *,
        algorithms: Sequence[str] = DEFAULT_DPOP_ALGORITHMS,
        max_age: float = DEFAULT_DPOP_MAX_AGE,
        clock_skew: float = DEFAULT_DPOP_CLOCK_SKEW,
        replay_cache_size: int = DEFAULT_REPLAY_CACHE_SIZE,
        nonces: DPoPNonceManager | None = None,
        clock: Clock = time.time,
    ) -> None:
        bad = _NEVER.intersection(algorithms)
        if bad:
            raise ValueError(f"DPoP proofs must use asymmetric algorithms, not {sorted(bad)}")
        self.algorithms = tuple(algorithms)
        self.max_age = max_age
        self.clock_skew = clock_skew
        self.nonces = nonces
        self.clock = clock
        self.replays = ReplayCache(max_age + 2 * clock_skew, replay_cache_size, clock)

    def verify(
        self, proof: str, *, method: str, url: str, access_token: str | None = None
    ) -> DPoPProof:
        """The checked proof, or ``DPoPError``, its ``jti`` recorded to refuse a replay.
        ``url`` is the request URI as the server sees it (its query and fragment are
        ignored). The nonce (when this verifier has ``nonces``) is checked too."""
        checked = self.check(proof, method=method, url=url, access_token=access_token)
        if self.nonces is not None and not self.nonces.is_valid(checked.nonce):
            raise DPoPError("a current DPoP nonce is required", "use_dpop_nonce")
        if not self.replays.add(replay_key(checked), self.replay_ttl(checked)):
            raise DPoPError("DPoP proof was already used (jti replay)")
        return checked

    def replay_ttl(self, proof: DPoPProof) -> float:
        """Seconds ``proof`` must stay recorded: until its ``iat`` falls out of the
        acceptance window, plus the skew allowed (the instances' clocks may differ by it)."""
        remaining = proof.iat + self.max_age + self.clock_skew - self.clock()
        return max(0.0, remaining) + self.clock_skew

    def check(
        self, proof: str, *, method: str, url: str, access_token: str | None = None
    ) -> DPoPProof:
        """The proof, checked but for its nonce and a replay (``verify`` does both), or
        ``DPoPError``."""
        if not proof or len(proof) > MAX_PROOF_BYTES:
            raise DPoPError("DPoP proof missing or too large")
        try:
            compact = jws.extract_compact(proof.encode("ascii"), registry=_ProofRegistry())
        except (JoseError, ValueError, UnicodeError) as exc:
            raise DPoPError("DPoP proof is not a well-formed JWS") from exc
        header = compact.protected
        if header.get("typ") != "dpop+jwt":
            raise DPoPError("DPoP proof typ must be dpop+jwt")
        alg = header.get("alg")
        if not isinstance(alg, str) or alg not in self.algorithms:
            raise DPoPError("DPoP proof alg is not an accepted asymmetric algorithm")
        jwk = header.get("jwk")
        if not isinstance(jwk, dict):
            raise DPoPError("DPoP proof has no jwk header")
        if jwk.get("kty") not in ("EC", "RSA", "OKP"):
            raise DPoPError("DPoP proof jwk must be an asymmetric public key")
        if any(name in jwk for name in ("d", "p", "q", "dp", "dq", "qi", "oth", "k")):
            raise DPoPError("DPoP proof jwk must not contain private key material")
        try:
            key = import_key(jwk)
            verified = jws.deserialize_compact(
                proof, key, registry=_ProofRegistry(algorithms=[alg])
            )
            claims = json.loads(verified.payload)
        except (JoseError, ValueError, TypeError) as exc:
            raise DPoPError("DPoP proof signature does not verify") from exc
        if not isinstance(claims, dict):
            raise DPoPError("DPoP proof payload is not a JSON object")
        jti, htm, htu, iat = (
            claims.get("jti"),
            claims.get("htm"),
            claims.get("htu"),
            claims.get("iat"),
        )
        if not isinstance(jti, str) or not jti or len(jti) > 256:
            raise DPoPError("DPoP proof jti missing or invalid")
        if not isinstance(htm, str) or htm != method.upper():
            raise DPoPError("DPoP proof htm does not match the request method")
        if not isinstance(htu, str) or has_query_or_fragment(htu):
            raise DPoPError("DPoP proof htu missing, or carries a query or fragment")
        if normalize_htu(htu) != normalize_htu(url):
            raise DPoPError("DPoP proof htu does not match the request URI")
        if isinstance(iat, bool) or not isinstance(iat, (int, float)):
            raise DPoPError("DPoP proof iat missing")
        now = self.clock()
        if iat > now + self.clock_skew:
            raise DPoPError("DPoP proof iat is in the future")
        if iat < now - self.max_age - self.clock_skew:
            raise DPoPError("DPoP proof is too old")
        ath = claims.get("ath")
        if access_token is not None:
            if not isinstance(ath, str) or not hmac.compare_digest(
                ath, access_token_hash(access_token)
            ):
                raise DPoPError("DPoP proof ath does not match the access token")
        nonce = claims.get("nonce")
        return DPoPProof(
            jkt=key.thumbprint(),
            jti=jti,
            htm=htm,
            htu=htu,
            iat=float(iat),
            nonce=nonce if isinstance(nonce, str) else None,
            ath=ath if isinstance(ath, str) else None,
            jwk=jwk,
        )


def replay_key(proof: DPoPProof) -> str:
    """What a replay of ``proof`` is recognized by: its ``jti`` under its key's thumbprint,
    hashed to a fixed length (a stored entry's size does not depend on the client)."""
    material = f"{proof.jkt} {proof.jti}".encode()
    return hashlib.sha256(material).hexdigest()


class DPoPProofFactory:
    """Makes a client's DPoP proofs with one key (a fresh EC P-256 key unless given one)."""

    def __init__(
        self,
        key: ECKey | RSAKey | OKPKey | None = None,
        algorithm: str | None = None,
        clock: Clock = time.time,
    ) -> None:
        if key is None:
            key = ECKey.generate_key("P-256")
        if not key.is_private:
            raise ValueError("a DPoP key must include its private part")
        self.key = key
        self.algorithm = algorithm or _default_alg(key)
        self.clock = clock
        self.public_jwk: dict[str, Any] = dict(key.as_dict(private=False))
        for name in ("kid", "use", "key_ops", "alg"):
            self.public_jwk.pop(name, None)
        self.jkt = key.thumbprint()

    def proof(
        self, method: str, url: str, *, access_token: str | None = None, nonce: str | None = None
    ) -> str:
        """A DPoP proof JWT (RFC 9449) for one HTTP request: ``htm``, ``htu`` (without query
        and fragment), ``ath`` when an access token goes with it, and the server's ``nonce``
        when it asked for one."""
        parts = urlsplit(url)
        htu = f"{parts.scheme}://{parts.netloc}{parts.path or '/'}"
        claims: dict[str, Any] = {
            "jti": secrets.token_urlsafe(24),
            "htm": method.upper(),
            "htu": htu,
            "iat": int(self.clock()),
        }
        if access_token is not None:
            claims["ath"] = access_token_hash(access_token)
        if nonce:
            claims["nonce"] = nonce
        header = {"typ": "dpop+jwt", "alg": self.algorithm, "jwk": self.public_jwk}
        payload = json.dumps(claims, separators=(",", ":")).encode()
        return jws.serialize_compact(
            header, payload, self.key, registry=_ProofRegistry(algorithms=[self.algorithm])
        )


def _default_alg(key: Any) -> str:
    if isinstance(key, ECKey):
        return {"P-256": "ES256", "P-384": "ES384", "P-521": "ES512"}.get(key.curve_name, "ES256")
    if isinstance(key, RSAKey):
        return "PS256"
    return "EdDSA"


__all__ = [
    "DEFAULT_DPOP_ALGORITHMS",
    "DPoPError",
    "DPoPNonceManager",
    "DPoPProof",
    "DPoPProofFactory",
    "DPoPProofVerifier",
    "NonceKeys",
    "ReplayCache",
    "access_token_hash",
    "jwk_thumbprint",
    "normalize_htu",
    "replay_key",
]

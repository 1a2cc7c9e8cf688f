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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
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

    def add(self, key: str) -> bool:
        """Record ``key``; False when it was already there (a replay)."""
        now = self.clock()
        with self._lock:
            self._purge(now)
            expires = self._seen.get(key)
            if expires is not None and expires > now:
                return False
            self._seen[key] = now + self.ttl
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


class DPoPNonceManager:
    """Server-provided nonces (RFC 9449 §8-9) that rotate every ``lifetime`` seconds.

    Nonces are stateless: the rotation period's number, MACed with a secret, so every
    worker sharing ``secret`` accepts the others' nonces. The current nonce and the one
    before it are accepted (a client that fetched a nonce just before the rotation is not
    bounced); anything older is answered with ``use_dpop_nonce`` and a fresh one.
    """

    def __init__(
        self,
        lifetime: float = DEFAULT_NONCE_LIFETIME,
        secret: bytes | None = None,
        clock: Clock = time.time,
    ) -> None:
        if lifetime <= 0:
            raise ValueError("nonce lifetime must be positive")
        self.lifetime = lifetime
        self.clock = clock
        self._secret = secret or secrets.token_bytes(32)

    def _period(self) -> int:
        return int(self.clock() // self.lifetime)

    def _make(self, period: int) -> str:
        raw = period.to_bytes(8, "big", signed=True)
        mac = hmac.new(self._secret, raw, hashlib.sha256).digest()[:16]
        return b64url(raw + mac)

    def current(self) -> str:
        """The nonce clients should use now (it changes every period)."""
        return self._make(self._period())

    def _period_of(self, nonce: str) -> int | None:
        try:
            raw = base64.urlsafe_b64decode(nonce + "=" * (-len(nonce) % 4))
        except (ValueError, TypeError):
            return None
        if len(raw) != 24:
            return None
        period = int.from_bytes(raw[:8], "big", signed=True)
        if not hmac.compare_digest(self._make(period), nonce):
            return None
        return period

    def is_valid(self, nonce: str | None) -> bool:
        """Whether ``nonce`` was issued by this manager in the current or the previous period."""
        if not nonce or len(nonce) > 64:
            return False
        period = self._period_of(nonce)
        return period is not None and 0 <= self._period() - period <= 1

    def is_current(self, nonce: str | None) -> bool:
        """Whether ``nonce`` is the one of the current period."""
        return bool(nonce) and nonce == self.current()


class DPoPProofVerifier:
    """Checks DPoP proofs as RFC 9449 §4.3 lists, refusing replays of a ``jti``."""

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
        """The checked proof, or ``DPoPError``. ``url`` is the request URI as the server
        sees it (its query and fragment are ignored)."""
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
        if self.nonces is not None and not self.nonces.is_valid(
            nonce if isinstance(nonce, str) else None
        ):
            raise DPoPError("a current DPoP nonce is required", "use_dpop_nonce")
        if not self.replays.add(jti):
            raise DPoPError("DPoP proof was already used (jti replay)")
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
    "ReplayCache",
    "access_token_hash",
    "jwk_thumbprint",
    "normalize_htu",
]

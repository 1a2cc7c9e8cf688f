"""The resource-server side: ``BearerAuthConfig`` and the gate every HTTP transport passes.

With ``StreamableHttpServerOptions(bearer_auth=BearerAuthConfig(verify=...))`` each request
to the MCP endpoints (Streamable HTTP POST/GET/DELETE, legacy SSE GET and POST, the
WebSocket upgrade) is checked before any session handling:

* no ``Authorization`` header, or not ``Bearer <token>`` → 401 with a challenge naming
  the protected-resource metadata (``resource_metadata``) and the scopes needed;
* more than one ``Authorization`` header → 400 ``error="invalid_request"`` (which one
  counts would depend on who reads them);
* ``verify`` says ``ok=False``, or the token's audience is not ``expected_resource`` (by
  default the configured ``resource``) → 401 ``error="invalid_token"``;
* the token lacks one of ``required_scopes`` → 403 ``error="insufficient_scope"`` with
  ``scope`` listing them all;
* ``verify`` raises ``VerifierUnavailableError`` (it could not reach its authorization
  server) → 503 ``error="temporarily_unavailable"`` with ``Retry-After``; any other
  exception it raises → 401.

With ``enable_dpop`` the token must come as ``Authorization: DPoP <token>`` with a ``DPoP``
proof (RFC 9449) bound to it; the challenge scheme is ``DPoP`` and carries ``algs``; every
refusal carries a ``DPoP-Nonce``. A proof without the current server nonce is answered
401 ``error="use_dpop_nonce"``. Accepted requests whose nonce has been rotated out get the
new one in a ``DPoP-Nonce`` response header. A proof is recorded (to refuse its replay)
only once the token it is bound to is accepted, so requests without a valid token cannot
push the proofs of those with one out of the bounded record. Nonce keys and recorded proofs
live in ``dpop_store``, shared by every instance (``RedisDPoPState`` on the server's Redis
when it has one): a nonce one worker issued is accepted by any, a proof by one only.

The protected-resource metadata (RFC 9728) is served without auth at
``/.well-known/oauth-protected-resource`` and at the path-suffixed
``/.well-known/oauth-protected-resource{endpoint}``, both relative to the app: mounted
under a prefix, at ``{prefix}/.well-known/...``, the URL the challenge names; the
``resource`` is then ``{origin}{prefix}{endpoint}``.

An accepted request carries an ``AuthInfo`` in ``scope["mcp.auth"]`` and in the
``CURRENT_AUTH`` context variable while its handler runs; tools read it as ``ctx.auth``,
guards as ``McpExecutionContext.auth``, on every transport.

A session belongs to the identity that created it (``session_owner``: the token's issuer,
client id and subject, or the token itself when it names neither): a request naming a
session with another identity's token is answered 404, as for an unknown session. The
token only authenticates; the session id never does (the spec's session-hijacking advice).
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from mcpkit._exceptions import StoreUnavailableError
from mcpkit.auth._challenge import build_challenge
from mcpkit.auth._config import BearerAuthConfig, Verify
from mcpkit.auth._dpop import (
    DPoPError,
    DPoPNonceManager,
    DPoPProof,
    DPoPProofVerifier,
    replay_key,
)
from mcpkit.auth._dpop_state import DPoPStateStore, LocalDPoPState
from mcpkit.auth._types import AuthInfo, AuthResult
from mcpkit.auth._unavailable import DEFAULT_RETRY_AFTER, VerifierUnavailableError
from mcpkit.protocol._jsonrpc import encode_json

logger = logging.getLogger("mcpkit.auth")

#: Where the protected-resource metadata (RFC 9728) is served, before the endpoint's path.
WELL_KNOWN_PRM = "/.well-known/oauth-protected-resource"
#: Longest Authorization header looked at.
MAX_AUTHORIZATION_LENGTH = 16 * 1024


@dataclass(slots=True)
class Accepted:
    """An accepted request: who it is, and headers to add to its response."""

    auth: AuthInfo
    response_headers: list[tuple[bytes, bytes]] = field(default_factory=list)


@dataclass(slots=True)
class Denial:
    """A refused request: what to answer."""

    status: int
    error: str | None
    description: str
    headers: list[tuple[str, str]] = field(default_factory=list)

    def body(self) -> bytes:
        payload = {"error": self.error or "unauthorized", "error_description": self.description}
        return encode_json(payload)


def _canonical_resource(uri: str) -> str:
    try:
        parts = urlsplit(uri.strip())
        if not parts.scheme or not parts.netloc:
            return uri.strip()
        scheme = parts.scheme.lower()
        host = (parts.hostname or "").lower()
        if ":" in host:
            host = f"[{host}]"
        port = parts.port
    except ValueError:
        return uri.strip()
    default = {"http": 80, "https": 443}.get(scheme)
    netloc = host if port is None or port == default else f"{host}:{port}"
    path = parts.path.rstrip("/")
    query = f"?{parts.query}" if parts.query else ""
    return f"{scheme}://{netloc}{path}{query}"


def same_resource(a: str, b: str) -> bool:
    return _canonical_resource(a) == _canonical_resource(b)


def verifier_checks_audience(verify: Verify) -> bool:
    """Whether ``verify`` is one of the ready verifiers (or a method of one) set to check
    the token's audience itself; False when it is not, or cannot be told."""
    owner = getattr(verify, "__self__", verify)
    audiences = getattr(owner, "audiences", None) or getattr(owner, "audience", None)
    return bool(audiences)


class BearerAuthGate:
    """Runs ``BearerAuthConfig`` on requests; built once per ASGI app. ``dpop_state``: the
    DPoP state the server's instances share when the config names none (the transports
    pass a ``RedisDPoPState`` on the server's Redis)."""

    def __init__(
        self,
        config: BearerAuthConfig,
        endpoint: str = "/mcp",
        *,
        dpop_state: DPoPStateStore | None = None,
    ) -> None:
        self.config = config
        self.endpoint = endpoint.rstrip("/")
        #: The audience tokens must carry ("" when the gate does not check it).
        self.expected_resource = (
            (config.expected_resource or config.resource) if config.validate_token_resource else ""
        )
        self.nonces: DPoPNonceManager | None = None
        self.dpop: DPoPProofVerifier | None = None
        self.dpop_state: DPoPStateStore | None = None
        if config.enable_dpop:
            state = config.dpop_store or dpop_state
            if state is None:
                state = LocalDPoPState(config.dpop_replay_cache_size, config.clock)
            self.dpop_state = state
            if config.dpop_require_nonce:
                secret = config.dpop_nonce_secret
                self.nonces = DPoPNonceManager(
                    config.dpop_nonce_lifetime,
                    secret,
                    config.clock,
                    keys=None if secret is not None else state,
                )
            self.dpop = DPoPProofVerifier(
                algorithms=config.dpop_algorithms,
                max_age=config.dpop_max_age,
                clock_skew=config.dpop_clock_skew,
                replay_cache_size=1,  # unused: the gate records proofs in ``dpop_state``
                nonces=self.nonces,
                clock=config.clock,
            )
        if not self.expected_resource and not verifier_checks_audience(config.verify):
            # RFC 8707 and the MCP authorization spec: a server MUST check that a token was
            # issued for it, or a token for any other server of the same issuer gets in.
            logger.warning(
                "bearer auth checks no token audience: tokens issued for other servers are"
                " accepted; set BearerAuthConfig.expected_resource (or resource) to this"
                " server's URL, or the verifier's audience="
            )

    # -- metadata -------------------------------------------------------------------------

    @property
    def metadata_paths(self) -> frozenset[str]:
        """Paths the metadata document is served at (empty when it is not served)."""
        if not self.config.serve_metadata_endpoint:
            return frozenset()
        paths = {WELL_KNOWN_PRM}
        if self.endpoint:
            paths.add(f"{WELL_KNOWN_PRM}{self.endpoint}")
        if self.config.resource_metadata_url:
            path = urlsplit(self.config.resource_metadata_url).path.rstrip("/")
            if path:
                paths.add(path)
        return frozenset(paths)

    def _origin(self, scope: Mapping[str, Any], headers: Mapping[str, str]) -> str:
        if self.config.public_url:
            parts = urlsplit(self.config.public_url)
            return f"{parts.scheme}://{parts.netloc}"
        scheme = {"ws": "http", "wss": "https"}.get(
            scope.get("scheme", "http"), scope.get("scheme", "http")
        )
        host = headers.get("host")
        if not host:
            server = scope.get("server") or ("localhost", None)
            host = server[0] if server[1] in (None, 80, 443) else f"{server[0]}:{server[1]}"
        return f"{scheme}://{host}"

    @staticmethod
    def _mount_prefix(scope: Mapping[str, Any]) -> str:
        """The prefix the app is mounted under (``root_path``), without a trailing slash."""
        return (scope.get("root_path") or "").rstrip("/")

    def resource_metadata_url(self, scope: Mapping[str, Any], headers: Mapping[str, str]) -> str:
        """Where the metadata is served: under a mount, inside it (``{prefix}/.well-known/...``)."""
        if self.config.resource_metadata_url:
            return self.config.resource_metadata_url
        return f"{self._origin(scope, headers)}{self._mount_prefix(scope)}{WELL_KNOWN_PRM}{self.endpoint}"

    def resource_identifier(self, scope: Mapping[str, Any], headers: Mapping[str, str]) -> str:
        """This server's resource identifier (RFC 9728): the configured one, else the origin
        and path the request came to."""
        c = self.config
        if c.resource or c.expected_resource:
            return c.resource or c.expected_resource
        return f"{self._origin(scope, headers)}{self._mount_prefix(scope)}{self.endpoint}"

    def metadata_document(
        self, scope: Mapping[str, Any], headers: Mapping[str, str]
    ) -> dict[str, Any]:
        """The protected resource metadata document (RFC 9728) for the resource the request
        names."""
        c = self.config
        doc: dict[str, Any] = {
            "resource": self.resource_identifier(scope, headers),
            "authorization_servers": list(c.authorization_servers),
            "bearer_methods_supported": ["header"],
        }
        if c.scopes_supported:
            doc["scopes_supported"] = list(c.scopes_supported)
        if c.resource_name:
            doc["resource_name"] = c.resource_name
        if c.resource_documentation:
            doc["resource_documentation"] = c.resource_documentation
        if c.enable_dpop:
            doc["dpop_signing_alg_values_supported"] = list(c.dpop_algorithms)
            doc["dpop_bound_access_tokens_required"] = not c.dpop_allow_bearer
        doc.update(c.metadata_extra)
        return doc

    async def serve_metadata(
        self, scope: dict[str, Any], receive: Any, send: Any, headers: Mapping[str, str]
    ) -> None:
        """Answer a GET (or a CORS preflight) of the protected resource metadata document."""
        method = scope["method"]
        base = [(b"access-control-allow-origin", b"*")]
        if method == "OPTIONS":
            await _respond(
                send,
                204,
                b"",
                base
                + [
                    (b"access-control-allow-methods", b"GET, OPTIONS"),
                    (b"access-control-allow-headers", b"mcp-protocol-version"),
                ],
            )
            return
        if method not in ("GET", "HEAD"):
            await _respond(send, 405, b"", base + [(b"allow", b"GET, HEAD, OPTIONS")])
            return
        body = encode_json(self.metadata_document(scope, headers))
        extra = base + [
            (b"content-type", b"application/json"),
            (b"cache-control", b"public, max-age=300"),
        ]
        await _respond(send, 200, b"" if method == "HEAD" else body, extra, length=len(body))

    # -- the gate ---------------------------------------------------------------------------

    def _request_url(self, scope: Mapping[str, Any], headers: Mapping[str, str]) -> str:
        """The URL the client used: ``path`` already holds the mount prefix (the ASGI spec),
        or the host stripped it and it comes back from ``root_path``."""
        path = scope.get("path", "/")
        prefix = self._mount_prefix(scope)
        if prefix and not (
            path.startswith(prefix) and (len(path) == len(prefix) or path[len(prefix)] == "/")
        ):
            path = f"{prefix}{path}"
        return f"{self._origin(scope, headers)}{path}"

    def _challenge_headers(
        self,
        scope: Mapping[str, Any],
        headers: Mapping[str, str],
        error: str | None,
        description: str | None,
        scopes: str | None,
        nonce: str | None = None,
    ) -> list[tuple[str, str]]:
        metadata = self.resource_metadata_url(scope, headers)
        params: list[tuple[str, str | None]] = [("error", error)]
        if error is not None:
            params.append(("error_description", description))
        params += [("scope", scopes), ("resource_metadata", metadata)]
        out: list[tuple[str, str]] = []
        if self.config.enable_dpop:
            algs = " ".join(self.config.dpop_algorithms)
            out.append(("www-authenticate", build_challenge("DPoP", params + [("algs", algs)])))
            if self.config.dpop_allow_bearer:
                bearer_params = (
                    params
                    if error != "use_dpop_nonce" and error != "invalid_dpop_proof"
                    else params[2:]
                )
                out.append(("www-authenticate", build_challenge("Bearer", bearer_params)))
            if nonce is not None:
                out.append(("dpop-nonce", nonce))
        else:
            out.append(("www-authenticate", build_challenge("Bearer", params)))
        return out

    def _challenge_scopes(self) -> str | None:
        config = self.config
        return " ".join(config.required_scopes or config.scopes_supported) or None

    def _deny(
        self,
        scope: Mapping[str, Any],
        headers: Mapping[str, str],
        status: int,
        error: str | None,
        description: str,
        scopes: str | None = None,
        nonce: str | None = None,
    ) -> Denial:
        return Denial(
            status,
            error,
            description,
            self._challenge_headers(
                scope, headers, error, description, scopes or self._challenge_scopes(), nonce
            ),
        )

    async def authenticate(
        self, scope: Mapping[str, Any], headers: Mapping[str, str]
    ) -> Accepted | Denial:
        """``Accepted`` (the request's ``AuthInfo``), or the ``Denial`` to answer it with."""
        try:
            return await self._authenticate(scope, headers)
        except StoreUnavailableError as exc:
            # The shared DPoP state cannot be reached: nothing is wrong with the request.
            logger.warning("cannot check DPoP proofs now: %s", exc)
            return Denial(
                503,
                "temporarily_unavailable",
                "the request cannot be checked now; retry later",
                [("retry-after", str(DEFAULT_RETRY_AFTER))],
            )

    async def _authenticate(
        self, scope: Mapping[str, Any], headers: Mapping[str, str]
    ) -> Accepted | Denial:
        config = self.config
        nonce = await self.nonces.issue() if self.nonces is not None else None

        def deny(
            status: int, error: str | None, description: str, scopes: str | None = None
        ) -> Denial:
            return self._deny(scope, headers, status, error, description, scopes, nonce)

        raw = scope.get("headers") or ()
        # Header maps keep one value per name: count them in the raw list.
        if sum(1 for name, _ in raw if name.lower() == b"authorization") > 1:
            return deny(400, "invalid_request", "more than one Authorization header")
        authorization = headers.get("authorization", "")
        if not authorization or len(authorization) > MAX_AUTHORIZATION_LENGTH:
            return deny(401, None, "authorization required")
        scheme, _, token = authorization.partition(" ")
        token = token.strip(" ")
        scheme = scheme.lower()
        use_dpop = config.enable_dpop and scheme == "dpop"
        bearer_ok = scheme == "bearer" and (not config.enable_dpop or config.dpop_allow_bearer)
        if not (use_dpop or bearer_ok) or not token or " " in token:
            return deny(401, None, "authorization required")

        proof: DPoPProof | None = None
        response_headers: list[tuple[bytes, bytes]] = []
        if use_dpop:
            assert self.dpop is not None
            proofs = [v for n, v in raw if n.lower() == b"dpop"]
            if len(proofs) != 1:
                return deny(401, "invalid_dpop_proof", "exactly one DPoP proof header is required")
            method = scope.get("method", "GET") if scope.get("type") == "http" else "GET"
            try:
                proof = self.dpop.check(
                    proofs[0].decode("latin-1"),
                    method=method,
                    url=self._request_url(scope, headers),
                    access_token=token,
                )
            except DPoPError as exc:
                return deny(401, exc.error, exc.description)
            if self.nonces is not None:
                if not await self.nonces.accepts(proof.nonce):
                    return deny(401, "use_dpop_nonce", "a current DPoP nonce is required")
                if proof.nonce != nonce:
                    # Accepted with another period's nonce: hand out the current one.
                    assert nonce is not None
                    response_headers.append((b"dpop-nonce", nonce.encode()))

        try:
            result = await self._verify(token)
        except VerifierUnavailableError as exc:
            # Not the token's fault: 503, so the client retries rather than re-authorizes.
            logger.warning("cannot check access tokens now: %s", exc)
            return Denial(
                503,
                "temporarily_unavailable",
                "the access token cannot be checked now; retry later",
                [("retry-after", str(exc.retry_after))],
            )
        if not result.ok:
            return deny(
                401, "invalid_token", result.error_description or "the access token is invalid"
            )
        if proof is not None:
            if result.jkt is None:
                return deny(401, "invalid_token", "the access token is not bound to a DPoP key")
            if result.jkt != proof.jkt:
                return deny(
                    401, "invalid_token", "the DPoP proof key does not match the token binding"
                )
        elif result.jkt is not None:
            return deny(401, "invalid_token", "a DPoP-bound token must be presented with DPoP")
        expected = self.expected_resource
        if expected and not any(same_resource(aud, expected) for aud in result.audiences):
            return deny(401, "invalid_token", "the access token was not issued for this resource")
        required = tuple(config.required_scopes)
        if required:
            granted = frozenset(result.scopes)
            check = config.scope_check
            missing = [s for s in required if not (check(granted, s) if check else s in granted)]
            if missing:
                return deny(
                    403,
                    "insufficient_scope",
                    "the access token lacks a required scope",
                    " ".join(required),
                )
        if proof is not None:
            # Recorded only now, the token it binds accepted: a request without one cannot
            # push recorded proofs out of the bounded store, and so open them to a replay.
            assert self.dpop is not None and self.dpop_state is not None
            if not await self.dpop_state.first_use(replay_key(proof), self.dpop.replay_ttl(proof)):
                return deny(401, "invalid_dpop_proof", "DPoP proof was already used (jti replay)")
        info = AuthInfo(
            subject=result.subject,
            scopes=tuple(result.scopes),
            token=token,
            claims=dict(result.claims),
            client_id=result.client_id,
            resource=result.resource,
            expires_at=result.expires_at,
            dpop_jkt=proof.jkt if proof is not None else None,
        )
        return Accepted(info, response_headers)

    async def _verify(self, token: str) -> AuthResult:
        try:
            result = self.config.verify(token)
            if inspect.isawaitable(result):
                result = await result
        except VerifierUnavailableError:
            raise
        except Exception:
            logger.exception("the token verifier raised; refusing the token")
            return AuthResult.reject("the access token could not be verified")
        if not isinstance(result, AuthResult):
            logger.error(
                "the token verifier returned %r, not an AuthResult; refusing the token",
                type(result),
            )
            return AuthResult.reject("the access token could not be verified")
        return result

    def insufficient_scope(
        self, scope: Mapping[str, Any], headers: Mapping[str, str], scopes: tuple[str, ...]
    ) -> Denial:
        """The 403 of a request whose token lacks ``scopes`` for what it asks (a step-up
        component): its challenge names them, for the client to step up to."""
        return self._deny(
            scope,
            headers,
            403,
            "insufficient_scope",
            "the access token lacks a scope this request needs",
            " ".join(scopes),
        )

    async def send_denial(self, send: Any, denial: Denial, *, websocket: bool = False) -> None:
        """Send a denial: 401/403 with its ``WWW-Authenticate`` challenge and JSON body, or,
        for a WebSocket upgrade, the same as an HTTP response before the handshake."""
        body = denial.body()
        headers = [(n.encode("latin-1"), v.encode("latin-1")) for n, v in denial.headers]
        headers += [(b"content-type", b"application/json"), (b"cache-control", b"no-store")]
        if websocket:
            await send(
                {
                    "type": "websocket.http.response.start",
                    "status": denial.status,
                    "headers": headers + [(b"content-length", str(len(body)).encode())],
                }
            )
            await send({"type": "websocket.http.response.body", "body": body})
            return
        await _respond(send, denial.status, body, headers)


async def _respond(
    send: Any,
    status: int,
    body: bytes,
    headers: list[tuple[bytes, bytes]],
    length: int | None = None,
) -> None:
    raw = list(headers)
    raw.append((b"content-length", str(len(body) if length is None else length).encode()))
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})


def with_extra_headers(send: Any, extra: list[tuple[bytes, bytes]]) -> Any:
    """``send`` that adds ``extra`` headers to the response start."""
    if not extra:
        return send

    async def wrapped(message: dict[str, Any]) -> None:
        if message.get("type") == "http.response.start":
            message = {**message, "headers": list(message.get("headers", ())) + extra}
        await send(message)

    return wrapped


__all__ = [
    "WELL_KNOWN_PRM",
    "Accepted",
    "BearerAuthConfig",
    "BearerAuthGate",
    "Denial",
    "same_resource",
    "with_extra_headers",
]

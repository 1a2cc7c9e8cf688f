"""A small OAuth 2.1 authorization server for the client tests (ASGI, served on 127.0.0.1).

Metadata (RFC 8414 and/or OpenID discovery, at the paths a test chooses), ``/authorize``
(answers at once with a redirect carrying the code, ``state`` and ``iss``), ``/token``
(authorization code with PKCE, refresh with rotation, client credentials; client
authentication by Basic, post, none or ``private_key_jwt``; DPoP-bound tokens with an
optional nonce), ``/register`` (RFC 7591). Access tokens are real JWTs signed by a
``Signer``, with the requested ``resource`` as audience. Everything it sees is recorded.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit

from joserfc import jwt as jose_jwt
from joserfc.jwk import import_key

from mcpkit.auth import DPoPError, DPoPNonceManager, DPoPProofVerifier
from tests.auth._support import Signer
from tests.raw_asgi import read_body, send_json, send_response


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


@dataclass
class AuthServerConfig:
    #: Path the issuer has on top of the server's origin ("" or e.g. "/tenant1").
    issuer_path: str = ""
    #: Which discovery documents are served: any of "oauth", "oidc-insert", "oidc-append".
    discovery: tuple[str, ...] = ("oauth",)
    code_challenge_methods: list[str] | None = field(default_factory=lambda: ["S256"])
    iss_supported: bool | None = True
    #: "correct", "omit", "wrong", "trailing-slash"
    iss_in_redirect: str = "correct"
    #: Issuer published in the metadata; None: the real one.
    metadata_issuer: str | None = None
    #: Authorization endpoint published in the metadata; None: the real one.
    authorization_endpoint: str | None = None
    registration: bool = True
    cimd: bool = False
    token_auth_methods: list[str] = field(
        default_factory=lambda: ["client_secret_basic", "client_secret_post", "none"]
    )
    scopes_supported: list[str] | None = None
    grant_types: list[str] = field(
        default_factory=lambda: ["authorization_code", "refresh_token", "client_credentials"]
    )
    dpop: bool = False
    dpop_nonce: bool = False
    refresh_tokens: bool = True
    token_lifetime: int = 3600
    #: Scopes never granted, whatever is asked.
    deny_scopes: tuple[str, ...] = ()
    #: Pre-registered clients: id → {"secret": ..., "method": ..., "jwk": public JWK}.
    clients: dict[str, dict[str, Any]] = field(default_factory=dict)


class AuthServer:
    def __init__(self, signer: Signer, config: AuthServerConfig | None = None) -> None:
        self.signer = signer
        self.config = config or AuthServerConfig()
        self.base = ""  # set once served
        self.requests: list[tuple[str, str]] = []
        self.authorize_requests: list[dict[str, str]] = []
        self.token_requests: list[dict[str, Any]] = []
        self.registrations: list[dict[str, Any]] = []
        self.codes: dict[str, dict[str, Any]] = {}
        self.refresh: dict[str, dict[str, Any]] = {}
        self.clients: dict[str, dict[str, Any]] = dict(self.config.clients)
        self.nonces = DPoPNonceManager(300)
        self.dpop = DPoPProofVerifier(nonces=None)

    @property
    def issuer(self) -> str:
        return f"{self.base}{self.config.issuer_path}"

    def metadata(self) -> dict[str, Any]:
        c = self.config
        prefix = self.issuer
        doc: dict[str, Any] = {
            "issuer": c.metadata_issuer or self.issuer,
            "authorization_endpoint": c.authorization_endpoint or f"{prefix}/authorize",
            "token_endpoint": f"{prefix}/token",
            "response_types_supported": ["code"],
            "grant_types_supported": c.grant_types,
            "token_endpoint_auth_methods_supported": c.token_auth_methods,
        }
        if c.code_challenge_methods is not None:
            doc["code_challenge_methods_supported"] = c.code_challenge_methods
        if c.iss_supported is not None:
            doc["authorization_response_iss_parameter_supported"] = c.iss_supported
        if c.registration:
            doc["registration_endpoint"] = f"{prefix}/register"
        if c.cimd:
            doc["client_id_metadata_document_supported"] = True
        if c.scopes_supported is not None:
            doc["scopes_supported"] = c.scopes_supported
        if c.dpop:
            doc["dpop_signing_alg_values_supported"] = ["ES256"]
        return doc

    def _metadata_paths(self) -> set[str]:
        p = self.config.issuer_path
        paths = set()
        for kind in self.config.discovery:
            if kind == "oauth":
                paths.add(f"/.well-known/oauth-authorization-server{p}")
            elif kind == "oidc-insert":
                paths.add(f"/.well-known/openid-configuration{p}")
            elif kind == "oidc-append":
                paths.add(f"{p}/.well-known/openid-configuration")
        return paths

    # -- ASGI ---------------------------------------------------------------------------

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        path = scope["path"]
        method = scope["method"]
        self.requests.append((method, path))
        body = await read_body(receive)
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        query = dict(parse_qsl(scope.get("query_string", b"").decode()))
        p = self.config.issuer_path
        if method == "GET" and path in self._metadata_paths():
            return await send_json(send, 200, self.metadata())
        if method == "GET" and path == f"{p}/authorize":
            return await self._authorize(send, query)
        if method == "POST" and path == f"{p}/token":
            return await self._token(send, headers, dict(parse_qsl(body.decode())))
        if method == "POST" and path == f"{p}/register" and self.config.registration:
            return await self._register(send, json.loads(body or b"{}"))
        await send_json(send, 404, {"error": "not_found"})

    async def _authorize(self, send: Any, query: dict[str, str]) -> None:
        self.authorize_requests.append(query)
        redirect = query.get("redirect_uri", "")
        client_id = query.get("client_id", "")
        known = self.clients.get(client_id)
        if known is None and not client_id.startswith("https://"):
            return await send_json(send, 400, {"error": "invalid_client"})
        if (
            known is not None
            and known.get("redirect_uris")
            and redirect not in known["redirect_uris"]
        ):
            return await send_json(
                send, 400, {"error": "invalid_request", "error_description": "redirect_uri"}
            )
        if query.get("code_challenge_method") != "S256" or not query.get("code_challenge"):
            return await send_json(
                send, 400, {"error": "invalid_request", "error_description": "PKCE S256 required"}
            )
        code = secrets.token_urlsafe(16)
        self.codes[code] = {
            "client_id": client_id,
            "challenge": query["code_challenge"],
            "redirect_uri": redirect,
            "scope": query.get("scope"),
            "resource": query.get("resource"),
        }
        params = {"code": code}
        if "state" in query:
            params["state"] = query["state"]
        mode = self.config.iss_in_redirect
        if mode == "correct":
            params["iss"] = self.issuer
        elif mode == "wrong":
            params["iss"] = "https://evil.example.test"
        elif mode == "trailing-slash":
            params["iss"] = self.issuer + "/"
        await send_response(
            send, 302, headers=[(b"location", f"{redirect}?{urlencode(params)}".encode())]
        )

    def _authenticate_client(
        self, headers: dict[str, str], form: dict[str, str]
    ) -> tuple[str | None, str]:
        """(client_id or None, the method used)."""
        auth = headers.get("authorization", "")
        if auth.startswith("Basic "):
            raw = base64.b64decode(auth[6:]).decode()
            cid, _, secret = raw.partition(":")
            cid, secret = unquote(cid), unquote(secret)
            client = self.clients.get(cid)
            ok = client is not None and client.get("secret") == secret
            return (cid if ok else None), "client_secret_basic"
        if "client_assertion" in form:
            cid = form.get("client_id", "")
            client = self.clients.get(cid)
            if client is None or "jwk" not in client:
                return None, "private_key_jwt"
            try:
                token = jose_jwt.decode(
                    form["client_assertion"],
                    import_key(client["jwk"]),
                    algorithms=["ES256", "RS256", "PS256"],
                )
            except Exception:
                return None, "private_key_jwt"
            claims = token.claims
            ok = (
                claims.get("iss") == cid
                and claims.get("sub") == cid
                and claims.get("aud") in (self.issuer, f"{self.issuer}/token")
            )
            ok = ok and claims.get("exp", 0) > time.time()
            return (cid if ok else None), "private_key_jwt"
        if "client_secret" in form:
            cid = form.get("client_id", "")
            client = self.clients.get(cid)
            ok = client is not None and client.get("secret") == form["client_secret"]
            return (cid if ok else None), "client_secret_post"
        cid = form.get("client_id", "")
        client = self.clients.get(cid)
        public = cid.startswith("https://") or (client is not None and not client.get("secret"))
        return (cid if public else None), "none"

    async def _token(self, send: Any, headers: dict[str, str], form: dict[str, str]) -> None:
        cid, method = self._authenticate_client(headers, form)
        record: dict[str, Any] = {
            "form": form,
            "auth_method": method,
            "client_id": cid,
            "dpop": headers.get("dpop"),
        }
        self.token_requests.append(record)
        jkt = None
        extra_headers: list[tuple[bytes, bytes]] = []
        if self.config.dpop and headers.get("dpop"):
            try:
                proof = self.dpop.verify(headers["dpop"], method="POST", url=f"{self.issuer}/token")
            except DPoPError as exc:
                return await send_json(
                    send, 400, {"error": "invalid_dpop_proof", "error_description": exc.description}
                )
            if self.config.dpop_nonce and not self.nonces.is_valid(proof.nonce):
                return await send_json(
                    send,
                    400,
                    {"error": "use_dpop_nonce"},
                    [(b"dpop-nonce", self.nonces.current().encode())],
                )
            jkt = proof.jkt
        if cid is None:
            return await send_json(send, 401, {"error": "invalid_client"})
        grant = form.get("grant_type")
        if grant == "authorization_code":
            code = self.codes.pop(form.get("code", ""), None)
            if (
                code is None
                or code["client_id"] != cid
                or code["redirect_uri"] != form.get("redirect_uri")
            ):
                return await send_json(send, 400, {"error": "invalid_grant"})
            verifier = form.get("code_verifier", "")
            if _b64url(hashlib.sha256(verifier.encode()).digest()) != code["challenge"]:
                return await send_json(
                    send, 400, {"error": "invalid_grant", "error_description": "PKCE"}
                )
            scope, resource = code["scope"], form.get("resource") or code["resource"]
        elif grant == "refresh_token":
            entry = self.refresh.pop(form.get("refresh_token", ""), None)
            if entry is None or entry["client_id"] != cid:
                return await send_json(send, 400, {"error": "invalid_grant"})
            scope, resource = entry["scope"], form.get("resource") or entry["resource"]
        elif grant == "client_credentials":
            scope, resource = form.get("scope"), form.get("resource")
        else:
            return await send_json(send, 400, {"error": "unsupported_grant_type"})
        if scope and self.config.deny_scopes:
            scope = " ".join(s for s in scope.split() if s not in self.config.deny_scopes)
        record["scope"], record["resource"] = scope, resource
        access = self.signer.token(
            audience=resource,
            scope=scope or "",
            subject=cid,
            issuer=self.issuer,
            lifetime=self.config.token_lifetime,
            jkt=jkt,
        )
        body: dict[str, Any] = {
            "access_token": access,
            "token_type": "DPoP" if jkt else "Bearer",
            "expires_in": self.config.token_lifetime,
        }
        if scope:
            body["scope"] = scope
        if self.config.refresh_tokens and grant != "client_credentials":
            refresh = secrets.token_urlsafe(16)
            self.refresh[refresh] = {"client_id": cid, "scope": scope, "resource": resource}
            body["refresh_token"] = refresh
        await send_json(send, 200, body, extra_headers)

    async def _register(self, send: Any, body: dict[str, Any]) -> None:
        self.registrations.append(body)
        method = body.get("token_endpoint_auth_method") or "client_secret_basic"
        if method not in self.config.token_auth_methods:
            method = self.config.token_auth_methods[0]
        cid = f"dcr-{secrets.token_hex(4)}"
        entry: dict[str, Any] = {"redirect_uris": body.get("redirect_uris", []), "method": method}
        answer: dict[str, Any] = {
            "client_id": cid,
            "token_endpoint_auth_method": method,
            "redirect_uris": body.get("redirect_uris", []),
        }
        if method != "none":
            entry["secret"] = answer["client_secret"] = secrets.token_urlsafe(16)
            answer["client_secret_expires_at"] = 0
        self.clients[cid] = entry
        await send_json(send, 201, answer)


class Browser:
    """Plays the user: GETs the authorization URL and returns where it redirected to."""

    def __init__(self) -> None:
        self.visited: list[str] = []

    async def __call__(self, url: str) -> str:
        import httpx

        self.visited.append(url)
        async with httpx.AsyncClient(follow_redirects=False, timeout=10) as http:
            response = await http.get(url)
        if response.status_code not in (301, 302, 303, 307):
            raise RuntimeError(f"authorization refused: {response.status_code} {response.text}")
        return response.headers["location"]

    def last_query(self) -> dict[str, str]:
        return dict(parse_qsl(urlsplit(self.visited[-1]).query))

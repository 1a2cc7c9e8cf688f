"""A fake GitHub on 127.0.0.1, answering as GitHub documents: the OAuth web flow
(``/login/oauth/authorize``, ``/login/oauth/access_token``: form-encoded unless JSON is
asked for, refusals with status 200 and an ``error`` member, PKCE S256 checked when a
challenge was sent) and the REST API of a GitHub Enterprise Server (``/api/v3/user``,
``/api/v3/user/emails``, which needs the ``user:email`` or ``user`` scope).

The browser "signs in" as ``signed_in`` (a login): the authorize endpoint redirects back at
once, as GitHub does for a user who already authorized the app."""

from __future__ import annotations

import hashlib
import json
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlencode

import httpx

from mcpkit.auth import GitHubUpstream
from mcpkit.auth._dpop import b64url
from tests.auth._proxy_world import Provider


@dataclass
class GitHubUser:
    id: int
    login: str
    name: str | None
    public_email: str | None
    emails: list[dict[str, Any]] = field(default_factory=list)

    def profile(self, base: str) -> dict[str, Any]:
        """``GET /user`` as GitHub answers it (a selection of its members)."""
        return {
            "login": self.login,
            "id": self.id,
            "node_id": f"U_{self.id}",
            "avatar_url": f"{base}/avatars/u/{self.id}",
            "html_url": f"{base}/{self.login}",
            "type": "User",
            "site_admin": False,
            "name": self.name,
            "company": None,
            "blog": "",
            "location": None,
            "email": self.public_email,
            "bio": None,
            "public_repos": 2,
            "followers": 0,
            "following": 0,
            "created_at": "2011-01-25T18:44:36Z",
            "updated_at": "2024-01-01T00:00:00Z",
        }


OCTOCAT = GitHubUser(
    583231,
    "octocat",
    "The Octocat",
    None,
    [
        {"email": "old@example.test", "primary": False, "verified": True, "visibility": None},
        {
            "email": "octocat@example.test",
            "primary": True,
            "verified": True,
            "visibility": "private",
        },
    ],
)
HUBOT = GitHubUser(
    9919,
    "hubot",
    None,
    "hubot@example.test",
    [{"email": "hubot@example.test", "primary": True, "verified": True, "visibility": "public"}],
)
#: A user whose primary address is not verified: no email is taken.
GHOST = GitHubUser(
    10137,
    "ghost",
    "Ghost",
    None,
    [{"email": "ghost@example.test", "primary": True, "verified": False, "visibility": None}],
)


@dataclass
class _Grant:
    user: GitHubUser
    redirect_uri: str | None
    challenge: str | None
    scope: str


class FakeGitHub:
    """The fake GitHub app (ASGI). ``client_id``/``client_secret``: the OAuth app registered
    there, its callback ``callback_url``. ``requests``: (method, path, headers) of each call."""

    def __init__(self, base: str, client_id: str, client_secret: str, callback_url: str) -> None:
        self.base = base
        self.client_id = client_id
        self.client_secret = client_secret
        self.callback_url = callback_url
        self.users = {u.login: u for u in (OCTOCAT, HUBOT, GHOST)}
        self.signed_in = "octocat"
        self.codes: dict[str, _Grant] = {}
        self.tokens: dict[str, tuple[GitHubUser, str]] = {}
        self.requests: list[tuple[str, str, dict[str, str]]] = []

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        path, method = scope["path"], scope["method"]
        self.requests.append((method, path, headers))
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        query = dict(parse_qsl(scope["query_string"].decode()))
        if "user-agent" not in headers:  # GitHub refuses API calls without one
            await _answer(send, 403, {"message": "Request forbidden by administrative rules."})
        elif path == "/login/oauth/authorize" and method == "GET":
            await self._authorize(send, query)
        elif path == "/login/oauth/access_token" and method == "POST":
            await self._access_token(send, headers, dict(parse_qsl(body.decode())))
        elif path == "/api/v3/user" and method == "GET":
            await self._user(send, headers)
        elif path == "/api/v3/user/emails" and method == "GET":
            await self._emails(send, headers)
        else:
            await _answer(send, 404, {"message": "Not Found"})

    async def _authorize(self, send: Any, query: dict[str, str]) -> None:
        if query.get("client_id") != self.client_id:
            await _answer(send, 404, {"message": "Not Found"})
            return
        redirect_uri = query.get("redirect_uri", self.callback_url)
        if redirect_uri != self.callback_url:
            await _page(send, 400, "The redirect_uri is not associated with this application.")
            return
        if "code_challenge" in query and query.get("code_challenge_method") != "S256":
            await _page(send, 400, "Only S256 is supported.")
            return
        code = secrets.token_hex(10)
        self.codes[code] = _Grant(
            self.users[self.signed_in],
            query.get("redirect_uri"),
            query.get("code_challenge"),
            query.get("scope", ""),
        )
        location = f"{redirect_uri}?{urlencode({'code': code, 'state': query.get('state', '')})}"
        await send(
            {
                "type": "http.response.start",
                "status": 302,
                "headers": [(b"location", location.encode())],
            }
        )
        await send({"type": "http.response.body", "body": b""})

    async def _access_token(self, send: Any, headers: dict[str, str], form: dict[str, str]) -> None:
        as_json = "application/json" in headers.get("accept", "")
        if (
            form.get("client_id") != self.client_id
            or form.get("client_secret") != self.client_secret
        ):
            await _token_answer(send, as_json, _error("incorrect_client_credentials"))
            return
        grant = self.codes.pop(form.get("code", ""), None)
        if grant is None:
            await _token_answer(send, as_json, _error("bad_verification_code"))
            return
        if grant.redirect_uri is not None and form.get("redirect_uri") != grant.redirect_uri:
            await _token_answer(send, as_json, _error("redirect_uri_mismatch"))
            return
        if grant.challenge is not None:
            verifier = form.get("code_verifier", "")
            if b64url(hashlib.sha256(verifier.encode()).digest()) != grant.challenge:
                await _token_answer(send, as_json, _error("bad_verification_code"))
                return
        token = "gho_" + secrets.token_hex(18)
        scope = ",".join(grant.scope.split())  # GitHub answers its scopes comma-separated
        self.tokens[token] = (grant.user, scope)
        await _token_answer(
            send, as_json, {"access_token": token, "scope": scope, "token_type": "bearer"}
        )

    def _bearer(self, headers: dict[str, str]) -> tuple[GitHubUser, str] | None:
        kind, _, token = headers.get("authorization", "").partition(" ")
        if kind.lower() not in ("bearer", "token"):
            return None
        return self.tokens.get(token.strip())

    async def log_in(self, http: httpx.AsyncClient, authorize_url: str, user: Any) -> str:
        """The browser at the authorization URL as ``user`` (a ``GitHubUser``): the redirect
        back to the proxy."""
        self.signed_in = user.login
        answer = await http.get(authorize_url)
        assert answer.status_code == 302, answer.text
        return str(answer.headers["location"])

    async def _user(self, send: Any, headers: dict[str, str]) -> None:
        found = self._bearer(headers)
        if found is None:
            await _answer(send, 401, {"message": "Requires authentication"})
            return
        await _answer(send, 200, found[0].profile(self.base))

    async def _emails(self, send: Any, headers: dict[str, str]) -> None:
        found = self._bearer(headers)
        if found is None:
            await _answer(send, 401, {"message": "Requires authentication"})
            return
        user, scope = found
        if not {"user", "user:email"} & set(scope.split(",")):
            await _answer(send, 404, {"message": "Not Found"})
            return
        await _answer(send, 200, user.emails)


def _error(code: str) -> dict[str, str]:
    return {
        "error": code,
        "error_description": code.replace("_", " "),
        "error_uri": "https://docs.github.com/apps/managing-oauth-apps/troubleshooting-oauth-app-access-token-request-errors",
    }


async def _token_answer(send: Any, as_json: bool, value: dict[str, str]) -> None:
    """GitHub answers 200 either way, form-encoded unless JSON was asked for."""
    if as_json:
        await _answer(send, 200, value)
        return
    body = urlencode(value).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [(b"content-type", b"application/x-www-form-urlencoded; charset=utf-8")],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def _answer(send: Any, status: int, value: Any) -> None:
    body = json.dumps(value).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json; charset=utf-8")],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def _page(send: Any, status: int, text: str) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"text/plain")],
        }
    )
    await send({"type": "http.response.body", "body": text.encode()})


def github_provider(
    scopes: tuple[str, ...] = ("read:user", "user:email"),
) -> Callable[[str, str], Provider]:
    """A world's provider: a fake GitHub, the proxy's ``GitHubUpstream`` pointed at it (its
    ``base_url``; the API at ``{base_url}/api/v3`` as on GitHub Enterprise Server)."""

    def make(provider_base: str, proxy_base: str) -> Provider:
        fake = FakeGitHub(provider_base, "Iv1.proxy", "gh-secret", f"{proxy_base}/oauth/callback")
        upstream = GitHubUpstream("Iv1.proxy", "gh-secret", scopes, base_url=provider_base)
        return Provider(fake, upstream, fake.log_in)

    return make

"""``OAuthClientProvider`` end to end: an mcpkit client (Streamable HTTP transport, the
provider's hooks installed) against an mcpkit server with bearer auth, and the small
authorization server of ``_authserver``, all on 127.0.0.1. Registration (dynamic, CIMD,
pre-registered), PKCE, client credentials (secret and private_key_jwt), refresh, scope
step-up and its limit, the RFC 9207 ``iss`` checks, DPoP with nonces, token storage, and an
authorization server change."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest
from joserfc.jwk import ECKey

from mcpkit import McpClient, McpServerApp, TransportError
from mcpkit.auth import BearerAuthConfig, JwtVerifier, OAuthError
from mcpkit.auth.client import (
    JsonFileTokenStorage,
    MemoryTokenStorage,
    OAuthClientMetadata,
    OAuthClientProvider,
)
from mcpkit.client import (
    HttpClientTransportOptions,
    HttpTransportMode,
    connect_http,
)
from tests.auth._authserver import AuthServer, AuthServerConfig, Browser
from tests.auth._support import AuthTest, Signer
from tests.http_server import serve_asgi, serving

REDIRECT = "http://127.0.0.1:33418/callback"


class World:
    """One authorization server, one protected MCP server, and how to connect."""

    def __init__(self, auth: AuthServer, mcp_url: str, asgi: Any, config: BearerAuthConfig) -> None:
        self.auth = auth
        self.mcp_url = mcp_url
        self.asgi = asgi
        self.config = config
        self.browser = Browser()

    def provider(self, **kwargs: Any) -> OAuthClientProvider:
        kwargs.setdefault(
            "client_metadata",
            OAuthClientMetadata(redirect_uris=[REDIRECT], client_name="test client"),
        )
        kwargs.setdefault("authorize", self.browser)
        return OAuthClientProvider(self.mcp_url, **kwargs)

    @contextlib.asynccontextmanager
    async def client(self, provider: OAuthClientProvider) -> AsyncIterator[McpClient]:
        options = HttpClientTransportOptions(
            endpoint=self.mcp_url, transport_mode=HttpTransportMode.STREAMABLE_HTTP
        )
        provider.install(options)
        client = connect_http(options, protocol_version="2025-11-25", protocol_mode="legacy")
        try:
            async with client:
                yield client
        finally:
            await provider.aclose()


async def whoami(client: McpClient) -> dict[str, Any]:
    result = await client.call_tool("whoami", {})
    return json.loads(result.content[0].text)


@contextlib.asynccontextmanager
async def world(as_config: AuthServerConfig | None = None, **bearer: Any) -> AsyncIterator[World]:
    signer = Signer()
    auth = AuthServer(signer, as_config)
    async with serve_asgi(auth) as as_base:
        auth.base = as_base
        verifier = JwtVerifier(
            jwks=signer.jwks(), issuer=auth.issuer, leeway=bearer.pop("leeway", 30)
        )
        options: dict[str, Any] = dict(
            verify=verifier.verify,
            authorization_servers=(auth.issuer,),
            scopes_supported=("mcp:read", "mcp:write"),
            required_scopes=("mcp:read",),
        )
        options.update(bearer)
        config = BearerAuthConfig(**options)
        async with serving(McpServerApp(AuthTest), bearer_auth=config) as (url, asgi):
            config.expected_resource = url  # known once the port is
            yield World(auth, url, asgi, config)


def query_of(url: str) -> dict[str, str]:
    return dict(parse_qsl(urlsplit(url).query))


async def test_dynamic_registration_pkce_and_the_authorization_code_grant():
    async with asyncio.timeout(30), world() as w:
        provider = w.provider()
        async with w.client(provider) as client:
            seen = await whoami(client)
        # Registered once, as a native app, asking for refresh tokens.
        assert len(w.auth.registrations) == 1
        reg = w.auth.registrations[0]
        assert reg["application_type"] == "native"
        assert reg["redirect_uris"] == [REDIRECT]
        assert "refresh_token" in reg["grant_types"]
        # The authorization request: PKCE S256, state, the challenge's scope, the resource.
        query = w.auth.authorize_requests[0]
        assert query["code_challenge_method"] == "S256" and len(query["code_challenge"]) == 43
        assert query["state"] and query["scope"] == "mcp:read"
        assert query["resource"] == w.mcp_url
        # The token request: the verifier, the same resource.
        form = w.auth.token_requests[0]["form"]
        assert form["grant_type"] == "authorization_code" and form["code_verifier"]
        assert form["resource"] == w.mcp_url
        assert seen["subject"].startswith("dcr-")  # the registered client id
        assert seen["scopes"] == ["mcp:read"]


async def test_scopes_from_resource_metadata_when_the_challenge_names_none():
    async with asyncio.timeout(30), world(required_scopes=()) as w:
        provider = w.provider()
        async with w.client(provider) as client:
            await client.list_tools()
        assert w.auth.authorize_requests[0]["scope"] == "mcp:read mcp:write"
    async with asyncio.timeout(30), world(required_scopes=(), scopes_supported=()) as w:
        provider = w.provider()
        async with w.client(provider) as client:
            await client.list_tools()
        assert "scope" not in w.auth.authorize_requests[0]


async def test_offline_access_only_when_the_authorization_server_lists_it():
    async with (
        asyncio.timeout(30),
        world(AuthServerConfig(scopes_supported=["mcp:read", "offline_access"])) as w,
    ):
        async with w.client(w.provider()) as client:
            await client.list_tools()
        assert w.auth.authorize_requests[0]["scope"].split() == ["mcp:read", "offline_access"]
    async with asyncio.timeout(30), world(AuthServerConfig(scopes_supported=["mcp:read"])) as w:
        async with w.client(w.provider()) as client:
            await client.list_tools()
        assert w.auth.authorize_requests[0]["scope"] == "mcp:read"


@pytest.mark.parametrize("method", ["client_secret_basic", "client_secret_post", "none"])
async def test_token_endpoint_auth_method_follows_the_authorization_server(method):
    async with asyncio.timeout(30), world(AuthServerConfig(token_auth_methods=[method])) as w:
        async with w.client(w.provider()) as client:
            await client.list_tools()
        assert w.auth.registrations[0]["token_endpoint_auth_method"] == method
        assert w.auth.token_requests[0]["auth_method"] == method


async def test_pre_registered_client_without_dynamic_registration():
    config = AuthServerConfig(
        registration=False,
        token_auth_methods=["client_secret_basic"],
        clients={"pre-1": {"secret": "s3cret:&", "redirect_uris": [REDIRECT]}},
    )
    async with asyncio.timeout(30), world(config) as w:
        provider = w.provider(
            client_id="pre-1", client_secret="s3cret:&", client_issuer=w.auth.issuer
        )
        async with w.client(provider) as client:
            assert (await whoami(client))["subject"] == "pre-1"
        assert w.auth.registrations == []
        assert w.auth.token_requests[0]["auth_method"] == "client_secret_basic"
        # Bound to another authorization server: refused, not silently reused.
        provider = w.provider(
            client_id="pre-1", client_secret="s3cret:&", client_issuer="https://elsewhere.example"
        )
        with pytest.raises((TransportError, OAuthError)):
            async with w.client(provider) as client:
                await client.list_tools()


async def test_client_id_metadata_document_when_supported():
    cimd = "https://client.example.test/oauth/client.json"
    async with asyncio.timeout(30), world(AuthServerConfig(cimd=True)) as w:
        async with w.client(w.provider(client_metadata_url=cimd)) as client:
            await client.list_tools()
        assert w.auth.registrations == []
        assert w.auth.authorize_requests[0]["client_id"] == cimd
    async with asyncio.timeout(30), world(AuthServerConfig(cimd=False)) as w:
        async with w.client(w.provider(client_metadata_url=cimd)) as client:
            await client.list_tools()
        assert len(w.auth.registrations) == 1  # not supported: dynamic registration instead


async def test_client_credentials_with_a_secret_and_with_private_key_jwt():
    key = ECKey.generate_key("P-256")
    clients = {
        "svc-basic": {"secret": "sekrit"},
        "svc-jwt": {"jwk": key.as_dict(private=False)},
    }
    async with (
        asyncio.timeout(30),
        world(AuthServerConfig(clients=clients, registration=False)) as w,
    ):
        provider = w.provider(
            grant_type="client_credentials", client_id="svc-basic", client_secret="sekrit"
        )
        async with w.client(provider) as client:
            assert (await whoami(client))["subject"] == "svc-basic"
        record = w.auth.token_requests[-1]
        assert (
            record["form"]["grant_type"] == "client_credentials"
            and record["auth_method"] == "client_secret_basic"
        )
        assert record["form"]["scope"] == "mcp:read" and record["form"]["resource"] == w.mcp_url
        provider = w.provider(
            grant_type="client_credentials",
            client_id="svc-jwt",
            token_endpoint_auth_method="private_key_jwt",
            private_key=key.as_pem(private=True).decode(),
            signing_algorithm="ES256",
        )
        async with w.client(provider) as client:
            assert (await whoami(client))["subject"] == "svc-jwt"
        assert w.auth.token_requests[-1]["auth_method"] == "private_key_jwt"
        assert w.auth.authorize_requests == []  # no user involved


async def test_expired_token_is_refreshed():
    # exp is a whole second (iat + lifetime, rounded down): with a lifetime of 2 the first
    # token is gone after 2.3 s, and the refreshed one lives a second at least, so the
    # retry it is sent with never meets its end (a lifetime of 1 could leave it 1 ms).
    async with asyncio.timeout(30), world(AuthServerConfig(token_lifetime=2), leeway=0) as w:
        provider = w.provider()
        async with w.client(provider) as client:
            await client.list_tools()
            first = provider.token
            await asyncio.sleep(2.3)
            await client.list_tools()  # 401 invalid_token → refresh → retried
            assert provider.token is not first
        grants = [r["form"]["grant_type"] for r in w.auth.token_requests]
        assert grants == ["authorization_code", "refresh_token"]
        assert w.auth.token_requests[1]["form"]["resource"] == w.mcp_url
        assert len(w.auth.authorize_requests) == 1  # no second trip to the user
        assert (await provider.refresh()) is not None  # rotated refresh token still works


async def test_scope_step_up_asks_for_the_union():
    async with asyncio.timeout(30), world() as w:
        provider = w.provider()
        async with w.client(provider) as client:
            await client.list_tools()
            w.config.required_scopes = ("mcp:read", "mcp:write")  # the next operation needs more
            assert (await whoami(client))["scopes"] == ["mcp:read", "mcp:write"]
            # A challenge naming only the new scope still yields the union.
            value = await provider.handle_challenge(
                'Bearer error="insufficient_scope", scope="mcp:admin"', 403
            )
            assert value
        scopes = [q.get("scope") for q in w.auth.authorize_requests]
        assert scopes == ["mcp:read", "mcp:read mcp:write", "mcp:read mcp:write mcp:admin"]


async def test_step_up_has_a_retry_limit():
    async with (
        asyncio.timeout(30),
        world(AuthServerConfig(deny_scopes=("mcp:admin",)), required_scopes=("mcp:admin",)) as w,
    ):
        provider = w.provider(max_authorizations_per_scope=2)
        with pytest.raises(Exception):
            async with w.client(provider) as client:
                for _ in range(5):
                    with contextlib.suppress(Exception):
                        await client.list_tools()
                raise RuntimeError("done")
        assert len(w.auth.authorize_requests) <= 2


@pytest.mark.parametrize(
    "supported,mode,accepted",
    [
        (True, "correct", True),
        (None, "omit", True),
        (True, "omit", False),
        (True, "wrong", False),
        (None, "wrong", False),
        (True, "trailing-slash", False),
    ],
)
async def test_iss_checks(supported, mode, accepted):
    async with (
        asyncio.timeout(30),
        world(AuthServerConfig(iss_supported=supported, iss_in_redirect=mode)) as w,
    ):
        provider = w.provider()
        if accepted:
            async with w.client(provider) as client:
                await client.list_tools()
            assert len(w.auth.token_requests) == 1
        else:
            with pytest.raises(Exception) as info:
                async with w.client(provider) as client:
                    await client.list_tools()
            assert "iss" in str(info.value) or "issuer" in str(info.value)
            assert (
                w.auth.authorize_requests and w.auth.token_requests == []
            )  # the code never went out


async def test_metadata_issuer_mismatch_stops_before_any_endpoint_is_used():
    async with (
        asyncio.timeout(30),
        world(AuthServerConfig(metadata_issuer="https://attacker.example.test")) as w,
    ):
        with pytest.raises(Exception):
            async with w.client(w.provider()) as client:
                await client.list_tools()
        assert (
            w.auth.registrations == []
            and w.auth.authorize_requests == []
            and w.auth.token_requests == []
        )


async def test_dpop_bound_tokens_with_nonces_at_both_servers():
    as_config = AuthServerConfig(dpop=True, dpop_nonce=True)
    async with asyncio.timeout(30), world(as_config, enable_dpop=True) as w:
        provider = w.provider(dpop=True)
        async with w.client(provider) as client:
            seen = await whoami(client)
            await client.list_tools()
        assert seen["scopes"] == ["mcp:read"]
        assert provider.token is not None and provider.token.token_type == "DPoP"
        # The token request was retried once with the authorization server's nonce.
        proofs = [r["dpop"] for r in w.auth.token_requests]
        assert len(proofs) == 2 and all(proofs)


async def test_tokens_persist_in_a_json_file(tmp_path):
    path = tmp_path / "tokens.json"
    async with asyncio.timeout(30), world() as w:
        async with w.client(w.provider(storage=JsonFileTokenStorage(path))) as client:
            await client.list_tools()
        assert oct(path.stat().st_mode & 0o777) == "0o600"
        saved = json.loads(path.read_text())
        assert saved["tokens"][w.mcp_url]["access_token"] and saved["clients"]
        # A new provider on the same file: no new authorization, no new registration.
        provider = w.provider(storage=JsonFileTokenStorage(path))
        await provider.load()
        async with w.client(provider) as client:
            await client.list_tools()
        assert len(w.auth.authorize_requests) == 1 and len(w.auth.registrations) == 1


async def test_memory_storage_keeps_registrations_per_authorization_server():
    storage = MemoryTokenStorage()
    async with asyncio.timeout(30), world() as w:
        async with w.client(w.provider(storage=storage)) as client:
            await client.list_tools()
        assert list(storage.clients) == [w.auth.issuer]


async def test_authorization_server_change_means_a_new_registration():
    signer2 = Signer()
    auth2 = AuthServer(signer2)
    async with asyncio.timeout(30), world() as w, serve_asgi(auth2) as base2:
        auth2.base = base2
        storage = MemoryTokenStorage()
        provider = w.provider(storage=storage)
        async with w.client(provider) as client:
            await client.list_tools()
            first_client = w.auth.registrations and next(iter(w.auth.clients))
            # The resource moves to another authorization server; old tokens stop working.
            w.config.authorization_servers = (auth2.issuer,)
            w.config.verify = JwtVerifier(jwks=signer2.jwks(), issuer=auth2.issuer).verify
            # The new token is another identity (issuer and client id), which the session
            # created under the old one does not belong to: 404, as an unknown session, and
            # the client starts a session of the new identity's own.
            old_session = client.session_id
            await client.list_tools()
            assert client.session_id not in (None, old_session)
        async with w.client(provider) as client:
            await client.list_tools()
        assert len(auth2.registrations) == 1
        assert all(q["client_id"] != first_client for q in auth2.authorize_requests)
        assert all(r["client_id"] != first_client for r in auth2.token_requests)
        assert set(storage.clients) == {w.auth.issuer, auth2.issuer}


@pytest.mark.parametrize(
    "damage",
    [
        "not json",
        '{"tokens": [], "clients": 7}',
        '{"tokens": {"URL": {"token_type": "Bearer"}}}',
        '{"tokens": {"URL": {"access_token": 5, "token_type": ["DPoP"]}}}',
        '{"tokens": {"URL": {"access_token": "t", "expires_at": "soon"}}}',
        '{"clients": {"ISSUER": {"client_secret": "s"}}}',
        '{"clients": {"ISSUER": {"client_id": "c", "issuer": "ISSUER", "registration": ["x"]}}}',
    ],
)
async def test_a_damaged_token_file_is_a_login_and_is_written_anew(tmp_path, damage):
    """Parts of the file of the wrong type (hand-edited, another program's) raised
    ``AttributeError`` or ``TypeError`` out of the client, or sent ``Bearer 5``."""
    path = tmp_path / "tokens.json"
    async with asyncio.timeout(30), world() as w:
        path.write_text(damage.replace("URL", w.mcp_url).replace("ISSUER", w.auth.issuer))
        async with w.client(w.provider(storage=JsonFileTokenStorage(path))) as client:
            assert (await whoami(client))["subject"]
        assert len(w.auth.authorize_requests) == 1
        saved = json.loads(path.read_text())
        assert saved["tokens"][w.mcp_url]["access_token"] and saved["clients"][w.auth.issuer]


@pytest.mark.parametrize(
    "endpoint",
    ["file:///etc/passwd", "javascript:alert(1)//", "ms-msdt:/id PCWDiagnostic", "calculator:"],
)
async def test_an_authorization_endpoint_that_is_not_a_web_url_is_never_opened(endpoint):
    """The authorization URL goes to the system browser (``webbrowser.open``, which hands
    other schemes to the desktop's handlers: a file, a program): an authorization server
    (named by whatever server the user connects to) chose what was opened."""
    opened: list[str] = []

    async def authorize(url: str) -> str:
        opened.append(url)
        raise AssertionError("opened")

    async with asyncio.timeout(30), world(AuthServerConfig(authorization_endpoint=endpoint)) as w:
        with pytest.raises(TransportError, match="not an http"):
            async with w.client(w.provider(authorize=authorize)) as client:
                await client.list_tools()
        assert opened == [] and w.auth.registrations == []

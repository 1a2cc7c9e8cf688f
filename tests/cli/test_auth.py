"""``mcpkit run --auth PROVIDER``: the OAuthProxy built from the ``MCPKIT_AUTH_*`` settings
(each preset, the generic OIDC provider, a signing key from a file), the errors naming
the missing setting (and never the secret), and real servers: one in front of GitHub, whose
metadata and challenge name the proxy, and ``--auth dev``, signed in through end to end."""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from joserfc.jwk import ECKey

from mcpkit.auth import (
    DevAuthServer,
    DevUser,
    EntraUpstream,
    GitHubUpstream,
    KeycloakUpstream,
    OAuthProxy,
    OidcUpstream,
    OktaUpstream,
)
from mcpkit.cli._auth import DevAuth, auth_server_for
from mcpkit.cli._errors import CliError
from tests.auth._proxy_world import (
    ALICE,
    Provider,
    World,
    call_whoami,
    log_in,
    register,
    tokens_for,
)
from tests.environment import child_environment
from tests.http_server import POST_HEADERS, bound_socket, serve_asgi
from tests.ports import Announced, launch, on_a_free_port

ROOT = Path(__file__).resolve().parents[2]
SECRET = "s3cr3t-never-shown"
SERVER = """
import json

from mcpkit import McpServerApp, McpToolContext, mcp_tool


@mcp_tool()
def whoami(ctx: McpToolContext) -> str:
    return json.dumps({"subject": ctx.auth.subject, "upstream": ctx.auth.claims["upstream"]})


app = McpServerApp(whoami, name="auth-test")
"""


def env(**values: str) -> dict[str, str]:
    return {"MCPKIT_AUTH_CLIENT_ID": "cid", "MCPKIT_AUTH_CLIENT_SECRET": SECRET, **values}


def build(provider: str, environ: dict[str, str], host: str = "127.0.0.1", port: int = 3001) -> Any:
    return auth_server_for(provider, host, port, "/mcp", environ)


def test_github_from_the_settings() -> None:
    proxy = build("github", env())
    assert isinstance(proxy, OAuthProxy) and isinstance(proxy.upstream, GitHubUpstream)
    assert proxy.issuer == "http://127.0.0.1:3001" and proxy.resource == "http://127.0.0.1:3001/mcp"
    upstream = proxy.upstream
    assert upstream.client_id == "cid" and upstream.client_secret == SECRET
    assert upstream.scopes == ("read:user", "user:email")
    ghes = build(
        "github",
        env(
            MCPKIT_AUTH_PROVIDER_URL="https://git.example.com",
            MCPKIT_AUTH_SCOPES="read:user",
            MCPKIT_AUTH_BASE_URL="https://mcp.example.com/",
        ),
        host="0.0.0.0",
    )
    assert ghes.upstream.token_endpoint == "https://git.example.com/login/oauth/access_token"
    assert ghes.upstream.scopes == ("read:user",)
    assert ghes.issuer == "https://mcp.example.com"
    assert ghes.resource == "https://mcp.example.com/mcp"


def test_each_oidc_provider_from_the_settings() -> None:
    entra = build("entra", env(MCPKIT_AUTH_TENANT="organizations")).upstream
    assert isinstance(entra, EntraUpstream) and entra.tenant == "organizations"
    okta = build("okta", env(MCPKIT_AUTH_DOMAIN="example.okta.com")).upstream
    assert isinstance(okta, OktaUpstream) and "/oauth2/default/" in okta.discovery_url
    org = build(
        "okta", env(MCPKIT_AUTH_DOMAIN="example.okta.com", MCPKIT_AUTH_AUTHORIZATION_SERVER="none")
    ).upstream
    assert org.discovery_url == "https://example.okta.com/.well-known/openid-configuration"
    keycloak = build(
        "keycloak",
        env(MCPKIT_AUTH_PROVIDER_URL="https://sso.example.com", MCPKIT_AUTH_REALM="staff"),
    ).upstream
    assert isinstance(keycloak, KeycloakUpstream)
    assert keycloak.discovery_url.startswith("https://sso.example.com/realms/staff/")
    google = build("google", env()).upstream
    assert google.name == "google"
    auth0 = build("auth0", env(MCPKIT_AUTH_DOMAIN="example.us.auth0.com")).upstream
    assert auth0.discovery_url == "https://example.us.auth0.com/.well-known/openid-configuration"
    url = "https://idp.example.com/.well-known/openid-configuration"
    oidc = build("oidc", env(MCPKIT_AUTH_DISCOVERY_URL=url)).upstream
    assert type(oidc) is OidcUpstream and oidc.discovery_url == url


@pytest.mark.parametrize(
    ("provider", "environ", "host", "expected"),
    [
        ("github", {"MCPKIT_AUTH_CLIENT_SECRET": SECRET}, "127.0.0.1", "MCPKIT_AUTH_CLIENT_ID"),
        ("google", {"MCPKIT_AUTH_CLIENT_ID": "cid"}, "127.0.0.1", "MCPKIT_AUTH_CLIENT_SECRET"),
        ("entra", env(), "127.0.0.1", "MCPKIT_AUTH_TENANT"),
        ("auth0", env(), "127.0.0.1", "MCPKIT_AUTH_DOMAIN"),
        ("okta", env(), "127.0.0.1", "MCPKIT_AUTH_DOMAIN"),
        ("keycloak", env(MCPKIT_AUTH_PROVIDER_URL="https://sso"), "127.0.0.1", "MCPKIT_AUTH_REALM"),
        ("keycloak", env(MCPKIT_AUTH_REALM="staff"), "127.0.0.1", "MCPKIT_AUTH_PROVIDER_URL"),
        ("oidc", env(), "127.0.0.1", "MCPKIT_AUTH_DISCOVERY_URL"),
        ("github", env(), "0.0.0.0", "MCPKIT_AUTH_BASE_URL"),
    ],
)
def test_a_missing_setting_is_named(
    provider: str, environ: dict[str, str], host: str, expected: str
) -> None:
    with pytest.raises(CliError) as caught:
        build(provider, environ, host=host)
    assert caught.value.message == f"--auth {provider} needs {expected}"
    assert caught.value.code == 2 and caught.value.hint and caught.value.hint.startswith(expected)
    assert SECRET not in caught.value.message + caught.value.hint


def test_bad_values_are_refused_without_showing_secrets(tmp_path: Path) -> None:
    with pytest.raises(CliError, match="not one of github"):
        build("pigeon", env())
    with pytest.raises(CliError, match="not an http"):
        build("github", env(MCPKIT_AUTH_BASE_URL="mcp.example.com"))
    bad = tmp_path / "key.pem"
    bad.write_text(f"-----BEGIN PRIVATE KEY-----\n{SECRET}\n-----END PRIVATE KEY-----\n")
    with pytest.raises(CliError) as caught:
        build("github", env(MCPKIT_AUTH_SIGNING_KEY_FILE=str(bad)))
    assert "holds no private key" in caught.value.message and SECRET not in caught.value.message
    with pytest.raises(CliError, match="cannot read"):
        build("github", env(MCPKIT_AUTH_SIGNING_KEY_FILE=str(tmp_path / "missing.pem")))
    with pytest.raises(CliError, match="name:password"):
        build("dev", {"MCPKIT_AUTH_DEV_USERS": "alice"})


@pytest.mark.parametrize("form", ["pem", "jwk"])
def test_the_signing_key_comes_from_its_file(tmp_path: Path, form: str) -> None:
    key = ECKey.generate_key("P-256", parameters={"kid": "from-file"}, private=True)
    path = tmp_path / f"key.{form}"
    if form == "pem":
        path.write_bytes(key.as_pem(private=True))
    else:
        path.write_text(json.dumps(key.as_dict(private=True)))
    proxy = build("github", env(MCPKIT_AUTH_SIGNING_KEY_FILE=str(path)))
    (public,) = proxy.tokens.jwks()["keys"]
    assert public["x"] == key.as_dict()["x"] and "d" not in public


# --------------------------------------------------------------------------- mcpkit run


def clean_env(**values: str) -> dict[str, str]:
    return child_environment(**values)


@pytest.fixture(scope="module")
def server_file(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("auth") / "whoami.py"
    path.write_text(SERVER)
    return str(path)


@contextlib.contextmanager
def run(server_file: str, *args: str, on_port: Any = None, **environ: str) -> Iterator[Announced]:
    """``mcpkit run`` of the file over HTTP until the block ends. ``--auth`` makes the
    proxy's URL of the port, so it cannot be 0: one chosen here (``on_port(port)`` told of
    it before the start), another should it be taken meanwhile."""

    def start(port: int) -> Announced:
        if on_port is not None:
            on_port(port)
        command = [sys.executable, "-m", "mcpkit", "run", server_file, "-t", "http"]
        return launch([*command, "--port", str(port), *args], cwd=ROOT, env=clean_env(**environ))

    served = on_a_free_port(start)
    try:
        yield served
    finally:
        served.stop()


#: Several stateless workers: what --auth then needs a shared store and one key for.
WORKERS = ["--stateless", "--workers", "2"]


@pytest.mark.parametrize(
    ("args", "environ", "expected"),
    [
        (["--auth", "github"], {}, "error: --auth github needs MCPKIT_AUTH_CLIENT_ID"),
        (["--auth", "github", "-t", "stdio"], {}, "error: --auth github needs an HTTP transport"),
        (["--auth", "pigeon"], {}, "error: --auth pigeon: not one of github"),
        ([], {"MCPKIT_AUTH": "pigeon"}, "error: MCPKIT_AUTH='pigeon': not one of github"),
        (
            [*WORKERS, "--auth", "dev"],
            {},
            "error: --auth dev with --workers 2: the development provider lives",
        ),
        (
            [*WORKERS, "--auth", "github"],
            {"MCPKIT_AUTH_CLIENT_ID": "cid"},
            "error: --auth github with --workers 2 needs MCPKIT_AUTH_STORE and",
        ),
        (
            [*WORKERS, "--auth", "github"],
            {"MCPKIT_AUTH_CLIENT_ID": "cid", "MCPKIT_AUTH_STORE": "x.db"},
            "error: --auth github with --workers 2 needs MCPKIT_AUTH_SIGNING_KEY_FILE",
        ),
    ],
)
def test_mcpkit_run_refuses_what_it_cannot_build(
    server_file: str, args: list[str], environ: dict[str, str], expected: str
) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mcpkit", "run", server_file, "-t", "http", *args],
        env=clean_env(MCPKIT_AUTH_CLIENT_SECRET=SECRET, **environ),
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith(expected), done.stderr
    assert SECRET not in done.stderr


def test_mcpkit_run_auth_github_serves_the_proxy_beside_the_endpoint(server_file: str) -> None:
    with run(
        server_file,
        "--auth",
        "github",
        MCPKIT_AUTH_CLIENT_ID="Iv1.x",
        MCPKIT_AUTH_CLIENT_SECRET=SECRET,
    ) as served:
        base = f"http://127.0.0.1:{served.port}"
        meta = httpx.get(f"{base}/.well-known/oauth-authorization-server", timeout=10).json()
        assert meta["issuer"] == base and meta["authorization_endpoint"] == f"{base}/authorize"
        prm = httpx.get(f"{base}/.well-known/oauth-protected-resource/mcp", timeout=10).json()
        assert prm["authorization_servers"] == [base] and prm["resource"] == f"{base}/mcp"
        refused = httpx.post(f"{base}/mcp", json={}, timeout=10)
        assert refused.status_code == 401


async def test_mcpkit_run_auth_dev_signs_a_user_in_end_to_end(server_file: str) -> None:
    user = DevUser("alice", "wonderland")
    with run(server_file, "--auth", "dev", MCPKIT_AUTH_DEV_USERS="alice:wonderland") as served:
        base = f"http://127.0.0.1:{served.port}"
        w = World(None, None, base, f"{base}/mcp", Provider(None, None, log_in))  # type: ignore[arg-type]
        async with asyncio.timeout(30), httpx.AsyncClient() as http:
            client = await register(http, w)
            tokens = await tokens_for(http, w, client["client_id"], user)
            answer = await call_whoami(http, w, tokens["access_token"])
            assert answer.status_code == 200, answer.text
            text = answer.json()["result"]["content"][0]["text"]
            assert json.loads(text) == {"subject": "alice", "upstream": "dev"}
            discovery = await http.get(f"{base}/dev-idp/.well-known/openid-configuration")
            assert discovery.json()["issuer"] == f"{base}/dev-idp"
    assert "development provider" in served.output()


def test_the_store_setting_names_a_file_or_redis(tmp_path: Path) -> None:
    from mcpkit.auth import RedisProxyStore, SqliteProxyStore
    from mcpkit.cli._auth import proxy_store

    assert proxy_store(None) is None
    assert isinstance(proxy_store(str(tmp_path / "oauth.db")), SqliteProxyStore)
    assert isinstance(proxy_store("redis://127.0.0.1:1/0"), RedisProxyStore)
    proxy = build("github", env(MCPKIT_AUTH_STORE=str(tmp_path / "oauth.db")))
    assert isinstance(proxy.store, SqliteProxyStore)


async def test_workers_share_one_proxy_state(server_file: str, tmp_path: Path) -> None:
    """``--auth oidc --workers 2`` with an SQLite store and one key: a user signs in, each
    request on a new connection (so on whichever worker takes it), and the token works."""
    dev_sock = bound_socket()
    dev = DevAuthServer(f"http://127.0.0.1:{dev_sock.getsockname()[1]}", [ALICE])

    def register_proxy(port: int) -> None:
        callback = f"http://127.0.0.1:{port}/oauth/callback"
        dev.add_client("mcp-proxy", "proxy-secret", [callback])

    key = tmp_path / "key.json"
    key.write_text(json.dumps(ECKey.generate_key("P-256", private=True).as_dict(private=True)))
    async with serve_asgi(dev, sock=dev_sock):
        with run(
            server_file,
            "--auth",
            "oidc",
            "--workers",
            "2",
            "--stateless",
            MCPKIT_AUTH_DISCOVERY_URL=dev.discovery_url,
            MCPKIT_AUTH_CLIENT_ID="mcp-proxy",
            MCPKIT_AUTH_CLIENT_SECRET="proxy-secret",
            MCPKIT_AUTH_STORE=str(tmp_path / "oauth.db"),
            MCPKIT_AUTH_SIGNING_KEY_FILE=str(key),
            on_port=register_proxy,
        ) as served:
            base = f"http://127.0.0.1:{served.port}"
            w = World(None, None, base, f"{base}/mcp", Provider(None, None, log_in))  # type: ignore[arg-type]
            fresh = httpx.Limits(max_keepalive_connections=0)
            async with asyncio.timeout(60), httpx.AsyncClient(limits=fresh) as http:
                client = await register(http, w)
                tokens = await tokens_for(http, w, client["client_id"], ALICE)
                call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
                call["params"] = {"name": "whoami", "arguments": {}}
                headers = {**POST_HEADERS, "authorization": f"Bearer {tokens['access_token']}"}
                for _ in range(4):  # any worker takes the token
                    answer = await http.post(w.mcp_url, json=call, headers=headers)
                    assert answer.status_code == 200, answer.text
                    text = answer.json()["result"]["content"][0]["text"]
                    assert json.loads(text)["subject"] == "alice"


def test_dev_auth_serves_both_endpoint_tables() -> None:
    dev = build("dev", {"MCPKIT_AUTH_DEV_USERS": "alice:wonderland"})
    assert isinstance(dev, DevAuth)
    paths = set(dev.endpoints())
    assert {"/authorize", "/token", "/oauth/callback"} <= paths
    assert {"/dev-idp/authorize", "/dev-idp/token", "/dev-idp/jwks"} <= paths
    assert dev.bearer_auth().authorization_servers == ["http://127.0.0.1:3001"]

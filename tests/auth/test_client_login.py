"""A user logs in from a script: ``McpClient.http(url, auth=...)`` against OAuthProxy in
front of DevAuthServer, all on real sockets. The browser is headless (httpx): it approves on the proxy's consent page,
signs in at the provider and follows the redirect to the client's loopback callback."""

from __future__ import annotations

import asyncio
import io
import json
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from mcpkit import McpClient
from mcpkit._exceptions import MCPError
from mcpkit.auth import OAuthError
from mcpkit.auth.client import JsonFileTokenStorage, LoopbackReceiver, OAuthLogin
from mcpkit.auth.client import default_token_file as token_file_of
from tests.auth._proxy_world import World, sign_in, world


class Browser:
    """Drives each login it is handed to the client's callback; counts them."""

    def __init__(self, http: httpx.AsyncClient, w: World, tamper: Callable[[str], str] = str):
        self.http, self.w, self.tamper = http, w, tamper
        self.logins = 0
        self.landed: httpx.Response | None = None

    async def __call__(self, url: str) -> None:
        self.logins += 1
        back = await sign_in(self.http, self.w, url)
        self.landed = await self.http.get(self.tamper(back))


async def no_login(url: str) -> None:
    raise AssertionError(f"a login was not expected: {url}")


async def whoami(url: str, login: OAuthLogin) -> dict[str, Any]:
    async with McpClient.http(url, auth=login) as client:
        result = await client.call_tool("whoami", {})
        return dict(json.loads(result.content[0].text))


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


async def test_a_login_keeps_its_tokens_private_and_the_next_run_uses_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    async with asyncio.timeout(60), world() as w, httpx.AsyncClient() as http:
        browser = Browser(http, w)
        seen = await whoami(w.mcp_url, OAuthLogin(client_name="login test", open_browser=browser))
        assert seen["subject"] == "alice" and seen["name"] == "Alice Liddell"
        assert set(seen["scopes"]) >= {"mcp:read", "mcp:write"}
        assert browser.logins == 1
        assert browser.landed is not None and browser.landed.status_code == 200
        assert "You can close this window" in browser.landed.text
        assert browser.landed.headers["cache-control"] == "no-store"

        path = token_file_of(w.mcp_url)
        assert path.parent == tmp_path / "config" / "mcpkit" / "tokens"
        assert mode(path) == 0o600
        assert mode(path.parent) == 0o700 and mode(path.parent.parent) == 0o700
        kept = json.loads(path.read_text())
        assert list(kept["tokens"]) == [w.mcp_url]
        assert kept["tokens"][w.mcp_url]["refresh_token"]
        [client] = kept["clients"].values()
        assert client["registration"]["client_name"] == "login test"

        # The next run (a new client, a new provider) logs in no more.
        again = await whoami(w.mcp_url, OAuthLogin(open_browser=no_login))
        assert again["subject"] == "alice" and again["client_id"] == client["client_id"]
        assert len(w.proxy.store.clients.entries) == 1  # type: ignore[attr-defined]


async def test_a_login_again_reuses_the_registration_and_its_port(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens.json"
    async with asyncio.timeout(60), world() as w, httpx.AsyncClient() as http:
        first = Browser(http, w)
        await whoami(w.mcp_url, OAuthLogin(token_file=tokens, open_browser=first))
        await JsonFileTokenStorage(tokens).set_tokens(w.mcp_url, None)  # the tokens lost
        second = Browser(http, w)
        login = OAuthLogin(token_file=tokens, open_browser=second)
        assert (await whoami(w.mcp_url, login))["subject"] == "alice"
        assert first.logins == second.logins == 1
        assert len(w.proxy.store.clients.entries) == 1  # type: ignore[attr-defined]


async def test_expired_tokens_are_refreshed_and_a_refused_refresh_logs_in_again(
    tmp_path: Path,
) -> None:
    tokens = tmp_path / "tokens.json"
    storage = JsonFileTokenStorage(tokens)
    # Five seconds: already within the client's 30 s margin, so "expired" at once.
    async with asyncio.timeout(60), world(access_token_ttl=5) as w, httpx.AsyncClient() as http:
        browser = Browser(http, w)
        await whoami(w.mcp_url, OAuthLogin(token_file=tokens, open_browser=browser))
        first = await storage.get_tokens(w.mcp_url)
        assert first is not None and first.refresh_token

        # Expired: refreshed before the first request, no login.
        assert (await whoami(w.mcp_url, OAuthLogin(token_file=tokens, open_browser=no_login)))[
            "subject"
        ] == "alice"
        second = await storage.get_tokens(w.mcp_url)
        assert second is not None and second.access_token != first.access_token
        assert second.refresh_token != first.refresh_token  # rotated

        # Not expired by its clock, but refused by the server: the 401 refreshes it.
        second.access_token = "not-a-token"
        second.expires_at = None
        await storage.set_tokens(w.mcp_url, second)
        assert (await whoami(w.mcp_url, OAuthLogin(token_file=tokens, open_browser=no_login)))[
            "subject"
        ] == "alice"
        third = await storage.get_tokens(w.mcp_url)
        assert third is not None and third.access_token not in ("not-a-token", first.access_token)

        # A refresh token the server refuses: the user logs in again.
        third.refresh_token = "revoked"
        third.expires_at = 0
        await storage.set_tokens(w.mcp_url, third)
        assert (await whoami(w.mcp_url, OAuthLogin(token_file=tokens, open_browser=browser)))[
            "subject"
        ] == "alice"
        assert browser.logins == 2


async def test_a_callback_with_another_state_is_refused(tmp_path: Path) -> None:
    def forged(url: str) -> str:
        return url.replace("state=", "state=forged-")

    async with asyncio.timeout(60), world() as w, httpx.AsyncClient() as http:
        browser = Browser(http, w, tamper=forged)
        login = OAuthLogin(token_file=tmp_path / "t.json", open_browser=browser)
        with pytest.raises(OAuthError) as raised:
            await whoami(w.mcp_url, login)
        assert raised.value.error == "invalid_state"
        assert browser.landed is not None and browser.landed.status_code == 400
        assert await JsonFileTokenStorage(tmp_path / "t.json").get_tokens(w.mcp_url) is None


async def test_no_callback_in_time_is_a_clear_error(tmp_path: Path) -> None:
    seen: list[str] = []

    def nobody(url: str) -> None:  # a sync hook: it runs in a thread
        seen.append(url)

    async with asyncio.timeout(60), world() as w:
        login = OAuthLogin(token_file=tmp_path / "t.json", open_browser=nobody, login_timeout=0.5)
        with pytest.raises(OAuthError, match=r"no login came back to http://127\.0\.0\.1:\d+/"):
            await whoami(w.mcp_url, login)
        redirect = dict(httpx.URL(seen[0]).params)["redirect_uri"]
    with pytest.raises(httpx.ConnectError):  # the callback server is gone
        httpx.get(redirect)


async def test_printing_the_url_when_there_is_no_browser(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCPKIT_OAUTH_BROWSER", "print")
    output = io.StringIO()
    async with asyncio.timeout(60), world() as w, httpx.AsyncClient() as http:

        async def user() -> None:  # reads the URL off the terminal and logs in
            while "http" not in output.getvalue().split("browser:")[-1]:
                await asyncio.sleep(0.02)
            await Browser(http, w)(output.getvalue().split()[-1])

        helper = asyncio.create_task(user())
        login = OAuthLogin(token_file=tmp_path / "t.json", output=output)
        assert (await whoami(w.mcp_url, login))["subject"] == "alice"
        await helper
    assert output.getvalue().startswith(f"To log in to {w.mcp_url}, open this URL in a browser:")


async def test_the_loopback_receiver_takes_one_bounded_request() -> None:
    receiver = LoopbackReceiver()
    uri = await receiver.open()
    receiver.expect("s1")
    base = uri.removesuffix("/callback")
    try:
        async with httpx.AsyncClient() as http:
            assert (await http.get(f"{base}/favicon.ico")).status_code == 404
            assert (await http.post(uri, params={"state": "s1"})).status_code == 405
            big = await http.get(uri, headers={"x-big": "x" * 10_000})
            assert big.status_code == 431
            assert not receiver._result.done()  # type: ignore[union-attr]
            done = await http.get(uri, params={"state": "s1", "code": "c"})
            assert done.status_code == 200
            assert await receiver.wait() == {"state": "s1", "code": "c"}
            with pytest.raises(httpx.ConnectError):  # one callback, then it stops
                await http.get(uri, params={"state": "s1", "code": "again"})
    finally:
        await receiver.close()


async def test_a_busy_redirect_port_is_said(tmp_path: Path) -> None:
    holder = LoopbackReceiver()
    uri = await holder.open()
    port = httpx.URL(uri).port
    assert port is not None
    try:
        async with asyncio.timeout(30), world() as w:
            login = OAuthLogin(
                token_file=tmp_path / "t.json", redirect_port=port, open_browser=no_login
            )
            with pytest.raises(
                OAuthError, match=f"cannot listen for the login on 127.0.0.1:{port}"
            ):
                await whoami(w.mcp_url, login)
    finally:
        await holder.close()


def test_the_login_options_are_checked_and_the_environment_hook_is_named() -> None:
    with pytest.raises(ValueError):
        OAuthLogin(browser="lynx")
    with pytest.raises(ValueError):
        OAuthLogin(redirect_port=70000)
    assert OAuthLogin(open_browser=print).browser_step() is print
    os.environ["MCPKIT_OAUTH_BROWSER"] = "tests.auth._headless_browser:nowhere"
    try:
        with pytest.raises(MCPError, match="MCPKIT_OAUTH_BROWSER"):
            OAuthLogin().browser_step()
        assert OAuthLogin(browser="print").browser_step() == "print"
    finally:
        del os.environ["MCPKIT_OAUTH_BROWSER"]

"""``mcpkit call`` and ``mcpkit inspect`` with ``--auth oauth``, in subprocesses, against
OAuthProxy in front of DevAuthServer: the browser step is ``MCPKIT_OAUTH_BROWSER`` naming a
headless hook (``tests.auth._headless_browser``); the tokens kept by the first run serve
the next ones."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import sys
from pathlib import Path

from mcpkit.auth.client import default_token_file
from tests.auth._proxy_world import world

ROOT = Path(__file__).resolve().parents[2]


async def mcpkit(*args: str, env: dict[str, str]) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "mcpkit",
        *args,
        env={**os.environ, "PYTHONPATH": str(ROOT), **env},
        cwd=ROOT,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await process.communicate()
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def test_mcpkit_call_and_inspect_log_in_once(tmp_path: Path) -> None:
    env = {
        "XDG_CONFIG_HOME": str(tmp_path),
        "MCPKIT_OAUTH_BROWSER": "tests.auth._headless_browser:alice",
    }
    async with asyncio.timeout(60), world() as w:
        code, out, err = await mcpkit("call", w.mcp_url, "whoami", "--auth", "oauth", env=env)
        assert code == 0, err
        assert json.loads(out)["subject"] == "alice"
        path = tmp_path / "mcpkit" / "tokens" / default_token_file(w.mcp_url).name
        assert stat.S_IMODE(path.stat().st_mode) == 0o600

        # The next runs use the tokens kept: a login would fail.
        env["MCPKIT_OAUTH_BROWSER"] = "tests.auth._headless_browser:refuse"
        code, out, err = await mcpkit("inspect", w.mcp_url, "--auth", "oauth", "--json", env=env)
        assert code == 0, err
        assert [tool["name"] for tool in json.loads(out)["tools"]] == ["whoami"]
        code, out, err = await mcpkit(
            "call", w.mcp_url, "whoami", "--auth", "oauth", "--json", env=env
        )
        assert code == 0, err
        assert "alice" in out

        # Without --auth: the hint names it.
        code, out, err = await mcpkit("call", w.mcp_url, "whoami", env=env)
        assert code != 0 and "--auth oauth" in err


async def test_the_login_options_need_auth_and_an_http_url(tmp_path: Path) -> None:
    code, _, err = await mcpkit("call", "http://127.0.0.1:9/mcp", "t", "--no-browser", env={})
    assert code == 2 and "go with --auth oauth" in err
    code, _, err = await mcpkit("call", "ws://127.0.0.1:9/mcp", "t", "--auth", "oauth", env={})
    assert code == 2 and "is for an http:// or https:// server URL" in err

"""A newcomer's mistakes with the client, each answered at once with what to do: a call
before connecting, options of the wrong kind, an app that is not one, a request timeout
(a ``TimeoutError``), a 401 over HTTP with and without a token; real sockets for HTTP."""

from __future__ import annotations

import asyncio
import sys

import pytest

from mcpkit import (
    ConnectionClosedError,
    HttpClientTransportOptions,
    McpClient,
    McpServerApp,
    RequestTimeoutError,
    StdioClientTransportOptions,
)
from mcpkit.auth import AuthResult, BearerAuthConfig
from mcpkit.client import HttpStatusError
from tests.http_server import serving


def _app() -> McpServerApp:
    app = McpServerApp("mistakes")

    @app.tool
    async def slow(seconds: float) -> str:
        await asyncio.sleep(seconds)
        return "done"

    return app


async def test_a_call_before_connecting_fails_at_once_saying_how_to_connect():
    app = _app()
    async with serving(app) as (url, _):
        for client in (McpClient.in_memory(app), McpClient.http(url)):
            async with asyncio.timeout(5):  # it waited its whole request timeout (60 s)
                with pytest.raises(ConnectionClosedError, match="async with client:"):
                    await client.call_tool("slow", {"seconds": 0})
            async with client:  # and connecting afterwards works
                result = await client.call_tool("slow", {"seconds": 0})
                assert result.content[0].text == "done"


def test_options_of_the_wrong_kind_are_refused_when_the_client_is_made():
    with pytest.raises(TypeError, match="takes StdioClientTransportOptions"):
        McpClient.stdio("mcpkit run server.py")
    with pytest.raises(TypeError, match=r"arguments=\['run', 'server.py'\]"):
        StdioClientTransportOptions(command="mcpkit", arguments="run server.py")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"McpClient.in_memory\(McpServerApp\(TheClass\)\)"):
        McpClient.in_memory(McpServerApp)


async def test_a_request_timeout_is_a_timeout_error_naming_its_limit():
    async with McpClient.in_memory(_app(), request_timeout=0.2) as client:
        with pytest.raises(TimeoutError) as waited:
            await client.call_tool("slow", {"seconds": 5})
        assert isinstance(waited.value, RequestTimeoutError)
        assert "no response in 0.2 s" in str(waited.value)
        assert (await client.call_tool("slow", {"seconds": 0})).content[0].text == "done"


async def test_a_401_says_what_to_send():
    async def verify(token: str) -> AuthResult:
        return AuthResult(ok=token == "good", subject="ada")

    async with serving(_app(), bearer_auth=BearerAuthConfig(verify=verify)) as (url, _):
        with pytest.raises(HttpStatusError, match="send a token with additional_headers"):
            async with McpClient.http(HttpClientTransportOptions(endpoint=url)):
                pass
        wrong = HttpClientTransportOptions(
            endpoint=url, additional_headers={"Authorization": "Bearer bad"}
        )
        with pytest.raises(HttpStatusError, match="credentials sent were not accepted"):
            async with McpClient.http(wrong):
                pass
        right = HttpClientTransportOptions(
            endpoint=url, additional_headers={"Authorization": "Bearer good"}
        )
        async with McpClient.http(right) as client:
            assert (await client.call_tool("slow", {"seconds": 0})).content[0].text == "done"


@pytest.mark.parametrize(
    ("code", "said"),
    [
        ("import sys; sys.exit(3)", "exited with code 3"),
        ("import os, signal; os.kill(os.getpid(), signal.SIGKILL)", "ended by signal 9"),
    ],
)
async def test_a_stdio_server_that_dies_is_said_to_have_exited_and_how(code, said):
    options = StdioClientTransportOptions(command=sys.executable, arguments=["-c", code])
    async with asyncio.timeout(10):
        with pytest.raises(ConnectionClosedError, match=said):
            async with McpClient.stdio(options):
                pass


async def test_the_command_as_a_list_starts_the_server(tmp_path):
    """``McpClient.stdio([sys.executable, "server.py"])``: unambiguous, unlike one string."""
    server = tmp_path / "server.py"
    server.write_text(
        "from mcpkit import McpServerApp\n"
        "app = McpServerApp('listed')\n"
        "@app.tool()\n"
        "def hello() -> str:\n"
        "    print('a stray print in the tool')\n"
        "    return 'hi'\n"
        "app.run()\n"
    )
    async with asyncio.timeout(20), McpClient.stdio([sys.executable, str(server)]) as client:
        assert client.server_info.server_info.name == "listed"
        assert (await client.call_tool("hello", {})).content[0].text == "hi"


async def test_a_client_connects_once_and_a_second_connect_leaves_it_working():
    async with McpClient.in_memory(_app()) as client:
        with pytest.raises(RuntimeError, match="already connected"):
            async with client:
                pass
        with pytest.raises(RuntimeError, match="make a new McpClient"):
            await client.connect()
        assert (await client.call_tool("slow", {"seconds": 0})).content[0].text == "done"

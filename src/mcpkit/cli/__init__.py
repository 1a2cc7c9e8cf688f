"""The ``mcpkit`` command: run a server, call or inspect one."""

from __future__ import annotations

import asyncio
import json
import sys
from enum import Enum
from typing import Any, Optional

import typer

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False, help="mcpkit: Model Context Protocol servers and clients.")


class Transport(str, Enum):
    stdio = "stdio"
    http = "http"
    sse = "sse"
    ws = "ws"


@app.command()
def run(
    target: str = typer.Argument(..., help="FILE[:OBJECT] holding an McpServerApp or @mcp_server class"),
    transport: Transport = typer.Option(Transport.stdio, "--transport", "-t", help="How clients connect"),
    host: str = typer.Option("127.0.0.1", help="Address to bind (network transports)"),
    port: int = typer.Option(3001, help="Port to bind (network transports)"),
    endpoint: str = typer.Option("/mcp", help="Path of the MCP endpoint (network transports)"),
    stateless: bool = typer.Option(False, help="Streamable HTTP without sessions"),
    redis_url: Optional[str] = typer.Option(
        None, "--redis-url", help="Share sessions, events and broadcasts with the other instances using this Redis (mcpkit[redis])"
    ),
) -> None:
    """Run a server. The network transports share one HTTP server: Streamable HTTP at
    /mcp, legacy SSE at /mcp/sse, WebSocket at /mcp/ws."""
    from mcpkit.cli._loader import load_app

    server = load_app(target)
    if transport is Transport.stdio:
        from mcpkit.transports._stdio import serve_stdio

        try:
            run_async(serve_stdio(server))
        except KeyboardInterrupt:
            pass
        return
    from mcpkit.transports.http import StreamableHttpServerOptions, serve_http

    shared: dict[str, Any] = {}
    if redis_url:
        from mcpkit.stores import RedisHub, RedisTaskStore, redis_options

        hub = RedisHub(redis_url)
        shared = redis_options(hub)
        server.tasks.store = RedisTaskStore(hub)
    options = StreamableHttpServerOptions(host=host, port=port, endpoint=endpoint, stateless=stateless, **shared)
    typer.echo(f"mcpkit: serving {server.name} on http://{host}:{port}{endpoint}", err=True)
    serve_http(server, options)


def run_async(main: Any) -> Any:
    """Run a coroutine on uvloop when it is installed (``mcpkit[speed]``), else asyncio."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(main)
    return uvloop.run(main)


def _client_for(target: str):  # type: ignore[no-untyped-def]
    """A client for a URL (HTTP: Streamable HTTP or legacy SSE, detected; ws: WebSocket) or
    for a file, served in-process."""
    from mcpkit.client import HttpClientTransportOptions, McpClient

    if target.startswith(("http://", "https://")):
        return McpClient.http(HttpClientTransportOptions(endpoint=target))
    if target.startswith(("ws://", "wss://")):
        return McpClient.websocket(target)
    from mcpkit.cli._loader import load_app

    return McpClient.in_memory(load_app(target))


async def _with_client(target: str, action):  # type: ignore[no-untyped-def]
    async with _client_for(target) as client:
        return await action(client)


@app.command()
def inspect(target: str = typer.Argument(..., help="FILE[:OBJECT] or a server URL (http://…, ws://…)")) -> None:
    """List a server's tools, resources, templates and prompts as JSON."""
    import msgspec

    async def action(client):  # type: ignore[no-untyped-def]
        return {
            "server": msgspec.to_builtins(client.server_info),
            "tools": msgspec.to_builtins(await client.list_tools()),
            "resources": msgspec.to_builtins(await client.list_resources()),
            "resourceTemplates": msgspec.to_builtins(await client.list_resource_templates()),
            "prompts": msgspec.to_builtins(await client.list_prompts()),
        }

    typer.echo(json.dumps(asyncio.run(_with_client(target, action)), indent=2))


@app.command()
def call(
    target: str = typer.Argument(..., help="FILE[:OBJECT] or a server URL (http://…, ws://…)"),
    tool: str = typer.Argument(..., help="Tool name"),
    arguments: Optional[str] = typer.Argument(None, help="Arguments as a JSON object"),
) -> None:
    """Call one tool and print its result as JSON."""
    import msgspec

    args = json.loads(arguments) if arguments else {}

    async def action(client):  # type: ignore[no-untyped-def]
        return msgspec.to_builtins(await client.call_tool(tool, args))

    result = asyncio.run(_with_client(target, action))
    typer.echo(json.dumps(result, indent=2))
    if result.get("isError"):
        sys.exit(1)


def main() -> None:
    app()

"""``mcpkit inspect`` and ``mcpkit call``: a client for a URL or for a file served in-process,
with what fails said the command's way (``mcpkit.cli._errors``)."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Awaitable, Callable
from typing import Any

from mcpkit.cli._errors import (
    EXIT_USAGE,
    CliError,
    invalid_arguments,
    parse_arguments,
    transport_error,
    unknown_tool,
)

_URL_SCHEMES = ("http://", "https://", "ws://", "wss://")


def parse_headers(values: list[str]) -> dict[str, str]:
    headers: dict[str, str] = {}
    for value in values:
        name, sep, content = value.partition(":")
        if not sep or not name.strip() or name != name.strip():
            raise CliError(f"not a header: {value!r}", "write it as 'Name: value'", code=EXIT_USAGE)
        headers[name] = content.strip()
    return headers


def _client_for(target: str, headers: dict[str, str], **client_options: Any) -> Any:
    """A client for a URL (HTTP: Streamable HTTP or legacy SSE, detected; ws: WebSocket) or
    for a file, served in-process; ``client_options`` go to ``McpClient`` (handlers)."""
    from mcpkit.client import HttpClientTransportOptions, McpClient, WebSocketClientTransportOptions

    if target.startswith(("http://", "https://")):
        return McpClient.http(
            HttpClientTransportOptions(endpoint=target, additional_headers=headers),
            **client_options,
        )
    if target.startswith(("ws://", "wss://")):
        return McpClient.websocket(
            WebSocketClientTransportOptions(url=target, additional_headers=headers),
            **client_options,
        )
    if headers:
        raise CliError("--header is for a server URL, not a file", code=EXIT_USAGE)
    from mcpkit.cli._loader import load_app

    return McpClient.in_memory(load_app(target), **client_options)


def _with_client(
    target: str,
    headers: list[str],
    action: Callable[[Any], Awaitable[Any]],
    **client_options: Any,
) -> Any:
    parsed = parse_headers(headers)
    client = _client_for(target, parsed, **client_options)

    async def main() -> Any:
        async with client:
            return await action(client)

    from mcpkit._exceptions import TransportError

    try:
        return asyncio.run(main())
    except TransportError as exc:
        url = target if target.startswith(_URL_SCHEMES) else None
        sent = any(name.lower() == "authorization" for name in parsed)
        raise transport_error(url, exc, credentials_sent=sent) from exc


def _print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, indent=2) + "\n")
    sys.stdout.flush()


def inspect_target(target: str, headers: list[str], json_output: bool = False) -> int:
    """``mcpkit inspect``: tables of what the server offers, or (``json_output``) JSON."""
    import msgspec

    async def action(client: Any) -> dict[str, Any]:
        return {
            "server": msgspec.to_builtins(client.server_info),
            "tools": msgspec.to_builtins(await client.list_tools()),
            "resources": msgspec.to_builtins(await client.list_resources()),
            "resourceTemplates": msgspec.to_builtins(await client.list_resource_templates()),
            "prompts": msgspec.to_builtins(await client.list_prompts()),
        }

    listing = _with_client(target, headers, action)
    if json_output:
        _print_json(listing)
    else:
        from mcpkit.cli._output import print_listing

        print_listing(listing)
    return 0


def call_tool(
    target: str,
    tool: str,
    arguments: str | None,
    headers: list[str],
    json_output: bool = False,
    interactive: bool | None = None,
) -> int:
    """``mcpkit call``: the result as text (``json_output``: the raw result). Progress and log
    notifications go to stderr as they come; the server's sampling and elicitation requests
    are asked on the terminal, or refused when ``interactive`` is False (None: ask when
    stdin is a terminal)."""
    import msgspec

    from mcpkit._codes import ErrorCode
    from mcpkit._exceptions import McpCallError
    from mcpkit.cli._output import CallDisplay, print_result
    from mcpkit.cli._prompts import UserPrompts

    args = parse_arguments(arguments)

    async def action(client: Any) -> Any:
        try:
            result = await client.call_tool(tool, args, progress=display.progress)
        except McpCallError as exc:
            if exc.code != ErrorCode.INVALID_PARAMS:
                raise
            # Unknown tool and bad arguments share the code: the tool list tells them apart.
            names = [item.name for item in await client.list_tools()]
            if tool not in names:
                raise unknown_tool(tool, names) from exc
            raise invalid_arguments(tool, exc.message) from exc
        return msgspec.to_builtins(result)

    stdin_terminal = sys.stdin is not None and sys.stdin.isatty()
    ask = stdin_terminal if interactive is None else interactive
    reason = (
        "--no-input" if interactive is False else "stdin is not a terminal; --input asks anyway"
    )
    display = CallDisplay(sys.stderr)
    prompts = UserPrompts(
        interactive=ask,
        source=sys.stdin,
        output=sys.stderr,
        pause=display.paused,
        refusal_reason=reason,
    )
    try:
        result = _with_client(
            target,
            headers,
            action,
            sampling_handler=prompts.sampling,
            elicitation_handler=prompts.elicitation,
            logging_handler=display.log,
        )
    finally:
        display.close()
    if json_output:
        _print_json(result)
    else:
        print_result(result)
    if result.get("isError"):
        if not json_output:
            sys.stderr.write(f"error: the tool {tool!r} reported an error\n")
            sys.stderr.flush()
        return 1
    return 0

"""``mcpkit inspect`` and ``mcpkit call``: a client for a URL or for a file served in-process,
with what fails said the command's way (``mcpkit.cli._errors``)."""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import mcpkit.cli._errors as _errors
from mcpkit.cli._errors import (
    EXIT_USAGE,
    CliError,
    arguments_example,
    invalid_arguments,
    parse_arguments,
    transport_error,
    unknown_arguments,
    unknown_tool,
)

if TYPE_CHECKING:
    from mcpkit.cli._loader import Unserved

_URL_SCHEMES = ("http://", "https://", "ws://", "wss://")


def parse_headers(values: list[str]) -> dict[str, str]:
    headers: dict[str, str] = {}
    for value in values:
        name, sep, content = value.partition(":")
        if not sep or not name.strip() or name != name.strip():
            raise CliError(f"not a header: {value!r}", "write it as 'Name: value'", code=EXIT_USAGE)
        headers[name] = content.strip()
    return headers


def _client_for(
    target: str,
    headers: dict[str, str],
    unserved: list[Unserved] | None = None,
    auth: Any = None,
    **client_options: Any,
) -> Any:
    """A client for a URL (HTTP: Streamable HTTP or legacy SSE, detected; ws: WebSocket) or
    for a file, served in-process; ``client_options`` go to ``McpClient`` (handlers). For a
    file, what it decorated but does not serve is added to ``unserved``. ``auth``: an
    ``OAuthLogin`` (``--auth oauth``), for an HTTP URL only."""
    from mcpkit.client import HttpClientTransportOptions, McpClient, WebSocketClientTransportOptions

    if target.startswith(("http://", "https://")):
        return McpClient.http(
            HttpClientTransportOptions(endpoint=target, additional_headers=headers),
            auth=auth,
            **client_options,
        )
    if auth is not None:
        raise CliError("--auth oauth is for an http:// or https:// server URL", code=EXIT_USAGE)
    if target.startswith(("ws://", "wss://")):
        return McpClient.websocket(
            WebSocketClientTransportOptions(url=target, additional_headers=headers),
            **client_options,
        )
    if headers:
        raise CliError("--header is for a server URL, not a file", code=EXIT_USAGE)
    from mcpkit.cli._loader import load_server

    loaded = load_server(target)
    if unserved is not None:
        unserved.extend(loaded.unserved)
    return McpClient.in_memory(loaded.app, **client_options)


def _with_client(
    target: str,
    headers: list[str],
    action: Callable[[Any], Awaitable[Any]],
    unserved: list[Unserved] | None = None,
    auth: Any = None,
    **client_options: Any,
) -> Any:
    parsed = parse_headers(headers)
    client = _client_for(target, parsed, unserved, auth, **client_options)

    async def main() -> Any:
        async with client:
            return await action(client)

    from mcpkit._exceptions import TransportError

    try:
        return asyncio.run(main())
    except TransportError as exc:
        url = target if target.startswith(_URL_SCHEMES) else None
        sent = auth is not None or any(name.lower() == "authorization" for name in parsed)
        raise transport_error(url, exc, credentials_sent=sent) from exc


def _print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, indent=2) + "\n")
    sys.stdout.flush()


def inspect_target(
    target: str, headers: list[str], json_output: bool = False, auth: Any = None
) -> int:
    """``mcpkit inspect``: tables of what the server offers, or (``json_output``) JSON.
    ``auth``: an ``OAuthLogin`` to log in with (``--auth oauth``)."""
    import msgspec

    async def action(client: Any) -> dict[str, Any]:
        return {
            "server": msgspec.to_builtins(client.server_info),
            "tools": msgspec.to_builtins(await client.list_tools()),
            "resources": msgspec.to_builtins(await client.list_resources()),
            "resourceTemplates": msgspec.to_builtins(await client.list_resource_templates()),
            "prompts": msgspec.to_builtins(await client.list_prompts()),
        }

    listing = _with_client(target, headers, action, auth=auth)
    for tool in listing["tools"]:
        for name in untyped_parameters(tool.get("inputSchema")):
            sys.stderr.write(
                f"warning: {tool['name']}: parameter {name!r} has no type hint;"
                " clients see an untyped argument\n"
            )
    sys.stderr.flush()
    if json_output:
        _print_json(listing)
    else:
        from mcpkit.cli._output import print_listing

        print_listing(listing)
    return 0


def untyped_parameters(input_schema: Any) -> list[str]:
    """The parameters whose schema is empty: no type hint, so any value passes."""
    properties = input_schema.get("properties") if isinstance(input_schema, dict) else None
    if not isinstance(properties, dict):
        return []
    return [name for name, schema in properties.items() if schema == {}]


def _input_schema(target: str, headers: list[str], tool: str, auth: Any) -> Any:
    """The ``inputSchema`` of ``tool``, or None when it cannot be had (no such tool, the
    server unreachable): only to word a hint better."""

    async def action(client: Any) -> Any:
        for item in await client.list_tools():
            if item.name == tool:
                return item.input_schema
        return None

    try:
        return _with_client(target, headers, action, auth=auth)
    except Exception:
        return None


def _parse_tool_arguments(
    target: str, headers: list[str], tool: str, text: str | None, auth: Any
) -> Any:
    """``parse_arguments``; when they are not a JSON object, the hint's example is made
    from the tool's own parameters where the server tells them."""
    try:
        return parse_arguments(text)
    except CliError:
        example = arguments_example(_input_schema(target, headers, tool, auth))
        if example is None:
            raise
        return parse_arguments(text, example)


def _unserved_tool(unserved: list[Unserved], tool: str) -> str | None:
    """The warning about the file's unserved function that would have been ``tool``, if any."""
    for item in unserved:
        if item.decorator == "@mcp_tool" and item.served_as == tool:
            return item.warning()
    return None


async def _warn_of_unknown_arguments(client: Any, tool: str, args: dict[str, Any]) -> None:
    """Warn of arguments the tool does not take: the server may drop them silently."""
    from mcpkit._exceptions import McpCallError

    if not args:
        return
    try:
        tools = await client.list_tools()
    except McpCallError:  # no list to check against: the call itself still decides
        return
    for item in tools:
        if item.name == tool:
            for warning in unknown_arguments(tool, item.input_schema, args):
                sys.stderr.write(f"warning: {warning}\n")
            sys.stderr.flush()
            return


def call_tool(
    target: str,
    tool: str,
    arguments: str | None,
    headers: list[str],
    json_output: bool = False,
    interactive: bool | None = None,
    timeout: float = 60.0,
    auth: Any = None,
) -> int:
    """``mcpkit call``: the result as text (``json_output``: the raw result). Progress and log
    notifications go to stderr as they come; the server's sampling and elicitation requests
    are asked on the terminal, or refused when ``interactive`` is False (None: ask when
    stdin is a terminal). ``timeout``: seconds the tool gets to answer. ``auth``: an
    ``OAuthLogin`` to log in with (``--auth oauth``)."""
    import msgspec

    from mcpkit._codes import ErrorCode
    from mcpkit._exceptions import McpCallError, RequestTimeoutError
    from mcpkit.cli._output import CallDisplay, print_result
    from mcpkit.cli._prompts import UserPrompts

    args = _parse_tool_arguments(target, headers, tool, arguments, auth)
    unserved: list[Unserved] = []

    async def action(client: Any) -> Any:
        await _warn_of_unknown_arguments(client, tool, args)
        try:
            result = await client.call_tool(tool, args, progress=display.progress, timeout=timeout)
        except RequestTimeoutError as exc:
            raise CliError(
                f"the tool {tool!r} did not answer in {timeout:g} s",
                "give it longer with --timeout SECONDS",
            ) from exc
        except McpCallError as exc:
            if exc.code != ErrorCode.INVALID_PARAMS:
                raise
            # Unknown tool and bad arguments share the code: the tool list tells them apart.
            names = [item.name for item in await client.list_tools()]
            if tool not in names:
                raise unknown_tool(tool, names, _unserved_tool(unserved, tool)) from exc
            raise invalid_arguments(tool, exc.message) from exc
        return msgspec.to_builtins(result)

    stdin_terminal = sys.stdin is not None and sys.stdin.isatty()
    ask = stdin_terminal if interactive is None else interactive
    reason = (
        "--no-input" if interactive is False else "stdin is not a terminal; --input asks anyway"
    )
    display = CallDisplay(sys.stderr)
    hidden = _HiddenToolTracebacks()
    if not _errors.debugging:
        logging.getLogger("mcpkit.server").addFilter(hidden)
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
            unserved,
            auth,
            sampling_handler=prompts.sampling,
            elicitation_handler=prompts.elicitation,
            logging_handler=display.log,
            # 2026-07-28 servers log only what a request's _meta asks for: ask, as a
            # handshake-era session does with logging/setLevel
            log_level="debug" if _errors.debugging else "info",
        )
    finally:
        display.close()
        logging.getLogger("mcpkit.server").removeFilter(hidden)
    if json_output:
        _print_json(result)
    else:
        refused = _refused_arguments(result)
        if refused is not None:
            raise invalid_arguments(tool, refused)
        print_result(result)
    if result.get("isError"):
        if not json_output:
            sys.stderr.write(f"error: the tool {tool!r} reported an error\n")
            if hidden.count:
                sys.stderr.write("hint: mcpkit --debug call ... shows where it raised\n")
            sys.stderr.flush()
        return 1
    return 0


#: How an mcpkit server words arguments its input schema refused (_schema/engines.py),
#: answered as a tool error: the CLI says it as it says the -32602 of other servers.
_ARGUMENT_REFUSALS = ("Invalid argument", "Missing required argument")


def _refused_arguments(result: dict[str, Any]) -> str | None:
    content = result.get("content") or []
    if not result.get("isError") or len(content) != 1 or content[0].get("type") != "text":
        return None
    text = content[0].get("text", "")
    return text if text.startswith(_ARGUMENT_REFUSALS) else None


class _HiddenToolTracebacks(logging.Filter):
    """Drops the served file's "tool raised" log lines: ``call`` prints the error itself,
    and tracebacks are for ``--debug``."""

    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def filter(self, record: logging.LogRecord) -> bool:
        from mcpkit.server._handlers import (
            OUTPUT_REFUSED,
            TOOL_ERROR,
            TOOL_RAISED,
            TOOL_RAISED_MASKED,
        )

        if record.msg is TOOL_RAISED or record.msg is TOOL_RAISED_MASKED:
            self.count += 1
            return False
        return record.msg is not OUTPUT_REFUSED and record.msg is not TOOL_ERROR


def _request(
    target: str,
    headers: list[str],
    what: str,
    send: Callable[[Any], Awaitable[Any]],
    timeout: float,
    auth: Any,
) -> dict[str, Any]:
    """One request ``send`` makes of the server, its result as plain data; ``what`` names
    it in the timeout's error line."""
    import msgspec

    from mcpkit._exceptions import RequestTimeoutError

    async def action(client: Any) -> Any:
        try:
            return msgspec.to_builtins(await send(client))
        except RequestTimeoutError as exc:
            raise CliError(
                f"{what} did not answer in {timeout:g} s", "give it longer with --timeout SECONDS"
            ) from exc

    result: dict[str, Any] = _with_client(target, headers, action, auth=auth)
    return result


def read_resource(
    target: str,
    uri: str,
    headers: list[str],
    json_output: bool = False,
    timeout: float = 60.0,
    auth: Any = None,
) -> int:
    """``mcpkit call TARGET --resource URI``: the resource's contents (text as text, a blob
    as a note of its type and size); ``json_output``: the raw result."""
    from mcpkit.cli._output import print_resource

    result = _request(
        target,
        headers,
        f"the resource {uri!r}",
        lambda client: client.read_resource(uri, timeout=timeout),
        timeout,
        auth,
    )
    if json_output:
        _print_json(result)
    else:
        print_resource(result)
    return 0


def get_prompt(
    target: str,
    name: str,
    arguments: str | None,
    headers: list[str],
    json_output: bool = False,
    timeout: float = 60.0,
    auth: Any = None,
) -> int:
    """``mcpkit call TARGET --prompt NAME [ARGUMENTS]``: the prompt's messages, one
    ``role: text`` each; ``json_output``: the raw result."""
    from mcpkit.cli._output import print_prompt

    # Prompt arguments are strings on the wire: other JSON values go as their JSON text.
    args = {
        key: value if isinstance(value, str) else json.dumps(value)
        for key, value in parse_arguments(arguments, """'{"topic": "tea"}'""").items()
    }
    result = _request(
        target,
        headers,
        f"the prompt {name!r}",
        lambda client: client.get_prompt(name, args, timeout=timeout),
        timeout,
        auth,
    )
    if json_output:
        _print_json(result)
    else:
        print_prompt(result)
    return 0

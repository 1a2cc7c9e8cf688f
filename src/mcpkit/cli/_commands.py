"""The typer app: every command's options and ``--help``. Built only when the command line
is not a plain ``mcpkit run`` (see ``mcpkit.cli._run.parse_fast``)."""

from __future__ import annotations

import functools
import inspect as _inspect
from collections.abc import Callable
from enum import StrEnum
from typing import Annotated, Any

import typer

from mcpkit.cli._errors import EXIT_INTERRUPTED, EXIT_USAGE, CliError
from mcpkit.cli._run_options import DEFAULTS

try:  # typer carrying its own copy of click (0.2x)
    from typer._click.exceptions import ClickException
except ImportError:  # pragma: no cover - older typer, on click
    from click.exceptions import ClickException  # type: ignore[assignment]

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="mcpkit: Model Context Protocol servers and clients.",
)


class Transport(StrEnum):
    stdio = "stdio"
    http = "http"
    sse = "sse"
    ws = "ws"


_DEFAULT_TRANSPORT = Transport(DEFAULTS["transport"])


def _print_version(value: bool) -> None:
    if value:
        from mcpkit import __version__

        typer.echo(f"mcpkit {__version__}")
        raise typer.Exit()


@app.callback()
def _global_options(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            is_eager=True,
            callback=_print_version,
            help="Print mcpkit's version and exit.",
        ),
    ] = False,
    debug: Annotated[
        bool,
        typer.Option(
            "--debug", help="On an error, show its traceback too (or set MCPKIT_DEBUG=1)."
        ),
    ] = False,
) -> None:
    # ``main`` reads --debug from the command line before anything runs: an error may
    # come before this callback (a usage error) or from outside typer (a plain run).
    del version, debug


@app.command()
def run(
    ctx: typer.Context,
    target: Annotated[
        str,
        typer.Argument(
            help="FILE[:OBJECT] or MODULE:OBJECT holding an McpServerApp or @mcp_server class"
        ),
    ],
    transport: Annotated[
        Transport, typer.Option("--transport", "-t", help="How clients connect")
    ] = _DEFAULT_TRANSPORT,
    host: Annotated[
        str, typer.Option("--host", help="Address to bind (network transports)")
    ] = DEFAULTS["host"],
    port: Annotated[
        int, typer.Option("--port", help="Port to bind (network transports)")
    ] = DEFAULTS["port"],
    endpoint: Annotated[
        str, typer.Option("--endpoint", help="Path of the MCP endpoint (network transports)")
    ] = DEFAULTS["endpoint"],
    stateless: Annotated[
        bool, typer.Option("--stateless/--no-stateless", help="Streamable HTTP without sessions")
    ] = DEFAULTS["stateless"],
    redis_url: Annotated[
        str | None,
        typer.Option(
            "--redis-url",
            help="Share sessions, events and broadcasts with the other instances using this Redis (needs the redis extra)",
        ),
    ] = DEFAULTS["redis_url"],
    shutdown_grace: Annotated[
        float | None,
        typer.Option(
            "--shutdown-grace",
            min=0.0,
            help="Seconds running calls get to finish at shutdown (stdin closed, SIGTERM, SIGINT) before they are cancelled, each answered with an error [default: the app's shutdown_grace, 5]",
        ),
    ] = DEFAULTS["shutdown_grace"],
    workers: Annotated[
        int,
        typer.Option(
            "--workers",
            min=1,
            help="Worker processes serving the HTTP port; more than 1 needs --redis-url, or --stateless (legacy SSE is then off)",
        ),
    ] = DEFAULTS["workers"],
    json_output: Annotated[
        bool,
        typer.Option("--json", help="Announce the HTTP server as one JSON line on stdout"),
    ] = DEFAULTS["json_output"],
    auth: Annotated[
        str | None,
        typer.Option(
            "--auth",
            help="Sign users in through an OAuth proxy in front of this provider (github, google, entra, auth0, okta, keycloak, oidc; dev: a development provider), set up by the MCPKIT_AUTH_* variables (HTTP only)",
        ),
    ] = DEFAULTS["auth"],
) -> int:
    """Run a server. The network transports share one HTTP server: Streamable HTTP at
    /mcp, legacy SSE at /mcp/sse, WebSocket at /mcp/ws."""
    from mcpkit.cli._run import run_server
    from mcpkit.cli._settings import with_env

    values = with_env(
        {
            "transport": transport.value,
            "host": host,
            "port": port,
            "endpoint": endpoint,
            "stateless": stateless,
            "redis_url": redis_url,
            "shutdown_grace": shutdown_grace,
            "workers": workers,
            "json_output": json_output,
            "auth": auth,
        },
        _given_on_command_line(ctx),
    )
    return run_server(target, **values)


def _given_on_command_line(ctx: typer.Context) -> set[str]:
    """The parameters the command line set (the rest may come from ``MCPKIT_*``)."""
    try:  # typer carrying its own copy of click (0.2x)
        from typer._click.core import ParameterSource
    except ImportError:  # pragma: no cover - older typer, on click
        from click.core import ParameterSource  # type: ignore[assignment]

    return {
        name for name in ctx.params if ctx.get_parameter_source(name) is ParameterSource.COMMANDLINE
    }


Target = Annotated[
    str,
    typer.Argument(help="FILE[:OBJECT], MODULE:OBJECT or a server URL (http://…, ws://…)"),
]
Headers = Annotated[
    list[str] | None,
    typer.Option(
        "--header",
        "-H",
        help="An HTTP header for a server URL, 'Name: value' (repeatable), e.g. -H 'Authorization: Bearer TOKEN'",
    ),
]


JsonOutput = Annotated[bool, typer.Option("--json", help="Print JSON (machine output)")]


class Auth(StrEnum):
    oauth = "oauth"


AuthOption = Annotated[
    Auth | None,
    typer.Option(
        "--auth",
        help="oauth: log in to the server (OAuth 2.1, in the browser); the tokens are kept for the next run",
    ),
]
TokenFile = Annotated[
    str | None,
    typer.Option(
        "--token-file",
        help="With --auth oauth: the file the tokens are kept in (default: one per server URL in ~/.config/mcpkit/tokens/)",
        show_default=False,
    ),
]
Scopes = Annotated[
    list[str] | None,
    typer.Option(
        "--scope",
        help="With --auth oauth: a scope to ask for, repeatable (default: those the server names)",
        show_default=False,
    ),
]
ClientId = Annotated[
    str | None,
    typer.Option(
        "--client-id",
        help="With --auth oauth: a client id registered beforehand (default: the client registers itself)",
        show_default=False,
    ),
]
ClientMetadataUrl = Annotated[
    str | None,
    typer.Option(
        "--client-metadata-url",
        help="With --auth oauth: the https URL of this client's Client ID Metadata Document, used where the server supports them",
        show_default=False,
    ),
]
RedirectPort = Annotated[
    int,
    typer.Option(
        "--redirect-port",
        min=0,
        max=65535,
        help="With --auth oauth: the port of the redirect URI http://127.0.0.1:PORT/callback (default: a free one)",
        show_default=False,
    ),
]
NoBrowser = Annotated[
    bool,
    typer.Option(
        "--no-browser", help="With --auth oauth: print the login URL instead of opening a browser"
    ),
]


#: The login options ``--auth`` brings: (parameter, its option, its default).
_LOGIN_OPTIONS = (
    ("auth", AuthOption, None),
    ("token_file", TokenFile, None),
    ("scope", Scopes, None),
    ("client_id", ClientId, None),
    ("client_metadata_url", ClientMetadataUrl, None),
    ("redirect_port", RedirectPort, 0),
    ("no_browser", NoBrowser, False),
)


def _login(
    auth: Auth | None,
    token_file: str | None,
    scope: list[str] | None,
    client_id: str | None,
    client_metadata_url: str | None,
    redirect_port: int,
    no_browser: bool,
) -> Any:
    """The ``OAuthLogin`` the ``--auth`` options describe; None without ``--auth``."""
    if auth is None:
        given = token_file or scope or client_id or client_metadata_url or redirect_port
        if given or no_browser:
            raise CliError("the login options go with --auth oauth", code=EXIT_USAGE)
        return None
    from mcpkit.auth.client import OAuthLogin

    try:
        return OAuthLogin(
            scopes=scope or None,
            client_id=client_id,
            client_metadata_url=client_metadata_url,
            redirect_port=redirect_port,
            token_file=token_file,
            browser="print" if no_browser else "auto",
        )
    except ValueError as exc:
        raise CliError(str(exc), code=EXIT_USAGE) from exc


def _with_login_options(command: Callable[..., int]) -> Callable[..., int]:
    """``command`` with the login options on its command line too, handed to it as one
    ``login`` (an ``OAuthLogin``, or None without ``--auth``)."""
    signature = _inspect.signature(command, eval_str=True)
    kept = [p for p in signature.parameters.values() if p.name != "login"]
    added = [
        _inspect.Parameter(name, _inspect.Parameter.KEYWORD_ONLY, default=value, annotation=kind)
        for name, kind, value in _LOGIN_OPTIONS
    ]

    @functools.wraps(command)
    def with_login(**values: Any) -> int:
        options = {name: values.pop(name) for name, _, _ in _LOGIN_OPTIONS}
        return command(**values, login=_login(**options))

    parameters = [*kept, *added]
    with_login.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
    with_login.__annotations__ = {p.name: p.annotation for p in parameters} | {"return": int}
    return with_login


@app.command()
@_with_login_options
def inspect(
    target: Target, header: Headers = None, json_output: JsonOutput = False, login: Any = None
) -> int:
    """List a server's tools, resources, templates and prompts.

    Tables by default (each tool's parameters, * marking the required ones); --json prints
    the listing as JSON. --auth oauth logs in first (once: the tokens are kept)."""
    from mcpkit.cli._client import inspect_target

    return inspect_target(target, header or [], json_output, login)


@app.command()
@_with_login_options
def call(
    target: Target,
    tool: Annotated[
        str | None,
        typer.Argument(
            help="Tool name (a URI, containing ://, reads that resource); with --prompt: the prompt's arguments",
            show_default=False,
        ),
    ] = None,
    arguments: Annotated[str | None, typer.Argument(help="Arguments as a JSON object")] = None,
    resource: Annotated[
        str | None,
        typer.Option("--resource", help="Read this resource (a URI) instead of calling a tool"),
    ] = None,
    prompt: Annotated[
        str | None,
        typer.Option("--prompt", help="Get this prompt's messages instead of calling a tool"),
    ] = None,
    header: Headers = None,
    json_output: JsonOutput = False,
    interactive: Annotated[
        bool | None,
        typer.Option(
            "--input/--no-input",
            help="Answer the server's sampling and elicitation requests on the terminal, or refuse them (default: ask when stdin is a terminal)",
            show_default=False,
        ),
    ] = None,
    timeout: Annotated[
        float,
        typer.Option("--timeout", help="Seconds to wait for the tool's answer", min=0.001),
    ] = 60.0,
    login: Any = None,
) -> int:
    """Call one tool and print its result (exit code 1 when the tool fails); or read a
    resource (--resource URI, or a URI in place of the tool), or get a prompt (--prompt
    NAME, its arguments as a JSON object).

    Text content prints as text; --json prints the raw result. Progress and log messages
    show on stderr as they come; the server's sampling and elicitation requests are asked on
    the terminal, or refused (--no-input, or stdin not a terminal). --auth oauth logs in
    first (once: the tokens are kept)."""
    from mcpkit.cli._client import call_tool, get_prompt, read_resource

    what, name, text = _what_to_call(tool, arguments, resource, prompt)
    if what == "resource":
        return read_resource(target, name, header or [], json_output, timeout, login)
    if what == "prompt":
        return get_prompt(target, name, text, header or [], json_output, timeout, login)
    return call_tool(target, name, text, header or [], json_output, interactive, timeout, login)


def _what_to_call(
    tool: str | None, arguments: str | None, resource: str | None, prompt: str | None
) -> tuple[str, str, str | None]:
    """What ``mcpkit call`` was asked for: ("tool" | "resource" | "prompt", the name or URI,
    the arguments' JSON text); a usage error for a command line that asks for none or two."""
    if resource is not None and prompt is not None:
        raise CliError("--resource and --prompt go one at a time", code=EXIT_USAGE)
    if prompt is not None:
        # The positionals shift: after --prompt NAME, the first one is the arguments.
        if arguments is not None:
            raise CliError(
                "too many arguments for --prompt",
                'mcpkit call TARGET --prompt NAME \'{"arg": "value"}\'',
                code=EXIT_USAGE,
            )
        return "prompt", prompt, tool
    if resource is None and tool is not None and "://" in tool:
        resource, tool = tool, None
        if arguments is not None:
            raise CliError("a resource takes no arguments", code=EXIT_USAGE)
    if resource is not None:
        if tool is not None:
            raise CliError("--resource reads a resource: name no tool with it", code=EXIT_USAGE)
        return "resource", resource, None
    if tool is None:
        raise CliError(
            "nothing to call: name a tool, or give --resource URI or --prompt NAME",
            "see 'mcpkit call --help'",
            code=EXIT_USAGE,
        )
    return "tool", tool, arguments


@app.command()
def dev(
    ctx: typer.Context,
    target: Annotated[
        str, typer.Argument(help="FILE[:OBJECT] or MODULE:OBJECT holding the server")
    ],
    host: Annotated[str, typer.Option("--host", help="Address to bind")] = DEFAULTS["host"],
    port: Annotated[
        int, typer.Option("--port", help="Port to bind (0: a free one, kept across restarts)")
    ] = DEFAULTS["port"],
    endpoint: Annotated[
        str, typer.Option("--endpoint", help="Path of the MCP endpoint")
    ] = DEFAULTS["endpoint"],
    inspector: Annotated[
        bool,
        typer.Option(
            "--inspector/--no-inspector",
            help="Open the MCP Inspector (npx @modelcontextprotocol/inspector) against the server",
        ),
    ] = True,
    watch: Annotated[
        list[str] | None,
        typer.Option(
            "--watch",
            help="A folder (or file) whose *.py changes restart the server (repeatable; default: the server's folder)",
        ),
    ] = None,
    polling: Annotated[
        bool,
        typer.Option("--polling", help="Scan the files for changes instead of the OS's events"),
    ] = False,
    json_output: Annotated[
        bool, typer.Option("--json", help="Print events as JSON lines on stdout")
    ] = False,
) -> int:
    """Serve over HTTP, restarting on change, with the MCP Inspector.

    The server restarts when a *.py file under its folder (or --watch) changes, on the same
    port; the MCP Inspector (npx @modelcontextprotocol/inspector) opens against it."""
    from mcpkit.cli._dev import run_dev
    from mcpkit.cli._settings import with_env

    values = with_env(
        {"host": host, "port": port, "endpoint": endpoint}, _given_on_command_line(ctx)
    )
    return run_dev(
        target,
        inspector=inspector,
        watch=watch or [],
        json_output=json_output,
        polling=polling,
        **values,
    )


@app.command(context_settings={"allow_interspersed_args": False})
def proxy(
    target: Annotated[
        list[str],
        typer.Argument(help="A backend command line, a server URL, or an mcpServers JSON file"),
    ],
    transport: Annotated[
        Transport, typer.Option("--transport", "-t", help="How clients connect")
    ] = _DEFAULT_TRANSPORT,
    host: Annotated[str, typer.Option("--host", help="Address to bind")] = DEFAULTS["host"],
    port: Annotated[int, typer.Option("--port", help="Port to bind")] = DEFAULTS["port"],
    endpoint: Annotated[
        str, typer.Option("--endpoint", help="Path of the MCP endpoint")
    ] = DEFAULTS["endpoint"],
    stateless: Annotated[
        bool, typer.Option("--stateless/--no-stateless", help="Streamable HTTP without sessions")
    ] = DEFAULTS["stateless"],
    header: Headers = None,
    backend_transport: Annotated[
        str, typer.Option("--backend-transport", help="For a URL: auto, http, sse or ws")
    ] = "auto",
    json_output: Annotated[
        bool, typer.Option("--json", help="Announce the HTTP server as one JSON line on stdout")
    ] = False,
) -> int:
    """Serve another MCP server (a command over stdio, or a URL) over any transport; bearer
    auth and the other HTTP settings come from MCPKIT_* as for 'mcpkit run'."""
    from mcpkit.cli._proxy import run_proxy

    return run_proxy(
        target,
        headers=header or [],
        backend_transport=backend_transport,
        transport=transport.value,
        host=host,
        port=port,
        endpoint=endpoint,
        stateless=stateless,
        json_output=json_output,
    )


def _register_install_and_config() -> None:
    from mcpkit.cli._install import register

    register(app)  # mcpkit install CLIENT SERVER, mcpkit config SERVER


_register_install_and_config()


def run_typer(argv: list[str]) -> int:
    """Run the typer app on ``argv``; usage errors come back as a ``CliError`` (exit 2)."""
    command = typer.main.get_command(app)
    try:
        code: Any = command.main(args=argv, prog_name="mcpkit", standalone_mode=False)
    except typer.Abort:
        return EXIT_INTERRUPTED
    except ClickException as exc:
        if (
            type(exc).__name__ == "NoArgsIsHelpError"
        ):  # bare ``mcpkit``: the help, as typer shows it
            command.main(args=["--help"], prog_name="mcpkit", standalone_mode=False)
            return EXIT_USAGE
        ctx = getattr(exc, "ctx", None)
        where = ctx.command_path if ctx is not None else "mcpkit"
        raise CliError(
            exc.format_message(), f"see '{where} --help'", code=exc.exit_code or EXIT_USAGE
        ) from exc
    return code if isinstance(code, int) else 0

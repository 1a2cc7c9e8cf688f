"""The typer app: every command's options and ``--help``. Built only when the command line
is not a plain ``mcpkit run`` (see ``mcpkit.cli._run.parse_fast``)."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any

import typer

from mcpkit.cli._errors import EXIT_INTERRUPTED, EXIT_USAGE, CliError
from mcpkit.cli._run import DEFAULTS

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
    target: Annotated[
        str, typer.Argument(help="FILE[:OBJECT] holding an McpServerApp or @mcp_server class")
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
) -> int:
    """Run a server. The network transports share one HTTP server: Streamable HTTP at
    /mcp, legacy SSE at /mcp/sse, WebSocket at /mcp/ws."""
    from mcpkit.cli._run import run_server

    return run_server(
        target,
        transport.value,
        host,
        port,
        endpoint,
        stateless,
        redis_url,
        shutdown_grace=shutdown_grace,
    )


Target = Annotated[str, typer.Argument(help="FILE[:OBJECT] or a server URL (http://…, ws://…)")]
Headers = Annotated[
    list[str] | None,
    typer.Option(
        "--header",
        "-H",
        help="An HTTP header for a server URL, 'Name: value' (repeatable), e.g. -H 'Authorization: Bearer TOKEN'",
    ),
]


@app.command()
def inspect(target: Target, header: Headers = None) -> int:
    """List a server's tools, resources, templates and prompts as JSON."""
    from mcpkit.cli._client import inspect_target

    return inspect_target(target, header or [])


@app.command()
def call(
    target: Target,
    tool: Annotated[str, typer.Argument(help="Tool name")],
    arguments: Annotated[str | None, typer.Argument(help="Arguments as a JSON object")] = None,
    header: Headers = None,
) -> int:
    """Call one tool and print its result as JSON (exit code 1 when the tool fails)."""
    from mcpkit.cli._client import call_tool

    return call_tool(target, tool, arguments, header or [])


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

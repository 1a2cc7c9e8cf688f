"""The ``mcpkit`` command: run a server, call or inspect one.

``main`` keeps ``mcpkit run`` quick to start: a plain ``run`` command line is parsed in
``mcpkit.cli._run`` and served at once, and the typer app (``mcpkit.cli._commands``: every
command's options and ``--help``), whose import and build cost more than the rest of
start-up, is built only for anything else. Whatever fails is reported by
``mcpkit.cli._errors``: one ``error:`` line, maybe a ``hint:`` line, a non-zero exit code."""

from __future__ import annotations

import sys
from typing import Any


def main(argv: list[str] | None = None) -> None:
    """The ``mcpkit`` command on ``argv`` (default: ``sys.argv[1:]``); exits with its code."""
    from mcpkit.cli import _errors
    from mcpkit.cli._errors import debug_requested, json_requested, report

    args = sys.argv[1:] if argv is None else list(argv)
    debug = _errors.debugging = debug_requested(args)
    try:
        code = _dispatch(args)
    except SystemExit:
        raise
    except BaseException as exc:  # KeyboardInterrupt included: 130, quietly
        code = report(exc, debug=debug, as_json=json_requested(args))
    raise SystemExit(code)


def _dispatch(args: list[str]) -> int:
    from mcpkit.cli._run import parse_fast, run_server
    from mcpkit.cli._run_options import GLOBAL_FLAGS

    leading = 0
    while leading < len(args) and args[leading] in (*GLOBAL_FLAGS, "--version"):
        if args[leading] == "--version":
            from mcpkit import __version__

            sys.stdout.write(f"mcpkit {__version__}\n")
            return 0
        leading += 1
    fast = parse_fast(args)
    if fast is not None:
        return run_server(**fast)
    from mcpkit.cli._commands import run_typer

    return run_typer(args)


def __getattr__(name: str) -> Any:
    if name == "app":  # the typer app, for embedding or testing
        from mcpkit.cli._commands import app

        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

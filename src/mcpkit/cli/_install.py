"""``mcpkit install CLIENT SERVER``, ``mcpkit uninstall CLIENT NAME`` and ``mcpkit config
SERVER``: put a server in an AI client's own configuration file (or take it out), or print
the entry to paste by hand.

The command the entry runs (one rule):

- by default, this very interpreter, by its absolute path: ``<sys.executable> -m mcpkit run
  /abs/path/server.py[:OBJECT]``. It is the interpreter that just loaded the server to check
  it, so it has mcpkit and the server's imports; nothing depends on the client's PATH,
  working directory or an activated virtual environment. ``--python PATH`` names another
  interpreter instead (it must import mcpkit).
- with ``--with PKG`` (repeatable), uv, by its absolute path: ``<uv> run --no-project --with
  mcpkit --with PKG ... mcpkit run /abs/path/server.py[:OBJECT]``, so the packages need not
  be installed anywhere (``--python`` is then passed to uv, which takes a version too). A
  ``--with`` naming mcpkit itself (``--with 'mcpkit==0.1.0'``) replaces the plain ``mcpkit``;
  an mcpkit installed from a wheel, a folder or a repository is taken from there (the
  package index may not have it). uv is run once first, from ``/``, to check that it can
  make that environment.

A ``MODULE:OBJECT`` target is run from the module's file: ``mcpkit run`` loads files.

Before anything is written the server is loaded (``mcpkit.cli._loader``) with the entry's
environment, which also gives the entry's default name: the server's own name, else the
file's stem. An existing configuration file is merged into (other servers and other keys
kept, an entry of the same name replaced), written with the indentation it had (2 spaces
for a new file) and backed up first as ``FILE.YYYYMMDD-HHMMSS.bak`` beside it; a file that
is not a JSON object is left alone. ``--dry-run`` prints the change (a unified diff, or the
whole file when there is none yet) and writes nothing. Notes go to stderr; stdout carries
only ``config``'s JSON and ``--dry-run``'s change."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from mcpkit.cli._client_configs import CLIENTS, ClientSpec, config_path, server_entry
from mcpkit.cli._config_edit import apply_change, render_change
from mcpkit.cli._dotenv import parse_env_assignments, read_env_file
from mcpkit.cli._errors import EXIT_USAGE, CliError
from mcpkit.cli._install_target import ResolvedTarget, resolve_target
from mcpkit.cli._loader import split_target
from mcpkit.cli._toml_edit import plan_client_change

#: The name ``McpServerApp`` gives a server that names none (``mcpkit.server._app``); such a
#: server's entry is named after its file instead.
UNNAMED_SERVER = "mcpkit-server"

_NAMES_MCPKIT = re.compile(r"mcpkit(?![\w.-])", re.IGNORECASE)


def _note(text: str) -> None:
    sys.stderr.write(f"mcpkit: {text}\n")
    sys.stderr.flush()


# --------------------------------------------------------------------------- environment


@contextlib.contextmanager
def _environment(env: Mapping[str, str]) -> Iterator[None]:
    saved = {key: os.environ.get(key) for key in env}
    os.environ.update(env)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


# --------------------------------------------------------------------------- the server


# --------------------------------------------------------------------------- the command


def load_server_name(
    resolved: ResolvedTarget, env: Mapping[str, str], *, elsewhere: bool
) -> str | None:
    """Load the server as ``mcpkit run`` will (with the entry's environment); its own name,
    or None when it names none. ``elsewhere``: the server runs in another environment
    (``--with``, ``--python``), so a module missing here is only a warning."""
    from mcpkit.cli._loader import UserCodeError, load_app

    try:
        with _environment(env), contextlib.redirect_stdout(sys.stderr):
            app = load_app(resolved.check_target or resolved.run_target)
    except UserCodeError as exc:
        error = exc.error
        if elsewhere and isinstance(error, ModuleNotFoundError):
            _note(
                f"could not check the server here ({error}); it will run with the packages"
                " of --with / --python"
            )
            return None
        if resolved.module and isinstance(error, ImportError) and "relative import" in str(error):
            file_part, object_name = split_target(resolved.run_target)
            raise CliError(
                f"{resolved.module} uses relative imports, and mcpkit run loads the server"
                f" from its file ({file_part})",
                f"write a small file holding 'from {resolved.module} import"
                f" {object_name or 'app'}' and install that file",
            ) from exc
        raise
    name = app.name
    return None if name == UNNAMED_SERVER else name


def launch_command(
    run_target: str, *, python: str | None, with_: list[str]
) -> tuple[str, list[str]]:
    """The entry's ``command`` and ``args`` (see the module's docstring for the rule)."""
    if with_:
        uv = shutil.which("uv")
        if uv is None:
            raise CliError(
                "--with needs uv, which is not on PATH",
                "install uv (https://docs.astral.sh/uv/), or install the packages for"
                f" {sys.executable} and leave out --with",
            )
        args = ["run", "--no-project"]
        if not any(_NAMES_MCPKIT.match(spec.strip()) for spec in with_):
            args += mcpkit_source()
        for spec in with_:
            args += ["--with", spec]
        if python:
            args += ["--python", python]
        return os.path.abspath(uv), [*args, "mcpkit", "run", run_target]
    if python is None:
        if not sys.executable:
            raise CliError("cannot tell which Python runs mcpkit", "name one with --python PATH")
        interpreter = os.path.abspath(sys.executable)
    else:
        found = shutil.which(python) if os.path.dirname(python) == "" else python
        if found is None or not os.path.isfile(found):
            raise CliError(f"no such Python: {python}", "--python takes an interpreter's path")
        interpreter = os.path.abspath(found)
    return interpreter, ["-m", "mcpkit", "run", run_target]


def client_spec(client: str, scope: str) -> ClientSpec:
    """The client's entry in ``CLIENTS``; a usage error for a scope it has no file for."""
    spec = CLIENTS[client]
    if scope not in spec.scopes:
        raise CliError(
            f"{spec.title} has no {scope} configuration",
            f"it reads one file: leave out --scope {scope}",
            code=EXIT_USAGE,
        )
    return spec


def mcpkit_source() -> list[str]:
    """The ``uv run`` options bringing this mcpkit: from the wheel, folder or repository it
    was installed from (PEP 610's ``direct_url.json``), which the package index may not
    have; else ``mcpkit`` from the index."""
    from importlib import metadata
    from urllib.parse import unquote, urlparse
    from urllib.request import url2pathname

    try:
        text = metadata.distribution("mcpkit").read_text("direct_url.json")
        origin = json.loads(text) if text else None
    except (metadata.PackageNotFoundError, ValueError):
        origin = None
    if not isinstance(origin, dict) or not isinstance(origin.get("url"), str):
        return ["--with", "mcpkit"]
    url = origin["url"]
    vcs = origin.get("vcs_info")
    if isinstance(vcs, dict) and vcs.get("vcs") and vcs.get("commit_id"):
        return ["--with", f"mcpkit @ {vcs['vcs']}+{url}@{vcs['commit_id']}"]
    parsed = urlparse(url)
    if parsed.scheme != "file":
        return ["--with", f"mcpkit @ {url}"]
    path = url2pathname(unquote(parsed.path))
    if not os.path.exists(path):  # a wheel built in a folder since cleaned
        return ["--with", "mcpkit"]
    dir_info = origin.get("dir_info")
    editable = isinstance(dir_info, dict) and dir_info.get("editable") is True
    return ["--with-editable" if editable else "--with", path]


def check_interpreter(python: str, env: Mapping[str, str], *, uv: list[str] | None = None) -> None:
    """``python`` imports mcpkit when started from elsewhere, as a client starts it; with
    ``uv`` (``uv run`` and its options), the interpreter of that environment."""
    child_env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    child_env.update(env)
    try:
        done = subprocess.run(
            [*(uv or []), python, "-c", "import mcpkit"],
            cwd=os.path.abspath(os.sep),
            env=child_env,
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            # uv may download the packages the first time (the client then finds them cached)
            timeout=600 if uv else 60,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise CliError(f"cannot start {(uv or [python])[0]}: {exc}") from exc
    if uv and done.returncode != 0:
        said = [line.strip() for line in done.stderr.splitlines() if line.strip()]
        raise CliError(
            f"uv cannot make the server's environment: {' '.join(said[-2:]) or 'no reason given'}",
            "check the --with packages; for an mcpkit the package index lacks, name it:"
            " --with /path/to/mcpkit.whl (or --with 'mcpkit @ URL')",
        )
    if done.returncode != 0:
        raise CliError(
            f"{python} cannot import mcpkit when started outside this folder",
            f"install mcpkit for it ({shlex.quote(python)} -m pip install mcpkit), or name"
            " another interpreter with --python",
        )


@dataclass(frozen=True, slots=True)
class Server:
    """What an entry holds: its name, the command and arguments, the environment."""

    name: str
    command: str
    args: list[str]
    env: dict[str, str]


def prepare_server(
    target: str,
    *,
    name: str | None,
    env_values: list[str],
    env_file: str | None,
    with_: list[str],
    python: str | None,
    cwd: Path,
) -> Server:
    """Check everything the entry needs (the environment, the interpreter or uv, the
    server itself) and build it."""
    if name is not None and not name.strip():
        raise CliError(
            "--name is empty", "give the entry a name, e.g. --name weather", code=EXIT_USAGE
        )
    env = read_env_file(env_file) if env_file else {}
    env.update(parse_env_assignments(env_values))
    resolved = resolve_target(target, cwd)
    command, args = launch_command(resolved.run_target, python=python, with_=with_)
    if with_:  # the entry's uv options (args less "mcpkit run TARGET"), running python
        check_interpreter("python", env, uv=[command, *args[:-3]])
    else:
        check_interpreter(command, env)
    elsewhere = bool(with_) or (python is not None and command != os.path.abspath(sys.executable))
    server_name = load_server_name(resolved, env, elsewhere=elsewhere)
    if resolved.local_package:
        top = resolved.local_package
        _note(
            f"{top} is found from this folder only; the client starts the server elsewhere,"
            f" so the server's own imports of {top} may fail there: install the project"
            " (pip install -e .) to be sure"
        )
    return Server((name or "").strip() or server_name or resolved.stem, command, args, env)


# --------------------------------------------------------------------------- the file


# --------------------------------------------------------------------------- the two commands


def _by_hand(target: str, client: str | None, server: Server) -> str:
    words = ["mcpkit", "config", target, "--name", server.name]
    if client:
        words += ["--client", client]
    return " ".join(shlex.quote(word) for word in words)


def install_server(
    client: str,
    target: str,
    *,
    scope: str = "user",
    name: str | None = None,
    env_values: list[str] | None = None,
    env_file: str | None = None,
    with_: list[str] | None = None,
    python: str | None = None,
    dry_run: bool = False,
    json_output: bool = False,
) -> int:
    spec = client_spec(client, scope)
    cwd = Path.cwd()
    server = prepare_server(
        target,
        name=name,
        env_values=env_values or [],
        env_file=env_file,
        with_=with_ or [],
        python=python,
        cwd=cwd,
    )
    path = Path(
        config_path(
            client, scope, system=sys.platform, env=os.environ, home=Path.home(), project=cwd
        )
    )
    entry = server_entry(client, server.command, server.args, server.env)
    change = plan_client_change(
        spec, path, server.name, entry, by_hand=_by_hand(target, client, server)
    )
    summary: dict[str, Any] = {"client": client, "name": server.name, "path": str(path)}
    if change.new_text == change.old_text:
        _note(f"{path} already holds this entry {server.name!r}; nothing was written")
        if json_output:
            _print_summary({**summary, "action": "unchanged"})
        return 0
    if dry_run and json_output:
        _print_summary({**summary, "action": "dry-run", "change": render_change(change, str(path))})
        return 0
    if dry_run:
        sys.stdout.write(render_change(change, str(path)))
        sys.stdout.flush()
        what = "replace the entry" if change.replaced else "add"
        _note(f"dry run: would {what} {server.name!r} in {path}; nothing was written")
        return 0
    backup = apply_change(change)
    if change.replaced:
        _note(f"replaced the existing entry {server.name!r} in {path}")
        dropped = _dropped_env(change.previous, server.env)
        if dropped:
            _note(
                f"the entry it replaced also set {', '.join(dropped)} in the server's"
                " environment; pass --env KEY=VALUE (or --env-file) again to keep them"
            )
    else:
        _note(f"added {server.name!r} to {spec.title}: {path}")
    if backup is not None:
        _note(f"the previous file is kept as {backup}")
    _note(f"restart {spec.title} (or reload its MCP servers) to start it")
    if json_output:
        action = "replaced" if change.replaced else "added"
        _print_summary(
            {**summary, "action": action, "backup": str(backup) if backup is not None else None}
        )
    return 0


def _dropped_env(previous: Any, env: Mapping[str, str]) -> list[str]:
    """The variables the replaced entry set that the new one does not (a re-install
    without repeating ``--env`` would otherwise lose an API key without a word)."""
    old_env = previous.get("env") if isinstance(previous, dict) else None
    if not isinstance(old_env, dict):
        return []
    return [key for key in old_env if key not in env]


def uninstall_server(
    client: str,
    name: str,
    *,
    scope: str = "user",
    dry_run: bool = False,
    json_output: bool = False,
) -> int:
    """Remove the entry ``name`` from the client's file (backed up first, like install)."""
    spec = client_spec(client, scope)
    path = Path(
        config_path(
            client, scope, system=sys.platform, env=os.environ, home=Path.home(), project=Path.cwd()
        )
    )
    if not path.exists():
        raise CliError(f"{path} does not exist", f"nothing is installed in {spec.title} ({scope})")
    change = plan_client_change(spec, path, name, None, by_hand="")
    summary: dict[str, Any] = {"client": client, "name": name, "path": str(path)}
    if dry_run:
        if json_output:
            _print_summary(
                {**summary, "action": "dry-run", "change": render_change(change, str(path))}
            )
        else:
            sys.stdout.write(render_change(change, str(path)))
            sys.stdout.flush()
            _note(f"dry run: would remove {name!r} from {path}; nothing was written")
        return 0
    backup = apply_change(change)
    _note(f"removed {name!r} from {spec.title}: {path}")
    _note(f"the previous file is kept as {backup}")
    _note(f"restart {spec.title} (or reload its MCP servers) to stop it")
    if json_output:
        _print_summary({**summary, "action": "removed", "backup": str(backup)})
    return 0


def _print_summary(summary: dict[str, Any]) -> None:
    """``install --json``: what was done, one JSON object on stdout."""
    sys.stdout.write(json.dumps(summary, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def print_config(
    target: str,
    *,
    client: str | None = None,
    name: str | None = None,
    env_values: list[str] | None = None,
    env_file: str | None = None,
    with_: list[str] | None = None,
    python: str | None = None,
) -> int:
    server = prepare_server(
        target,
        name=name,
        env_values=env_values or [],
        env_file=env_file,
        with_=with_ or [],
        python=python,
        cwd=Path.cwd(),
    )
    key = CLIENTS[client].servers_key if client else "mcpServers"
    entry = server_entry(client, server.command, server.args, server.env)
    if client is not None and CLIENTS[client].toml:
        from mcpkit.cli._toml_edit import table_text

        sys.stdout.write(table_text(key, server.name, entry))
        sys.stdout.flush()
        return 0
    sys.stdout.write(json.dumps({key: {server.name: entry}}, indent=2, ensure_ascii=False) + "\n")
    sys.stdout.flush()
    return 0


# --------------------------------------------------------------------------- typer


class Client(StrEnum):
    claude_desktop = "claude-desktop"
    claude_code = "claude-code"
    cursor = "cursor"
    vscode = "vscode"
    gemini_cli = "gemini-cli"
    codex = "codex"


class Scope(StrEnum):
    user = "user"
    project = "project"


ServerTarget = Annotated[
    str, typer.Argument(help="The server: FILE[:OBJECT] (as for mcpkit run) or MODULE:OBJECT")
]
NameOption = Annotated[
    str | None,
    typer.Option(
        "--name", "-n", help="The entry's name (default: the server's name, else the file's stem)"
    ),
]
EnvOption = Annotated[
    list[str] | None,
    typer.Option(
        "--env",
        "-e",
        help="KEY=VALUE for the server's environment (repeatable; wins over --env-file)",
    ),
]
EnvFileOption = Annotated[
    str | None,
    typer.Option(
        "--env-file", help="A dotenv file (KEY=VALUE lines) whose variables go into the entry's env"
    ),
]
WithOption = Annotated[
    list[str] | None,
    typer.Option(
        "--with",
        help="Run the server with uv, adding this package (repeatable), e.g. --with pandas",
    ),
]
DryRunOption = Annotated[
    bool, typer.Option("--dry-run", help="Print the change to the file and write nothing")
]
JsonSummaryOption = Annotated[
    bool,
    typer.Option("--json", help="Print what was done as JSON (client, name, path, action)"),
]
PythonOption = Annotated[
    str | None,
    typer.Option(
        "--python",
        help="The interpreter that runs the server (default: this one); with --with, passed to uv",
    ),
]


def install(
    client: Annotated[Client, typer.Argument(help="The AI client whose configuration to write")],
    target: ServerTarget,
    name: NameOption = None,
    env: EnvOption = None,
    env_file: EnvFileOption = None,
    with_: WithOption = None,
    python: PythonOption = None,
    scope: Annotated[
        Scope,
        typer.Option(
            "--scope",
            help="user: for you everywhere; project: the folder you are in (not Claude Desktop or Codex)",
        ),
    ] = Scope.user,
    dry_run: DryRunOption = False,
    json_output: JsonSummaryOption = False,
) -> int:
    """Add a server to an AI client's configuration file (merged: other entries are kept,
    the old file backed up)."""
    return install_server(
        client.value,
        target,
        scope=scope.value,
        name=name,
        env_values=env,
        env_file=env_file,
        with_=with_,
        python=python,
        dry_run=dry_run,
        json_output=json_output,
    )


def config(
    target: ServerTarget,
    name: NameOption = None,
    env: EnvOption = None,
    env_file: EnvFileOption = None,
    with_: WithOption = None,
    python: PythonOption = None,
    client: Annotated[
        Client | None,
        typer.Option(
            "--client",
            help="Print in this client's shape (VS Code: servers; Codex: a TOML table; default: the common mcpServers)",
        ),
    ] = None,
    json_output: Annotated[
        bool, typer.Option("--json", help="Accepted for symmetry: the entry is always JSON")
    ] = False,
) -> int:
    """Print a server's entry as JSON ({"mcpServers": {NAME: ENTRY}}) to paste into any client."""
    del json_output  # the entry is JSON either way
    return print_config(
        target,
        client=client.value if client else None,
        name=name,
        env_values=env,
        env_file=env_file,
        with_=with_,
        python=python,
    )


def uninstall(
    client: Annotated[Client, typer.Argument(help="The AI client whose configuration to change")],
    name: Annotated[str, typer.Argument(help="The entry's name, as install named it")],
    scope: Annotated[
        Scope,
        typer.Option("--scope", help="user or project: the file install wrote"),
    ] = Scope.user,
    dry_run: DryRunOption = False,
    json_output: JsonSummaryOption = False,
) -> int:
    """Remove a server from an AI client's configuration file (the old file backed up)."""
    return uninstall_server(
        client.value, name, scope=scope.value, dry_run=dry_run, json_output=json_output
    )


def register(app: typer.Typer) -> None:
    """Add ``install``, ``uninstall`` and ``config`` to the ``mcpkit`` typer app."""
    app.command("install")(install)
    app.command("uninstall")(uninstall)
    app.command("config")(config)

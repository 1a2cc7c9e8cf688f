"""``MCPKIT_*`` settings: every options field and ``mcpkit run`` flag has one, read with its
type (int, float, bool, list, str, object, choice), a flag wins over it, a bad value is one
error line naming the variable, an unknown one a did-you-mean warning; docs/settings.md holds
the table generated from the code."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import typer

from mcpkit.cli._commands import app as typer_app
from mcpkit.cli._commands import run_typer
from mcpkit.cli._errors import CliError
from mcpkit.cli._program import as_the_program, freeze_startup_objects
from mcpkit.cli._run_options import PROGRAM_DEFAULTS
from mcpkit.cli._settings import (
    AUTH_SETTINGS,
    BY_FIELD,
    SETTINGS,
    Setting,
    server_options,
    settings_table,
    unknown_variable_warnings,
)
from mcpkit.transports.http import StreamableHttpServerOptions, TransportSecuritySettings
from tests.environment import child_environment

ROOT = Path(__file__).resolve().parents[2]
SERVER = """
from mcpkit import McpServerApp, mcp_tool

@mcp_tool
def echo(text: str) -> str:
    return text

app = McpServerApp(echo, name="settings-test")
"""
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"},
    },
}
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@pytest.fixture(scope="module")
def server_file(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("settings") / "echo.py"
    path.write_text(SERVER)
    return str(path)


def clean_env(**values: str) -> dict[str, str]:
    return child_environment(**values)


@pytest.fixture
def no_mcpkit_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("MCPKIT_"):
            monkeypatch.delenv(name)


class Served:
    def __init__(self, proc: subprocess.Popen[str], banner: dict[str, str]) -> None:
        self.proc = proc
        self.banner = banner
        self.url = banner["url"]


@contextlib.contextmanager
def serve(server_file: str, *args: str, **env: str) -> Iterator[Served]:
    """``mcpkit run`` with ``env``; the banner it prints as JSON (MCPKIT_JSON=1)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "mcpkit", "run", server_file, *args],
        cwd=ROOT,
        env=clean_env(MCPKIT_JSON="1", **env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline()  # type: ignore[union-attr]
        assert line, proc.stderr.read()  # type: ignore[union-attr]
        yield Served(proc, json.loads(line))
    finally:
        proc.terminate()
        proc.communicate(timeout=20)


# --------------------------------------------------------------------------- the table


def test_every_options_field_and_run_flag_has_a_documented_setting():
    option_fields = {f.name for f in dataclasses.fields(StreamableHttpServerOptions)}
    security_fields = {f.name for f in dataclasses.fields(TransportSecuritySettings)}
    command = typer.main.get_command(typer_app).commands["run"]  # type: ignore[attr-defined]
    flags = {param.name for param in command.params if param.param_type_name == "option"}
    auth_fields = {name for name, _, _ in AUTH_SETTINGS}
    expected = (option_fields - {"transport_security"}) | security_fields | flags | auth_fields
    assert set(BY_FIELD) == expected | set(PROGRAM_DEFAULTS)
    for setting in SETTINGS:
        assert setting.description, f"{setting.field} has no description (no row in the table)"
        assert setting.env.startswith("MCPKIT_")
    assert len({setting.env for setting in SETTINGS}) == len(SETTINGS)


def test_docs_settings_holds_the_generated_table():
    text = (ROOT / "docs" / "settings.md").read_text()
    assert settings_table() in text, "docs/settings.md is stale: paste settings_table() into it"


def test_kinds_come_from_the_type_hints():
    kinds = {name: (BY_FIELD[name].kind, BY_FIELD[name].optional) for name in BY_FIELD}
    assert kinds["port"] == ("int", False)
    assert kinds["session_idle_timeout"] == ("float", False)
    assert kinds["body_read_timeout"] == ("float", True)
    assert kinds["stateless"] == ("bool", False)
    assert kinds["enable_dns_rebinding_protection"] == ("bool", True)
    assert kinds["allowed_hosts"] == ("list", False)
    assert kinds["server_name"] == ("str", True)
    assert kinds["event_store"] == ("object", False)
    assert kinds["transport"] == ("choice", False)


# --------------------------------------------------------------------------- each type


def test_each_type_is_read_into_the_options():
    options = server_options(
        {
            "MCPKIT_MAX_SESSIONS": "7",
            "MCPKIT_MAX_BODY_BYTES": "4_096",
            "MCPKIT_RESUME_GRACE": "2.5",
            "MCPKIT_BODY_READ_TIMEOUT": "none",
            "MCPKIT_ENABLE_WEBSOCKET": "off",
            "MCPKIT_DNS_REBINDING_PROTECTION": "yes",
            "MCPKIT_ALLOWED_HOSTS": " a.example , b.example:8080,, ",
            "MCPKIT_SERVER_NAME": "renamed",
            "MCPKIT_WEBSOCKET_GUARD": "os.path:isabs",
            "MCPKIT_HOST": "",  # empty: unset
        },
        port=9,
    )
    assert options.max_sessions == 7 and options.max_body_bytes == 4096
    assert options.resume_grace == 2.5 and options.body_read_timeout is None
    assert options.enable_websocket is False
    assert options.transport_security.enable_dns_rebinding_protection is True
    assert options.transport_security.allowed_hosts == ("a.example", "b.example:8080")
    assert options.server_name == "renamed"
    assert options.websocket_guard is os.path.isabs
    assert options.host == "127.0.0.1" and options.port == 9


def test_the_freeze_is_a_setting_of_the_commands_alone(monkeypatch):
    """No option of the library's freezes the collector; ``mcpkit run`` and ``mcpkit proxy``
    are the program and do, unless ``MCPKIT_FREEZE_GC_AT_STARTUP`` says no."""
    assert "freeze_gc_at_startup" not in {f.name for f in dataclasses.fields(server_options({}))}
    setting = BY_FIELD["freeze_gc_at_startup"]
    assert (setting.group, setting.env, setting.default) == (
        "run",
        "MCPKIT_FREEZE_GC_AT_STARTUP",
        True,
    )
    monkeypatch.delenv("MCPKIT_FREEZE_GC_AT_STARTUP", raising=False)
    assert as_the_program().after_start is freeze_startup_objects
    monkeypatch.setenv("MCPKIT_FREEZE_GC_AT_STARTUP", "0")
    assert as_the_program().after_start is None
    monkeypatch.setenv("MCPKIT_FREEZE_GC_AT_STARTUP", "sometimes")
    with pytest.raises(CliError, match="MCPKIT_FREEZE_GC_AT_STARTUP"):
        as_the_program()


def test_a_list_of_objects_is_read_item_by_item():
    guards = Setting("guards", "MCPKIT_GUARDS", "options", "objects", False, (), "Guards")
    assert guards.parse("os.path:isabs, os.path:isdir") == (os.path.isabs, os.path.isdir)
    with pytest.raises(CliError) as caught:
        guards.parse("os.path:isabs,os.path:nope")
    assert "MCPKIT_GUARDS" in caught.value.message and "no attribute 'nope'" in caught.value.message


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("MCPKIT_PORT", "eighty", "MCPKIT_PORT='eighty': not an integer"),
        ("MCPKIT_PORT", "70000", "MCPKIT_PORT='70000': must be at most 65535"),
        ("MCPKIT_MAX_SESSIONS", "0", "MCPKIT_MAX_SESSIONS='0': must be at least 1"),
        ("MCPKIT_RESUME_GRACE", "soon", "MCPKIT_RESUME_GRACE='soon': not a number"),
        ("MCPKIT_RESUME_GRACE", "nan", "not a finite number"),
        ("MCPKIT_SSE_WRITE_TIMEOUT", "-1", "must be at least 0"),
        ("MCPKIT_STATELESS", "maybe", "MCPKIT_STATELESS='maybe': not a boolean"),
        ("MCPKIT_MAX_SESSIONS", "none", "not an integer"),  # not optional
        ("MCPKIT_EVENT_STORE", "store", "MCPKIT_EVENT_STORE='store': not module:attribute"),
        ("MCPKIT_EVENT_STORE", "no_such_module_x:store", "cannot import no_such_module_x"),
        ("MCPKIT_EVENT_STORE", "os:no_such_thing", "os has no attribute 'no_such_thing'"),
    ],
)
def test_bad_values_name_the_variable(name, value, expected):
    with pytest.raises(CliError) as caught:
        server_options({name: value})
    assert expected in caught.value.message
    assert caught.value.code == 2
    assert caught.value.hint is not None and caught.value.hint.startswith(f"{name} takes ")


# --------------------------------------------------------------------------- mcpkit run


def test_str_int_and_choice_settings_reach_a_running_server(server_file):
    with serve(
        server_file, MCPKIT_TRANSPORT="http", MCPKIT_PORT="0", MCPKIT_ENDPOINT="/from-env"
    ) as served:
        assert served.banner["server"] == "settings-test"
        assert served.url.startswith("http://127.0.0.1:") and served.url.endswith("/from-env")
        answer = httpx.post(served.url, json=INITIALIZE, headers=HEADERS, timeout=10)
        assert answer.status_code == 200 and "mcp-session-id" in answer.headers


def test_bool_and_int_options_fields_change_the_servers_behaviour(server_file):
    with serve(
        server_file,
        "-t",
        "http",
        "--port",
        "0",
        MCPKIT_STATELESS="true",
        MCPKIT_MAX_BODY_BYTES="300",
    ) as served:
        answer = httpx.post(served.url, json=INITIALIZE, headers=HEADERS, timeout=10)
        assert answer.status_code == 200 and "mcp-session-id" not in answer.headers  # stateless
        big = dict(INITIALIZE, params={**INITIALIZE["params"], "padding": "x" * 400})
        assert httpx.post(served.url, json=big, headers=HEADERS, timeout=10).status_code == 413


def test_a_flag_wins_over_the_variable(server_file):
    with serve(
        server_file,
        "--endpoint",
        "/from-flag",
        "-t",
        "http",
        MCPKIT_ENDPOINT="/env",
        MCPKIT_PORT="0",
    ) as served:
        assert served.url.endswith("/from-flag")


def test_a_bad_value_is_one_error_line_and_exit_2(server_file):
    done = subprocess.run(
        [sys.executable, "-m", "mcpkit", "run", server_file, "-t", "http"],
        env=clean_env(MCPKIT_SHUTDOWN_GRACE="later"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "error: MCPKIT_SHUTDOWN_GRACE='later': not a number",
        "hint: MCPKIT_SHUTDOWN_GRACE takes a number (or none), e.g. MCPKIT_SHUTDOWN_GRACE=2.5;"
        " unset it for the default",
    ]


def test_the_typer_command_reads_the_environment_too(server_file, monkeypatch, no_mcpkit_env):
    """The long way (typer, not the short parse): the variable applies, a flag wins."""
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        monkeypatch.setenv("MCPKIT_PORT", str(port))
        with pytest.raises(CliError) as caught:
            run_typer(["run", server_file, "--transport", "http"])
        assert caught.value.message == f"port {port} on 127.0.0.1 is in use"
        with pytest.raises(CliError) as caught:
            run_typer(["run", server_file, "--transport", "http", "--port", "70000"])
        assert caught.value.message == "port 70000 is out of range"
    monkeypatch.setenv("MCPKIT_TRANSPORT", "pigeon")
    with pytest.raises(CliError) as caught:
        run_typer(["run", server_file])
    assert "MCPKIT_TRANSPORT='pigeon': not one of stdio, http, sse, ws" in caught.value.message


# --------------------------------------------------------------------------- unknown variables


def mcpkit_without_stdin(*args: str, **variables: str) -> subprocess.CompletedProcess[str]:
    """``mcpkit ARGS`` with stdin closed (a stdio server then stops at once)."""
    return subprocess.run(
        [sys.executable, "-m", "mcpkit", *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        env=clean_env(**variables),
    )


def test_run_warns_of_a_typo_with_the_setting_it_is_close_to(server_file):
    done = mcpkit_without_stdin("run", server_file, MCPKIT_PROT="8000")
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [
        "mcpkit: warning: MCPKIT_PROT is not a setting; did you mean MCPKIT_PORT?"
    ]


def test_a_name_close_to_none_points_at_the_list(server_file):
    done = mcpkit_without_stdin("run", server_file, MCPKIT_NOTHING_LIKE_IT="1", MCPKIT_STATELES="1")
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [
        "mcpkit: warning: MCPKIT_NOTHING_LIKE_IT is not a setting (docs/settings.md lists them)",
        "mcpkit: warning: MCPKIT_STATELES is not a setting; did you mean MCPKIT_STATELESS?",
    ]


def test_the_settings_and_the_other_variables_read_are_not_warned_of(server_file):
    done = mcpkit_without_stdin(
        "run",
        server_file,
        MCPKIT_STATELESS="1",
        MCPKIT_DEBUG="0",
        MCPKIT_OAUTH_BROWSER="print",
        MCPKIT_FREEZE_GC_AT_STARTUP="1",
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert unknown_variable_warnings([setting.env for setting in SETTINGS]) == []


def test_the_warning_comes_before_the_server_serves(server_file):
    process = subprocess.Popen(
        [sys.executable, "-m", "mcpkit", "run", server_file, "-t", "http", "--port", "0"],
        stdin=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=clean_env(MCPKIT_HSOT="127.0.0.1"),
    )
    try:
        assert process.stderr is not None
        first, second = process.stderr.readline(), process.stderr.readline()
    finally:
        process.terminate()
        process.wait(15)
    assert first == "mcpkit: warning: MCPKIT_HSOT is not a setting; did you mean MCPKIT_HOST?\n"
    assert second.startswith("mcpkit: serving settings-test on http://127.0.0.1:")


def test_proxy_warns_too(server_file, tmp_path: Path):
    """``mcpkit proxy`` of a backend that is no mcpkit (so the warning is the proxy's own)."""
    backend = tmp_path / "backend.py"
    backend.write_text(
        "import os\n"
        "for name in [n for n in os.environ if n.startswith('MCPKIT_')]:\n"
        "    del os.environ[name]\n"
        "import runpy, sys\n"
        f"sys.argv = ['mcpkit', 'run', {server_file!r}]\n"
        "runpy.run_module('mcpkit', run_name='__main__')\n"
    )
    done = mcpkit_without_stdin("proxy", "--", sys.executable, str(backend), MCPKIT_ENDPONT="/x")
    assert done.stderr.splitlines()[0] == (
        "mcpkit: warning: MCPKIT_ENDPONT is not a setting; did you mean MCPKIT_ENDPOINT?"
    )
    assert done.stderr.count("MCPKIT_ENDPONT") == 1


def test_a_start_without_mcpkit_variables_does_not_import_the_settings(server_file):
    """The check costs one pass over the environment: the settings (typed from the options
    classes) are imported only when some ``MCPKIT_*`` variable is set."""
    probe = (
        "import sys, runpy\n"
        f"sys.argv = ['mcpkit', 'run', {server_file!r}]\n"
        "try:\n"
        "    runpy.run_module('mcpkit', run_name='__main__')\n"
        "except SystemExit:\n"
        "    pass\n"
        "print('mcpkit.cli._settings' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        env=clean_env(),
    )
    assert done.stdout.splitlines()[-1] == "False", done.stderr

"""``mcpkit install`` and ``mcpkit config``: each client's file in its place on each system,
merged (other entries and keys kept, a backup beside it), a broken file refused,
``--dry-run`` writing nothing, dotenv files, and the written command run as a client would
run it: initialize and tools/list over stdio."""

from __future__ import annotations

import json
import os
import queue
import stat
import subprocess
import sys
import textwrap
import threading
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

import pytest

from mcpkit.cli import _install, main
from mcpkit.cli._client_configs import CLIENTS, config_path
from mcpkit.cli._dotenv import parse_dotenv
from mcpkit.cli._errors import CliError
from mcpkit.cli._loader import split_target

SERVER = '''
import os

from mcpkit import McpServerApp, mcp_server, mcp_tool


@mcp_server(name="weather")
class Weather:
    @mcp_tool()
    def forecast(self, city: str) -> str:
        """The forecast for a city."""
        return f"{os.environ.get('WEATHER_WORD', 'sunny')} in {city}"


app = McpServerApp(Weather)
'''

UNNAMED = '''
from mcpkit import McpServerApp, mcp_tool


@mcp_tool
def ping() -> str:
    """Answer pong."""
    return "pong"


app = McpServerApp(ping)
'''

CLIENT_SCOPES = [
    ("claude-desktop", "user"),
    ("claude-code", "user"),
    ("claude-code", "project"),
    ("cursor", "user"),
    ("cursor", "project"),
    ("vscode", "user"),
    ("vscode", "project"),
    ("gemini-cli", "user"),
    ("gemini-cli", "project"),
]


@pytest.fixture
def place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """A temporary HOME (and XDG_CONFIG_HOME, APPDATA), a project folder to work in, and
    the server's file in another folder."""
    home = tmp_path / "home"
    project = tmp_path / "project"
    servers = tmp_path / "servers"
    for folder in (home, project, servers):
        folder.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("USERPROFILE", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("APPDATA", str(home / "AppData" / "Roaming"))
    monkeypatch.delenv("MCPKIT_DEBUG", raising=False)
    monkeypatch.delenv("CODEX_HOME", raising=False)
    monkeypatch.chdir(project)
    server = servers / "weather.py"
    server.write_text(SERVER)
    return {"home": home, "project": project, "server": server, "tmp": tmp_path}


def mcpkit(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """Run the command in this process: (exit code, stdout, stderr)."""
    with pytest.raises(SystemExit) as done:
        main(list(args))
    out, err = capsys.readouterr()
    code = done.value.code
    return (code if isinstance(code, int) else 1), out, err


def written_path(client: str, scope: str, place: dict[str, Path]) -> Path:
    return Path(
        config_path(
            client,
            scope,
            system=sys.platform,
            env=os.environ,
            home=place["home"],
            project=place["project"],
        )
    )


def servers_of(path: Path, client: str) -> dict[str, Any]:
    servers: dict[str, Any] = json.loads(path.read_text())[CLIENTS[client].servers_key]
    return servers


def assert_one_error(err: str, *words: str) -> None:
    lines = err.strip().splitlines()
    assert lines[0].startswith("error: ") and len(lines) <= 2, err
    assert all(line.startswith(("error: ", "hint: ")) for line in lines), err
    for word in words:
        assert word in err, err


# --------------------------------------------------------------------------- where, per system

HOME_MAC = "/Users/ann"
HOME_LINUX = "/home/ann"
HOME_WIN = "C:\\Users\\ann"
WIN_ENV = {"APPDATA": "C:\\Users\\ann\\AppData\\Roaming"}

EXPECTED = [
    (
        "claude-desktop",
        "user",
        "darwin",
        {},
        "/Users/ann/Library/Application Support/Claude/claude_desktop_config.json",
    ),
    (
        "claude-desktop",
        "user",
        "win32",
        WIN_ENV,
        "C:\\Users\\ann\\AppData\\Roaming\\Claude\\claude_desktop_config.json",
    ),
    (
        "claude-desktop",
        "user",
        "win32",
        {},
        "C:\\Users\\ann\\AppData\\Roaming\\Claude\\claude_desktop_config.json",
    ),
    ("claude-desktop", "user", "linux", {}, "/home/ann/.config/Claude/claude_desktop_config.json"),
    (
        "claude-desktop",
        "user",
        "linux",
        {"XDG_CONFIG_HOME": "/xdg"},
        "/xdg/Claude/claude_desktop_config.json",
    ),
    (
        "claude-desktop",
        "user",
        "linux",
        {"XDG_CONFIG_HOME": "relative"},
        "/home/ann/.config/Claude/claude_desktop_config.json",
    ),
    ("claude-code", "user", "darwin", {}, "/Users/ann/.claude.json"),
    ("claude-code", "user", "win32", WIN_ENV, "C:\\Users\\ann\\.claude.json"),
    ("claude-code", "user", "linux", {}, "/home/ann/.claude.json"),
    ("claude-code", "project", "linux", {}, "/srv/app/.mcp.json"),
    ("claude-code", "project", "win32", {}, "D:\\app\\.mcp.json"),
    ("cursor", "user", "darwin", {}, "/Users/ann/.cursor/mcp.json"),
    ("cursor", "user", "win32", WIN_ENV, "C:\\Users\\ann\\.cursor\\mcp.json"),
    ("cursor", "user", "linux", {}, "/home/ann/.cursor/mcp.json"),
    ("cursor", "project", "darwin", {}, "/srv/app/.cursor/mcp.json"),
    ("vscode", "user", "darwin", {}, "/Users/ann/Library/Application Support/Code/User/mcp.json"),
    ("vscode", "user", "win32", WIN_ENV, "C:\\Users\\ann\\AppData\\Roaming\\Code\\User\\mcp.json"),
    ("vscode", "user", "linux", {}, "/home/ann/.config/Code/User/mcp.json"),
    ("vscode", "user", "linux", {"XDG_CONFIG_HOME": "/xdg"}, "/xdg/Code/User/mcp.json"),
    ("vscode", "project", "linux", {}, "/srv/app/.vscode/mcp.json"),
    ("vscode", "project", "win32", {}, "D:\\app\\.vscode\\mcp.json"),
    ("gemini-cli", "user", "linux", {}, "/home/ann/.gemini/settings.json"),
    ("gemini-cli", "user", "win32", WIN_ENV, "C:\\Users\\ann\\.gemini\\settings.json"),
    ("gemini-cli", "project", "darwin", {}, "/srv/app/.gemini/settings.json"),
    ("codex", "user", "linux", {}, "/home/ann/.codex/config.toml"),
    ("codex", "user", "darwin", {"CODEX_HOME": "/opt/codex"}, "/opt/codex/config.toml"),
    ("codex", "user", "win32", WIN_ENV, "C:\\Users\\ann\\.codex\\config.toml"),
]


@pytest.mark.parametrize(
    ("client", "scope", "system", "env", "expected"),
    EXPECTED,
    ids=[f"{c}-{s}-{system}-{'+'.join(env) or 'plain'}" for c, s, system, env, _ in EXPECTED],
)
def test_each_clients_file_is_where_it_documents_it(client, scope, system, env, expected):
    home = {"darwin": HOME_MAC, "win32": HOME_WIN}.get(system, HOME_LINUX)
    project = "D:\\app" if system == "win32" else "/srv/app"
    path = config_path(client, scope, system=system, env=env, home=home, project=project)
    flavour = PureWindowsPath if system == "win32" else PurePosixPath
    assert path == flavour(expected)


def test_claude_desktop_has_no_project_file(place, capsys):
    code, _, err = mcpkit(
        capsys, "install", "claude-desktop", str(place["server"]), "--scope", "project"
    )
    assert code == 2
    assert_one_error(err, "Claude Desktop has no project configuration")


# --------------------------------------------------------------------------- writing the file


@pytest.mark.parametrize(
    ("client", "scope"), CLIENT_SCOPES, ids=[f"{c}-{s}" for c, s in CLIENT_SCOPES]
)
def test_install_writes_the_clients_own_file(place, capsys, client, scope):
    code, out, err = mcpkit(
        capsys,
        "install",
        client,
        str(place["server"]),
        "--scope",
        scope,
        "--env",
        "WEATHER_WORD=rainy",
    )
    assert code == 0, err
    assert out == ""  # notes go to stderr
    path = written_path(client, scope, place)
    assert str(path) in err
    inside = place["project"] if scope == "project" else place["home"]
    assert path.is_relative_to(inside)
    entry = servers_of(path, client)["weather"]
    expected: dict[str, Any] = {
        "command": os.path.abspath(sys.executable),
        "args": ["-m", "mcpkit", "run", str(place["server"].resolve())],
        "env": {"WEATHER_WORD": "rainy"},
    }
    if client in ("claude-code", "vscode"):
        expected = {"type": "stdio", **expected}
    assert entry == expected
    assert path.read_text().startswith('{\n  "')  # indent 2 for a new file
    assert not list(path.parent.glob("*.bak"))  # nothing to back up


def test_other_entries_and_keys_are_kept_and_the_old_file_backed_up(place, capsys):
    path = written_path("cursor", "user", place)
    path.parent.mkdir(parents=True)
    before = {
        "theme": "dark",
        "mcpServers": {"other": {"command": "node", "args": ["other.js"]}},
        "zzz": [1, 2.5, None, "é"],
    }
    old_text = json.dumps(before, indent=4, ensure_ascii=False) + "\n"
    path.write_text(old_text)
    code, _, err = mcpkit(capsys, "install", "cursor", str(place["server"]))
    assert code == 0, err
    after = json.loads(path.read_text())
    assert list(after) == ["theme", "mcpServers", "zzz"]
    assert after["theme"] == "dark" and after["zzz"] == before["zzz"]
    assert after["mcpServers"]["other"] == before["mcpServers"]["other"]
    assert list(after["mcpServers"]) == ["other", "weather"]
    assert path.read_text().startswith('{\n    "theme"')  # its indentation kept
    backups = list(path.parent.glob("mcp.json.*.bak"))
    assert len(backups) == 1 and backups[0].read_text() == old_text
    assert str(backups[0]) in err


def test_an_entry_of_the_same_name_is_replaced_and_said_so(place, capsys):
    server = str(place["server"])
    assert mcpkit(capsys, "install", "vscode", server, "-e", "WEATHER_WORD=one")[0] == 0
    code, _, err = mcpkit(capsys, "install", "vscode", server, "-e", "WEATHER_WORD=two")
    assert code == 0, err
    assert "replaced the existing entry 'weather'" in err
    servers = servers_of(written_path("vscode", "user", place), "vscode")
    assert list(servers) == ["weather"] and servers["weather"]["env"] == {"WEATHER_WORD": "two"}
    # the same entry again: nothing written, no second backup
    backups = list(written_path("vscode", "user", place).parent.glob("*.bak"))
    code, _, err = mcpkit(capsys, "install", "vscode", server, "-e", "WEATHER_WORD=two")
    assert code == 0 and "nothing was written" in err
    assert list(written_path("vscode", "user", place).parent.glob("*.bak")) == backups


def test_a_reinstall_says_which_variables_it_drops(place, capsys):
    server = str(place["server"])
    assert mcpkit(capsys, "install", "cursor", server, "-e", "API_KEY=k", "-e", "UNITS=si")[0] == 0
    code, _, err = mcpkit(capsys, "install", "cursor", server, "-e", "UNITS=si")
    assert code == 0, err
    assert "the entry it replaced also set API_KEY in the server's environment" in err
    assert "UNITS" not in err
    code, _, err = mcpkit(capsys, "install", "cursor", server, "-e", "UNITS=metric")
    assert code == 0 and "also set" not in err


def test_uninstall_removes_the_entry_and_keeps_the_rest(place, capsys):
    path = written_path("vscode", "project", place)
    path.parent.mkdir(parents=True)
    before = {"inputs": [], "servers": {"other": {"type": "stdio", "command": "node"}}}
    path.write_text(json.dumps(before, indent=2) + "\n")
    assert mcpkit(capsys, "install", "vscode", str(place["server"]), "--scope", "project")[0] == 0
    installed = path.read_text()
    code, out, err = mcpkit(
        capsys, "uninstall", "vscode", "weather", "--scope", "project", "--dry-run"
    )
    assert code == 0 and '-    "weather": {' in out and path.read_text() == installed
    code, out, err = mcpkit(
        capsys, "uninstall", "vscode", "weather", "--scope", "project", "--json"
    )
    assert code == 0, err
    assert json.loads(path.read_text()) == before
    summary = json.loads(out)
    assert summary["action"] == "removed" and Path(summary["backup"]).read_text() == installed
    code, _, err = mcpkit(capsys, "uninstall", "vscode", "weather", "--scope", "project")
    assert code == 1
    assert_one_error(err, "has no server named 'weather'", "its servers: 'other'")


def test_uninstall_from_a_file_that_is_not_there(place, capsys):
    code, _, err = mcpkit(capsys, "uninstall", "claude-desktop", "weather")
    assert code == 1
    assert_one_error(err, "claude_desktop_config.json does not exist", "nothing is installed")
    code, _, err = mcpkit(capsys, "uninstall", "claude-desktop", "weather", "--scope", "project")
    assert code == 2
    assert_one_error(err, "Claude Desktop has no project configuration")


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ('{"mcpServers": {"a": 1},}', ["not valid JSON", "line 1"]),
        ('{\n  // a comment\n  "mcpServers": {}\n}', ["not valid JSON", "line 2"]),
        ("[1, 2]", ["does not hold a JSON object"]),
        ('{"mcpServers": []}', ["'mcpServers' is not a JSON object"]),
    ],
    ids=["trailing-comma", "comment", "array", "servers-not-an-object"],
)
def test_a_file_that_does_not_parse_is_left_alone(place, capsys, text, words):
    path = written_path("claude-code", "project", place)
    path.write_text(text)
    code, out, err = mcpkit(
        capsys, "install", "claude-code", str(place["server"]), "--scope", "project"
    )
    assert code == 1 and out == ""
    assert_one_error(err, str(path), "left as it is", "hint: ", "mcpkit config", *words)
    assert path.read_text() == text
    assert not list(path.parent.glob("*.bak"))


def test_an_empty_file_is_taken_as_an_empty_object(place, capsys):
    path = written_path("cursor", "project", place)
    path.parent.mkdir()
    path.write_text("\n")
    assert mcpkit(capsys, "install", "cursor", str(place["server"]), "--scope", "project")[0] == 0
    assert list(servers_of(path, "cursor")) == ["weather"]


def test_a_symlinked_file_is_written_through_the_link(place, capsys):
    real = place["tmp"] / "dotfiles" / "mcp.json"
    real.parent.mkdir()
    real.write_text('{"mcpServers": {}}')
    link = written_path("cursor", "user", place)
    link.parent.mkdir()
    link.symlink_to(real)
    assert mcpkit(capsys, "install", "cursor", str(place["server"]))[0] == 0
    assert link.is_symlink()
    assert list(servers_of(real, "cursor")) == ["weather"]


def test_the_file_keeps_its_permissions(place, capsys):
    path = written_path("claude-code", "user", place)
    path.write_text("{}")
    path.chmod(0o600)
    assert mcpkit(capsys, "install", "claude-code", str(place["server"]))[0] == 0
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


# --------------------------------------------------------------------------- --dry-run


def test_dry_run_prints_the_new_file_and_writes_nothing(place, capsys):
    code, out, err = mcpkit(capsys, "install", "claude-desktop", str(place["server"]), "--dry-run")
    assert code == 0, err
    path = written_path("claude-desktop", "user", place)
    assert not path.exists() and not path.parent.exists()
    assert list(json.loads(out)["mcpServers"]) == ["weather"]
    assert "dry run" in err and "nothing was written" in err


def test_dry_run_on_an_existing_file_prints_a_diff(place, capsys):
    path = written_path("vscode", "project", place)
    path.parent.mkdir()
    old_text = '{\n  "inputs": [],\n  "servers": {}\n}\n'
    path.write_text(old_text)
    code, out, err = mcpkit(
        capsys, "install", "vscode", str(place["server"]), "--scope", "project", "--dry-run"
    )
    assert code == 0, err
    assert out.startswith(f"--- {path}\n+++ {path} (after)\n")
    assert '+    "weather": {' in out and '+      "type": "stdio",' in out
    assert path.read_text() == old_text
    assert not list(path.parent.glob("*.bak"))


# --------------------------------------------------------------------------- the entry


def test_config_prints_only_the_json(place, capsys):
    noisy = place["server"].with_name("noisy.py")
    noisy.write_text('print("hello from import")\n' + SERVER)
    code, out, err = mcpkit(capsys, "config", str(noisy), "--env", "WEATHER_WORD=foggy")
    assert code == 0, err
    assert json.loads(out) == {
        "mcpServers": {
            "weather": {
                "command": os.path.abspath(sys.executable),
                "args": ["-m", "mcpkit", "run", str(noisy.resolve())],
                "env": {"WEATHER_WORD": "foggy"},
            }
        }
    }
    assert "hello from import" in err
    assert not any(place["home"].iterdir())  # nothing written


def test_config_in_vscodes_shape(place, capsys):
    code, out, _ = mcpkit(capsys, "config", str(place["server"]), "--client", "vscode", "-n", "wx")
    assert code == 0
    assert json.loads(out)["servers"]["wx"]["type"] == "stdio"


def test_the_name_is_the_servers_then_the_files_stem_unless_given(place, capsys):
    unnamed = place["server"].with_name("pinger.py")
    unnamed.write_text(UNNAMED)
    names = []
    for args in ([str(place["server"])], [str(unnamed)], [str(place["server"]), "--name", "mine"]):
        code, out, err = mcpkit(capsys, "config", *args)
        assert code == 0, err
        names.append(next(iter(json.loads(out)["mcpServers"])))
    assert names == ["weather", "pinger", "mine"]


def test_a_relative_target_becomes_absolute(place, capsys, monkeypatch):
    monkeypatch.chdir(place["server"].parent)
    code, out, _ = mcpkit(capsys, "config", "weather.py:app")
    assert code == 0
    args = json.loads(out)["mcpServers"]["weather"]["args"]
    assert args[-1] == f"{place['server'].resolve()}:app"


def test_module_app_targets_run_the_modules_file(place, capsys, monkeypatch):
    package = place["project"] / "weatherpkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "server.py").write_text(SERVER)
    (place["project"] / "topweather.py").write_text(SERVER)
    code, out, err = mcpkit(capsys, "config", "topweather:app")
    assert code == 0, err
    assert json.loads(out)["mcpServers"]["weather"]["args"][-1] == (
        f"{(place['project'] / 'topweather.py').resolve()}:app"
    )
    code, out, err = mcpkit(capsys, "config", "weatherpkg.server:app")
    assert code == 0, err
    args = json.loads(out)["mcpServers"]["weather"]["args"]
    assert args[-1] == f"{(package / 'server.py').resolve()}:app"
    assert "found from this folder only" in err  # a package only the working folder holds


def test_a_module_with_relative_imports_is_refused_with_a_way_out(place, capsys):
    package = place["project"] / "relpkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "helpers.py").write_text("WORD = 'calm'\n")
    (package / "server.py").write_text("from .helpers import WORD\n" + SERVER)
    code, out, err = mcpkit(capsys, "install", "cursor", "relpkg.server:app")
    assert code == 1 and out == ""
    assert_one_error(err, "relpkg.server uses relative imports", "from relpkg.server import app")
    assert not written_path("cursor", "user", place).exists()


@pytest.mark.parametrize(
    ("target", "words"),
    [
        ("missing.py", ["no such file: missing.py", "hint: looked for"]),
        ("no_such_module:app", ["no such file or module: no_such_module"]),
        ("empty.py", ["no server in", "hint: "]),
        ("weather.py:nope", ["weather.py has no object named 'nope'", "candidates: Weather, app"]),
    ],
    ids=["missing-file", "missing-module", "no-server", "no-such-object"],
)
def test_the_server_is_checked_before_anything_is_written(
    place, capsys, monkeypatch, target, words
):
    monkeypatch.chdir(place["server"].parent)
    (place["server"].parent / "empty.py").write_text("x = 1\n")
    code, out, err = mcpkit(capsys, "install", "cursor", target)
    assert code == 1 and out == ""
    assert_one_error(err, *words)
    assert not written_path("cursor", "user", place).exists()


def test_a_missing_import_is_an_error_unless_the_server_runs_elsewhere(place, capsys, tmp_path):
    needy = place["server"].with_name("needy.py")
    needy.write_text("import not_installed_anywhere_xyz\n" + SERVER)
    code, _, err = mcpkit(capsys, "config", str(needy))
    assert code == 1
    assert_one_error(err, "ModuleNotFoundError", "not_installed_anywhere_xyz")
    # with --python the server runs in another environment: a warning, and the file's stem
    # (the server is not loaded, so it cannot say its name)
    code, out, err = mcpkit(capsys, "config", str(needy), "--python", sys.executable)
    assert code == 1  # it is this very interpreter: still an error
    other = tmp_path / "other-python"
    other.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    other.chmod(0o755)
    code, out, err = mcpkit(capsys, "config", str(needy), "--python", str(other))
    assert code == 0, err
    assert "could not check the server here" in err
    entry = json.loads(out)["mcpServers"]["needy"]
    assert entry["command"] == str(other) and entry["args"][:3] == ["-m", "mcpkit", "run"]


def test_python_must_import_mcpkit(place, capsys, tmp_path):
    fake = tmp_path / "fake-python"
    fake.write_text("#!/bin/sh\nexit 1\n")
    fake.chmod(0o755)
    code, _, err = mcpkit(capsys, "config", str(place["server"]), "--python", str(fake))
    assert code == 1
    assert_one_error(err, "cannot import mcpkit", "pip install mcpkit")
    code, _, err = mcpkit(
        capsys, "config", str(place["server"]), "--python", str(tmp_path / "nope")
    )
    assert code == 1
    assert_one_error(err, "no such Python")


def fake_uv(folder: Path, script: str = "exit 0") -> Path:
    """A ``uv`` on PATH alone that writes its arguments, one a line, to ``uv.log``."""
    folder.mkdir(exist_ok=True)
    uv = folder / "uv"
    log = folder / "uv.log"
    uv.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > "{log}"\n{script}\n')
    uv.chmod(0o755)
    return uv


def test_with_runs_the_server_through_uv(place, capsys, monkeypatch, tmp_path):
    uv = fake_uv(tmp_path / "bin")
    monkeypatch.setenv("PATH", str(uv.parent))
    monkeypatch.setattr(_install, "mcpkit_source", lambda: ["--with", "mcpkit"])
    server = str(place["server"].resolve())
    code, out, err = mcpkit(
        capsys, "config", str(place["server"]), "--with", "pandas", "--with", "httpx>=0.27"
    )
    assert code == 0, err
    entry = json.loads(out)["mcpServers"]["weather"]
    assert entry["command"] == str(uv)
    assert entry["args"] == [
        "run", "--no-project", "--with", "mcpkit", "--with", "pandas", "--with", "httpx>=0.27",
        "mcpkit", "run", server,
    ]  # fmt: skip
    # checked first: the same environment imports mcpkit
    assert (uv.parent / "uv.log").read_text().splitlines() == [
        *entry["args"][:-3],
        "python",
        "-c",
        "import mcpkit",
    ]
    code, out, _ = mcpkit(
        capsys, "config", str(place["server"]), "--with", "mcpkit[redis]==0.1.0", "--python", "3.12"
    )
    assert json.loads(out)["mcpServers"]["weather"]["args"] == [
        "run", "--no-project", "--with", "mcpkit[redis]==0.1.0", "--python", "3.12",
        "mcpkit", "run", server,
    ]  # fmt: skip
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    code, _, err = mcpkit(capsys, "config", str(place["server"]), "--with", "pandas")
    assert code == 1
    assert_one_error(err, "--with needs uv")


def test_with_refuses_an_environment_uv_cannot_make(place, capsys, monkeypatch, tmp_path):
    refusal = "error: No solution found when resolving `--with` dependencies\n  cause: nope"
    uv = fake_uv(tmp_path / "bin", f"echo '{refusal}' >&2\nexit 1")
    monkeypatch.setenv("PATH", str(uv.parent))
    code, _, err = mcpkit(capsys, "install", "cursor", str(place["server"]), "--with", "nope")
    assert code == 1
    assert_one_error(err, "uv cannot make the server's environment", "cause: nope", "--with")
    assert not written_path("cursor", "user", place).exists()


class _Dist:
    def __init__(self, text: str | None) -> None:
        self.text = text

    def read_text(self, name: str) -> str | None:
        assert name == "direct_url.json"
        return self.text


def test_uv_gets_mcpkit_from_where_it_was_installed(monkeypatch, tmp_path):
    """A wheel, a folder or a repository the package index may not have; the index else."""
    wheel = tmp_path / "mcpkit-0.1.0-py3-none-any.whl"
    wheel.write_bytes(b"")

    def source(origin: dict[str, Any] | None) -> list[str]:
        text = None if origin is None else json.dumps(origin)
        monkeypatch.setattr("importlib.metadata.distribution", lambda name: _Dist(text))
        return _install.mcpkit_source()

    assert source(None) == ["--with", "mcpkit"]
    assert source({"url": wheel.as_uri(), "archive_info": {}}) == ["--with", str(wheel)]
    assert source({"url": tmp_path.as_uri(), "dir_info": {"editable": True}}) == [
        "--with-editable",
        str(tmp_path),
    ]
    assert source({"url": tmp_path.as_uri(), "dir_info": {}}) == ["--with", str(tmp_path)]
    assert source({"url": (tmp_path / "gone.whl").as_uri(), "archive_info": {}}) == [
        "--with",
        "mcpkit",
    ]
    vcs = {"url": "https://example.com/mcpkit", "vcs_info": {"vcs": "git", "commit_id": "abc"}}
    assert source(vcs) == ["--with", "mcpkit @ git+https://example.com/mcpkit@abc"]


# --------------------------------------------------------------------------- environment


def test_dotenv_lines():
    text = textwrap.dedent(
        """\
        # a comment
        PLAIN=value
        export EXPORTED=yes
        SPACED = padded value   # a trailing comment
        HASH=a#b
        EMPTY=
        SINGLE='it is $HOME # not a comment'
        DOUBLE="line\\nnext \\"quoted\\" \\\\ end"  # comment
        MULTI="first
        second"
        URL=https://example.com/?a=1&b=2
        """
    )
    assert parse_dotenv(text) == {
        "PLAIN": "value",
        "EXPORTED": "yes",
        "SPACED": "padded value",
        "HASH": "a#b",
        "EMPTY": "",
        "SINGLE": "it is $HOME # not a comment",
        "DOUBLE": 'line\nnext "quoted" \\ end',
        "MULTI": "first\nsecond",
        "URL": "https://example.com/?a=1&b=2",
    }


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("GOOD=1\nno equals sign\n", "x.env:2: not a KEY=VALUE line"),
        ("1BAD=1\n", "x.env:1: not a KEY=VALUE line"),
        ('A="open\nB=2\n', 'x.env:1: the " quote of A is never closed'),
        ("A='x' y\n", "x.env:1: text after the quoted value of A"),
    ],
    ids=["no-equals", "bad-key", "unclosed-quote", "text-after-quote"],
)
def test_dotenv_errors_name_the_line(text, message):
    with pytest.raises(CliError) as caught:
        parse_dotenv(text, "x.env")
    assert caught.value.message == message


def test_env_file_and_env_go_into_the_entry(place, capsys, tmp_path):
    env_file = tmp_path / "server.env"
    env_file.write_text("# secrets\nTOKEN='abc def'\nWEATHER_WORD=misty\n")
    code, out, err = mcpkit(
        capsys,
        "config",
        str(place["server"]),
        "--env-file",
        str(env_file),
        "-e",
        "WEATHER_WORD=clear",
    )
    assert code == 0, err
    assert json.loads(out)["mcpServers"]["weather"]["env"] == {
        "TOKEN": "abc def",
        "WEATHER_WORD": "clear",
    }
    code, _, err = mcpkit(
        capsys, "config", str(place["server"]), "--env-file", str(tmp_path / "nope.env")
    )
    assert code == 1
    assert_one_error(err, "no such env file")
    code, _, err = mcpkit(capsys, "config", str(place["server"]), "-e", "=x")
    assert code == 2
    assert_one_error(err, "is not KEY=VALUE")


def test_a_windows_drive_is_part_of_the_file():
    assert split_target("C:\\srv\\weather.py:app") == ("C:\\srv\\weather.py", "app")
    assert split_target("C:/srv/weather.py") == ("C:/srv/weather.py", "")
    assert split_target("pkg.mod:app") == ("pkg.mod", "app")


def test_help_lists_install_uninstall_and_config():
    done = subprocess.run(
        [sys.executable, "-m", "mcpkit", "--help"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0
    assert all(word in done.stdout for word in ("install", "uninstall", "config"))


# --------------------------------------------------------------------------- end to end


class StdioPeer:
    """The written entry's command, started the way a client starts it: its own
    environment only (no virtual environment, a bare PATH), somewhere else."""

    def __init__(self, entry: dict[str, Any], cwd: Path, home: Path) -> None:
        env = {"PATH": os.defpath, "HOME": str(home)}
        if "SYSTEMROOT" in os.environ:  # Windows cannot start a process without it
            env["SYSTEMROOT"] = os.environ["SYSTEMROOT"]
        env.update(entry.get("env", {}))
        self.proc = subprocess.Popen(
            [entry["command"], *entry["args"]],
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put("")

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()

    def request(self, request_id: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        while True:
            line = self.lines.get(timeout=30)
            assert line, f"the server stopped: {self.stop()}"
            message: dict[str, Any] = json.loads(line)
            if message.get("id") == request_id:
                return message

    def stop(self) -> str:
        assert self.proc.stdin is not None and self.proc.stderr is not None
        if not self.proc.stdin.closed:
            self.proc.stdin.close()  # end of input: a stdio server exits
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        return self.proc.stderr.read()


@pytest.mark.parametrize("form", ["file", "module"])
def test_the_written_command_serves_the_server_over_stdio(place, capsys, monkeypatch, form):
    if form == "module":
        monkeypatch.chdir(place["server"].parent)
        target = "weather:app"
    else:
        target = str(place["server"])
    code, _, err = mcpkit(capsys, "install", "claude-desktop", target, "-e", "WEATHER_WORD=breezy")
    assert code == 0, err
    entry = servers_of(written_path("claude-desktop", "user", place), "claude-desktop")["weather"]
    elsewhere = place["tmp"] / "elsewhere"
    elsewhere.mkdir(exist_ok=True)
    peer = StdioPeer(entry, elsewhere, place["home"])
    try:
        answer = peer.request(
            1,
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "test-install", "version": "1"},
            },
        )
        assert answer["result"]["serverInfo"]["name"] == "weather", answer
        peer.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        tools = peer.request(2, "tools/list", {})
        assert [tool["name"] for tool in tools["result"]["tools"]] == ["forecast"]
        called = peer.request(3, "tools/call", {"name": "forecast", "arguments": {"city": "Oslo"}})
        assert called["result"]["content"][0]["text"] == "breezy in Oslo"  # the entry's env
    finally:
        err = peer.stop()
    assert peer.proc.returncode == 0, err


# --------------------------------------------------------------------------- Codex CLI's TOML

CODEX_CONFIG = """\
# my Codex settings
model = "o3"

[mcp_servers.other]
command = "node"
args = ["other.js"]  # kept as written

[profiles.fast]
model = "o4-mini"
"""


def codex_file(place: dict[str, Path], text: str | None = CODEX_CONFIG) -> Path:
    path = written_path("codex", "user", place)
    path.parent.mkdir(parents=True, exist_ok=True)
    if text is not None:
        path.write_text(text)
    return path


def test_codex_gets_one_table_and_the_rest_of_its_file_is_kept(place, capsys):
    import tomllib

    path = codex_file(place)
    code, out, err = mcpkit(
        capsys, "install", "codex", str(place["server"]), "-e", 'WEATHER_WORD=say "hi"\\n'
    )
    assert code == 0 and out == "", err
    text = path.read_text()
    assert text.startswith(CODEX_CONFIG)  # comments and layout as the user wrote them
    assert text[len(CODEX_CONFIG) :].startswith("\n[mcp_servers.weather]\n")
    data = tomllib.loads(text)
    assert data["mcp_servers"]["weather"] == {
        "command": os.path.abspath(sys.executable),
        "args": ["-m", "mcpkit", "run", str(place["server"].resolve())],
        "env": {"WEATHER_WORD": 'say "hi"\\n'},
    }
    assert data["mcp_servers"]["other"] == {"command": "node", "args": ["other.js"]}
    assert data["profiles"] == {"fast": {"model": "o4-mini"}} and data["model"] == "o3"
    [backup] = path.parent.glob("config.toml.*.bak")
    assert backup.read_text() == CODEX_CONFIG


def test_codex_reinstall_replace_and_uninstall(place, capsys):
    import tomllib

    path = codex_file(place)
    server = str(place["server"])
    assert mcpkit(capsys, "install", "codex", server, "-e", "WEATHER_WORD=one")[0] == 0
    installed = path.read_text()
    code, _, err = mcpkit(capsys, "install", "codex", server, "-e", "WEATHER_WORD=one")
    assert code == 0 and "nothing was written" in err and path.read_text() == installed
    code, _, err = mcpkit(capsys, "install", "codex", server, "-e", "WEATHER_WORD=two")
    assert code == 0 and "replaced the existing entry 'weather'" in err
    servers = tomllib.loads(path.read_text())["mcp_servers"]
    assert servers["weather"]["env"] == {"WEATHER_WORD": "two"} and "other" in servers
    assert path.read_text().count("[mcp_servers.weather]") == 1
    code, _, err = mcpkit(capsys, "uninstall", "codex", "weather")
    assert code == 0, err
    assert path.read_text() == CODEX_CONFIG
    code, _, err = mcpkit(capsys, "uninstall", "codex", "weather")
    assert code == 1
    assert_one_error(err, "has no server named 'weather'", "'other'")


def test_codex_new_file_and_dry_run(place, capsys):
    import tomllib

    path = codex_file(place, None)
    code, out, err = mcpkit(capsys, "install", "codex", str(place["server"]), "--dry-run")
    assert code == 0 and not path.exists(), err
    assert tomllib.loads(out)["mcp_servers"]["weather"]["command"] == os.path.abspath(
        sys.executable
    )
    assert mcpkit(capsys, "install", "codex", str(place["server"]))[0] == 0
    assert path.read_text() == out


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ('model = "o3\n', ["is not valid TOML"]),
        ("mcp_servers = 3\n", ["'mcp_servers' is not a table"]),
        (
            '[mcp_servers]\nweather = { command = "node" }\n',
            ["defines mcp_servers.weather in a way mcpkit cannot edit"],
        ),
    ],
    ids=["not-toml", "servers-not-a-table", "inline-entry"],
)
def test_a_codex_file_mcpkit_cannot_edit_is_left_alone(place, capsys, text, words):
    path = codex_file(place, text)
    code, out, err = mcpkit(capsys, "install", "codex", str(place["server"]))
    assert code == 1 and out == ""
    assert_one_error(err, str(path), "left as it is", "hint: ", *words)
    assert path.read_text() == text
    assert not list(path.parent.glob("*.bak"))


def test_codex_has_no_project_file_and_config_prints_its_table(place, capsys):
    import tomllib

    code, _, err = mcpkit(capsys, "install", "codex", str(place["server"]), "--scope", "project")
    assert code == 2
    assert_one_error(err, "Codex CLI has no project configuration")
    code, out, err = mcpkit(capsys, "config", str(place["server"]), "--client", "codex")
    assert code == 0, err
    assert out.startswith("[mcp_servers.weather]\n")
    assert tomllib.loads(out)["mcp_servers"]["weather"]["args"][-1] == str(
        place["server"].resolve()
    )


@pytest.mark.parametrize("client", ["gemini-cli", "codex"])
def test_the_command_written_for_gemini_and_codex_serves_over_stdio(place, capsys, client):
    import tomllib

    code, _, err = mcpkit(capsys, "install", client, str(place["server"]), "-e", "WEATHER_WORD=dry")
    assert code == 0, err
    path = written_path(client, "user", place)
    if client == "codex":
        entry = tomllib.loads(path.read_text())["mcp_servers"]["weather"]
    else:
        entry = servers_of(path, client)["weather"]
    peer = StdioPeer(entry, place["tmp"], place["home"])
    try:
        answer = peer.request(
            1,
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": client, "version": "1"},
            },
        )
        assert answer["result"]["serverInfo"]["name"] == "weather", answer
        peer.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        called = peer.request(2, "tools/call", {"name": "forecast", "arguments": {"city": "Oslo"}})
        assert called["result"]["content"][0]["text"] == "dry in Oslo"
    finally:
        err = peer.stop()
    assert peer.proc.returncode == 0, err

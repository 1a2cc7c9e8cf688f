"""The ``mcpkit`` command's errors: one ``error:`` line, at most one ``hint:`` line, a non-zero
exit code (1 failure, 2 usage), no traceback unless ``--debug`` / ``MCPKIT_DEBUG=1``."""

from __future__ import annotations

import http.server
import os
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.ports import refused_port

ROOT = Path(__file__).resolve().parents[2]

WEATHER = '''
from mcpkit import McpServerApp, mcp_server, mcp_tool


@mcp_server(name="weather")
class Weather:
    @mcp_tool()
    def forecast(self, city: str) -> str:
        """The forecast for a city."""
        return f"sunny in {city}"

    @mcp_tool()
    def alerts(self, region: str) -> list[str]:
        """Weather alerts for a region."""
        return []


app = McpServerApp(Weather)
'''

ORPHAN = """
from mcpkit import McpServerApp, mcp_tool

app = McpServerApp(name="orph")


@mcp_tool
def hello() -> str:
    return "hi"
"""

FORECAST = """
from mcpkit import McpServerApp, mcp_tool


@mcp_tool
def forecast(city: str, days: int = 1) -> str:
    return f"sunny in {city} for {days} days"


@mcp_tool
def add(a, b):
    return a + b


app = McpServerApp(forecast, add, name="forecast")
"""

FILES = {
    "weather.py": WEATHER,
    "orphan.py": ORPHAN,
    "forecast.py": FORECAST,
    "syntax.py": "from mcpkit import mcp_server\n\ndef broken(:\n    pass\n",
    "raises.py": "import os\n\nsettings = {}\nTOKEN = settings['token']\n",
    "imports_helper.py": "import helper\n",
    "helper.py": "def load():\n    raise RuntimeError('bad config')\n\n\nload()\n",
    "missing_module.py": "import no_such_module_here\n",
    "no_server.py": "x = 1\n",
    "two_servers.py": WEATHER.replace("app = ", "one = ") + "\nother = McpServerApp(Weather)\n",
}


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("user_files")
    for name, text in FILES.items():
        (folder / name).write_text(textwrap.dedent(text))
    return folder


def mcpkit(
    *args: str, cwd: Path = ROOT, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    environment = {name: value for name, value in os.environ.items() if name != "MCPKIT_DEBUG"}
    environment.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "mcpkit", *args],
        cwd=cwd,
        input="",
        capture_output=True,
        text=True,
        timeout=60,
        env=environment,
    )


def assert_one_error(
    done: subprocess.CompletedProcess[str], code: int, *expected: str
) -> list[str]:
    """Exit code ``code``; stderr is ``error: ...`` and at most a ``hint: ...``; each of
    ``expected`` appears in them."""
    assert done.returncode == code, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.splitlines()
    assert 1 <= len(lines) <= 2, done.stderr
    assert lines[0].startswith("error: "), done.stderr
    if len(lines) == 2:
        assert lines[1].startswith("hint: "), done.stderr
    for text in expected:
        assert text in done.stderr, (text, done.stderr)
    return lines


# --------------------------------------------------------------------------- loading a file


def test_missing_file_names_the_path_tried(files):
    lines = assert_one_error(
        mcpkit("run", "nosuch.py", cwd=files), 1, "error: no such file: nosuch.py"
    )
    assert lines[1] == f"hint: looked for {files.resolve() / 'nosuch.py'}"


def test_syntax_error_points_at_file_and_line(files):
    lines = assert_one_error(
        mcpkit("run", "syntax.py", cwd=files), 1, "error: syntax.py:3: SyntaxError"
    )
    assert "def broken(:" in lines[1]


def test_exception_on_import_points_at_the_users_line(files):
    assert_one_error(
        mcpkit("run", "raises.py", cwd=files), 1, "error: raises.py:4: KeyError: 'token'"
    )


def test_exception_raised_deeper_names_the_users_line_and_where_it_was_raised(files):
    lines = assert_one_error(mcpkit("run", "imports_helper.py", cwd=files), 1)
    assert lines[0] == "error: imports_helper.py:1: RuntimeError: bad config"
    assert lines[1].startswith("hint: raised in helper.py:2 (load)")


def test_missing_module_asks_whether_it_is_installed(files):
    assert_one_error(
        mcpkit("run", "missing_module.py", cwd=files),
        1,
        "missing_module.py:1: ModuleNotFoundError: No module named 'no_such_module_here'",
        "installed",
    )


def test_file_without_a_server(files):
    assert_one_error(
        mcpkit("run", "no_server.py", cwd=files), 1, "no server in no_server.py", "@mcp_server"
    )


def test_several_servers_list_the_candidates(files):
    lines = assert_one_error(mcpkit("run", "two_servers.py", cwd=files), 1, "more than one server")
    assert lines[1] == "hint: name one as two_servers.py:OBJECT; candidates: Weather, one, other"


def test_named_object_missing_lists_the_candidates(files):
    assert_one_error(
        mcpkit("run", "weather.py:nope", cwd=files),
        1,
        "no object named 'nope'",
        "weather.py:OBJECT",
        "Weather, app",
    )


def test_not_a_python_file():
    assert_one_error(mcpkit("run", "README.md"), 1, "README.md is not a Python file")


def test_call_and_inspect_report_a_broken_file_the_same_way(files):
    assert_one_error(mcpkit("inspect", "raises.py", cwd=files), 1, "raises.py:4: KeyError")
    assert_one_error(mcpkit("call", "syntax.py", "x", cwd=files), 1, "syntax.py:3: SyntaxError")


# --------------------------------------------------------------------------- mcpkit call


def test_unknown_tool_suggests_the_close_match(files):
    lines = assert_one_error(
        mcpkit("call", "weather.py", "forcast", "{}", cwd=files), 1, "no tool named 'forcast'"
    )
    assert lines[1] == "hint: did you mean 'forecast'? (tools: forecast, alerts)"


def test_unknown_tool_without_a_close_match_lists_the_tools(files):
    lines = assert_one_error(
        mcpkit("call", "weather.py", "zzz", cwd=files), 1, "no tool named 'zzz'"
    )
    assert lines[1] == "hint: tools: forecast, alerts"


def test_bad_json_arguments_show_the_position(files):
    assert_one_error(
        mcpkit("call", "weather.py", "forecast", "{city: 1}", cwd=files),
        2,
        "arguments are not valid JSON",
        "line 1, column 2",
    )


def test_arguments_must_be_an_object(files):
    assert_one_error(
        mcpkit("call", "weather.py", "forecast", "[1, 2]", cwd=files),
        2,
        "must be a JSON object, not an array",
    )


ORPHAN_WARNING = (
    "hello is decorated with @mcp_tool but not served by the app; pass it to"
    " McpServerApp(hello, ...) or decorate it with @app.tool()"
)


@pytest.mark.parametrize("target", ["orphan.py", "orphan.py:app", "orphan"])
def test_a_decorated_function_the_app_does_not_serve_is_warned_of(files, target):
    done = mcpkit("inspect", target, cwd=files)
    assert done.returncode == 0, done.stderr
    assert done.stderr == f"warning: {ORPHAN_WARNING}\n"
    assert "Tools: none" in done.stdout


def test_calling_a_decorated_function_the_app_does_not_serve_says_so(files):
    done = mcpkit("call", "orphan.py", "hello", "{}", cwd=files)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        f"warning: {ORPHAN_WARNING}",
        "error: no tool named 'hello'",
        f"hint: {ORPHAN_WARNING}",
    ]


def test_an_argument_the_tool_does_not_take_is_warned_of_and_the_call_made(files):
    done = mcpkit("call", "forecast.py", "forecast", '{"city": "Oslo", "dayz": 2}', cwd=files)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "sunny in Oslo for 1 days\n"
    assert done.stderr == (
        "warning: forecast has no argument 'dayz' (did you mean 'days'?); arguments: city, days\n"
    )


def test_inspect_warns_of_parameters_without_a_type_hint(files):
    done = mcpkit("inspect", "forecast.py", cwd=files)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [
        f"warning: add: parameter {name!r} has no type hint; clients see an untyped argument"
        for name in ("a", "b")
    ]


@pytest.mark.parametrize(
    ("tool", "example"),
    [
        ("forecast", """'{"city": "text", "days": 1}'"""),
        ("add", """'{"a": "text", "b": "text"}'"""),
        ("nosuch", """'{"city": "Oslo"}'"""),
    ],
)
def test_the_bad_json_hint_shows_the_tools_own_arguments(files, tool, example):
    lines = assert_one_error(
        mcpkit("call", "forecast.py", tool, "{city: 1}", cwd=files),
        2,
        "arguments are not valid JSON",
    )
    assert lines[1] == f"hint: pass one JSON object in single quotes, e.g. {example}"


def test_invalid_arguments_show_the_servers_message(files):
    lines = assert_one_error(mcpkit("call", "weather.py", "forecast", '{"city": 3}', cwd=files), 1)
    assert lines[0].startswith("error: invalid arguments for 'forecast': ")
    assert "city" in lines[0]


def test_unreachable_url_is_named():
    with refused_port() as nowhere:
        url = f"http://127.0.0.1:{nowhere}/mcp"
        said = mcpkit("call", url, "x")
        assert_one_error(said, 1, f"cannot connect to {url}: connection refused")
        ws = url.replace("http://", "ws://")
        said = mcpkit("inspect", ws)
        assert_one_error(said, 1, f"cannot connect to {ws}: connection refused")


def test_unknown_host_is_named():
    url = "http://no-such-host.invalid/mcp"
    assert_one_error(mcpkit("inspect", url), 1, f"cannot connect to {url}", "not found")


@pytest.fixture
def refusing_server() -> Iterator[str]:
    """An HTTP server that answers everything with 401 and a Bearer challenge."""

    class Refuse(http.server.BaseHTTPRequestHandler):
        def refuse(self) -> None:
            body = b'{"error": "invalid_token"}'
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Bearer realm="mcp"')
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = refuse

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Refuse)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/mcp"
    finally:
        server.shutdown()
        server.server_close()


def test_http_401_hints_at_a_token(refusing_server):
    lines = assert_one_error(mcpkit("call", refusing_server, "x"), 1, "HTTP 401")
    assert "--header 'Authorization: Bearer TOKEN'" in lines[1]
    lines = assert_one_error(
        mcpkit("call", refusing_server, "x", "-H", "Authorization: Bearer nope"), 1, "HTTP 401"
    )
    assert "not accepted" in lines[1]


def test_a_malformed_header_is_a_usage_error(refusing_server):
    assert_one_error(mcpkit("inspect", refusing_server, "--header", "no colon"), 2, "not a header")


# --------------------------------------------------------------------------- usage


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("run",), "Missing argument"),
        (("run", "x.py", "--port", "eighty"), "--port"),
        (("run", "x.py", "-t", "carrier-pigeon"), "carrier-pigeon"),
        (("--verison",), "No such option: --verison"),
        (("call", "x.py"), "nothing to call"),
    ],
    ids=["missing-target", "bad-port", "bad-transport", "unknown-option", "missing-tool"],
)
def test_usage_errors_exit_2(args, expected):
    lines = assert_one_error(mcpkit(*args), 2, expected)
    assert lines[1].startswith("hint: see 'mcpkit") and lines[1].endswith("--help'")


def test_port_out_of_range_is_a_usage_error():
    assert_one_error(
        mcpkit("run", "examples/everything.py", "-t", "http", "--port", "70000"),
        2,
        "port 70000 is out of range",
    )


# --------------------------------------------------------------------------- --debug


def test_debug_shows_the_traceback(files):
    done = mcpkit("--debug", "run", "raises.py", cwd=files)
    assert done.returncode == 1
    assert "Traceback (most recent call last)" in done.stderr and "KeyError" in done.stderr
    assert done.stderr.splitlines()[-1].startswith("error: raises.py:4: KeyError")


def test_mcpkit_debug_env_shows_the_traceback(files):
    done = mcpkit("call", "weather.py", "forcast", cwd=files, env={"MCPKIT_DEBUG": "1"})
    assert done.returncode == 1
    assert "Traceback (most recent call last)" in done.stderr and "McpCallError" in done.stderr
    assert "error: no tool named 'forcast'" in done.stderr


def test_debug_off_values_of_the_env_mean_off(files):
    assert_one_error(
        mcpkit("run", "raises.py", cwd=files, env={"MCPKIT_DEBUG": "0"}), 1, "KeyError"
    )

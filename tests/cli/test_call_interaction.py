"""``mcpkit call`` while the tool runs: log lines and a progress bar (on a terminal only) on
stderr, the server's elicitation and sampling requests answered from stdin (``--input``, or
stdin a terminal) or refused (``--no-input``, or stdin not a terminal)."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.environment import child_environment

ROOT = Path(__file__).resolve().parents[2]
SERVER = '''
import json
from mcpkit import McpServerApp, McpToolContext, mcp_tool

FORM = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Your name"},
        "age": {"type": "integer"},
        "subscribe": {"type": "boolean", "default": False},
        "colour": {"type": "string", "enum": ["red", "green", "blue"]},
        "note": {"type": "string"},
    },
    "required": ["name", "age"],
}


@mcp_tool
async def steps(ctx: McpToolContext) -> str:
    """Logs and reports progress in three steps."""
    for step in range(1, 4):
        await ctx.log("info", f"step {step} of 3", logger="steps")
        await ctx.report_progress(step, 3, f"step {step}")
    return "all steps done"


@mcp_tool
async def signup(ctx: McpToolContext) -> str:
    """Asks the user to fill in a form."""
    answer = await ctx.elicit("Sign up for the newsletter", FORM)
    return json.dumps({"action": answer.action, "content": answer.data})


@mcp_tool
async def ask_model(question: str, ctx: McpToolContext) -> str:
    """Asks the client's model."""
    result = await ctx.sample(question, max_tokens=50, system_prompt="Be brief.")
    return "model said: " + result["content"]["text"]


@mcp_tool
async def impatient(ctx: McpToolContext) -> str:
    """Asks, but waits only half a second for the answer."""
    try:
        await ctx.elicit("Quick!", {"type": "object", "properties": {"x": {"type": "string"}}},
                         timeout=0.5)
    except Exception as exc:
        return f"gave up: {type(exc).__name__}"
    return "answered"


app = McpServerApp(steps, signup, ask_model, impatient, name="interaction")
'''


@pytest.fixture(scope="module")
def server_file(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("call_interaction") / "interaction.py"
    path.write_text(SERVER)
    return str(path)


def call(server_file: str, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = child_environment()
    return subprocess.run(
        [sys.executable, "-m", "mcpkit", "call", server_file, *args],
        cwd=ROOT,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )


# --------------------------------------------------------------------------- logs, progress


def assert_steps_logged(done: subprocess.CompletedProcess[str]) -> None:
    """``steps`` answered, its three log lines on stderr as they came, and nothing else."""
    assert done.returncode == 0, done.stderr
    assert done.stdout == "all steps done\n"
    assert done.stderr.splitlines() == [
        "[info] steps: step 1 of 3",
        "[info] steps: step 2 of 3",
        "[info] steps: step 3 of 3",
    ]


def test_log_notifications_print_as_they_come_and_no_bar_off_a_terminal(server_file):
    assert_steps_logged(call(server_file, "steps"))


def test_log_notifications_of_a_server_over_http_print_too(server_file):
    """Over HTTP the client picks 2026-07-28, whose servers log only at the level a request's
    _meta names: ``mcpkit call URL`` names one (it showed no log line)."""
    env = child_environment()
    server = subprocess.Popen(
        [sys.executable, "-m", "mcpkit", "run", server_file, "-t", "http", "--port", "0"],
        cwd=ROOT,
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    try:
        assert server.stderr is not None
        url = None
        deadline = time.monotonic() + 30
        while url is None and time.monotonic() < deadline:
            line = server.stderr.readline()
            assert line, "the server ended before serving"
            if " on http://" in line:
                url = line.split(" on ", 1)[1].split()[0]
        assert url is not None
        assert_steps_logged(call(url, "steps"))
    finally:
        server.terminate()
        server.wait(10)


def read_until_exit(master: int, proc: subprocess.Popen[bytes], timeout: float = 30) -> bytes:
    """Everything the pseudo-terminal shows until the process ends."""
    seen = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.1)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the other end closed
                break
            if not chunk:
                break
            seen += chunk
        elif proc.poll() is not None:
            break
    return seen


def run_on_terminal(server_file: str, *args: str, answers: str = "") -> tuple[int, str, str]:
    """``mcpkit call`` with stdin and stderr on a pseudo-terminal, stdout a pipe."""
    master, slave = pty.openpty()
    env = child_environment()
    env.update(TERM="xterm-256color", COLUMNS="100")
    proc = subprocess.Popen(
        [sys.executable, "-m", "mcpkit", "call", server_file, *args],
        cwd=ROOT,
        stdin=slave,
        stdout=subprocess.PIPE,
        stderr=slave,
        env=env,
    )
    os.close(slave)
    try:
        if answers:
            os.write(master, answers.encode())
        shown = read_until_exit(master, proc)
        out = proc.stdout.read().decode()  # type: ignore[union-attr]
        proc.wait(timeout=30)
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
    return proc.returncode, out, shown.decode(errors="replace")


def test_progress_is_a_bar_on_a_terminal(server_file):
    code, out, shown = run_on_terminal(server_file, "steps")
    assert code == 0, shown
    assert out == "all steps done\n"
    for percent in ("33%", "67%", "100%"):  # rich's percentage column: 1, 2, 3 of 3
        assert percent in shown
    assert "━" in shown  # the bar itself
    assert "[info] steps: step 3 of 3" in shown


# --------------------------------------------------------------------------- elicitation


def test_elicitation_answered_from_stdin_with_input(server_file):
    done = call(server_file, "signup", "--input", stdin="y\nAda\nforty\n36\n\n3\n\n")
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer == {
        "action": "accept",
        "content": {"name": "Ada", "age": 36, "subscribe": False, "colour": "blue"},
    }
    assert "The server asks: Sign up for the newsletter" in done.stderr
    assert "Your name (string; required)" in done.stderr
    assert "not an integer" in done.stderr  # "forty" was asked again
    assert "1) red, 2) green, 3) blue" in done.stderr


def test_elicitation_decline_and_cancel_from_stdin(server_file):
    done = call(server_file, "signup", "--input", stdin="n\n")
    assert json.loads(done.stdout) == {"action": "decline", "content": None}
    done = call(server_file, "signup", "--input", stdin="c\n")
    assert json.loads(done.stdout)["action"] == "cancel"
    done = call(server_file, "signup", "--input", stdin="y\nAda\n")  # input ends mid-form
    assert json.loads(done.stdout)["action"] == "cancel"


def test_elicitation_refused_with_no_input(server_file):
    done = call(server_file, "signup", "--no-input", stdin="y\nAda\n36\n")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"action": "decline", "content": None}
    assert done.stderr == "mcpkit: declined the server's elicitation request (--no-input)\n"


def test_elicitation_refused_when_stdin_is_not_a_terminal(server_file):
    done = call(server_file, "signup", stdin="y\nAda\n36\n")
    assert json.loads(done.stdout)["action"] == "decline"
    assert "stdin is not a terminal" in done.stderr


def test_elicitation_asked_on_a_terminal_without_flags(server_file):
    code, out, shown = run_on_terminal(server_file, "signup", answers="\nGrace\n85\nyes\nred\nhi\n")
    assert code == 0, shown
    assert json.loads(out) == {
        "action": "accept",
        "content": {"name": "Grace", "age": 85, "subscribe": True, "colour": "red", "note": "hi"},
    }


# --------------------------------------------------------------------------- sampling


def test_sampling_answered_from_stdin(server_file):
    done = call(server_file, "ask_model", '{"question": "2+2?"}', "--input", stdin="four\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "model said: four\n"
    assert "system: Be brief." in done.stderr and "user: 2+2?" in done.stderr


def test_sampling_refused_with_no_input(server_file):
    done = call(server_file, "ask_model", '{"question": "2+2?"}', "--no-input", "--json")
    assert done.returncode == 1
    result = json.loads(done.stdout)
    assert result["isError"] is True
    assert "rejected" in result["content"][0]["text"]
    assert done.stderr == "mcpkit: refused the server's sampling request (--no-input)\n"


def test_an_empty_reply_refuses_the_sampling_request(server_file):
    done = call(server_file, "ask_model", '{"question": "2+2?"}', "--input", stdin="\n")
    assert done.returncode == 1
    assert "rejected" in done.stdout


def test_a_prompt_left_unanswered_does_not_keep_the_command_alive(server_file):
    """The server stops waiting; the call ends though the question still waits for a line."""
    env = child_environment()
    proc = subprocess.Popen(
        [sys.executable, "-m", "mcpkit", "call", server_file, "impatient", "--input"],
        cwd=ROOT,
        stdin=subprocess.PIPE,  # open, and nothing ever written
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        code = proc.wait(timeout=30)  # stdin stays open: only the call's end can end it
        out = proc.stdout.read()  # type: ignore[union-attr]
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.stdin.close()  # type: ignore[union-attr]
    assert code == 0
    assert out.startswith("gave up: ")

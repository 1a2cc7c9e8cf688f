"""An mcpkit app is a guest in its host's process: a host that serves and calls one, with its
own uvicorn or with ``run_http_server`` until interrupted, finds everything it owns in its
process as it was once the app has stopped (``host_state_program.py`` notes it, item by
item). Here, not beside the FastAPI hosts, so that the dependency-floor jobs run it too: the
oldest uvicorn allowed sets the process's event loop policy to serve."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.environment import child_environment

#: The host program: ``python host_state_program.py SERVING [CHANGE]``.
HOST_STATE_PROGRAM = Path(__file__).with_name("host_state_program.py")


def changed_by_the_host_program(serving: str, *change: str) -> dict[str, Any]:
    """What the program found changed in its process (without this process's MCPKIT_*
    settings, which would change how the app serves)."""
    done = subprocess.run(
        [sys.executable, str(HOST_STATE_PROGRAM), serving, *change],
        capture_output=True,
        text=True,
        timeout=60,
        env=child_environment(),
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.parametrize("serving", ["uvicorn", "run_http_server"])
def test_a_host_using_mcpkit_finds_its_process_as_it_was(serving):
    """The collector, the sys and threading hooks, every signal handler, the warning filters,
    logging, the event loop's policy and settings, the environment, the locale and limits,
    the threads: as they were, whether the host's uvicorn served the app or
    ``run_http_server`` did until interrupted."""
    assert changed_by_the_host_program(serving) == {}


@pytest.mark.parametrize(
    ("change", "item"),
    [
        ("warnings", "warnings filters"),
        ("collector", "gc freeze count"),
        ("signal", "signal SIGUSR1"),
        ("logging", "logging root"),
        ("switch-interval", "switch interval"),
        ("thread", "threads"),
        ("loop-policy", "event loop policy"),
    ],
)
def test_the_host_program_sees_a_change_to_its_process(change, item):
    """What shows the test above could fail: a change the program makes itself is reported."""
    assert list(changed_by_the_host_program("uvicorn", change)) == [item]


def test_the_host_program_serving_by_itself_sees_a_change_too():
    assert list(changed_by_the_host_program("run_http_server", "signal")) == ["signal SIGUSR1"]

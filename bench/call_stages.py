"""Where mcpkit's instructions per call go, stage by stage: each stage of the request path
(the header map, the body read, decoding, the 2026-07-28 admission, dispatch, the tool, the
JSON answer, ...) counted in place, inside the scenarios of ``asgi_calls.py``.

    .venv/bin/python bench/call_stages.py [--scenarios stateless session modern churn]
                                          [--stages decode admission ...]

How: a one-function C module (built here with the system's C compiler against valgrind's
``callgrind.h``) switches callgrind's counting on and off; the stage's function is wrapped so
that only its own run is counted (``--collect-atstart=no``), and the difference between
two runs of 200 and 1,200 calls gives its instructions per call, callees included. A wrapped
function that does nothing is counted the same way and subtracted: the figures are the
stage's own. Nested stages are indented under the stage that calls them; a stage a scenario
never runs shows "-". Needs valgrind and a C compiler (Debian: ``valgrind``, ``gcc``).
Figures are per request of the scenario (per cycle for churn: four requests).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import inspect
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from asgi_calls import COUNTED, HERE, PROJECT_PY, SCENARIOS  # the scenarios counted here

HTTP = "mcpkit.transports.http"

#: (name, depth, function): the request path, outermost first.
STAGES: list[tuple[str, int, str]] = [
    ("header map", 0, f"{HTTP}._asgi:header_map"),
    ("host/origin guard", 0, f"{HTTP}._security:TransportSecurityGuard.check"),
    ("POST", 0, f"{HTTP}._streamable.handler:StreamableHttpHandler.post"),
    ("body read", 1, f"{HTTP}._request_watch:read_body"),
    ("decode", 1, "mcpkit.protocol._jsonrpc:decode_message"),
    ("era of the POST", 1, f"{HTTP}._streamable.modern_post:is_modern_post"),
    ("2026-07-28 admission", 1, f"{HTTP}._streamable.modern_post:ModernPosts.admit"),
    ("its answer headers", 2, f"{HTTP}._streamable.modern_post:ResponseHeaders.of"),
    ("request session, header check", 2, f"{HTTP}._streamable.modern_post:ModernPosts._session"),
    ("session from _meta", 3, "mcpkit.server._eras.modern:MetaSessions.session"),
    ("session lookup or creation", 1, f"{HTTP}._streamable.admission:session_for"),
    ("binding", 1, f"{HTTP}._streamable.handler:StreamableHttpHandler._binding"),
    ("answer headers", 1, f"{HTTP}._streamable.handler:StreamableHttpHandler.response_headers"),
    (
        "request, run and answered",
        1,
        f"{HTTP}._streamable.handler:StreamableHttpHandler.serve_request",
    ),
    ("dispatch", 2, "mcpkit.server._engine.dispatcher:McpDispatcher.dispatch"),
    ("2026-07-28 request session", 3, "mcpkit.server._eras.modern:ModernEra.enter"),
    ("tools/call checks", 3, "mcpkit.server._handlers:MethodHandlers.call_tool"),
    ("tool run, result", 3, "mcpkit.server._handlers:MethodHandlers.execute_tool"),
    ("initialize", 3, "mcpkit.server._handlers:MethodHandlers.initialize"),
    ("2026-07-28 result", 3, "mcpkit.server._eras.modern:ModernEra.leave"),
    ("JSON answer", 2, f"{HTTP}._asgi:json_response"),
    ("notification, 202", 1, f"{HTTP}._streamable.handler:StreamableHttpHandler._serve_messages"),
    ("DELETE", 0, f"{HTTP}._streamable.handler:StreamableHttpHandler.delete"),
]
#: Counted like a stage, subtracted from each: what the wrapping itself costs.
EMPTY = "call_stages:_nothing"

TOGGLE_C = """
#include <Python.h>
#include <valgrind/callgrind.h>
static PyObject *toggle(PyObject *self, PyObject *unused) { CALLGRIND_TOGGLE_COLLECT; Py_RETURN_NONE; }
static PyMethodDef methods[] = {{"toggle", toggle, METH_NOARGS, ""}, {NULL, NULL, 0, NULL}};
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_cg_toggle", NULL, -1, methods};
PyMODINIT_FUNC PyInit__cg_toggle(void) { return PyModule_Create(&module); }
"""


def _nothing() -> None:
    """The empty stage."""


def build_toggle(folder: Path) -> None:
    """The C module that switches callgrind's counting, built into ``folder``."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None or shutil.which("valgrind") is None:
        raise SystemExit("call_stages.py needs valgrind and a C compiler (apt-get install ...)")
    source = folder / "_cg_toggle.c"
    source.write_text(TOGGLE_C)
    target = folder / f"_cg_toggle{sysconfig.get_config_var('EXT_SUFFIX')}"
    include = sysconfig.get_paths()["include"]
    out = subprocess.run(
        [compiler, "-O2", "-shared", "-fPIC", f"-I{include}", str(source), "-o", str(target)],
        capture_output=True,
        text=True,
    )
    if out.returncode != 0:
        raise SystemExit(f"could not build the counting switch:\n{out.stderr[-1500:]}")


#: Runs of the wrapped stage so far (a stage may run several times per call).
RUNS = [0]


def _wrap(target: str, toggle: Any) -> None:
    """Replace ``module:name`` (or ``module:Class.method``) by a wrapper that counts only
    while it runs; aliases of a method in its class are replaced too."""
    module_name, qualname = target.split(":")
    owner: Any = importlib.import_module(module_name)
    *path, name = qualname.split(".")
    for part in path:
        owner = getattr(owner, part)
    found = owner.__dict__[name] if isinstance(owner, type) else getattr(owner, name)
    kind = type(found) if isinstance(found, (staticmethod, classmethod)) else None
    function = found.__func__ if kind is not None else found

    if inspect.iscoroutinefunction(function):

        async def counted(*args: Any, **kwargs: Any) -> Any:
            RUNS[0] += 1
            toggle()
            try:
                return await function(*args, **kwargs)
            finally:
                toggle()
    else:

        def counted(*args: Any, **kwargs: Any) -> Any:  # type: ignore[misc]
            RUNS[0] += 1
            toggle()
            try:
                return function(*args, **kwargs)
            finally:
                toggle()

    replacement = kind(counted) if kind is not None else counted
    if isinstance(owner, type):
        for key, value in list(owner.__dict__.items()):
            if value is found:
                setattr(owner, key, replacement)
        return
    for module in list(sys.modules.values()):  # names imported elsewhere before we came
        if module is not None and getattr(module, name, None) is function:
            setattr(module, name, replacement)


def child(scenario: str, target: str, calls: int) -> None:
    import _cg_toggle  # type: ignore[import-not-found]  # built by build_toggle
    import asgi_calls
    import call_stages  # this file as a module: its _nothing is the one wrapped

    _wrap(target, _cg_toggle.toggle)

    async def run() -> None:
        await asgi_calls.measure(scenario, calls, 100)
        if target == EMPTY:  # as many empty stages as calls
            for _ in range(calls):
                call_stages._nothing()

    try:
        import uvloop

        uvloop.run(run())
    except ImportError:
        asyncio.run(run())
    print(RUNS[0] if target != EMPTY else call_stages.RUNS[0])


def count(folder: Path, scenario: str, target: str) -> tuple[int, float]:
    """Instructions per call of ``scenario`` spent in ``target`` (callees included), and
    how many times per call it runs."""
    env = {**os.environ, "PYTHONHASHSEED": "0", "PYTHONPATH": f"{folder}{os.pathsep}{HERE}"}
    python = PROJECT_PY if PROJECT_PY.exists() else Path(sys.executable)
    counts, runs = [], []
    for calls in COUNTED:
        command = [str(python), __file__, "--child", scenario, target, str(calls)]
        out = subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                "--collect-atstart=no",
                "--callgrind-out-file=/dev/null",
                *command,
            ],
            env=env,
            capture_output=True,
            text=True,
        )
        found = re.search(r"Collected : (\d+)", out.stderr)
        if out.returncode != 0 or found is None:
            raise SystemExit(f"{scenario} {target} failed:\n{out.stderr[-1500:]}")
        counts.append(int(found.group(1)))
        runs.append(int(out.stdout.split()[-1]))
    calls = COUNTED[1] - COUNTED[0]
    return round((counts[1] - counts[0]) / calls), (runs[1] - runs[0]) / calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenarios", nargs="+", choices=SCENARIOS, default=list(SCENARIOS))
    names = [name for name, _, _ in STAGES]
    parser.add_argument("--stages", nargs="+", choices=names, default=names, metavar="STAGE")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        scenario, target, calls = args.child
        child(scenario, target, int(calls))
        return
    stages = [stage for stage in STAGES if stage[0] in args.stages]
    folder = Path(tempfile.mkdtemp(prefix="bench-stages-"))
    try:
        build_toggle(folder)
        jobs = [(s, t) for s in args.scenarios for t in [EMPTY, *(t for _, _, t in stages)]]
        with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
            counted = dict(zip(jobs, pool.map(lambda job: count(folder, *job), jobs)))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print(
        f"\n{'instructions per call, in place':<36}" + "".join(f"{s:>11}" for s in args.scenarios)
    )
    for name, depth, target in stages:
        cells = []
        for scenario in args.scenarios:
            total, runs = counted[(scenario, target)]
            empty = counted[(scenario, EMPTY)][0]  # one wrapper's cost
            own = round(total - runs * empty)
            cells.append(f"{own:11,}" if runs else f"{'-':>11}")
        print(f"{'  ' * depth + name:<36}" + "".join(cells))


if __name__ == "__main__":
    main()

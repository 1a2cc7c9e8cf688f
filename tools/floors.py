#!/usr/bin/env python3
"""The dependency-floor job: mcpkit's tests at the lowest versions pyproject.toml allows, and
at the newest ones, of its runtime dependencies and of the ws, redis and pydantic extras
(msgspec, typer, rich, uvicorn, httpx, joserfc, jsonschema-rs, httptools, uvloop,
websockets, redis, pydantic). Run it as ``./dev floors`` (it starts redis-server first);
``.ci/run`` runs it.

* lowest: ``.venv-floors/lowest`` gets mcpkit with ``-c tools/floors-lowest.txt``, which pins
  each of them to its floor (checked here against pyproject.toml: a floor raised in one must
  be raised in the other), and runs the core of the suite: protocol, server, transports,
  client, auth, stores, cli and the top-level tests.
* newest: ``.venv-floors/newest`` gets the newest of each (nothing there pins them: the
  ``mcp`` dev pin of ``.venv`` may hold some back), is checked to be at the newest the index
  has, and runs the same core of the suite.
* between: ``.venv-floors/python3.N`` for each Python between those two, with the newest of
  each, runs that core too.

Python is a floor as well: the lowest end runs on the Python ``requires-python`` names, the
newest on the newest one the classifiers name, and every classifier version in between gets
its own run (``between``). Each interpreter is ``python3.N`` on PATH, else pyenv's; a version
the classifiers name that this machine lacks fails the job (install it: ``pyenv install 3.N``).

Tests needing packages these venvs do not have (the official mcp SDK, FastAPI, OpenTelemetry,
the conformance suite) are deselected by the rule in tools/floors_plugin.py, and listed.

    python3 tools/floors.py [lowest|newest|between|all] [-- PYTEST ARGS]

Extra pytest arguments replace the test paths (``-- tests/auth -k dpop``, say). FLOORS_WORKERS
sets pytest-xdist's workers (default 2; 0 runs in one process).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CONSTRAINTS = ROOT / "tools" / "floors-lowest.txt"
VENVS = ROOT / ".venv-floors"
EXTRAS = ("ws", "redis", "pydantic")
# The test tools, at their newest: what the tests need, not what mcpkit does. starlette and
# python-multipart serve the tests' authorization and JWKS servers.
TEST_TOOLS = (
    "pytest",
    "pytest-asyncio",
    "pytest-timeout",
    "pytest-xdist",
    "hypothesis",
    "jsonschema",
    "starlette",
    "python-multipart",
)
CORE_TESTS = [
    "tests/protocol",
    "tests/server",
    "tests/transports",
    "tests/client",
    "tests/auth",
    "tests/stores",
    "tests/cli",
]
DESELECT = "not interop and not packaging"


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def release(text: str) -> tuple[int, ...]:
    """``0.23`` and ``0.23.0`` alike: numeric parts, trailing zeros dropped."""
    parts = [int(p) for p in re.findall(r"\d+", text.split("+")[0])]
    while parts and parts[-1] == 0:
        parts.pop()
    return tuple(parts)


def floors() -> dict[str, str]:
    """Package -> floor (``>=X``) of mcpkit's dependencies and of the extras under test."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    requirements = list(project["dependencies"])
    for extra in EXTRAS:
        requirements += project["optional-dependencies"][extra]
    found: dict[str, str] = {}
    for requirement in requirements:
        spec = requirement.split(";")[0].replace(" ", "")
        match = re.fullmatch(r"([A-Za-z0-9_.\-]+)(?:\[[^\]]*\])?>=([0-9][0-9A-Za-z.]*)", spec)
        if match is None:
            raise SystemExit(f"floors: {requirement!r} has no plain >= floor to test")
        found[canonical(match.group(1))] = match.group(2)
    return found


def pythons() -> list[str]:
    """The Pythons pyproject allows, oldest first: its ``Programming Language :: Python :: 3.N``
    classifiers, the first of which must be the floor of ``requires-python``."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    named = [
        c.rsplit("::", 1)[1].strip()
        for c in project["classifiers"]
        if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c)
    ]
    named.sort(key=release)
    floor = re.fullmatch(r">=\s*(3\.\d+)", project["requires-python"].strip())
    if floor is None or not named or named[0] != floor.group(1):
        raise SystemExit(
            f"floors: requires-python {project['requires-python']!r} is not >= the oldest "
            f"Python classifier ({named[:1]})"
        )
    return named


def _version_of(python: str) -> str | None:
    done = subprocess.run(
        [python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
        capture_output=True,
        text=True,
    )
    return done.stdout.strip() if done.returncode == 0 else None


def find_python(version: str) -> str:
    """An interpreter of Python ``version`` (``3.N``): ``python3.N`` on PATH when it runs (a
    pyenv shim of an inactive version does not), else pyenv's newest ``3.N.x``."""
    on_path = shutil.which(f"python{version}")
    if on_path is not None and _version_of(on_path) == version:
        return on_path
    pyenv_root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
    builds = sorted(
        pyenv_root.glob(f"versions/{version}.*/bin/python{version}"),
        key=lambda p: release(p.parts[-3]),
        reverse=True,
    )
    for build in builds:
        if _version_of(str(build)) == version:
            return str(build)
    raise SystemExit(
        f"floors: no Python {version} on this machine, which pyproject's classifiers name: "
        f"install one (pyenv install {version}) and run again"
    )


def pins() -> dict[str, str]:
    found: dict[str, str] = {}
    for line in CONSTRAINTS.read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            name, _, version = line.partition("==")
            found[canonical(name)] = version.strip()
    return found


def check_pins() -> None:
    """Every floor of pyproject.toml pinned, at that very release, in floors-lowest.txt."""
    wrong = []
    pinned = pins()
    for name, floor in floors().items():
        if name not in pinned:
            wrong.append(f"{name}>={floor} is not pinned in {CONSTRAINTS.name}")
        elif release(pinned[name]) != release(floor):
            wrong.append(
                f"{name}: pyproject says >={floor}, {CONSTRAINTS.name} pins {pinned[name]}"
            )
    if wrong:
        raise SystemExit("floors: " + "\n        ".join(wrong))


def run(cmd: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    done: subprocess.CompletedProcess[str] = subprocess.run(cmd, cwd=ROOT, text=True, **kwargs)
    return done


def pip_install(python: Path, args: list[str], log: Path) -> None:
    with log.open("a") as out:
        done = run([str(python), "-m", "pip", "install", *args], stdout=out, stderr=out)
    if done.returncode != 0:
        sys.stdout.write(log.read_text()[-6000:])
        raise SystemExit(f"floors: pip install failed (log: {log})")


def make_venv(name: str, version: str, install: list[str], *, refresh: bool) -> Path:
    """``.venv-floors/NAME`` on Python ``version`` with ``install``; kept while its inputs are
    unchanged, unless ``refresh`` (the newest end asks the index again every time)."""
    venv = VENVS / name
    python = venv / "bin" / "python"
    digest = hashlib.sha1(
        (ROOT / "pyproject.toml").read_bytes() + CONSTRAINTS.read_bytes() + repr(install).encode()
    ).hexdigest()[:12]
    stamp = venv / f".installed-{digest}"
    if python.exists() and _version_of(str(python)) != version:
        shutil.rmtree(venv)  # made on another Python
    if stamp.exists() and not refresh:
        return python
    if not python.exists():
        run([find_python(version), "-m", "venv", str(venv)], check=True)
    for old in venv.glob(".installed-*"):
        old.unlink()
    log = venv / "pip.log"
    log.write_text("")
    pip_install(python, ["--quiet", "--upgrade", "pip"], log)
    pip_install(python, ["--quiet", *install], log)
    stamp.touch()
    return python


def installed(python: Path) -> dict[str, str]:
    done = run(
        [str(python), "-m", "pip", "list", "--format", "json"],
        capture_output=True,
        check=True,
    )
    return {canonical(p["name"]): p["version"] for p in json.loads(done.stdout)}


def outdated(python: Path, names: list[str]) -> dict[str, tuple[str, str]]:
    done = run(
        [str(python), "-m", "pip", "list", "--outdated", "--format", "json"],
        capture_output=True,
        check=True,
    )
    return {
        canonical(p["name"]): (p["version"], p["latest_version"])
        for p in json.loads(done.stdout)
        if canonical(p["name"]) in names
    }


def pytest(
    python: Path, paths: list[str], extra: list[str], workers: str = "2", deselect: str = DESELECT
) -> int:
    workers = os.environ.get("FLOORS_WORKERS", workers)
    cmd = [str(python), "-m", "pytest", "-q", "-rsfExX", "-p", "no:cacheprovider"]
    cmd += ["-p", "tools.floors_plugin", "-m", deselect]
    if workers != "0":
        cmd += ["-n", workers]
    cmd += extra or paths
    env = {**os.environ, "MCPKIT_TESTS_NO_SKIP": os.environ.get("MCPKIT_TESTS_NO_SKIP", "1")}
    print("floors: " + " ".join(cmd[1:]), flush=True)
    return run(cmd, env=env).returncode


def show(title: str, version: str, versions: dict[str, str], names: list[str]) -> None:
    shown = ", ".join(f"{n} {versions.get(n, '-')}" for n in names)
    print(f"floors: {title}: Python {version}: {shown}", flush=True)


def core_tests() -> list[str]:
    top_level = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tests").glob("test_*.py"))
    return CORE_TESTS + top_level


def lowest(extra: list[str]) -> int:
    check_pins()
    names = sorted(floors())
    version = pythons()[0]
    python = make_venv(
        "lowest",
        version,
        ["-c", str(CONSTRAINTS), "-e", f".[{','.join(EXTRAS)}]", *TEST_TOOLS],
        refresh=False,
    )
    versions = installed(python)
    wrong = [n for n in names if release(versions.get(n, "")) != release(floors()[n])]
    if wrong:
        raise SystemExit(f"floors: the lowest venv does not hold the floors of {wrong}")
    show("lowest", version, versions, [*names, "click"])
    # uvicorn's own answers differ between its releases: checked at the newest only
    return pytest(python, core_tests(), extra, deselect=f"{DESELECT} and not uvicorn_answers")


def at_newest(name: str, version: str, extra: list[str]) -> int:
    """The core of the suite on Python ``version`` with the newest of every dependency."""
    names = sorted(floors())
    python = make_venv(
        name,
        version,
        ["--upgrade", "--upgrade-strategy", "eager", "-e", f".[{','.join(EXTRAS)}]", *TEST_TOOLS],
        refresh=True,
    )
    versions = installed(python)
    show(name, version, versions, names)
    behind = outdated(python, names)
    if behind:
        raise SystemExit(f"floors: the {name} venv is behind the index: {behind}")
    main = ROOT / ".venv" / "bin" / "python"
    if name == "newest" and main.exists():
        main_versions = installed(main)
        held = {n: main_versions.get(n) for n in names if main_versions.get(n) != versions.get(n)}
        if held:
            print(f"floors: .venv (./dev test) does not run the newest of {held}", flush=True)
    return pytest(python, core_tests(), extra)


def newest(extra: list[str]) -> int:
    return at_newest("newest", pythons()[-1], extra)


def between(extra: list[str]) -> int:
    """Each Python the classifiers name between the lowest and the newest."""
    worst = 0
    for version in pythons()[1:-1]:
        worst = max(worst, at_newest(f"python{version}", version, extra))
    return worst


def main(argv: list[str]) -> int:
    extra: list[str] = []
    if "--" in argv:
        at = argv.index("--")
        argv, extra = argv[:at], argv[at + 1 :]
    which = argv[0] if argv else "all"
    jobs = {"lowest": lowest, "newest": newest, "between": between}
    if which not in (*jobs, "all"):
        print(__doc__)
        return 2
    started = time.monotonic()
    codes = {name: job(extra) for name, job in jobs.items() if which in (name, "all")}
    took = time.monotonic() - started
    print(f"floors: {codes} in {took:.0f} s", flush=True)
    return 0 if all(code == 0 for code in codes.values()) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Runs the benchmarks: ``./dev bench`` (all of them, one after the other) or
``./dev bench NAME ... [-- ARGS]`` (the named ones, each given ARGS); ``./dev bench --list``
names them. A benchmark is a script ``bench/<name>.py``; each prints its own table."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent


def available() -> list[str]:
    return sorted(
        path.stem
        for path in BENCH_DIR.glob("*.py")
        if not path.stem.startswith("_") and path.stem != "run"
    )


def main(argv: list[str]) -> int:
    names, passed = argv, []
    if "--" in argv:
        cut = argv.index("--")
        names, passed = argv[:cut], argv[cut + 1 :]
    known = available()
    if names == ["--list"]:
        print("\n".join(known))
        return 0
    unknown = [name for name in names if name.replace("-", "_") not in known]
    if unknown:
        print(
            f"error: no benchmark named {', '.join(unknown)}; there are: {', '.join(known)}",
            file=sys.stderr,
        )
        return 2
    status = 0
    for name in [name.replace("-", "_") for name in names] or known:
        print(f"== {name}", flush=True)
        status = subprocess.call([sys.executable, str(BENCH_DIR / f"{name}.py"), *passed]) or status
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

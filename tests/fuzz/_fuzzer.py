"""The live fuzzer: generated inputs against ``examples/everything.py`` served by a
subprocess over stdio and Streamable HTTP, in both protocol eras.

After every input the server must answer an ordinary call (tools/call ``calculate``)
correctly; every request with an id must get exactly one reply; every message the server
sends must be valid JSON-RPC and match the era's schema. ``fuzz`` returns the figures and
the defects (each with the input that caused it); ``main`` is ``./dev fuzz`` and
bench/fuzz.py; tests/fuzz/test_live_fuzz.py runs a short budget in CI.

    python bench/fuzz.py [--budget 2000] [--seconds S] [--seed 1] [--targets stdio http ...]
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from tests.fuzz._http_target import HttpTarget
from tests.fuzz._inputs import MODERN, Inputs
from tests.fuzz._targets import Defect, ServerDown, Stats, StdioTarget, Target, sample_of

TARGETS: dict[str, Callable[[int], Target]] = {
    "stdio": lambda seed: StdioTarget("2025-11-25", seed),
    "stdio-modern": lambda seed: StdioTarget(MODERN, seed),
    "http": lambda seed: HttpTarget("2025-11-25", seed),
    "http-modern": lambda seed: HttpTarget(MODERN, seed),
}
#: The figures that must be 0.
FAILURES = ("crash", "lost", "duplicate", "unexpected", "invalid", "anon", "http-5xx", "traceback")


async def fuzz(
    target: Target, *, inputs: int, seconds: float | None = None, stderr_dir: str | None = None
) -> Stats:
    """Run up to ``inputs`` inputs (or ``seconds``) against a fresh server; with
    ``stderr_dir``, the server's stderr is kept there (one file per target)."""
    stats = target.stats
    started = time.monotonic()
    await target.start()
    assert target.server is not None
    try:
        catalog = await target.read_catalog()
        target.inputs = target.inputs or Inputs(target.version, catalog, target.rng)
        stats.rss_start = target.server.rss()
        done = 0
        while done < inputs and (seconds is None or time.monotonic() - started < seconds):
            made = target.inputs.next()
            began = time.monotonic()
            try:
                await target.send_input(made)
            except (ServerDown, TimeoutError, ConnectionError, OSError) as exc:
                stats.crashes += 1
                sample = sample_of(made.frames[0]) if made.frames else ""
                target.defect("crash", made.label, f"{exc!r}", sample)
                break
            done += 1
            took = time.monotonic() - began
            stats.slowest = max(stats.slowest, (took, made.label, sample_of(made.frames[0])))
            if not target.server.alive():
                stats.crashes += 1
                target.defect("crash", made.label, "the server exited", sample_of(made.frames[0]))
                break
        stats.rss_end = target.server.rss() if target.server.alive() else 0
    finally:
        await target.stop()
        stats.seconds = time.monotonic() - started
    for exception in target.server.exceptions():
        # A client's error answer (McpCallError) raised through a handler that does not
        # catch it is the handler's business: logged and answered -32603, as designed.
        kind = "handler" if exception.startswith("mcpkit._exceptions.McpCallError") else "traceback"
        target.defect(kind, "server stderr", exception)
    if stderr_dir is not None:
        path = Path(stderr_dir) / f"{target.name.replace(' ', '-')}.stderr.txt"
        path.write_text("".join(target.server.stderr))
    return stats


async def fuzz_all(
    names: list[str],
    *,
    inputs: int,
    seconds: float | None = None,
    seed: int = 1,
    stderr_dir: str | None = None,
) -> list[Stats]:
    results = []
    for index, name in enumerate(names):
        target = TARGETS[name](seed + index)
        results.append(await fuzz(target, inputs=inputs, seconds=seconds, stderr_dir=stderr_dir))
    return results


def failures(results: list[Stats]) -> list[Defect]:
    return [d for stats in results for d in stats.defects if d.kind in FAILURES]


def report(results: list[Stats], *, limit: int = 25) -> str:
    """The figures, one row per target, then the replies, HTTP statuses and defects."""
    head = f"{'target':<16}{'inputs':>7}{'valid':>7}{'mutated':>8}{'garbage':>8}{'http':>6}"
    head += f"{'health':>7}{'crashes':>8}{'lost':>6}{'dup':>5}{'unexp':>6}{'invalid':>8}"
    head += f"{'anon':>6}{'5xx':>5}{'-32603':>7}{'tb':>4}{'rss MB':>14}{'s':>6}"
    lines = [head]
    replies: Counter[str] = Counter()
    statuses: Counter[int] = Counter()
    server_requests: Counter[str] = Counter()
    labels: Counter[str] = Counter()
    for s in results:
        rss = f"{s.rss_start / 1e6:.0f}->{s.rss_end / 1e6:.0f}"
        lines.append(
            f"{s.target:<16}{sum(s.inputs.values()):>7}{s.inputs['valid']:>7}"
            f"{s.inputs['mutated']:>8}{s.inputs['garbage']:>8}{s.inputs['http']:>6}"
            f"{s.health_checks:>7}{s.crashes:>8}{s.count('lost'):>6}{s.count('duplicate'):>5}"
            f"{s.count('unexpected'):>6}{s.count('invalid'):>8}{s.count('anon'):>6}"
            f"{s.count('http-5xx'):>5}{s.count('internal'):>7}{s.count('traceback'):>4}"
            f"{rss:>14}{s.seconds:>6.1f}"
        )
        replies.update(s.replies)
        statuses.update(s.statuses)
        server_requests.update(s.server_requests)
        labels.update(s.labels)
    total = sum(sum(s.inputs.values()) for s in results)
    lines.append(f"inputs tried: {total}; by label: {len(labels)} kinds")
    lines.append("replies by kind: " + ", ".join(f"{k} {v}" for k, v in sorted(replies.items())))
    if statuses:
        lines.append("HTTP statuses: " + ", ".join(f"{k} {v}" for k, v in sorted(statuses.items())))
    if server_requests:
        asked = ", ".join(f"{k} {v}" for k, v in sorted(server_requests.items()))
        lines.append(f"server-to-client requests answered: {asked}")
    notes = sum(s.notifications for s in results)
    lines.append(f"notifications received: {notes}")
    found = failures(results)
    crashes = sum(s.crashes for s in results)
    lost = sum(s.count("lost") for s in results)
    lines.append(f"crashes = {crashes}, lost replies = {lost}, failures = {len(found)}")
    internal = Counter(d.detail for s in results for d in s.defects if d.kind == "internal")
    if internal:
        lines.append("-32603 answers (a handler raised; the everything server's protocol_error_job")
        lines.append("does so on purpose):")
        lines += [f"  {n} x {detail}" for detail, n in internal.most_common(10)]
    groups: dict[tuple[str, str, str], list[Defect]] = {}
    for d in (d for s in results for d in s.defects if d.kind != "internal"):
        groups.setdefault((d.target, d.kind, _shape(d)), []).append(d)
    if groups:
        lines.append(f"defects ({len(found)}), grouped, with the first input of each group:")
        for (_target, _kind, _), group in list(groups.items())[:limit]:
            lines.append(f"  {len(group)} x {group[0]}")
    for s in results:
        took, label, sample = s.slowest
        lines.append(f"[{s.target}] slowest input: {took:.2f} s, {label}: {sample[:160]}")
    return "\n".join(lines)


def _shape(defect: Defect) -> str:
    """What makes two defects the same for the report: the label's first words, and the
    detail without its numbers and ids."""
    label = " ".join(defect.label.split()[:2])
    return label + " " + re.sub(r"'[^']*'|\d+", "_", defect.detail)[:80]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--budget", type=int, default=2000, help="inputs per target")
    parser.add_argument("--seconds", type=float, default=None, help="time cap per target")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--targets", nargs="+", default=list(TARGETS), choices=list(TARGETS))
    parser.add_argument("--stderr-dir", help="keep each server's stderr in this directory")
    args = parser.parse_args(argv)
    started = time.monotonic()
    run = fuzz_all(
        args.targets,
        inputs=args.budget,
        seconds=args.seconds,
        seed=args.seed,
        stderr_dir=args.stderr_dir,
    )
    results = asyncio.run(run)
    print(
        f"fuzz: seed {args.seed}, budget {args.budget} inputs per target, "
        f"{time.monotonic() - started:.1f} s"
    )
    print(report(results))
    return 1 if failures(results) else 0


if __name__ == "__main__":
    sys.exit(main())

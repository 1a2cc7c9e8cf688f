"""The live fuzzer (tests/fuzz/_fuzzer.py) on a CI budget: schema-guided, mutated and
garbage inputs against ``mcpkit run examples/everything.py`` over stdio and Streamable HTTP,
in both eras. After every input the server answers a tools/call correctly; every request
with an id gets exactly one reply; every message it sends is valid for the era's schema.

``MCPKIT_FUZZ_BUDGET`` sets the inputs per target (default 300: the four targets take about
20 s together); ``MCPKIT_FUZZ_SEED`` the seed. ``./dev fuzz --targets NAME --seed S --budget
300`` replays one target's run outside pytest; ``./dev fuzz --budget 5000`` is a long run.
"""

from __future__ import annotations

import os

import pytest

from tests.figures import record
from tests.fuzz._fuzzer import FAILURES, TARGETS, fuzz, report

BUDGET = int(os.environ.get("MCPKIT_FUZZ_BUDGET", "300"))
SEED = int(os.environ.get("MCPKIT_FUZZ_SEED", "1"))


@pytest.mark.parametrize("name", list(TARGETS))
async def test_server_survives_fuzzing_and_answers_every_request_once(name: str) -> None:
    stats = await fuzz(TARGETS[name](SEED), inputs=BUDGET)
    figures = report([stats])
    record(f"fuzz {name}", figures)
    assert stats.crashes == 0, figures
    assert stats.health_checks >= BUDGET, figures  # a health call after every input
    assert [d for d in stats.defects if d.kind in FAILURES] == [], figures

"""The example budget of the codec property tests (tests/protocol/test_properties_*.py).

``MCPKIT_FUZZ_EXAMPLES`` examples per test (default 150, which keeps every property file
to a few seconds in CI); set it high for a long local run, e.g.
``MCPKIT_FUZZ_EXAMPLES=20000 .venv/bin/python -m pytest tests/protocol -k properties``.
No deadline: a shared CI machine stalls now and then, and a slow example is not a bug.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

FUZZ_EXAMPLES = int(os.environ.get("MCPKIT_FUZZ_EXAMPLES", "150"))

fuzz_settings = settings(
    max_examples=FUZZ_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

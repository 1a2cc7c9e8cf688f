"""``mcpkit proxy … --transport http`` as a real process on a free port."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.conformance._suite import running_mcpkit

ROOT = Path(__file__).resolve().parents[2]
EVERYTHING = [sys.executable, "-m", "mcpkit", "run", "examples/everything.py"]


@contextmanager
def running_proxy(*target: str) -> Iterator[str]:
    """Yields the endpoint URL of ``mcpkit proxy --transport http TARGET``."""
    with running_mcpkit("proxy", "--transport", "http", *target) as url:
        yield url

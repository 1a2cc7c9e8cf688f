"""Soak: mixed load against a live Streamable HTTP server for a given duration, then a check
that the server gives back the memory and the descriptors the load took.

    python bench/soak.py [--duration 600] [--warmup 30] [--workers 8] [--idle-timeout 5]
                         [--rss-tolerance 0.10] [--seed 1]

The server is examples/everything.py (tests/fuzz/_soak_server.py: the session idle timeout
set short, so abandoned sessions expire within the run). The load: calls in kept sessions,
sessions opened and abandoned or DELETEd, GET streams opened and dropped mid-stream, slow
calls dropped mid-stream or cancelled, stateless 2026-07-28 calls and dropped
subscriptions/listen streams. Prints the server's RSS and descriptors at start, after the
warm-up (load, then expiry), at their peak under load and after the load has stopped and
its sessions expired; the HTTP requests done; and the errors by kind. Passes when
descriptors are back to their warm-up count and RSS within ``--rss-tolerance`` of its
warm-up level. The engine is tests/fuzz/_soak.py; CI runs a short soak
(tests/fuzz/test_soak.py). Nothing is written into the repository.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository, for tests.*

from tests.fuzz._soak import main

if __name__ == "__main__":
    sys.exit(main())

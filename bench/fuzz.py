"""Live fuzzing, long run: schema-guided, mutated and garbage inputs against
``mcpkit run examples/everything.py`` over stdio and Streamable HTTP, both protocol eras.

    python bench/fuzz.py [--budget 2000] [--seconds S] [--seed 1]
                         [--targets stdio stdio-modern http http-modern] [--stderr-dir DIR]

(``./dev fuzz`` runs it.) ``--budget`` is the number of inputs per target; a health call
(tools/call ``calculate``) follows every input. Prints, per target, the inputs tried by
kind, the replies by kind (result, each error code), the HTTP statuses, crashes and lost
replies, and the defects found, grouped, each with the first input that caused it. Exits 1
when there is any (crash, lost or duplicate reply, reply to an unsent id, invalid message,
HTTP 5xx, server traceback). The engine is tests/fuzz/_fuzzer.py; CI runs a short budget
of it (tests/fuzz/test_live_fuzz.py). Nothing is written into the repository.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository, for tests.*

from tests.fuzz._fuzzer import main

if __name__ == "__main__":
    sys.exit(main())

"""Runtime helpers every layer may use: process-level tuning applied where mcpkit is the
program (``mcpkit run``, ``mcpkit proxy``) or where its caller asks, and the event loop the
servers run on."""

from __future__ import annotations

import gc
from typing import Any


def freeze_startup_objects() -> None:
    """Move everything alive after start-up (modules, the catalog, schemas) out of the
    garbage collector's reach, so collections scan only what requests create."""
    gc.collect()
    gc.freeze()


def run_async(main: Any) -> Any:
    """Run a coroutine on uvloop when it is installed (a dependency on CPython outside
    Windows), else asyncio."""
    try:
        import uvloop
    except ImportError:
        import asyncio

        return asyncio.run(main)
    return uvloop.run(main)

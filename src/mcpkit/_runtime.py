"""Runtime helpers every layer may use: the process-level tuning applied where mcpkit is
the program (``mcpkit run``, ``mcpkit proxy``), and the event loop the servers run on."""

from __future__ import annotations

import gc
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class AsTheProgram:
    """What mcpkit does to its process when it is the program, handed by ``mcpkit run``
    and ``mcpkit proxy`` to the serving code. No public function or option takes it: a
    program of the user's that serves an app keeps its collector and uvicorn's protocol as
    they are. Over HTTP, being the program also bounds request headers in time and size
    (``mcpkit.transports.http._server.protocol``)."""

    #: ``gc.freeze()`` what start-up left alive (``MCPKIT_FREEZE_GC_AT_STARTUP=0``: not).
    freeze_gc: bool = True


def freeze_startup_objects() -> None:
    """Move everything alive after start-up (modules, the catalog, schemas) out of the
    garbage collector's reach, so collections scan only what requests create. Only where
    mcpkit is the program (``AsTheProgram.freeze_gc``)."""
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

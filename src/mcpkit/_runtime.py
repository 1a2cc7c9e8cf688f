"""Runtime helpers every layer may use: what the command hands the serving code when
mcpkit is the program (``mcpkit run``, ``mcpkit proxy``), and the event loop the servers
run on."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class AsTheProgram:
    """Handed by ``mcpkit run`` and ``mcpkit proxy`` to the serving code: they are the
    program, and may tune their process. No public function or option takes it: a program
    of the user's that serves an app keeps its process as it is. Over HTTP, being the
    program bounds request headers in time and size
    (``mcpkit.transports.http._server.protocol``).

    ``after_start``: what the command does to its process once the app has started and
    before it serves (a module-level function, so a worker process receives it too; the
    command's own, ``mcpkit.cli._program``); None: nothing."""

    after_start: Callable[[], None] | None = None


def run_async(main: Any) -> Any:
    """Run a coroutine on uvloop when it is installed (a dependency on CPython outside
    Windows), else asyncio."""
    try:
        import uvloop
    except ImportError:
        import asyncio

        return asyncio.run(main)
    return uvloop.run(main)

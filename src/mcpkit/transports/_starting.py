"""Starting an app in a way a signal can interrupt: a server whose start-up waits on
something that never comes (a proxy's backend that never answers ``initialize``) must
still stop at once on SIGTERM or SIGINT, not when its own timeout ends."""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mcpkit.server._engine.engine import McpEngine


class StartupAbandoned(Exception):
    """Start-up was given up because the server was told to stop while it ran."""

    def __init__(self) -> None:
        super().__init__("start-up stopped: the server was told to stop while it started")


async def start_unless_stopped(engine: McpEngine, stop: asyncio.Event) -> None:
    """``engine.start()``, cancelled (what it started stopped again) once ``stop`` is set;
    raises ``StartupAbandoned`` then."""
    starting = asyncio.ensure_future(engine.start())
    stopping = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait((starting, stopping), return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopping.cancel()
        if not starting.done():  # told to stop, or this task was itself cancelled
            starting.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await starting
    if starting.cancelled():
        raise StartupAbandoned
    starting.result()

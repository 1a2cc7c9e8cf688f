"""Scripted peers for a ``ClientSession`` alone: a stream whose server side is a list of
frames the test wrote, and what the client sends kept for the test to read."""

from __future__ import annotations

import asyncio
import json
from typing import Any


class ScriptedPeer:
    """A stream whose server sent ``frames`` (more may be put in ``inbound``), keeping what
    the client sends in ``sent``."""

    def __init__(self, frames: list[dict[str, Any]]) -> None:
        self.inbound: asyncio.Queue[bytes | None] = asyncio.Queue()
        for frame in frames:
            self.inbound.put_nowait(json.dumps(frame).encode())
        self.sent: list[dict[str, Any]] = []
        self.closed = asyncio.Event()

    async def receive(self) -> bytes | None:
        return await self.inbound.get()

    async def send(self, frame: bytes) -> None:
        self.sent.append(json.loads(frame))

    async def aclose(self) -> None:
        self.closed.set()
        self.inbound.put_nowait(None)


class StuckPeer(ScriptedPeer):
    """A ``ScriptedPeer`` that takes in nothing: every send waits until it is closed."""

    async def send(self, frame: bytes) -> None:
        await super().send(frame)
        await self.closed.wait()

"""Bounded polling: wait for a condition without letting a test hang."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest


async def wait_until(predicate: Callable[[], bool], what: str, timeout: float = 5.0) -> None:
    """Poll ``predicate`` until it holds; fail the test, naming ``what``, after ``timeout`` seconds."""
    try:
        async with asyncio.timeout(timeout):
            while not predicate():
                await asyncio.sleep(0.01)
    except TimeoutError:
        pytest.fail(f"timed out after {timeout} s waiting for {what}")

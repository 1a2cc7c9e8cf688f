"""Shared fixtures: an in-memory client whose every received message is schema-checked;
and the no-skip rule: with ``MCPKIT_TESTS_NO_SKIP=1`` (``.ci/run`` sets it) a test that
would skip (a peer, the conformance suite or redis-server missing) fails instead, so CI never
passes on tests that did not run."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from mcpkit import McpClient, McpServerApp
from tests.figures import FIGURES
from tests.in_memory import serving_in_memory
from tests.redis_server import RedisServer
from tests.wire import SchemaChecker, ValidatingStream


@contextlib.asynccontextmanager
async def connected(app: McpServerApp, **client_kwargs: Any) -> AsyncIterator[McpClient]:
    """A connected, initialized client for ``app``; every server message is validated."""
    checker = SchemaChecker(client_kwargs.get("protocol_version", "2025-11-25"))
    async with serving_in_memory(app) as client_end:
        client = McpClient(ValidatingStream(client_end, checker), **client_kwargs)
        try:
            async with asyncio.timeout(30):
                await client.connect()
            yield client
        finally:
            await client.aclose()
    assert checker.checked > 0


@pytest.fixture
def connect():
    return connected


@pytest.fixture(scope="module")
def redis_server() -> Iterator[RedisServer]:
    """A real redis-server per test module: starting one costs more than a test, so tests
    that need it clean flush it (or use a prefix of their own)."""
    server = RedisServer().start()
    try:
        yield server
    finally:
        server.close()


NO_SKIP = os.environ.get("MCPKIT_TESTS_NO_SKIP") == "1"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    outcome = yield
    report = outcome.get_result()
    if NO_SKIP and report.skipped and not hasattr(report, "wasxfail"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = f"skipped, but MCPKIT_TESTS_NO_SKIP=1 forbids skips: {reason}"


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """The figures the fuzz and soak tests measured (``tests.figures.record``)."""
    for title, text in FIGURES:
        terminalreporter.write_sep("-", title)
        terminalreporter.write_line(text)

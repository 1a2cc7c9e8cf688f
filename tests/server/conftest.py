"""Fixtures the engine's tests share."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from mcpkit import McpServerApp
from mcpkit.cli._loader import load_app

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture
def everything() -> McpServerApp:
    """``examples/everything.py``, the server the fuzzer and the conformance suite run."""
    sys.path.insert(0, str(EXAMPLES))
    try:
        return load_app(str(EXAMPLES / "everything.py"))
    finally:
        sys.path.remove(str(EXAMPLES))

"""Keyword arguments for ``websockets``' ``connect`` in the tests, on every release mcpkit allows.

From websockets 15 ``connect`` takes a proxy from the environment (``HTTPS_PROXY``, ...) unless
given ``proxy=None``; before 15 it has no ``proxy`` argument and uses no proxy. The tests
connect to servers on 127.0.0.1 and pass ``**NO_PROXY``: direct on every release, including
the lowest the floors job (``./dev floors``) installs.
"""

from __future__ import annotations

from typing import Any

import websockets

NO_PROXY: dict[str, Any] = (
    {"proxy": None} if int(websockets.__version__.split(".")[0]) >= 15 else {}
)

"""The environment a test's child process runs in: this process's, less the ``MCPKIT_*``
settings of whoever runs the suite (they would change what the child serves)."""

from __future__ import annotations

import os


def child_environment(**values: str) -> dict[str, str]:
    """``os.environ`` without ``MCPKIT_*`` variables, then ``values`` set."""
    env = {name: value for name, value in os.environ.items() if not name.startswith("MCPKIT_")}
    env.update(values)
    return env

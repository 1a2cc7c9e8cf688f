"""The optional extras: ``require`` imports what one of them brings, or raises an
``ImportError`` that says which extra to install (``pip install 'mcpkit[redis]'``).

Modules that use an optional package call it where the package is first needed, never at
import time, so ``import mcpkit`` and its subpackages work with the core dependencies alone.
"""

from __future__ import annotations

from importlib import import_module
from types import ModuleType


def require(module: str, extra: str, feature: str) -> ModuleType:
    """Import ``module`` (from the ``mcpkit[extra]`` extra) for ``feature``, or raise
    ``ImportError`` naming the extra, chained from the original error."""
    try:
        return import_module(module)
    except ImportError as exc:
        package = module.partition(".")[0]
        raise ImportError(
            f"{feature} needs {package}, an optional dependency: pip install 'mcpkit[{extra}]'",
            name=exc.name,
        ) from exc


__all__ = ["require"]

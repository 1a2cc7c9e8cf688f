"""The top-level package: its lazily loaded names, listed three times in ``mcpkit/__init__``
(typing imports, the table of where each lives, ``__all__``), must agree."""

from __future__ import annotations

import importlib

import mcpkit


def test_every_exported_name_is_in_the_lazy_table_and_resolves() -> None:
    assert set(mcpkit.__all__) == set(mcpkit._MODULE_OF) | {"__version__"}
    for name in mcpkit.__all__:
        assert getattr(mcpkit, name) is not None, name


def test_each_lazy_name_comes_from_the_module_the_table_names() -> None:
    for name, module in mcpkit._MODULE_OF.items():
        assert getattr(mcpkit, name) is getattr(importlib.import_module(module), name), name


#: The public packages whose ``__all__`` users import from.
PUBLIC_PACKAGES = (
    "mcpkit",
    "mcpkit.auth",
    "mcpkit.auth.client",
    "mcpkit.client",
    "mcpkit.openapi",
    "mcpkit.protocol",
    "mcpkit.server",
    "mcpkit.server.interceptors",
    "mcpkit.stores",
    "mcpkit.transports",
    "mcpkit.transports.http",
)


def test_every_public_exception_is_in_the_one_tree() -> None:
    """``except MCPError`` catches whatever mcpkit raises on purpose."""
    outside = []
    for package in PUBLIC_PACKAGES:
        module = importlib.import_module(package)
        for name in getattr(module, "__all__", ()):
            value = getattr(module, name)
            if (
                isinstance(value, type)
                and issubclass(value, BaseException)
                and not issubclass(value, mcpkit.MCPError)
            ):
                outside.append(f"{package}.{name}")
    assert outside == []

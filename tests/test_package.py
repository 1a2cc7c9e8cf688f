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


def _undocumented(value: object, where: str) -> list[str]:
    """``where`` and its public methods and properties that have no docstring of their own
    or inherited from a base (an implementation of a documented interface method is fine)."""
    import inspect

    missing = [] if inspect.getdoc(value) else [where]
    if isinstance(value, type) and value.__module__.startswith("mcpkit"):
        for name, member in vars(value).items():
            if name.startswith("_"):
                continue
            function = member.fget if isinstance(member, property) else member
            function = getattr(function, "__func__", function)
            if not inspect.isfunction(function) or (function.__doc__ or "").strip():
                continue
            if not any(
                getattr(getattr(base, name, None), "__doc__", None) for base in value.__mro__[1:]
            ):
                missing.append(f"{where}.{name}")
    return missing


def test_every_public_member_has_a_docstring() -> None:
    """What the API reference (docs/reference) shows: the public packages' classes and
    functions, and their public methods and properties."""
    import inspect

    missing: list[str] = []
    seen: set[int] = set()
    for package in PUBLIC_PACKAGES:
        module = importlib.import_module(package)
        for name in getattr(module, "__all__", ()):
            value = getattr(module, name)
            if id(value) in seen or not (inspect.isclass(value) or inspect.isfunction(value)):
                continue
            seen.add(id(value))
            if getattr(value, "__module__", "").startswith("mcpkit.protocol.types"):
                continue  # generated from the spec's schemas
            missing += _undocumented(value, f"{package}.{name}")
    assert missing == []

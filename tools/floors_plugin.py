"""pytest plugin of the dependency-floor job (``./dev floors``, ``tools/floors.py``).

The floor venvs hold mcpkit with its ``ws``, ``redis`` and ``pydantic`` extras at the versions
under test, and the test tools; nothing else. Tests that need a package outside them are
deselected by one rule, never skipped: a test is deselected when it imports one of
``ABSENT`` (the official ``mcp`` SDK and its ``mcp_types``, FastAPI and the other frameworks
the mounting tests host mcpkit under, OpenTelemetry), either

* at module level in its test module, or in a ``tests.*`` helper module that one imports at
  module level (followed transitively): the whole module is left uncollected; or
* inside the test function itself: that test is deselected.

``pytest.importorskip("X")`` counts as an import of ``X``. The job deselects
``-m "not interop and not packaging"`` besides (real peers, the conformance suite, wheel
builds). Everything left out is listed at the end of the run, with the package it needs. A
test that needs another missing package fails (the job runs with ``MCPKIT_TESTS_NO_SKIP=1``,
so a skip fails too): the rule grows only here.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path
from typing import Any

import pytest

# Top-level import names of the packages the floor venvs do not install.
ABSENT = frozenset({"mcp", "mcp_types", "fastapi", "sse_starlette", "lauren", "opentelemetry"})

ROOT = Path(__file__).resolve().parents[1]


def _imported_names(nodes: list[ast.stmt]) -> tuple[set[str], set[str]]:
    """Top-level package names and ``tests.*`` modules imported by ``nodes`` (not descending
    into function or class bodies: those run only when called)."""
    packages: set[str] = set()
    local: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            return
        if isinstance(node, ast.Import):
            for alias in node.names:
                packages.add(alias.name.split(".")[0])
                if alias.name.startswith("tests."):
                    local.add(alias.name)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            packages.add(node.module.split(".")[0])
            if node.module == "tests" or node.module.startswith("tests."):
                local.add(node.module)
                local.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Call) and _is_importorskip(node):
            packages.add(node.args[0].value.split(".")[0])  # type: ignore[attr-defined]
        for child in ast.iter_child_nodes(node):
            visit(child)

    for node in nodes:
        visit(node)
    return packages, local


def _is_importorskip(node: ast.Call) -> bool:
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    return (
        name == "importorskip"
        and bool(node.args)
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    )


def _module_file(dotted: str) -> Path | None:
    base = ROOT.joinpath(*dotted.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


@functools.cache
def _parse(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


@functools.cache
def _module_needs(path: Path) -> frozenset[str]:
    """The ``ABSENT`` packages importing ``path`` imports, through ``tests.*`` helpers."""
    packages, local = _imported_names(_parse(path).body)
    needs = set(packages & ABSENT)
    for dotted in local:
        helper = _module_file(dotted)
        if helper is not None and helper != path:
            needs |= _module_needs(helper)
    return frozenset(needs)


def _functions_needing(path: Path) -> dict[str, frozenset[str]]:
    """Test functions of ``path`` (top level or in classes) importing an ``ABSENT`` package."""
    found: dict[str, frozenset[str]] = {}
    for node in ast.walk(_parse(path)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith(
            "test"
        ):
            packages, _ = _imported_names(node.body)
            if packages & ABSENT:
                found[node.name] = frozenset(packages & ABSENT)
    return found


def _is_test_module(path: Path) -> bool:
    return path.suffix == ".py" and path.name.startswith("test_")


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    path = Path(collection_path)
    if _is_test_module(path) and _module_needs(path.resolve()):
        return True
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    kept: list[pytest.Item] = []
    dropped: list[pytest.Item] = []
    needing: dict[Path, dict[str, frozenset[str]]] = {}
    for item in items:
        path = Path(item.path).resolve()
        if path not in needing:
            needing[path] = _functions_needing(path) if _is_test_module(path) else {}
        name = getattr(getattr(item, "function", None), "__name__", item.name)
        if name in needing[path]:
            dropped.append(item)
            continue
        kept.append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


def _left_out(args: list[str]) -> list[tuple[str, str]]:
    """What the rule leaves out of the paths the run was given: computed here again so that
    the list is the same with and without pytest-xdist (whose workers collect)."""
    out: list[tuple[str, str]] = []
    for arg in args:
        base = Path(arg.split("::")[0])
        base = base if base.is_absolute() else Path.cwd() / base
        files = sorted(base.rglob("test_*.py")) if base.is_dir() else [base]
        for path in files:
            if not (path.is_file() and _is_test_module(path)):
                continue
            where = str(path.resolve().relative_to(ROOT))
            needs = _module_needs(path.resolve())
            if needs:
                out.append((where, ", ".join(sorted(needs))))
                continue
            for name, function_needs in sorted(_functions_needing(path.resolve()).items()):
                out.append((f"{where}::{name}", ", ".join(sorted(function_needs))))
    return out


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    left_out = _left_out(list(config.args))
    if left_out:
        terminalreporter.write_sep(
            "-", "floors: left out, they need a package outside the floor venv"
        )
        for where, needs in left_out:
            terminalreporter.write_line(f"{where}  ({needs})")

"""Modules and classes small enough to read: no hand-written module over
``MAX_MODULE_LINES`` lines and no class over ``MAX_CLASS_METHODS`` methods, unless its
docstring says why in a sentence starting ``Its size:`` (a public facade whose methods are
the protocol's operations, say). Generated modules (the protocol types) are left out."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"

MAX_MODULE_LINES = 600
MAX_CLASS_METHODS = 25
#: How a docstring gives the reason for a size past the bound.
REASON = "Its size:"
#: What the type generator writes first in a module it made.
GENERATED = "# Generated from schema.json"


def _too_large(root: Path = SRC) -> list[str]:
    found = []
    for path in sorted((root / "mcpkit").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if text.startswith(GENERATED):
            continue
        tree = ast.parse(text)
        where = path.relative_to(root).as_posix()
        lines = len(text.splitlines())
        if lines > MAX_MODULE_LINES and REASON not in (ast.get_docstring(tree) or ""):
            found.append(f"{where}: {lines} lines")
        for node in ast.walk(tree):
            if not isinstance(node, ast.ClassDef):
                continue
            methods = [
                item
                for item in node.body
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))
            ]
            if len(methods) > MAX_CLASS_METHODS and REASON not in (ast.get_docstring(node) or ""):
                found.append(f"{where}: class {node.name}, {len(methods)} methods")
    return found


def test_no_module_or_class_is_larger_than_its_bound_without_a_reason() -> None:
    assert _too_large() == []


def test_the_bounds_bite(tmp_path: Path) -> None:
    """A long module and a class of many methods are reported; the same with ``Its size:``
    in their docstrings, and a generated module, are not."""
    package = tmp_path / "mcpkit"
    package.mkdir()
    methods = "".join(f"    def m{n}(self) -> None: ...\n" for n in range(MAX_CLASS_METHODS + 1))
    (package / "wide.py").write_text(f"class Wide:\n{methods}", encoding="utf-8")
    (package / "excused.py").write_text(
        f'class Excused:\n    """Its size: the facade."""\n{methods}', encoding="utf-8"
    )
    (package / "long.py").write_text("x = 1\n" * (MAX_MODULE_LINES + 1), encoding="utf-8")
    (package / "made.py").write_text(GENERATED + "\n" + "x = 1\n" * 700, encoding="utf-8")
    assert _too_large(tmp_path) == [
        f"mcpkit/long.py: {MAX_MODULE_LINES + 1} lines",
        f"mcpkit/wide.py: class Wide, {MAX_CLASS_METHODS + 1} methods",
    ]

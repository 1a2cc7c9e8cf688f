"""docs/imports.md's table of the top level names every name ``mcpkit`` exports, and only
those: a name added to ``mcpkit.__all__`` gets a place on the page."""

from __future__ import annotations

import re
from pathlib import Path

import mcpkit

PAGE = Path(__file__).resolve().parents[2] / "docs" / "imports.md"


def test_the_top_level_table_names_every_exported_name():
    top = PAGE.read_text(encoding="utf-8").split("## The subpackages")[0]
    table = "\n".join(line for line in top.splitlines() if line.startswith("| "))
    named = set(re.findall(r"`([A-Za-z_]\w*)`", table))
    assert set(mcpkit.__all__) <= named
    assert {name for name in named if hasattr(mcpkit, name)} == set(mcpkit.__all__)

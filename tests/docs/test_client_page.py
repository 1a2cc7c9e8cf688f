"""docs/client.md's sections on ``result.data`` and on picking a tool's version run as
written: each block, imports and server included, executed as it stands (a program ending
in ``asyncio.run(main())``), prints what its comments say."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[2] / "docs" / "client.md"


def section_block(heading: str) -> str:
    text = PAGE.read_text(encoding="utf-8")
    section = text.split(f"### {heading}\n", 1)[1].split("\n#", 1)[0]
    (block,) = re.findall(r"```python\n(.*?)```", section, re.S)
    return block


def printed_comments(block: str) -> list[str]:
    """What the comments of the block's print lines say they print."""
    return [
        line.split("#", 1)[1].strip()
        for line in block.splitlines()
        if line.lstrip().startswith("print(") and "#" in line
    ]


@pytest.mark.parametrize(
    "heading", ["What a call gives back: `result.data`", "Picking a tool's version"]
)
def test_the_block_runs_and_prints_what_it_says(heading: str) -> None:
    block = section_block(heading)
    where = f"docs/client.md ({heading})"
    code = compile(block, where, "exec", dont_inherit=True)
    printed = io.StringIO()
    namespace: dict[str, object] = {"__name__": "docs_client_page"}
    with contextlib.redirect_stdout(printed):
        exec(code, namespace)  # the page's own code
    assert printed.getvalue().splitlines() == printed_comments(block)

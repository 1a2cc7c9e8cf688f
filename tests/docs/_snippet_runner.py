"""Runs the Python blocks of one docs page the way a reader follows it: in order, in one
namespace, in the current folder. Started as a script by tests/docs/test_snippets.py, one
process per page, so what a page does to its process (logging, a tracer provider, the
environment) stays there. Standard library only: it runs before anything is imported.

A block runs unless an HTML comment right before it says otherwise::

    <!-- snippet: fragment (a continuation of the client above) -->
    <!-- snippet: needs a server at http://127.0.0.1:3001/mcp -->
    <!-- snippet: save as weather.py -->
    <!-- snippet: save as server.py; env MCP_STATE_SECRET=change-me -->

``fragment``, ``needs ...`` and ``serves ...`` (the rest of the comment is the reason) are
compiled, top-level ``await`` allowed (a fragment may be the body of an async function), and
their imports run, but the blocks themselves do not run. ``save as NAME`` writes the block to
NAME in the folder before it runs, so a later block (or a file another block saves) can
import it; ``env NAME=VALUE`` sets a variable the block reads from the environment.
"""

from __future__ import annotations

import ast
import os
import re
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path

BLOCK = re.compile(
    r"(?:<!--\s*snippet:(?P<marker>.*?)-->\s*\n)?^```python\n(?P<code>.*?)^```", re.S | re.M
)
NOT_RUN = ("fragment", "needs ", "serves")


@dataclass(frozen=True)
class Block:
    page: str
    line: int  # of the block's first line of code in the page
    code: str
    marker: str

    @property
    def title(self) -> str:
        first = next((line for line in self.code.splitlines() if line.strip()), "")
        return f"{self.page}, the block at line {self.line} ({first.strip()!r})"

    @property
    def options(self) -> tuple[str, ...]:
        if self.marker.startswith(NOT_RUN):  # a reason, semicolons and all
            return (self.marker,)
        return tuple(part.strip() for part in self.marker.split(";") if part.strip())

    @property
    def runs(self) -> bool:
        return not any(option.startswith(NOT_RUN) for option in self.options)

    def compiled(self, flags: int = 0) -> object:
        # the page's line numbers in tracebacks: the code starts where it does in the page
        source = "\n" * (self.line - 1) + self.code
        return compile(source, self.page, "exec", flags=flags, dont_inherit=True)


def blocks(page: str, text: str) -> list[Block]:
    found = []
    for match in BLOCK.finditer(text):
        line = text.count("\n", 0, match.start("code")) + 1
        found.append(Block(page, line, match.group("code"), (match.group("marker") or "").strip()))
    return found


def check_marker(block: Block) -> None:
    for option in block.options:
        if not option.startswith((*NOT_RUN, "save as ", "env ")):
            raise ValueError(f"{block.title}: unknown snippet marker {option!r}")


def prepare(block: Block) -> None:
    for option in block.options:
        if option.startswith("save as "):
            Path(option.removeprefix("save as ").strip()).write_text(block.code, encoding="utf-8")
        elif option.startswith("env "):
            name, _, value = option.removeprefix("env ").partition("=")
            os.environ[name.strip()] = value.strip()


def run_imports(block: Block, namespace: dict[str, object]) -> None:
    """Every import statement of a block that is not run, anywhere in it, run on its own."""
    flags = ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
    tree = compile(block.code, block.page, "exec", flags=flags, dont_inherit=True)
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            statement = ast.Module(body=[node], type_ignores=[])
            ast.increment_lineno(statement, block.line - 1)
            exec(compile(statement, block.page, "exec", dont_inherit=True), namespace)


def run_page(path: Path, page: str) -> None:
    namespace: dict[str, object] = {
        "__name__": "docs_snippets",  # not "__main__": a block's app.run() guard holds
        "__file__": str(Path.cwd() / f"{Path(page).stem}.py"),
        "__builtins__": __builtins__,
    }
    sys.path.insert(0, str(Path.cwd()))  # the files a block saves import as a reader's would
    for block in blocks(page, path.read_text(encoding="utf-8")):
        try:
            check_marker(block)
            prepare(block)
            if block.runs:
                exec(block.compiled(), namespace)
            else:
                block.compiled(ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
                run_imports(block, namespace)
        except BaseException:
            print(f"{block.title} failed:", file=sys.stderr)
            traceback.print_exc()
            raise SystemExit(1) from None


if __name__ == "__main__":
    run_page(Path(sys.argv[1]), sys.argv[2])

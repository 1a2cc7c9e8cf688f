"""Runs the Python blocks of one docs page the way a reader follows it: in order, in one
namespace, in the current folder. Started as a script by tests/docs/test_snippets.py, one
process per page, so what a page does to its process (logging, a tracer provider, the
environment) stays there. Standard library only: it runs before anything is imported.

A block runs unless an HTML comment right before it says otherwise::

    <!-- snippet: fragment (a continuation of the client above) -->
    <!-- snippet: needs a server at https://mcp.example.com/mcp -->
    <!-- snippet: save as weather.py -->
    <!-- snippet: save as server.py; env MCP_STATE_SECRET=change-me -->
    <!-- snippet: serve weather.py at http://127.0.0.1:3001/mcp -->
    <!-- snippet: file openapi.json; file docs -->

``fragment``, ``needs ...`` and ``serves ...`` (the rest of the comment is the reason) are
compiled, top-level ``await`` allowed (a fragment may be the body of an async function), and
their imports run, but the blocks themselves do not run. ``save as NAME`` writes the block to
NAME in the folder before it runs, so a later block (or a file another block saves) can
import it; ``add to NAME`` appends it to a file saved before (a page that builds one program
over several blocks); ``env NAME=VALUE`` sets a variable the block reads from the environment.
``serve TARGET at URL`` runs a server while the block runs, as the page tells a reader to
start it: ``FILE.py`` with ``mcpkit run FILE.py -t http``, ``module:attr`` with uvicorn; on
a port of the system's choosing (pages run side by side), which the block's code is given in
place of URL's host:port; it is stopped when the block ends, failed or not. ``file NAME`` puts a file the
reader would have beside the code (a small stand-in from tests/docs/snippet_files, or a fresh
key for a ``.pem``). A block whose lines use ``await`` at the top level runs as the body of
an async function, its names left in the page's namespace.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import dataclasses
import inspect
import os
import re
import sys
import traceback
import types
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from _snippet_fixtures import place_file, serving, with_commands_on_path

BLOCK = re.compile(
    r"(?:<!--\s*snippet:(?P<marker>.*?)-->\s*\n)?^```python\n(?P<code>.*?)^```", re.S | re.M
)
NOT_RUN = ("fragment", "needs ", "serves")
AROUND = ("save as ", "add to ", "env ", "serve ", "file ")


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
        if not option.startswith((*NOT_RUN, *AROUND)):
            raise ValueError(f"{block.title}: unknown snippet marker {option!r}")


def prepare(block: Block) -> None:
    for option in block.options:
        if option.startswith("save as "):
            Path(option.removeprefix("save as ").strip()).write_text(block.code, encoding="utf-8")
        elif option.startswith("add to "):
            saved = Path(option.removeprefix("add to ").strip())
            if not saved.is_file():
                raise ValueError(f"{block.title}: add to {saved}, which no block saved before")
            with saved.open("a", encoding="utf-8") as file:
                file.write("\n\n" + block.code)
        elif option.startswith("file "):
            place_file(block.title, option.removeprefix("file ").strip())
        elif option.startswith("env "):
            name, _, value = option.removeprefix("env ").partition("=")
            os.environ[name.strip()] = value.strip()


@contextlib.contextmanager
def servers(block: Block) -> Iterator[Block]:
    """The block's servers, running; yields the block as it runs: its code reaching each
    server where it serves (the page's URL, another port)."""
    with contextlib.ExitStack() as stack:
        code = block.code
        for option in block.options:
            if option.startswith("serve "):
                target, at, url = option.removeprefix("serve ").partition(" at ")
                if not at:
                    raise ValueError(f"{block.title}: {option!r} is not 'serve TARGET at URL'")
                shown, served = stack.enter_context(
                    serving(block.title, target.strip(), url.strip())
                )
                code = code.replace(shown, served)
        yield dataclasses.replace(block, code=code)


def run_block(block: Block, namespace: dict[str, object]) -> None:
    with servers(block) as running:
        code = running.compiled(ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
        assert isinstance(code, types.CodeType)
        if code.co_flags & inspect.CO_COROUTINE:  # lines shown as an async function's body
            asyncio.run(types.FunctionType(code, namespace)())
        else:
            exec(code, namespace)


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
    with_commands_on_path()
    for block in blocks(page, path.read_text(encoding="utf-8")):
        try:
            check_marker(block)
            prepare(block)
            if block.runs:
                run_block(block, namespace)
            else:
                block.compiled(ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
                run_imports(block, namespace)
        except BaseException:
            print(f"{block.title} failed:", file=sys.stderr)
            traceback.print_exc()
            raise SystemExit(1) from None


if __name__ == "__main__":
    run_page(Path(sys.argv[1]), sys.argv[2])

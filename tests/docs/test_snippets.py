"""Every Python block of the docs (and of the README, the site's front page) runs as written:
a page's blocks in order, in one namespace, in a process of their own started in an empty
folder. A block marked ``<!-- snippet: fragment ... -->``, ``needs ...`` or ``serves ...``
is compiled and its imports run; tests/docs/_snippet_runner.py says how the markers read.
New pages are found by the glob, nothing to register."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RUNNER = Path(__file__).with_name("_snippet_runner.py")
#: Pages whose blocks are whole programs another test runs, each in its own process.
RUN_BY_THEIR_OWN_TEST = {
    "docs/migrating.md": "tests/docs/test_migrating_pairs.py runs each pair side by side",
}
PAGES = sorted(
    page
    for path in [*(ROOT / "docs").rglob("*.md"), ROOT / "README.md"]
    if "```python" in path.read_text(encoding="utf-8")
    and (page := path.relative_to(ROOT).as_posix()) not in RUN_BY_THEIR_OWN_TEST
)
# pages being rewritten as this test came in; each leaves this list once its blocks run or
# carry their markers
REWRITTEN_ELSEWHERE = frozenset({"docs/interceptors.md"})
# a page's blocks serving a few apps in memory take about a second; a block that serves
# forever (an unguarded app.run()) is what this catches
PAGE_TIMEOUT = 120


def run(page: Path, name: str, folder: Path) -> subprocess.CompletedProcess[str]:
    path = os.pathsep.join([str(ROOT / "src"), str(ROOT), os.environ.get("PYTHONPATH", "")])
    return subprocess.run(
        [sys.executable, str(RUNNER), str(page), name],
        cwd=folder,
        env={**os.environ, "PYTHONPATH": path},
        capture_output=True,
        text=True,
        timeout=PAGE_TIMEOUT,
    )


@pytest.mark.parametrize(
    "page",
    [
        pytest.param(page, marks=pytest.mark.xfail(reason="being rewritten"))
        if page in REWRITTEN_ELSEWHERE
        else page
        for page in PAGES
    ],
)
def test_the_page_runs_as_written(page: str, tmp_path: Path) -> None:
    done = run(ROOT / page, page, tmp_path)
    assert done.returncode == 0, done.stderr


def write_page(folder: Path, *blocks: str) -> Path:
    page = folder / "page.md"
    page.write_text("# A page\n\n" + "\n\nSome prose.\n\n".join(blocks) + "\n", encoding="utf-8")
    return page


def test_a_failing_block_is_named_by_its_page_and_first_line(tmp_path: Path) -> None:
    page = write_page(
        tmp_path,
        "```python\nanswer = 42\n```",
        "```python\nfrom math import sqrt\n\nprint(sqrt(answer), undefined)\n```",
    )
    done = run(page, "docs/page.md", tmp_path)
    assert done.returncode == 1
    assert "docs/page.md, the block at line 10 ('from math import sqrt') failed" in done.stderr
    assert 'File "docs/page.md", line 12' in done.stderr  # the page's own line
    assert "NameError: name 'undefined' is not defined" in done.stderr


def test_a_marked_block_is_compiled_and_its_imports_checked(tmp_path: Path) -> None:
    fragment = "<!-- snippet: fragment -->\n```python\nimport json\n\nawait client.ping()\n```"
    assert run(write_page(tmp_path, fragment), "page.md", tmp_path).returncode == 0

    typo = "<!-- snippet: needs redis -->\n```python\nfrom json import lods\n```"
    done = run(write_page(tmp_path, typo), "page.md", tmp_path)
    assert done.returncode == 1 and "cannot import name 'lods'" in done.stderr

    broken = "<!-- snippet: fragment -->\n```python\ndef f(:\n```"
    done = run(write_page(tmp_path, broken), "page.md", tmp_path)
    assert done.returncode == 1 and "SyntaxError" in done.stderr


def test_a_saved_block_is_importable_by_the_next(tmp_path: Path) -> None:
    server = "<!-- snippet: save as server.py; env GREETING=hello -->\n```python\n" + (
        "import os\n\ngreeting = os.environ['GREETING']\n```"
    )
    client = "```python\nfrom server import greeting\n\nassert greeting == 'hello'\n```"
    assert run(write_page(tmp_path, server, client), "page.md", tmp_path).returncode == 0
    assert (tmp_path / "server.py").exists()


def test_an_unknown_marker_is_refused(tmp_path: Path) -> None:
    page = write_page(tmp_path, "<!-- snippet: skip -->\n```python\npass\n```")
    done = run(page, "page.md", tmp_path)
    assert done.returncode == 1 and "unknown snippet marker 'skip'" in done.stderr

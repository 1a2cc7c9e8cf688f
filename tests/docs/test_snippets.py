"""Every Python block of the docs (and of the README, the site's front page) runs as written:
a page's blocks in order, in one namespace, in a process of their own started in an empty
folder. A block marked ``<!-- snippet: fragment ... -->``, ``needs ...`` or ``serves ...``
is compiled and its imports run; a client block runs against the page's own server
(``serve weather.py at URL``) and beside the files a reader would have (``file NAME``, from
tests/docs/snippet_files). tests/docs/_snippet_runner.py says how the markers read. New pages
are found by the glob, nothing to register."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.ports import refused_port

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


@pytest.mark.parametrize("page", PAGES)
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


#: The port a test page names, as the docs name 3001: never the one served on.
PAGE_PORT = 3001

SERVER = "<!-- snippet: save as server.py -->\n```python\n" + (
    "import os\nfrom pathlib import Path\n\nfrom mcpkit import McpServerApp\n\n"
    "Path('server.pid').write_text(str(os.getpid()))\napp = McpServerApp('echo')\n\n\n"
    "@app.tool()\ndef echo(text: str) -> str:\n    return text\n```"
)


def client_block(port: int = PAGE_PORT, then: str = "") -> str:
    return (
        f"<!-- snippet: serve server.py at http://127.0.0.1:{port}/mcp -->\n```python\n"
        "from mcpkit import McpClient\n\n"
        f"async with McpClient.http('http://127.0.0.1:{port}/mcp') as client:\n"
        "    result = await client.call_tool('echo', {'text': 'hi'})\n"
        f"assert result.content[0].text == 'hi'\n{then}```"
    )


def failure(folder: Path, *blocks: str) -> str:
    """What the runner says of a page that fails."""
    done = run(write_page(folder, *blocks), "page.md", folder)
    assert done.returncode == 1, done.stdout
    return done.stderr


def server_stopped(folder: Path) -> bool:
    """Whether the server the page ran (its pid in server.pid) is gone."""
    pid = int((folder / "server.pid").read_text())
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_a_served_file_answers_the_block_and_stops_after_it(tmp_path: Path) -> None:
    done = run(write_page(tmp_path, SERVER, client_block()), "page.md", tmp_path)
    assert done.returncode == 0, done.stderr
    assert server_stopped(tmp_path)


def test_a_server_is_stopped_when_its_block_fails(tmp_path: Path) -> None:
    page = write_page(tmp_path, SERVER, client_block(then="raise LookupError('late')\n"))
    done = run(page, "page.md", tmp_path)
    assert done.returncode == 1 and "LookupError: late" in done.stderr
    assert server_stopped(tmp_path)


def test_the_block_reaches_its_server_where_it_serves_not_at_the_pages_port(
    tmp_path: Path,
) -> None:
    """The page's port is held (connections to it refused): the block still reaches the
    server, served elsewhere, its URL read with that port."""
    with refused_port() as port:
        done = run(write_page(tmp_path, SERVER, client_block(port)), "page.md", tmp_path)
    assert done.returncode == 0, done.stderr


def test_a_server_that_cannot_start_says_why(tmp_path: Path) -> None:
    broken = "<!-- snippet: save as server.py -->\n```python\nimport json\n```"
    said = failure(tmp_path, broken, client_block())
    assert "mcpkit run server.py -t http" in said and "exited with" in said


def test_a_file_marker_puts_a_stand_in_beside_the_block(tmp_path: Path) -> None:
    block = "<!-- snippet: file openapi.json; file key.pem -->\n```python\n" + (
        "import json\n\nfrom cryptography.hazmat.primitives.serialization import "
        "load_pem_private_key\n\nassert json.load(open('openapi.json'))['openapi'].startswith('3')\n"
        "load_pem_private_key(open('key.pem', 'rb').read(), password=None)\n```"
    )
    assert run(write_page(tmp_path, block), "page.md", tmp_path).returncode == 0

    unknown = "<!-- snippet: file secrets.txt -->\n```python\npass\n```"
    assert "no stand-in for file 'secrets.txt'" in failure(tmp_path, unknown)


def test_added_blocks_make_one_file(tmp_path: Path) -> None:
    first = "<!-- snippet: save as prog.py -->\n```python\nanswer = 41\n```"
    second = "<!-- snippet: add to prog.py -->\n```python\nanswer += 1\n```"
    check = "```python\nfrom prog import answer\n\nassert answer == 42\n```"
    assert run(write_page(tmp_path, first, second, check), "page.md", tmp_path).returncode == 0

    orphan = "<!-- snippet: add to nowhere.py -->\n```python\npass\n```"
    assert "add to nowhere.py, which no block saved before" in failure(tmp_path, orphan)


def test_top_level_await_runs_as_an_async_function_body(tmp_path: Path) -> None:
    lines = "```python\nimport asyncio\n\nawait asyncio.sleep(0)\nslept = True\n```"
    check = "```python\nassert slept\n```"
    assert run(write_page(tmp_path, lines, check), "page.md", tmp_path).returncode == 0

"""The documentation site builds with ``mkdocs build --strict`` (every nav page present, every
link and anchor resolved, every docstring of the API reference rendered without a warning)
and carries ``llms.txt`` at its root: the site's title and summary, then a line per nav page
with its URL, each URL a page of the built site."""

from __future__ import annotations

import importlib
import os
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import urljoin

import pytest

ROOT = Path(__file__).resolve().parents[2]
ENTRY = re.compile(r"^- \[(?P<title>[^\]]+)\]\((?P<url>[^)]+)\)(?::\s(?P<summary>.+))?$")

pytest.importorskip("mkdocs")
pytest.importorskip("mkdocstrings")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert built.returncode == 0, built.stdout + built.stderr
    return out


def nav_files() -> list[str]:
    """The Markdown files mkdocs.yml's nav names, in order."""
    text = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    nav = text[text.index("\nnav:") :]
    return re.findall(r":\s+(\S+\.md)\s*$", nav, flags=re.MULTILINE)


def test_llms_txt_lists_every_nav_page_with_a_url_that_exists(site):
    text = (site / "llms.txt").read_text(encoding="utf-8")
    lines = text.splitlines()
    assert lines[0] == "# mcpkit"
    assert lines[2].startswith("> ") and "Model Context Protocol" in lines[2]
    entries = [match for line in lines if (match := ENTRY.match(line))]
    files = nav_files()
    assert len(entries) == len(files) > 10
    expected = {"./" if name == "index.md" else name.removesuffix(".md") + "/" for name in files}
    assert {entry["url"] for entry in entries} == expected
    for entry in entries:
        assert (site / entry["url"] / "index.html").is_file(), entry["url"]
    sections = [line.removeprefix("## ") for line in lines if line.startswith("## ")]
    assert {"Start here", "Guides", "Serving", "API reference"} <= set(sections)
    # guides carry their first paragraph as the summary, markup removed
    frameworks = next(entry for entry in entries if entry["url"] == "frameworks/")
    assert frameworks["summary"] and "`" not in frameworks["summary"]


def test_front_page_is_the_readme_with_links_into_the_site(site):
    page = (site / "index.html").read_text(encoding="utf-8")
    assert "Two commands" in page and "Quick start" in page
    assert 'href="docs/' not in page
    assert 'href="eras/"' in page


#: Each public package and its API reference page: every name of its ``__all__`` is there.
REFERENCE = {
    "mcpkit": "reference/mcpkit",
    "mcpkit.server": "reference/server",
    "mcpkit.server.interceptors": "reference/server",
    "mcpkit.server.middleware": "reference/server",
    "mcpkit.server.transforms": "reference/server",
    "mcpkit.server.apps": "reference/server",
    "mcpkit.client": "reference/client",
    "mcpkit.auth": "reference/auth",
    "mcpkit.auth.client": "reference/auth-client",
    "mcpkit.transports": "reference/transports",
    "mcpkit.transports.http": "reference/transports-http",
    "mcpkit.openapi": "reference/openapi",
    "mcpkit.stores": "reference/stores",
    "mcpkit.proxy": "reference/proxy",
    "mcpkit.testing": "reference/testing",
    "mcpkit.otel": "reference/otel",
    "mcpkit.protocol": "reference/protocol",
}
#: Public packages whose names are not API: the command line, the generated wire types.
NOT_REFERENCED = {"mcpkit.cli", "mcpkit.protocol.types"}


def test_every_public_package_has_a_reference_page():
    packages = {
        ".".join(init.relative_to(ROOT / "src").parent.parts)
        for init in (ROOT / "src" / "mcpkit").rglob("__init__.py")
    }
    public = {name for name in packages if not any(p.startswith("_") for p in name.split("."))}
    assert public - NOT_REFERENCED == set(REFERENCE)


def test_the_reference_shows_every_exported_name(site):
    for package, page in REFERENCE.items():
        names = importlib.import_module(package).__all__
        html = (site / page / "index.html").read_text(encoding="utf-8")
        missing = [n for n in names if not n.startswith("_") and f'id="{package}.{n}"' not in html]
        assert not missing, (package, missing)


def test_every_link_to_an_anchor_finds_it(site):
    """mkdocs checks anchors of links in prose, not in tables: this checks all of them."""
    broken = []
    for page in site.rglob("index.html"):
        folder = page.relative_to(site).parent.as_posix()
        base = "/" if folder == "." else f"/{folder}/"
        for href in re.findall(r'href="([^"]+#[^"]+)"', page.read_text(encoding="utf-8")):
            if href.startswith(("http:", "https:")):
                continue
            path, _, anchor = urljoin(base, href).partition("#")
            target = site / path.lstrip("/") / "index.html"
            if not target.is_file() or f'id="{anchor}"' not in target.read_text(encoding="utf-8"):
                broken.append((folder, href))
    assert not broken


def test_no_escaped_pipe_shows_in_code(site):
    """In a table, `a \\| b` renders with its backslash: such cells use <code>a &#124; b</code>."""
    for page in site.rglob("index.html"):
        assert not re.search(r"<code>[^<]*\\\|", page.read_text(encoding="utf-8")), page


def test_api_reference_renders_the_public_api(site):
    reference = {
        "reference/mcpkit": ["mcpkit.McpServerApp", "mcpkit.McpClient", "mcpkit.mcp_tool"],
        "reference/server": ["mcpkit.server.McpToolContext", "mcpkit.server.use_guards"],
        "reference/client": ["mcpkit.client.HttpClientTransportOptions"],
        "reference/auth": ["mcpkit.auth.HostAuth", "mcpkit.auth.BearerAuthConfig"],
        "reference/transports-http": ["mcpkit.transports.http.StreamableHttpServerOptions"],
        "reference/openapi": ["mcpkit.openapi.RouteMap"],
        "reference/stores": ["mcpkit.stores.InMemoryEventStore"],
    }
    for page, names in reference.items():
        html = (site / page / "index.html").read_text(encoding="utf-8")
        for name in names:
            assert f'id="{name}"' in html, (page, name)

"""MkDocs hook: the site's front page is the README, so the two never drift apart.

``docs/index.md`` holds the marker below; the README replaces it at build time, its links
into ``docs/`` made relative to the site (``docs/eras.md`` becomes ``eras.md``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

MARKER = "<!-- README -->"
DOCS_LINK = re.compile(r"\]\(docs/")


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Put the README (links rewritten) where the marker stands."""
    if MARKER not in markdown:
        return markdown
    readme = Path(config["config_file_path"]).parent / "README.md"
    text = DOCS_LINK.sub("](", readme.read_text(encoding="utf-8"))
    return markdown.replace(MARKER, text)

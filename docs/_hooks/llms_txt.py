"""MkDocs hook: write ``llms.txt`` (https://llmstxt.org) at the root of the built site.

It follows the nav: the site's name as the title, its description as the summary, then one
section per top-level nav section with a line per page: ``- [Title](URL): summary``, the
summary being the page's first paragraph of prose (at most ``SUMMARY_CHARS`` characters).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

#: How long a page's summary line may be before it is cut (with an ellipsis).
SUMMARY_CHARS = 200

_summaries: dict[str, str] = {}
_nav: list[Any] = []

_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
#: Inline markup to drop; single ``_`` and ``*`` stay (they are in identifiers and globs).
_MARKUP = re.compile(r"`|\*\*")


def _paragraphs(markdown: str) -> list[tuple[bool, str]]:
    """The page's paragraphs of prose, each with whether it comes before the first ``##``
    heading: no heading, code, table, list, directive or comment is prose."""
    found: list[tuple[bool, str]] = []
    paragraph: list[str] = []
    fenced = False
    intro = True

    def close() -> None:
        if paragraph:
            found.append((intro, " ".join(paragraph)))
            paragraph.clear()

    for line in markdown.splitlines():
        stripped = line.strip()
        if stripped.startswith("```"):
            fenced = not fenced
            close()
            continue
        if fenced:
            continue
        if stripped.startswith("## "):
            close()
            intro = False
            continue
        if not stripped:
            close()
            continue
        if stripped.startswith(("#", "|", ":::", "<", "- ", "* ", "!!!", ">")) or re.match(
            r"\d+\. ", stripped
        ):
            close()
            continue
        if line[:1].isspace() and not paragraph:  # a list item's or an admonition's rest
            continue
        paragraph.append(stripped)
    close()
    return found


#: A paragraph this short ending in a colon only introduces what follows ("X is one of:").
LEAD_IN_CHARS = 60


def _lead_in(text: str) -> bool:
    return text.endswith(":") and len(text) < LEAD_IN_CHARS


def _summary(markdown: str) -> str:
    """The page's introduction: its first paragraph before any ``##`` heading that is not a
    short lead-in to a list or code, else its first paragraph at all."""
    paragraphs = _paragraphs(markdown)
    chosen = next(
        (text for intro, text in paragraphs if intro and not _lead_in(text)),
        paragraphs[0][1] if paragraphs else "",
    )
    text = _MARKUP.sub("", _LINK.sub(r"\1", chosen))
    if text.endswith(":"):
        text = text[:-1] + "."
    if len(text) > SUMMARY_CHARS:
        text = text[: SUMMARY_CHARS - 1].rsplit(" ", 1)[0] + "…"
    return text


def on_nav(nav: Any, config: Any, files: Any) -> Any:
    """Keep the nav, to write the index in its order."""
    _nav[:] = list(nav.items)
    return nav


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Remember each page's summary (the README is already in the front page by now)."""
    _summaries[page.file.src_uri] = _summary(markdown)
    return markdown


def _url(config: Any, page: Any) -> str:
    base = (config.get("site_url") or "").rstrip("/")
    return f"{base}/{page.url}" if base else (page.url or "./")


def _line(config: Any, page: Any) -> str:
    summary = _summaries.get(page.file.src_uri, "")
    entry = f"- [{page.title}]({_url(config, page)})"
    return f"{entry}: {summary}" if summary else entry


def _pages(item: Any) -> list[Any]:
    if getattr(item, "is_page", False):
        return [item]
    return [page for child in getattr(item, "children", None) or () for page in _pages(child)]


def on_post_build(config: Any) -> None:
    """Write ``llms.txt`` from the nav and the summaries gathered while building."""
    lines = [f"# {config['site_name']}", ""]
    if config.get("site_description"):
        lines += [f"> {' '.join(config['site_description'].split())}", ""]
    loose = [item for item in _nav if getattr(item, "is_page", False)]
    if loose:
        lines += ["## Pages", "", *(_line(config, page) for page in loose), ""]
    for section in _nav:
        if getattr(section, "is_page", False):
            continue
        pages = _pages(section)
        if pages:
            lines += [f"## {section.title}", "", *(_line(config, page) for page in pages), ""]
    Path(config["site_dir"], "llms.txt").write_text("\n".join(lines), encoding="utf-8")

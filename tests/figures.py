"""Figures a test measured (fuzz and soak runs), printed at the end of the test session so
that CI's log shows them whether the tests passed or not."""

from __future__ import annotations

FIGURES: list[tuple[str, str]] = []


def record(title: str, text: str) -> None:
    """Keep ``text`` for the session's summary, under ``title``."""
    FIGURES.append((title, text))

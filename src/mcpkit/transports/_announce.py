"""The lines a serving process writes to say where it serves: ``mcpkit run``, ``mcpkit
proxy`` and ``app.run()`` word them alike, so a script reading one reads them all."""

from __future__ import annotations

import sys


def http_url(host: str, port: int, endpoint: str) -> str:
    """The URL clients reach the endpoint at (an IPv6 host in brackets)."""
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}{endpoint}"


def serving_line(name: str, url: str, workers: int = 1) -> str:
    """``mcpkit: serving NAME on URL``, with the worker count when there are several."""
    several = f" ({workers} workers)" if workers > 1 else ""
    return f"mcpkit: serving {name} on {url}{several}"


def announce_http(name: str, url: str, workers: int = 1) -> None:
    """Write ``serving_line`` to stderr (stdout may be a protocol's or a pipe's)."""
    sys.stderr.write(serving_line(name, url, workers) + "\n")
    sys.stderr.flush()


def announce_stdio(name: str) -> None:
    """On a terminal, say that the server waits: silence there looks like a hang. A client
    pipes stdin, and then nothing is said."""
    if sys.stdin is not None and sys.stdin.isatty():
        sys.stderr.write(
            f"mcpkit: serving {name} on stdio; waiting for a client (Ctrl-C to stop)\n"
        )
        sys.stderr.flush()

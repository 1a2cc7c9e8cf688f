"""What ``mcpkit inspect`` and ``mcpkit call`` print for people: tables of what a server
offers, a tool's result as text, and (on stderr) the server's progress and log
notifications while a call runs. ``--json`` bypasses all of it for the raw JSON."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Iterator
from typing import Any, TextIO

from rich.console import Console
from rich.markup import escape
from rich.table import Table

#: Width of the tables when stdout is not a terminal (a pipe, a file): wide enough that
#: descriptions wrap rarely, narrow enough for a pager.
PIPE_WIDTH = 120
#: Longest parameter (or prompt argument) description in a cell, "…" included: one short
#: line per parameter keeps the table scannable; ``--json`` has the whole text.
PARAMETER_DESCRIPTION_CHARS = 60
#: A cut falls back to the last space before it, unless that leaves fewer characters than
#: this (one long word: cut inside it instead).
SHORTEST_WORD_CUT = 30


def _console(stream: TextIO) -> Console:
    terminal = stream.isatty()
    return Console(
        file=stream,
        width=None if terminal else PIPE_WIDTH,
        highlight=False,
        soft_wrap=False,
        no_color=not terminal,
    )


def print_json(value: Any, stream: TextIO | None = None) -> None:
    out = stream or sys.stdout
    out.write(json.dumps(value, indent=2, ensure_ascii=False) + "\n")
    out.flush()


def _type_of(schema: Any) -> str:
    if not isinstance(schema, dict):
        return "any"
    kind = schema.get("type")
    if isinstance(kind, list):
        return " | ".join(str(item) for item in kind)
    if "enum" in schema:
        return " | ".join(json.dumps(value) for value in schema["enum"])
    if kind == "array":
        return f"array of {_type_of(schema.get('items'))}"
    if kind:
        return str(kind)
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return " | ".join(_type_of(option) for option in schema[key])
    return "object" if "properties" in schema else "any"


def parameters_of(input_schema: Any) -> list[str]:
    """A tool's parameters as ``name: type``, a ``*`` marking the required ones, and
    `` — description`` (shortened) when the schema gives one."""
    if not isinstance(input_schema, dict):
        return []
    required = set(input_schema.get("required") or [])
    return [
        _described(
            f"{name}{'*' if name in required else ''}: {_type_of(schema)}",
            schema.get("description") if isinstance(schema, dict) else None,
        )
        for name, schema in (input_schema.get("properties") or {}).items()
    ]


def arguments_of(arguments: Any) -> list[str]:
    """A prompt's arguments as ``name``, a ``*`` marking the required ones, and
    `` — description`` (shortened) when there is one."""
    return [
        _described(
            f"{arg.get('name', '')}{'*' if arg.get('required') else ''}", arg.get("description")
        )
        for arg in arguments or []
        if isinstance(arg, dict)
    ]


def _described(label: str, description: Any) -> str:
    text = " ".join(_first_line(description).split()) if isinstance(description, str) else ""
    return f"{label} — {_shortened(text)}" if text else label


def _shortened(text: str, limit: int = PARAMETER_DESCRIPTION_CHARS) -> str:
    """``text`` cut to ``limit`` characters at a word, with "…", when it is longer."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space >= SHORTEST_WORD_CUT:
        cut = cut[:space]
    return cut.rstrip(" ,;:-") + "…"


def _first_line(text: Any) -> str:
    return str(text or "").strip().split("\n\n", 1)[0].replace("\n", " ")


def print_listing(listing: dict[str, Any], stream: TextIO | None = None) -> None:
    """``mcpkit inspect``'s tables (``listing`` is what ``--json`` prints)."""
    console = _console(stream or sys.stdout)
    server = listing.get("server") or {}
    info = server.get("serverInfo") or {}
    console.print(
        escape(
            f"{info.get('name', '?')} {info.get('version', '')}".strip()
            + f" (protocol {server.get('protocolVersion', '?')})"
        )
    )
    if server.get("instructions"):
        console.print(escape(_first_line(server["instructions"])))

    def table(title: str, columns: list[str], rows: list[list[str]]) -> None:
        console.print()
        if not rows:
            console.print(f"{title}: none")
            return
        grid = Table(title=f"{title} ({len(rows)})", title_justify="left", show_lines=False)
        for column in columns:
            grid.add_column(column, overflow="fold")
        for row in rows:
            grid.add_row(*(escape(cell) for cell in row))
        console.print(grid)

    table(
        "Tools",
        ["name", "parameters (* required)", "description"],
        [
            [
                tool.get("name", ""),
                "\n".join(parameters_of(tool.get("inputSchema"))),
                _first_line(tool.get("description")),
            ]
            for tool in listing.get("tools") or []
        ],
    )
    table(
        "Resources",
        ["uri", "name", "mime type", "description"],
        [
            [
                item.get("uri", ""),
                item.get("name", ""),
                item.get("mimeType") or "",
                _first_line(item.get("description")),
            ]
            for item in listing.get("resources") or []
        ],
    )
    table(
        "Resource templates",
        ["uri template", "name", "mime type", "description"],
        [
            [
                item.get("uriTemplate", ""),
                item.get("name", ""),
                item.get("mimeType") or "",
                _first_line(item.get("description")),
            ]
            for item in listing.get("resourceTemplates") or []
        ],
    )
    table(
        "Prompts",
        ["name", "arguments (* required)", "description"],
        [
            [
                item.get("name", ""),
                "\n".join(arguments_of(item.get("arguments"))),
                _first_line(item.get("description")),
            ]
            for item in listing.get("prompts") or []
        ],
    )


def _block_text(block: dict[str, Any]) -> str:
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind in ("image", "audio"):
        size = len(str(block.get("data", ""))) * 3 // 4
        return f"[{kind} {block.get('mimeType', '')}, about {size} bytes]"
    if kind == "resource":
        resource = block.get("resource") or {}
        if "text" in resource:
            return f"[resource {resource.get('uri', '')}]\n{resource['text']}"
        return f"[resource {resource.get('uri', '')}, {resource.get('mimeType', 'binary')}]"
    if kind == "resource_link":
        return f"[link {block.get('uri', '')}]"
    return json.dumps(block, ensure_ascii=False)


def print_result(result: dict[str, Any], stream: TextIO | None = None) -> None:
    """A tool's result for people: each content block (text as it is); the structured
    content as JSON when there is no content block."""
    out = stream or sys.stdout
    blocks = [block for block in result.get("content") or [] if isinstance(block, dict)]
    parts = [_block_text(block) for block in blocks]
    structured = result.get("structuredContent")
    if structured is not None and not parts:  # the content blocks already say it for people
        parts.append(json.dumps(structured, indent=2, ensure_ascii=False))
    for part in parts:
        out.write(part if part.endswith("\n") else part + "\n")
    out.flush()


def print_resource(result: dict[str, Any], stream: TextIO | None = None) -> None:
    """A resource's contents for people: each text as it is, each blob as a note of its
    type and size."""
    out = stream or sys.stdout
    for item in result.get("contents") or []:
        if "text" in item:
            text = str(item["text"])
        else:
            size = len(str(item.get("blob", ""))) * 3 // 4
            text = f"[blob {item.get('mimeType') or 'of no type'}, about {size} bytes]"
        out.write(text if text.endswith("\n") else text + "\n")
    out.flush()


def print_prompt(result: dict[str, Any], stream: TextIO | None = None) -> None:
    """A prompt's messages for people: ``role: text``, each content as a tool's would be."""
    out = stream or sys.stdout
    for message in result.get("messages") or []:
        content = message.get("content")
        text = _block_text(content) if isinstance(content, dict) else json.dumps(content)
        line = f"{message.get('role', '?')}: {text}"
        out.write(line if line.endswith("\n") else line + "\n")
    out.flush()


class CallDisplay:
    """Progress (a rich bar on a terminal; nothing otherwise) and log notifications (one
    line each: ``[level] logger: data``) on ``stream`` while a call runs."""

    def __init__(self, stream: TextIO, *, show_progress: bool | None = None) -> None:
        self.stream = stream
        self.console = Console(file=stream, highlight=False, soft_wrap=True)
        terminal = stream.isatty()
        self.show_progress = terminal if show_progress is None else show_progress
        self._progress: Any = None
        self._task: Any = None

    def progress(self, done: float, total: float | None, message: str | None) -> None:
        """The ``progress`` callback of ``McpClient.call_tool``."""
        if not self.show_progress:
            return
        if self._progress is None:
            from rich.progress import (
                BarColumn,
                Progress,
                SpinnerColumn,
                TaskProgressColumn,
                TextColumn,
            )

            self._progress = Progress(
                SpinnerColumn(),
                TextColumn("{task.description}"),
                BarColumn(),
                TaskProgressColumn(),
                console=self.console,
                transient=True,
            )
            self._progress.start()
            self._task = self._progress.add_task("working", total=total)
        self._progress.update(
            self._task,
            completed=done,
            total=total,
            description=escape(message) if message else "working",
            refresh=True,  # drawn now: a short call may end before the next auto refresh
        )

    def log(self, params: dict[str, Any]) -> None:
        """The ``logging_handler`` of the client: one line per ``notifications/message``."""
        data = params.get("data")
        text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
        logger = params.get("logger")
        line = f"[{params.get('level', 'info')}] {f'{logger}: ' if logger else ''}{text}"
        if self._progress is not None:
            self._progress.console.print(escape(line))
        else:
            self.stream.write(line + "\n")
            self.stream.flush()

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """The bar hidden while a prompt is up."""
        progress = self._progress
        if progress is None:
            yield
            return
        progress.stop()
        try:
            yield
        finally:
            progress.start()

    def close(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None

"""``mcpkit call`` answering what a server asks of its user: sampling (``sampling/createMessage``:
the user writes the model's reply) and elicitation (``elicitation/create``: a form built from
the requested schema, or a URL to visit), prompted on stderr and read from stdin.

Without someone to ask (``--no-input``, or stdin not a terminal unless ``--input``) every
request is refused: an elicitation is declined, a sampling request gets the error the spec
gives for a user's refusal (code -1); either way one line on stderr says so. Prompts run in
a daemon thread, so the connection (and an in-process server) keeps going meanwhile."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any, TextIO

from mcpkit._exceptions import ProtocolError

#: Code of the error answering a sampling request the user refused (the spec's example).
USER_REJECTED = -1
#: Tries a field gets before an answer that does not fit it cancels the whole form.
MAX_ATTEMPTS = 3
#: Longest line read for one answer; the rest of a longer line is dropped.
MAX_ANSWER_CHARS = 64 * 1024

_YES = ("y", "yes", "true", "1", "on")
_NO = ("n", "no", "false", "0", "off")


class _Cancelled(Exception):
    """The user ended the form (end of input, or too many answers that did not fit)."""


class UserPrompts:
    """The sampling and elicitation handlers of ``mcpkit call``.

    ``interactive``: ask on ``output`` and read answers from ``source``; otherwise refuse.
    ``pause``: a context-manager factory that hides a live display (the progress bar)
    while a prompt is up."""

    def __init__(
        self,
        *,
        interactive: bool,
        source: TextIO,
        output: TextIO,
        pause: Callable[[], Any] | None = None,
        refusal_reason: str = "--no-input",
    ) -> None:
        self.interactive = interactive
        self.source = source
        self.output = output
        self.pause = pause
        self.refusal_reason = refusal_reason
        # One prompt at a time: two requests at once would interleave their questions.
        self._lock = asyncio.Lock()

    # handlers -------------------------------------------------------------------------

    async def sampling(self, params: dict[str, Any]) -> dict[str, Any]:
        """Answer ``sampling/createMessage``: the user writes the assistant's reply."""
        if not self.interactive:
            self._say(f"mcpkit: refused the server's sampling request ({self.refusal_reason})")
            raise ProtocolError("The user rejected the sampling request", code=USER_REJECTED)
        async with self._lock:
            reply = await _in_daemon_thread(self._ask_sampling, params)
        if reply is None:
            raise ProtocolError("The user rejected the sampling request", code=USER_REJECTED)
        return {
            "role": "assistant",
            "content": {"type": "text", "text": reply},
            "model": "mcpkit-call-user",
            "stopReason": "endTurn",
        }

    async def elicitation(self, params: dict[str, Any]) -> dict[str, Any]:
        """Answer ``elicitation/create``: a form from ``requestedSchema``, or a URL."""
        if not self.interactive:
            self._say(f"mcpkit: declined the server's elicitation request ({self.refusal_reason})")
            return {"action": "decline"}
        async with self._lock:
            answer: dict[str, Any] = await _in_daemon_thread(self._ask_elicitation, params)
            return answer

    # the terminal side (a worker thread) ----------------------------------------------

    def _say(self, text: str) -> None:
        self.output.write(text + "\n")
        self.output.flush()

    def _read(self, question: str) -> str:
        """One answer line (without its newline); ``_Cancelled`` at end of input."""
        self.output.write(question)
        self.output.flush()
        line = self.source.readline(MAX_ANSWER_CHARS)
        if not line:
            self.output.write("\n")
            raise _Cancelled
        if not line.endswith("\n"):  # longer than the bound: drop the rest of the line
            while (rest := self.source.readline(MAX_ANSWER_CHARS)) and not rest.endswith("\n"):
                pass
        return line.rstrip("\r\n")

    def _paused(self, work: Callable[[], Any]) -> Any:
        if self.pause is None:
            return work()
        with self.pause():
            return work()

    def _ask_sampling(self, params: dict[str, Any]) -> str | None:
        def ask() -> str | None:
            self._say("The server asks for a model's reply (sampling):")
            system = params.get("systemPrompt")
            if system:
                self._say(f"  system: {system}")
            for message in params.get("messages") or []:
                self._say(f"  {message.get('role', '?')}: {_content_text(message.get('content'))}")
            try:
                reply = self._read("Reply as the model (empty to refuse): ")
            except _Cancelled:
                return None
            return reply or None

        result: str | None = self._paused(ask)
        return result

    def _ask_elicitation(self, params: dict[str, Any]) -> dict[str, Any]:
        def ask() -> dict[str, Any]:
            mode = params.get("mode", "form")
            self._say(f"The server asks: {params.get('message', '')}")
            try:
                if mode == "url":
                    self._say(f"  open: {params.get('url', '')}")
                    answer = self._read("Go to that page? [y]es / [n]o: ").strip().lower()
                    return {"action": "accept" if answer in _YES else "decline"}
                answer = self._read("Answer? [Y]es / [n]o (decline) / [c]ancel: ").strip().lower()
                if answer in ("c", "cancel"):
                    return {"action": "cancel"}
                if answer in _NO or answer == "decline":
                    return {"action": "decline"}
                content = self._fill_form(params.get("requestedSchema") or {})
            except _Cancelled:
                return {"action": "cancel"}
            return {"action": "accept", "content": content}

        result: dict[str, Any] = self._paused(ask)
        return result

    def _fill_form(self, schema: dict[str, Any]) -> dict[str, Any]:
        properties: dict[str, Any] = schema.get("properties") or {}
        required = set(schema.get("required") or [])
        content: dict[str, Any] = {}
        for name, field in properties.items():
            value = self._ask_field(name, field if isinstance(field, dict) else {}, required)
            if value is not _OMITTED:
                content[name] = value
        return content

    def _ask_field(self, name: str, field: dict[str, Any], required: set[str]) -> Any:
        choices = _choices(field)
        label = field.get("title") or name
        kind = field.get("type", "string")
        details = [kind]
        if choices:
            shown = ", ".join(f"{i}) {title}" for i, (_, title) in enumerate(choices, 1))
            details = [f"one of {shown}"] if kind != "array" else [f"any of {shown}"]
        if name in required:
            details.append("required")
        default = field.get("default", _OMITTED)
        question = f"  {label} ({'; '.join(details)})"
        if field.get("description"):
            question += f" - {field['description']}"
        if default is not _OMITTED:
            question += f" [{_shown(default)}]"
        question += ": "
        for _ in range(MAX_ATTEMPTS):
            text = self._read(question).strip()
            if not text:
                if default is not _OMITTED:
                    return default
                if name not in required:
                    return _OMITTED
                self._say(f"  {label} is required")
                continue
            try:
                return _convert(text, kind, choices)
            except ValueError as exc:
                self._say(f"  {exc}")
        raise _Cancelled


_OMITTED: Any = object()


async def _in_daemon_thread(work: Callable[..., Any], *args: Any) -> Any:
    """``work(*args)`` in a daemon thread: a prompt still waiting for a line when the call
    ends (the server gave up on it) must not keep the command from exiting, as a worker
    of the loop's executor would."""
    import threading

    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()

    def settle(value: Any, error: BaseException | None) -> None:
        if future.done():
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(value)

    def run() -> None:
        value: Any = None
        error: BaseException | None = None
        try:
            value = work(*args)
        except BaseException as exc:
            error = exc
        try:
            loop.call_soon_threadsafe(settle, value, error)
        except RuntimeError:  # the loop is closed: the call ended without this answer
            pass

    threading.Thread(target=run, name="mcpkit-call-prompt", daemon=True).start()
    return await future


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return ",".join(str(item) for item in value)
    return str(value)


def _choices(field: dict[str, Any]) -> list[tuple[Any, str]]:
    """(value, title) of an enum field: ``enum`` (+ ``enumNames``), ``oneOf``/``anyOf`` of
    ``const``s, or an array's ``items`` of either."""
    source = field.get("items") if field.get("type") == "array" else field
    if not isinstance(source, dict):
        return []
    if "enum" in source:
        names = source.get("enumNames") or source["enum"]
        return [(value, str(title)) for value, title in zip(source["enum"], names)]
    options = source.get("oneOf") or source.get("anyOf") or []
    return [
        (option["const"], str(option.get("title", option["const"])))
        for option in options
        if isinstance(option, dict) and "const" in option
    ]


def _pick(text: str, choices: list[tuple[Any, str]]) -> Any:
    if text.isdigit() and 1 <= int(text) <= len(choices):
        return choices[int(text) - 1][0]
    for value, title in choices:
        if text in (str(value), title):
            return value
    raise ValueError(f"not one of the choices: answer 1 to {len(choices)}, or a value")


def _convert(text: str, kind: str, choices: list[tuple[Any, str]]) -> Any:
    """An answer as the field's type; ``ValueError`` saying what fits."""
    if kind == "array":
        items = [item.strip() for item in text.split(",") if item.strip()]
        return [_pick(item, choices) for item in items] if choices else items
    if choices:
        return _pick(text, choices)
    if kind == "boolean":
        lowered = text.lower()
        if lowered in _YES:
            return True
        if lowered in _NO:
            return False
        raise ValueError("answer yes or no")
    if kind == "integer":
        try:
            return int(text)
        except ValueError:
            raise ValueError("not an integer") from None
    if kind == "number":
        try:
            number = float(text)
        except ValueError:
            raise ValueError("not a number") from None
        return int(number) if number.is_integer() and "." not in text else number
    return text


def _content_text(content: Any) -> str:
    if isinstance(content, list):
        return " ".join(_content_text(item) for item in content)
    if isinstance(content, dict):
        if content.get("type") == "text":
            return str(content.get("text", ""))
        return f"[{content.get('type', 'content')}]"
    return json.dumps(content)

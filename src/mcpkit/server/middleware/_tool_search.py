"""Tool search for large catalogs (``ToolSearch``): ``tools/list`` shows two tools instead of
all of them, ``search_tools`` (a query in words; the best matches with their descriptions
and input schemas, ranked by BM25 over each tool's name, description and arguments) and
``call_tool`` (a tool by name, with its arguments), so a model reads a few tool
definitions instead of a thousand. The tools themselves stay callable by name, and each
caller finds only what it may see (``auth=``, ``disable``, a session's view)."""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Any

import msgspec

from mcpkit.server._access import listed
from mcpkit.server._engine.middleware import CallNext, Middleware, MiddlewareContext

#: How many tools ``search_tools`` gives at most, by default.
DEFAULT_MAX_RESULTS = 8
SEARCH = "search_tools"
CALL = "call_tool"
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
#: BM25's usual constants: term saturation and length normalisation.
_K1, _B = 1.2, 0.75


def words(text: str) -> list[str]:
    """The lower-cased words of ``text``, ``snake_case`` and ``camelCase`` split."""
    return [word.lower() for word in _WORD.findall(text)]


def _document(tool: dict[str, Any]) -> list[str]:
    schema = tool.get("inputSchema") or {}
    properties = schema.get("properties") or {}
    parts = [tool.get("name", ""), tool.get("title") or "", tool.get("description") or ""]
    for name, spec in properties.items():
        parts.append(name)
        if isinstance(spec, dict) and isinstance(spec.get("description"), str):
            parts.append(spec["description"])
    return words(" ".join(parts))


class Bm25Index:
    """BM25 over tool definitions (wire dicts), made once per set of tools."""

    def __init__(self, tools: list[dict[str, Any]]) -> None:
        self.tools = tools
        self.documents = [Counter(_document(tool)) for tool in tools]
        self.lengths = [sum(doc.values()) for doc in self.documents]
        self.average = (sum(self.lengths) / len(self.lengths)) if self.lengths else 0.0
        frequency: Counter[str] = Counter()
        for doc in self.documents:
            frequency.update(doc.keys())
        count = len(tools)
        self.idf = {
            term: math.log(1 + (count - seen + 0.5) / (seen + 0.5))
            for term, seen in frequency.items()
        }

    def search(self, query: str, limit: int) -> list[dict[str, Any]]:
        """The ``limit`` best tools for ``query``, best first; none when no word matches."""
        terms = [term for term in dict.fromkeys(words(query)) if term in self.idf]
        scored: list[tuple[float, int]] = []
        for index, doc in enumerate(self.documents):
            score = 0.0
            norm = _K1 * (1 - _B + _B * self.lengths[index] / (self.average or 1))
            for term in terms:
                seen = doc.get(term)
                if seen:
                    score += self.idf[term] * seen * (_K1 + 1) / (seen + norm)
            if score > 0:
                scored.append((score, index))
        scored.sort(key=lambda pair: (-pair[0], pair[1]))
        return [self.tools[index] for _, index in scored[:limit]]


class ToolSearch(Middleware):
    """``app``'s tools behind ``search_tools`` and ``call_tool`` (see the module).
    ``always_visible``: tools listed as they are too; ``max_results``: the most one search
    gives."""

    def __init__(
        self,
        app: Any,
        *,
        max_results: int = DEFAULT_MAX_RESULTS,
        always_visible: tuple[str, ...] = (),
    ) -> None:
        if max_results < 1:
            raise ValueError("max_results must be at least 1")
        self.app = app
        self.max_results = max_results
        self.always_visible = frozenset(always_visible)
        self._index: tuple[tuple[int, ...], Bm25Index] | None = None

    def _visible(self, context: MiddlewareContext) -> list[dict[str, Any]]:
        catalog = self.app.catalog
        entries, _ = listed(catalog, "tools", catalog.list_tools(), context.binding)
        return [entry.to_wire() for entry in entries]

    def index(self, tools: list[dict[str, Any]]) -> Bm25Index:
        """The index of ``tools``, made again only when they changed."""
        key = tuple(id(tool) for tool in tools)
        if self._index is None or self._index[0] != key:
            self._index = (key, Bm25Index(tools))
        return self._index[1]

    async def on_list_tools(self, context: MiddlewareContext, call_next: CallNext) -> Any:
        result = await call_next(context)
        shown = [tool for tool in result.get("tools", []) if tool["name"] in self.always_visible]
        return {**result, "tools": [*meta_tools(self.max_results), *shown]}

    async def on_call_tool(self, context: MiddlewareContext, call_next: CallNext) -> Any:
        params = context.params or {}
        name = params.get("name")
        arguments = params.get("arguments") or {}
        if name == SEARCH:
            query = arguments.get("query")
            if not isinstance(query, str) or not query.strip():
                return _text_result(
                    "search_tools needs a query: words that describe the tool", True
                )
            limit = arguments.get("limit", self.max_results)
            limit = (
                min(limit, self.max_results)
                if isinstance(limit, int) and limit > 0
                else self.max_results
            )
            found = self.index(self._visible(context)).search(query, limit)
            return _text_result(msgspec.json.encode(found).decode(), False)
        if name == CALL:
            inner = arguments.get("name")
            if not isinstance(inner, str):
                return _text_result("call_tool needs the tool's name", True)
            context.params = {
                **params,
                "name": inner,
                "arguments": arguments.get("arguments") or {},
            }
        return await call_next(context)


def _text_result(text: str, failed: bool) -> dict[str, Any]:
    result: dict[str, Any] = {"content": [{"type": "text", "text": text}]}
    if failed:
        result["isError"] = True
    return result


def meta_tools(limit: int) -> list[dict[str, Any]]:
    """The wire definitions of ``search_tools`` and ``call_tool``."""
    return [
        {
            "name": SEARCH,
            "description": (
                "Find the tools for a task: give words describing what you need; get the best"
                f" matching tools (at most {limit}) with their descriptions and input schemas."
                " Then call one with call_tool."
            ),
            "inputSchema": {
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "What the tool should do"},
                    "limit": {"type": "integer", "minimum": 1, "maximum": limit},
                },
                "required": ["query"],
            },
        },
        {
            "name": CALL,
            "description": "Call a tool search_tools found, by name, with its arguments.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": "The tool's name"},
                    "arguments": {"type": "object", "description": "Its arguments"},
                },
                "required": ["name"],
            },
        },
    ]


__all__ = ["DEFAULT_MAX_RESULTS", "Bm25Index", "ToolSearch", "words"]

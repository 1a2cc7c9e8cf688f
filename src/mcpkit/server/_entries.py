"""Catalog entries: one registered tool, resource, resource template, prompt or completion,
with its wire description and the callable that serves it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mcpkit.protocol._uri_template import UriTemplate
from mcpkit.server._decorators import Pipeline
from mcpkit.server._engine.sync_calls import call_mode as _call_mode_of


class _Callable:
    """What every entry shares: how its function is called, decided once when it is built
    (unless given)."""

    __slots__ = ()
    fn: Callable[..., Any]
    run_in_thread: bool
    call_mode: str

    def __post_init__(self) -> None:
        if not self.call_mode:
            self.call_mode = _call_mode_of(self.fn, self.run_in_thread)  # type: ignore[misc]  # the slot is the subclass's


def _drop_none(pairs: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in pairs.items() if value is not None and value != ()}


@dataclass(slots=True)
class ToolEntry(_Callable):
    name: str
    fn: Callable[..., Any]
    input_schema: dict[str, Any]
    description: str | None = None
    title: str | None = None
    output_schema: dict[str, Any] | None = None
    annotations: dict[str, Any] | None = None
    icons: tuple[dict[str, Any], ...] = ()
    meta: dict[str, Any] | None = None
    timeout: float | None = None
    #: CallableSignature: checks the arguments (an input_schema given as it is included);
    #: None passes them on unchecked (an entry made by hand, such as a proxy's).
    signature: Any = None
    injected: dict[str, type] = field(default_factory=dict)
    injection: Any = None  # InjectionPlan of Header/State/Depends parameters (_inject.plan)
    pipeline: Pipeline = field(default_factory=Pipeline)
    method_name: str = ""
    server_class: type | None = None
    task_support: str | None = None
    header_params: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)  # x-mcp-header
    #: The apps this entry is a mounted copy from, innermost first (``_compose``): their
    #: ``mask_error_details`` apply to it too. Read only when the tool raised.
    mounted_from: tuple[Any, ...] = ()
    _wire: dict[str, Any] | None = None
    #: A transformed tool's (``mcpkit.server.transforms``): its arguments as the original
    #: takes them, from those its own schema describes.
    arguments_map: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    #: The entry a transformed tool was made from (what was registered under its name).
    original: Any = None
    #: Its version, when the tool of this name has several (``_versions``).
    version: str | None = None
    run_in_thread: bool = True  # a sync function runs in a worker thread (False: inline)
    call_mode: str = ""  # "async", "thread" or "inline": decided once, from fn, when built
    #: AuthRequirement: what a caller's identity must satisfy to see and use it (None: any).
    auth: Any = None
    #: Labels ``app.enable``/``app.disable`` select it by (``tags=``).
    tags: frozenset[str] = frozenset()
    #: Served (True), or registered but set aside until enabled (``enabled=False``,
    #: ``app.disable``): absent then from every list and lookup.
    enabled: bool = True

    def to_wire(self) -> dict[str, Any]:
        """The tool as ``tools/list`` describes it (made once)."""
        if self._wire is None:
            wire = _drop_none(
                {
                    "name": self.name,
                    "title": self.title,
                    "description": self.description,
                    "inputSchema": self.input_schema,
                    "outputSchema": self.output_schema,
                    "annotations": self.annotations,
                    "icons": list(self.icons) or None,
                    "_meta": self.meta,
                }
            )
            if self.task_support:
                wire["execution"] = {"taskSupport": self.task_support}
            self._wire = wire
        return self._wire


@dataclass(slots=True)
class ResourceEntry(_Callable):
    uri: str
    name: str
    fn: Callable[..., Any]
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None
    annotations: dict[str, Any] | None = None
    icons: tuple[dict[str, Any], ...] = ()
    meta: dict[str, Any] | None = None
    injected: dict[str, type] = field(default_factory=dict)
    injection: Any = None  # InjectionPlan of Header/State/Depends parameters (_inject.plan)
    pipeline: Pipeline = field(default_factory=Pipeline)
    method_name: str = ""
    server_class: type | None = None
    run_in_thread: bool = True  # a sync function runs in a worker thread (False: inline)
    call_mode: str = ""  # "async", "thread" or "inline": decided once, from fn, when built
    #: AuthRequirement: what a caller's identity must satisfy to see and use it (None: any).
    auth: Any = None
    #: Labels ``app.enable``/``app.disable`` select it by (``tags=``).
    tags: frozenset[str] = frozenset()
    #: Served (True), or registered but set aside until enabled (``enabled=False``,
    #: ``app.disable``): absent then from every list and lookup.
    enabled: bool = True

    def to_wire(self) -> dict[str, Any]:
        """The resource as ``resources/list`` describes it."""
        return _drop_none(
            {
                "uri": self.uri,
                "name": self.name,
                "title": self.title,
                "description": self.description,
                "mimeType": self.mime_type,
                "size": self.size,
                "annotations": self.annotations,
                "icons": list(self.icons) or None,
                "_meta": self.meta,
            }
        )


@dataclass(slots=True)
class ResourceTemplateEntry(_Callable):
    template: UriTemplate
    name: str
    fn: Callable[..., Any]
    #: Variables whose parameter is typed (``id: int``): how to convert their text.
    converters: dict[str, Callable[[Any], Any]] | None = None
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    annotations: dict[str, Any] | None = None
    icons: tuple[dict[str, Any], ...] = ()
    meta: dict[str, Any] | None = None
    injected: dict[str, type] = field(default_factory=dict)
    injection: Any = None  # InjectionPlan of Header/State/Depends parameters (_inject.plan)
    pipeline: Pipeline = field(default_factory=Pipeline)
    method_name: str = ""
    server_class: type | None = None
    run_in_thread: bool = True  # a sync function runs in a worker thread (False: inline)
    call_mode: str = ""  # "async", "thread" or "inline": decided once, from fn, when built
    #: AuthRequirement: what a caller's identity must satisfy to see and use it (None: any).
    auth: Any = None
    #: Labels ``app.enable``/``app.disable`` select it by (``tags=``).
    tags: frozenset[str] = frozenset()
    #: Served (True), or registered but set aside until enabled (``enabled=False``,
    #: ``app.disable``): absent then from every list and lookup.
    enabled: bool = True

    @property
    def uri_template(self) -> str:
        """The RFC 6570 template, as text."""
        return self.template.template

    def to_wire(self) -> dict[str, Any]:
        """The template as ``resources/templates/list`` describes it."""
        return _drop_none(
            {
                "uriTemplate": self.template.template,
                "name": self.name,
                "title": self.title,
                "description": self.description,
                "mimeType": self.mime_type,
                "annotations": self.annotations,
                "icons": list(self.icons) or None,
                "_meta": self.meta,
            }
        )


@dataclass(slots=True)
class PromptEntry(_Callable):
    name: str
    fn: Callable[..., Any]
    arguments: list[dict[str, Any]]
    title: str | None = None
    description: str | None = None
    icons: tuple[dict[str, Any], ...] = ()
    meta: dict[str, Any] | None = None
    signature: Any = None
    injected: dict[str, type] = field(default_factory=dict)
    injection: Any = None  # InjectionPlan of Header/State/Depends parameters (_inject.plan)
    pipeline: Pipeline = field(default_factory=Pipeline)
    method_name: str = ""
    server_class: type | None = None
    run_in_thread: bool = True  # a sync function runs in a worker thread (False: inline)
    call_mode: str = ""  # "async", "thread" or "inline": decided once, from fn, when built
    #: AuthRequirement: what a caller's identity must satisfy to see and use it (None: any).
    auth: Any = None
    #: Labels ``app.enable``/``app.disable`` select it by (``tags=``).
    tags: frozenset[str] = frozenset()
    #: Served (True), or registered but set aside until enabled (``enabled=False``,
    #: ``app.disable``): absent then from every list and lookup.
    enabled: bool = True

    def to_wire(self) -> dict[str, Any]:
        """The prompt as ``prompts/list`` describes it."""
        return _drop_none(
            {
                "name": self.name,
                "title": self.title,
                "description": self.description,
                "arguments": self.arguments,
                "icons": list(self.icons) or None,
                "_meta": self.meta,
            }
        )


@dataclass(slots=True)
class CompletionEntry(_Callable):
    """Completes arguments of the prompt or resource template named by ``ref_type``/``ref``."""

    ref_type: str  # "ref/prompt" or "ref/resource"
    ref: str
    argument: str | None
    fn: Callable[..., Any]
    accepts: frozenset[str] = frozenset()
    run_in_thread: bool = True  # a sync function runs in a worker thread (False: inline)
    call_mode: str = ""  # "async", "thread" or "inline": decided once, from fn, when built

"""Builds catalog entries from functions and their decorator specs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mcpkit.protocol._headers import header_annotations
from mcpkit.protocol._uri_template import UriTemplate
from mcpkit.server._decorators import (
    Pipeline,
    PromptSpec,
    ResourceSpec,
    ToolSpec,
    resolve_task_support,
)
from mcpkit.server._entries import PromptEntry, ResourceEntry, ResourceTemplateEntry, ToolEntry
from mcpkit.server._inject import InjectionPlan, plan_injection
from mcpkit.server._schema import inspect_callable


def _name_of(fn: Callable[..., Any]) -> str:
    return getattr(fn, "__name__", None) or type(fn).__name__


def _injected(context_params: dict[str, type], injection: InjectionPlan | None) -> dict[str, type]:
    """The injected parameters of an entry: its ``McpToolContext`` ones, and with a plan
    every parameter the plan fills (a non-empty map keeps the call off the plain path)."""
    if injection is None:
        return context_params
    return {**context_params, **dict.fromkeys(injection.names, InjectionPlan)}


class EntryBuilder:
    """Knows which parameter types the engine injects, and builds entries accordingly."""

    def __init__(self, injectable: tuple[type, ...]) -> None:
        self.injectable = injectable

    def tool(
        self,
        fn: Callable[..., Any],
        spec: ToolSpec | None = None,
        *,
        pipeline: Pipeline | None = None,
        server_class: type | None = None,
        **options: Any,
    ) -> ToolEntry:
        if spec is None:
            options = {**options, "icons": tuple(options.get("icons") or ())}
            task = options.pop("task", None)
            options["task_support"] = resolve_task_support(task, options.get("task_support"))
            spec = ToolSpec(**options)
        signature = inspect_callable(fn, injectable=self.injectable)
        injection = plan_injection(fn, signature.injected)
        verbatim = spec.input_schema is not None
        output_schema = spec.output_schema
        if output_schema is None and spec.structured_output is not False:
            output_schema = signature.output_schema
        input_schema = spec.input_schema
        if input_schema is None:
            input_schema = signature.input_schema
        try:
            header_params = header_annotations(input_schema)
        except ValueError as exc:
            raise ValueError(f"tool {spec.name or _name_of(fn)!r}: {exc}") from None
        return ToolEntry(
            name=spec.name or _name_of(fn),
            fn=fn,
            input_schema=input_schema,
            description=spec.description or signature.description,
            title=spec.title,
            output_schema=output_schema,
            annotations=spec.annotations,
            icons=spec.icons,
            meta=spec.meta,
            timeout=spec.timeout,
            signature=None if verbatim else signature,
            injected=_injected(signature.injected, injection),
            injection=injection,
            pipeline=pipeline or Pipeline(),
            method_name=_name_of(fn),
            server_class=server_class,
            task_support=spec.task_support,
            header_params=header_params,
            run_in_thread=spec.run_in_thread,
        )

    def resource(
        self,
        fn: Callable[..., Any],
        spec: ResourceSpec | None = None,
        *,
        pipeline: Pipeline | None = None,
        server_class: type | None = None,
        **options: Any,
    ) -> ResourceEntry | ResourceTemplateEntry:
        if spec is None:
            options["icons"] = tuple(options.get("icons") or ())
            spec = ResourceSpec(**options)
        signature = inspect_callable(fn, injectable=self.injectable)
        injection = plan_injection(fn, signature.injected)
        common: dict[str, Any] = dict(
            fn=fn,
            name=spec.name or _name_of(fn),
            title=spec.title,
            description=spec.description or signature.description,
            mime_type=spec.mime_type,
            annotations=spec.annotations,
            icons=spec.icons,
            meta=spec.meta,
            injected=_injected(signature.injected, injection),
            injection=injection,
            pipeline=pipeline or Pipeline(),
            method_name=_name_of(fn),
            server_class=server_class,
            run_in_thread=spec.run_in_thread,
        )
        if UriTemplate.is_template(spec.uri):
            return ResourceTemplateEntry(template=UriTemplate(spec.uri), **common)
        return ResourceEntry(uri=spec.uri, size=spec.size, **common)

    def prompt(
        self,
        fn: Callable[..., Any],
        spec: PromptSpec | None = None,
        *,
        pipeline: Pipeline | None = None,
        server_class: type | None = None,
        **options: Any,
    ) -> PromptEntry:
        spec = spec or PromptSpec(**{**options, "icons": tuple(options.get("icons") or ())})
        signature = inspect_callable(fn, injectable=self.injectable)
        injection = plan_injection(fn, signature.injected)
        required = set(signature.input_schema.get("required", ()))
        arguments = []
        for name in signature.input_schema.get("properties", {}):
            argument: dict[str, Any] = {"name": name, "required": name in required}
            if name in signature.param_descriptions:
                argument["description"] = signature.param_descriptions[name]
            arguments.append(argument)
        return PromptEntry(
            name=spec.name or _name_of(fn),
            fn=fn,
            arguments=arguments,
            title=spec.title,
            description=spec.description or signature.description,
            icons=spec.icons,
            meta=spec.meta,
            signature=signature,
            injected=_injected(signature.injected, injection),
            injection=injection,
            pipeline=pipeline or Pipeline(),
            method_name=_name_of(fn),
            server_class=server_class,
            run_in_thread=spec.run_in_thread,
        )

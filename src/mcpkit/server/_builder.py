"""Builds catalog entries from functions and their decorator specs."""

from __future__ import annotations

import dataclasses
import inspect
import json
import logging
from collections.abc import Callable, Mapping
from typing import Any

from mcpkit._exceptions import InvalidParamsError
from mcpkit.protocol._headers import header_annotations
from mcpkit.protocol._jsonrpc import DEFAULT_MAX_MESSAGE_DEPTH, nests_deeper
from mcpkit.protocol._uri_template import UriTemplate
from mcpkit.server._decorators import (
    Pipeline,
    PromptSpec,
    ResourceSpec,
    ToolSpec,
    resolve_task_support,
)
from mcpkit.server._entries import PromptEntry, ResourceEntry, ResourceTemplateEntry, ToolEntry
from mcpkit.server._generators import generator_tool, refuse_generator
from mcpkit.server._inject.plan import InjectionPlan, _converter, plan_injection
from mcpkit.server._results import _builtins
from mcpkit.server._schema.callables import CallableSignature, inspect_callable
from mcpkit.server._schema.type_hints import _resolve_hints

logger = logging.getLogger("mcpkit.server")


def _name_of(fn: Callable[..., Any]) -> str:
    return getattr(fn, "__name__", None) or type(fn).__name__


def _injected(context_params: dict[str, type], injection: InjectionPlan | None) -> dict[str, type]:
    """The injected parameters of an entry: the ones found by type (``McpToolContext``,
    ``McpRequestScope``), and with a plan every parameter the plan fills (a non-empty map
    keeps the call off the plain path)."""
    if injection is None:
        return context_params
    return {**context_params, **dict.fromkeys(injection.names, InjectionPlan)}


def _variable_converters(
    fn: Callable[..., Any], template: UriTemplate
) -> dict[str, Callable[[Any], Any]] | None:
    """How the text of a template's variables becomes the types the function's parameters
    declare (``users://{id}/profile`` with ``id: int``: ``"42"`` → 42), as for headers; None
    when every one is a ``str`` (or a type no text converts to: given the text, as before)."""
    hints = _resolve_hints(fn)
    converters = {}
    for name in template.variables:
        if name not in hints:
            continue
        try:
            convert = _converter(hints[name], name)
        except TypeError:
            continue
        if convert is not str:
            converters[name] = convert
    return converters or None


def _warn_of_simple_explode(fn: Callable[..., Any], template: UriTemplate) -> None:
    """``{path*}`` is FastMCP's wildcard (several path segments), but resource templates are
    RFC 6570 templates (spec, resources): there ``*`` in simple expansion explodes a list
    into ``a,b`` and encodes a ``/`` (``a%2Fb``), so no client expanding the listed template
    sends ``a/b``. Matching ``a/b`` anyway would break the inverse of expansion the client
    relies on; the variable keeps RFC 6570's meaning, and the author is told of ``{+path}``."""
    for name in template.simple_exploded():
        logger.warning(
            "resource template %r (%s): {%s*} is RFC 6570's explode modifier, which matches "
            "one path segment (a list's items joined by ','), never a/b; for a path of "
            "several segments (FastMCP's {%s*}) write {+%s}",
            template.template,
            _name_of(fn),
            name,
            name,
            name,
        )


def _raw_validator(schema: Any) -> Any:
    # jsonschema-rs is loaded by the first tool given a schema as it is, not by every app.
    from mcpkit.server._schema.json_schema import arguments_validator

    return arguments_validator(schema)


def _unchecked(arguments: Any) -> dict[str, Any]:
    return dict(arguments)


def _object_output(value: Any) -> dict[str, Any]:
    """``structuredContent`` of a tool given an ``output_schema`` its return type does not
    describe: the value as JSON builtins, which must be an object."""
    data = _builtins(value)
    if not isinstance(data, dict):
        raise TypeError(f"the output schema needs an object, got {type(value).__name__}")
    return data


def _takes_text(schema: Any, defs: Mapping[str, Any]) -> bool:
    """Whether a JSON schema admits a string (or says nothing: ``Any``)."""
    if not isinstance(schema, dict):
        return True
    ref = schema.get("$ref")
    if isinstance(ref, str):
        return _takes_text(defs.get(ref.rsplit("/", 1)[-1]), defs)
    options = schema.get("anyOf", schema.get("oneOf"))
    if isinstance(options, list):
        return any(_takes_text(option, defs) for option in options)
    kind = schema.get("type")
    if kind is not None:
        return kind == "string" or (isinstance(kind, list) and "string" in kind)
    if "enum" in schema:
        return any(isinstance(value, str) for value in schema["enum"])
    if "const" in schema:
        return isinstance(schema["const"], str)
    return True


def _decoding_json_text(signature: CallableSignature) -> CallableSignature:
    """A prompt's signature whose arguments of other types than ``str`` (``int``, ``bool``,
    ``list[str]``, a model) may come as text, which is all the spec lets a client send
    (``arguments: {[key: string]: string}``): such text is read as JSON first (``"3"`` → 3,
    ``'["a"]'`` → ["a"]); text that is no JSON is validated as it is, and refused."""
    schema = signature.input_schema
    defs = schema.get("$defs", {})
    typed = frozenset(
        name for name, prop in schema.get("properties", {}).items() if not _takes_text(prop, defs)
    )
    if not typed:
        return signature
    validate = signature.validate

    def decoding(arguments: Any) -> dict[str, Any]:
        decoded = dict(arguments)
        for name in typed.intersection(decoded):
            value = decoded[name]
            if isinstance(value, str):
                decoded[name] = _json_argument(name, value)
        return validate(decoded)

    return dataclasses.replace(signature, _validator=decoding)


def _json_argument(name: str, text: str) -> Any:
    """The JSON value of a prompt argument's ``text``, or the text when it is no JSON (the
    validator says what is wrong with it). Nesting is bounded as a message's is, tool
    arguments included: this text was a string inside the message, so not counted there."""
    limit = DEFAULT_MAX_MESSAGE_DEPTH
    deep = text.count("[") + text.count("{") > limit and nests_deeper(
        text.encode("utf-8", "surrogatepass"), limit
    )
    if not deep:
        try:
            return json.loads(text)
        except ValueError:
            return text
        except RecursionError:  # unclosed brackets, which nests_deeper does not count
            pass
    detail = f"its JSON nests deeper than {limit} levels"
    raise InvalidParamsError(
        f"Invalid argument {name!r}: {detail}", {"errors": [{"path": name, "message": detail}]}
    )


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
        check_arguments: bool = True,
        **options: Any,
    ) -> ToolEntry:
        """The entry of tool ``fn``. An ``input_schema`` given as it is checks the arguments
        (compiled now: ``ValueError`` when it cannot be); ``check_arguments=False`` leaves
        that to whoever the function passes them on to (the OpenAPI bridge: the API)."""
        if spec is None:
            options = {**options, "icons": tuple(options.get("icons") or ())}
            task = options.pop("task", None)
            options["task_support"] = resolve_task_support(task, options.get("task_support"))
            spec = ToolSpec(**options)
        name = spec.name or _name_of(fn)
        refuse_generator("tool", fn)
        if inspect.isasyncgenfunction(fn):  # yields its progress, then its result
            from mcpkit.server._context import McpToolContext

            fn = generator_tool(fn, McpToolContext)
        signature = inspect_callable(fn, injectable=self.injectable)
        injection = plan_injection(fn, signature.injected)
        output_schema = spec.output_schema
        if output_schema is None and spec.structured_output is not False:
            output_schema = signature.output_schema
        elif output_schema is not None and signature.output_schema is None:
            # output_schema= on a function returning a dict (or unannotated): its results
            # must carry structuredContent (spec), as a typed return's do.
            signature = dataclasses.replace(
                signature,
                output_schema=output_schema,
                wraps_output=False,
                _serializer=_object_output,
                plain_output=(),
            )
        input_schema = spec.input_schema
        if input_schema is None:
            input_schema = signature.input_schema
        else:  # given as it is: the arguments are checked against it, as it says
            try:
                validator = _raw_validator(input_schema) if check_arguments else _unchecked
            except ValueError as exc:
                raise ValueError(
                    f"tool {name!r}: input_schema cannot check arguments: {exc}"
                ) from None
            signature = dataclasses.replace(
                signature, input_schema=input_schema, _validator=validator
            )
        try:
            header_params = header_annotations(input_schema)
        except ValueError as exc:
            raise ValueError(f"tool {name!r}: {exc}") from None
        return ToolEntry(
            name=name,
            fn=fn,
            input_schema=input_schema,
            description=spec.description or signature.description,
            title=spec.title,
            output_schema=output_schema,
            annotations=spec.annotations,
            icons=spec.icons,
            meta=spec.meta,
            timeout=spec.timeout,
            signature=signature,
            injected=_injected(signature.injected, injection),
            injection=injection,
            pipeline=pipeline or Pipeline(),
            method_name=_name_of(fn),
            server_class=server_class,
            task_support=spec.task_support,
            header_params=header_params,
            run_in_thread=spec.run_in_thread,
            auth=spec.auth,
            tags=spec.tags,
            enabled=spec.enabled,
            version=spec.version,
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
        refuse_generator("resource", fn)
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
            auth=spec.auth,
            tags=spec.tags,
            enabled=spec.enabled,
        )
        if UriTemplate.is_template(spec.uri):
            template = UriTemplate(spec.uri)
            _warn_of_simple_explode(fn, template)
            return ResourceTemplateEntry(
                template=template, converters=_variable_converters(fn, template), **common
            )
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
        refuse_generator("prompt", fn)
        signature = inspect_callable(fn, injectable=self.injectable)
        injection = plan_injection(fn, signature.injected)
        required = set(signature.input_schema.get("required", ()))
        properties = signature.input_schema.get("properties", {})
        arguments = []
        for name, schema in properties.items():
            argument: dict[str, Any] = {"name": name, "required": name in required}
            description = signature.param_descriptions.get(name) or schema.get("description")
            if description:
                argument["description"] = description
            arguments.append(argument)
        signature = _decoding_json_text(signature)
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
            auth=spec.auth,
            tags=spec.tags,
            enabled=spec.enabled,
        )

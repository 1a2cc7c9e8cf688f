"""Route maps: which operations become tools, resources, resource templates, or nothing,
and under which names and URIs.

Rules are tried in order; the first that matches an operation *and whose kind the
operation can take* decides. An operation no rule takes is a tool. A ``resource`` rule
takes a GET operation without path variables, required parameters or a required body
(its optional query parameters are left out: the API's defaults apply); a
``resource_template`` rule takes a GET operation without a required header, cookie or
body (its path variables and query parameters become the template's variables). So
``GET_AS_RESOURCES`` (a ``resource`` rule, then a ``resource_template`` rule, both for
GET) turns ``GET /pets`` into a resource and ``GET /pets/{petId}`` into a template, and
leaves a GET that needs a header a tool.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping
from dataclasses import KW_ONLY, dataclass
from typing import Literal, get_args

from mcpkit.openapi._operations import OpenApiOperation
from mcpkit.openapi._plans import OperationPlan

#: What a ``RouteMap`` makes of the operations it matches.
RouteKind = Literal["tool", "resource", "resource_template", "exclude"]

#: Longest tool name (MCP: 1 to 128 characters of ``A-Z a-z 0-9 _ - .``).
MAX_TOOL_NAME = 128

_KINDS: frozenset[str] = frozenset(get_args(RouteKind))
_RESOURCE_KINDS = frozenset({"resource", "resource_template"})
_NOT_TOOL_NAME = re.compile(r"[^A-Za-z0-9_.-]+")
_NOT_VARNAME = re.compile(r"[^A-Za-z0-9_]+")
_NOT_AUTHORITY = re.compile(r"[^a-z0-9.-]+")
# Names the reading function takes itself: a variable never has them.
_RESERVED_VARIABLES = frozenset({"uri", "_mcpkit_context"})
_VARNAME = re.compile(r"[A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*")

NameRule = str | Callable[[OpenApiOperation], "str | None"]


@dataclass(frozen=True, slots=True)
class RouteMap:
    """One rule: the operations it matches, and what they become.

    ``methods``: an HTTP method or several (``"GET"``, ``("PUT", "PATCH")``; any case);
    ``None`` matches every method. ``pattern``: a regular expression searched for
    (``re.search``) in the path template (``"/pets/{petId}"``); anchor it with ``^``/``$``.
    ``tags``: matches operations carrying at least one of these tags. Every criterion given
    must hold. ``name``: the MCP name of what the operation becomes (a tool's or
    resource's ``name``), a string or a function of the operation (``None`` from it keeps
    the default name).

    ``kind`` ``"resource"`` and ``"resource_template"`` only ever take GET operations;
    naming other methods with them is a ``ValueError``.
    """

    kind: RouteKind = "tool"
    _: KW_ONLY
    methods: str | Collection[str] | None = None
    pattern: str | re.Pattern[str] | None = None
    tags: Collection[str] = ()
    name: NameRule | None = None

    def __post_init__(self) -> None:
        if self.kind not in _KINDS:
            raise ValueError(f"RouteMap kind must be one of {sorted(_KINDS)}, not {self.kind!r}")
        methods = self.methods
        if methods is not None:
            names = (methods,) if isinstance(methods, str) else tuple(methods)
            methods = frozenset(method.upper() for method in names)
            if self.kind in _RESOURCE_KINDS and methods - {"GET"}:
                raise ValueError(
                    f"a {self.kind} route map takes GET operations only, "
                    f"not {sorted(methods - {'GET'})}"
                )
            object.__setattr__(self, "methods", methods)
        if isinstance(self.pattern, str):
            object.__setattr__(self, "pattern", re.compile(self.pattern))
        object.__setattr__(
            self, "tags", frozenset((self.tags,) if isinstance(self.tags, str) else self.tags)
        )

    def matches(self, operation: OpenApiOperation) -> bool:
        """Whether every criterion of this rule holds for ``operation``."""
        if self.methods is not None and operation.method not in self.methods:
            return False
        if isinstance(self.pattern, re.Pattern) and not self.pattern.search(operation.path):
            return False
        return not self.tags or not set(self.tags).isdisjoint(operation.tags)


#: GET operations as resources (no parameters needed) or resource templates (path or
#: query parameters); everything else stays a tool. Put rules of your own before these.
GET_AS_RESOURCES: tuple[RouteMap, ...] = (
    RouteMap("resource", methods="GET"),
    RouteMap("resource_template", methods="GET"),
)


def fits(kind: RouteKind, plan: OperationPlan) -> bool:
    """Whether ``plan``'s operation can become ``kind``."""
    if kind not in _RESOURCE_KINDS:
        return True
    operation = plan.operation
    if operation.method != "GET" or plan.body_required:
        return False
    if kind == "resource":
        return not operation.path_variables and not any(p.required for p in operation.parameters)
    return not any(p.required for p in operation.parameters if p.location in ("header", "cookie"))


def choose_route(
    plan: OperationPlan, route_maps: Collection[RouteMap]
) -> tuple[RouteKind, RouteMap | None]:
    """The kind ``plan``'s operation becomes, and the rule that said so (``None``: no rule
    took it, so it is a tool)."""
    for rule in route_maps:
        if rule.matches(plan.operation) and fits(rule.kind, plan):
            return rule.kind, rule
    return "tool", None


def sanitize_name(text: str) -> str:
    """``text`` as an MCP tool name: runs of other characters become ``_``, at most
    ``MAX_TOOL_NAME`` characters; ``""`` when nothing is left."""
    return _NOT_TOOL_NAME.sub("_", text).strip("_")[:MAX_TOOL_NAME].rstrip("_")


def default_name(operation: OpenApiOperation) -> str:
    """The sanitized ``operationId``, or ``<method>_<path>`` (``get_pets_petId``)."""
    if operation.operation_id:
        name = sanitize_name(operation.operation_id)
        if name:
            return name
    segments = [segment.strip("{}") for segment in operation.path.split("/") if segment]
    return sanitize_name("_".join([operation.method.lower(), *segments])) or "operation"


def route_name(operation: OpenApiOperation, rule: RouteMap | None, names: Mapping[str, str]) -> str:
    """The name chosen for ``operation``: ``names[operationId]`` (or ``names["GET
    /path"]``), else the rule's ``name``, else ``default_name``; sanitized."""
    for key in (operation.operation_id, f"{operation.method} {operation.path}"):
        if key is not None and key in names:
            return sanitize_name(names[key]) or default_name(operation)
    if rule is not None and rule.name is not None:
        chosen = rule.name if isinstance(rule.name, str) else rule.name(operation)
        if chosen:
            return sanitize_name(chosen) or default_name(operation)
    return default_name(operation)


def unique(name: str, taken: set[str]) -> str:
    """``name``, or ``name_2``, ``name_3``... the first not in ``taken`` (then added)."""
    candidate, counter = name, 2
    while candidate in taken:
        suffix = f"_{counter}"
        candidate = name[: MAX_TOOL_NAME - len(suffix)] + suffix
        counter += 1
    taken.add(candidate)
    return candidate


def default_prefix(app_name: str) -> str:
    """``openapi://<app name, lower case, other characters as ->``."""
    authority = _NOT_AUTHORITY.sub("-", app_name.lower()).strip("-.") or "api"
    return f"openapi://{authority}"


def resource_uri(prefix: str, operation: OpenApiOperation) -> str:
    """The URI of a resource: the prefix, then the path."""
    return prefix.rstrip("/") + operation.path


def template_uri(prefix: str, plan: OperationPlan) -> tuple[str, dict[str, str]]:
    """An RFC 6570 template for a GET operation, and which argument each of its variables
    is: ``openapi://petstore/pets/{petId}{?fields}``. Path variables stay where they are;
    query parameters go into one trailing ``{?...}`` expression (arrays exploded as
    ``name*`` when the parameter explodes). A name that is not a template variable name
    (``pet-id``) is spelled with ``_`` (``pet_id``), and ``uri`` is spelled ``uri_``."""
    variables: dict[str, str] = {}
    by_parameter = {
        (binding.name, binding.location): binding.argument
        for binding in plan.arguments
        if binding.parameter is not None
    }

    def variable(name: str, argument: str) -> str:
        var = name if _VARNAME.fullmatch(name) else (_NOT_VARNAME.sub("_", name).strip("_") or "v")
        while var in variables or var in _RESERVED_VARIABLES:
            var += "_"
        variables[var] = argument
        return var

    def in_path(match: re.Match[str]) -> str:
        name = match.group(1)
        return "{" + variable(name, by_parameter.get((name, "path"), name)) + "}"

    template = prefix.rstrip("/") + re.sub(r"\{([^{}]+)\}", in_path, plan.operation.path)
    query = []
    for parameter in plan.operation.parameters_in("query"):
        argument = by_parameter[(parameter.name, "query")]
        exploded = parameter.explode and _takes_array(plan.input_schema["properties"][argument])
        var = variable(parameter.name, argument)
        query.append(var + ("*" if exploded else ""))
    if query:
        template += "{?" + ",".join(query) + "}"
    return template, variables


def _takes_array(schema: object) -> bool:
    """Whether ``schema`` accepts arrays (its type, or one ``anyOf``/``oneOf`` branch's)."""
    if not isinstance(schema, Mapping):
        return False
    kind = schema.get("type")
    if kind == "array" or (isinstance(kind, list) and "array" in kind):
        return True
    return any(
        _takes_array(branch) for key in ("anyOf", "oneOf") for branch in (schema.get(key) or ())
    )

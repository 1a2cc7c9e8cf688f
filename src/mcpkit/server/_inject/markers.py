"""The markers that ask the server to fill a parameter: ``Header``, ``State``, ``Depends``.

They only say what is wanted; ``plan`` turns a function's markers into a plan once, when
the function is registered. A marked parameter is left out of the input schema.

* ``user_agent: Header[str]`` reads the ``user-agent`` header (the parameter's name, ``_``
  as ``-``); ``Header[str, "x-tenant"]`` or ``Annotated[str, Header("x-tenant")]`` names it.
* ``db: State[Database]`` is the lifespan's yielded value (or a provider of the app) of that
  type; ``State[str, "region"]`` or ``Annotated[str, State("region")]`` takes it by name.
* ``session: Annotated[Session, Depends(open_session)]`` (or ``= Depends(open_session)``)
  is what a provider returns (or yields) for the call.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Annotated, Any, Union, get_args, get_origin

_NONE_TYPE = type(None)


def _subscript(cls: type, params: Any) -> Any:
    if not isinstance(params, tuple):
        params = (params,)
    if len(params) not in (1, 2):
        raise TypeError(f"{cls.__name__}[T] or {cls.__name__}[T, 'name'], not {params!r}")
    name = params[1] if len(params) == 2 else None
    if name is not None and not isinstance(name, str):
        raise TypeError(f"{cls.__name__}[T, name]: the name must be a string, not {name!r}")
    return Annotated[params[0], cls(name)]


class Header:
    """A request header as a parameter: ``Header[T]`` or ``Header[T, "name"]`` (an
    ``Annotated`` alias), or ``Annotated[T, Header("name")]``. The value is converted to
    ``T``; a missing header takes the parameter's default, else the call fails -32602."""

    __slots__ = ("name",)

    def __init__(self, name: str | None = None) -> None:
        self.name = name.lower() if name is not None else None

    def __class_getitem__(cls, params: Any) -> Any:
        return _subscript(cls, params)

    def __repr__(self) -> str:
        return f"Header({self.name!r})"


class State:
    """A value the app holds, as a parameter: by type (``State[Database]``) or by name
    (``State[str, "region"]``, ``Annotated[str, State("region")]``), looked up in what the
    ``@mcp_lifespan`` functions yielded (a yielded mapping's items and an object's
    attributes count by name), then in the app's ``providers``."""

    __slots__ = ("name",)

    def __init__(self, name: str | None = None) -> None:
        self.name = name

    def __class_getitem__(cls, params: Any) -> Any:
        return _subscript(cls, params)

    def __repr__(self) -> str:
        return f"State({self.name!r})"


class Dependency:
    """What ``Depends(provider)`` makes: see ``Depends``."""

    __slots__ = ("provider", "use_cache")

    def __init__(self, provider: Callable[..., Any], use_cache: bool = True) -> None:
        if not callable(provider):
            raise TypeError(f"Depends() needs a callable, not {provider!r}")
        self.provider = provider
        self.use_cache = use_cache

    def __repr__(self) -> str:
        name = getattr(self.provider, "__qualname__", None) or repr(self.provider)
        return f"Depends({name})"


def Depends(provider: Callable[..., Any], *, use_cache: bool = True) -> Any:
    """A parameter filled by ``provider``: a sync or async function, or a (sync or async)
    generator function whose code after ``yield`` runs once the call is over (also when it
    failed or was cancelled). The provider may itself take ``Header``, ``State``,
    ``Depends`` and ``McpToolContext`` parameters. In one call a provider runs once however
    many parameters ask for it (``use_cache=False``: once per parameter)."""
    return Dependency(provider, use_cache)


Marker = Header | State | Dependency


def find_marker(hint: Any, default: Any) -> tuple[Marker, Any] | None:
    """``(marker, the annotated type)`` of a parameter that asks for injection, else None.
    Looks in ``Annotated`` metadata (also inside ``Optional``) and at a marker default."""
    if isinstance(default, (Header, State, Dependency)):
        return default, _strip(hint)
    found = _annotated_marker(hint)
    if found is not None:
        return found
    if get_origin(hint) in (Union, types.UnionType):
        for member in get_args(hint):
            found = _annotated_marker(member)
            if found is not None:
                return found[0], hint
    return None


def _annotated_marker(hint: Any) -> tuple[Marker, Any] | None:
    while get_origin(hint) is Annotated:
        base, *metadata = get_args(hint)
        for meta in metadata:
            if isinstance(meta, (Header, State, Dependency)):
                return meta, _strip(base)
        hint = base
    return None


def _strip(hint: Any) -> Any:
    while get_origin(hint) is Annotated:
        hint = get_args(hint)[0]
    return hint


def is_marked(hint: Any, default: Any) -> bool:
    """Whether a parameter is filled by injection (and so not part of the input schema)."""
    return find_marker(hint, default) is not None


__all__ = ["Dependency", "Depends", "Header", "State", "find_marker", "is_marked"]

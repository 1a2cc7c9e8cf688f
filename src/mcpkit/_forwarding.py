"""``Forwarded``: an attribute of an object that lives on one of its helpers, for the
facades (``McpClient``, ``McpServerApp``) whose state is kept by the parts they are made of."""

from __future__ import annotations

from typing import Any, Generic, TypeVar, overload

T = TypeVar("T")


class Forwarded(Generic[T]):
    """An attribute of the owner that lives on one of its helpers: ``Forwarded("_state")``
    on ``era`` reads and writes ``self._state.era``."""

    def __init__(self, holder: str) -> None:
        self._holder = holder
        self._name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self._name = name

    @overload
    def __get__(self, instance: None, owner: type | None = None) -> Forwarded[T]: ...

    @overload
    def __get__(self, instance: object, owner: type | None = None) -> T: ...

    def __get__(self, instance: object | None, owner: type | None = None) -> Any:
        if instance is None:
            return self
        return getattr(getattr(instance, self._holder), self._name)

    def __set__(self, instance: object, value: T) -> None:
        setattr(getattr(instance, self._holder), self._name, value)


__all__ = ["Forwarded"]

"""What one ``McpClient`` knows of its connection, shared by the helpers it is made of.

``ClientState`` is the one place the era, the protocol version, the server's answer and the
settings that shape each request live: the era negotiation writes it, the request channel,
the handlers of server messages and the task API read it. ``Forwarded`` makes an attribute
of a helper (or of the state) read and write as an attribute of the client itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar, overload

if TYPE_CHECKING:
    from mcpkit.client._results import ServerDiscovery
    from mcpkit.protocol import types as t
    from mcpkit.protocol._versions import Era

__all__ = ["ClientState", "Forwarded"]

T = TypeVar("T")


@dataclass(slots=True, eq=False)
class ClientState:
    """The facts and settings of one client's connection (see ``McpClient``'s attributes)."""

    client_info: dict[str, str]
    protocol_mode: str
    #: The version in use: the one asked for, until the era is settled.
    protocol_version: str
    #: The handshake-era version to ``initialize`` with, and the modern one to probe with.
    handshake_version: str
    modern_version: str
    log_level: str | None
    max_input_rounds: int
    probe_timeout: float
    era: Era | None = None
    discovery: ServerDiscovery | None = None
    server_info: t.InitializeResult | None = None


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

"""What one ``McpClient`` knows of its connection, shared by the helpers it is made of.

``ClientState`` is the one place the era, the protocol version, the server's answer and the
settings that shape each request live: the era negotiation writes it, the request channel,
the handlers of server messages and the task API read it. ``Forwarded`` makes an attribute
of a helper (or of the state) read and write as an attribute of the client itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mcpkit._forwarding import Forwarded
from mcpkit.client._extensions import NO_EXTENSIONS

if TYPE_CHECKING:
    from mcpkit.client._results import ServerDiscovery
    from mcpkit.protocol import types as t
    from mcpkit.protocol._versions import Era

__all__ = ["ClientState", "Forwarded"]


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
    #: The extensions the server announced (read-only; ``announced_extensions``).
    server_extensions: Mapping[str, dict[str, Any]] = field(default_factory=lambda: NO_EXTENSIONS)

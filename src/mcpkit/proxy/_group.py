"""One client over the servers of an ``mcpServers`` config: ``ServerGroup(config)``.

Each server is reached as ``mcpkit proxy`` reaches a backend (``McpProxy``: a command over
stdio, a URL over HTTP or WebSocket) and mounted under its name, so its tools and prompts
are ``{server}_{name}`` and its resources ``scheme://{server}/...``, as ``proxy_servers``
serves them; the group's ``client`` talks to all of them at once, in memory. A server that
cannot be reached is left out (``unreachable`` says why, and it is logged) instead of
failing the rest."""

from __future__ import annotations

import contextlib
import logging
from pathlib import Path
from types import TracebackType
from typing import Any

from mcpkit.client import McpClient, StdioClientTransportOptions
from mcpkit.proxy._backend import DEFAULT_BACKEND_CONNECT_TIMEOUT
from mcpkit.proxy._clashes import check_clashes
from mcpkit.proxy._config import load_servers_config
from mcpkit.proxy._proxy import McpProxy
from mcpkit.server._app import McpServerApp

logger = logging.getLogger("mcpkit.proxy")


class ServerGroup:
    """The servers of ``config`` (a path, or the parsed ``{"mcpServers": {...}}``) behind
    one ``McpClient``::

        async with ServerGroup("servers.json") as group:
            await group.client.call_tool("weather_forecast", {"city": "Oslo"})

    ``connect_timeout``: seconds each server gets to start and answer; ``client_options``
    go to the client (handlers, ``protocol_version``...). ``unreachable``: the servers
    left out, by name, with what went wrong."""

    def __init__(
        self,
        config: str | Path | dict[str, Any],
        *,
        connect_timeout: float = DEFAULT_BACKEND_CONNECT_TIMEOUT,
        **client_options: Any,
    ) -> None:
        self.backends = load_servers_config(config)
        self.connect_timeout = connect_timeout
        self.client_options = client_options
        self.unreachable: dict[str, BaseException] = {}
        self.front = McpServerApp(name="mcpkit-servers")
        self._stack: contextlib.AsyncExitStack | None = None
        self._client: McpClient | None = None

    @property
    def client(self) -> McpClient:
        """The client over every server reached (inside ``async with`` only)."""
        if self._client is None:
            raise RuntimeError("ServerGroup.client is there inside `async with group:`")
        return self._client

    async def __aenter__(self) -> ServerGroup:
        async with contextlib.AsyncExitStack() as stack:
            reached: dict[str, McpServerApp] = {}
            for name, backend in self.backends.items():
                options: dict[str, Any] = {"backend_connect_timeout": self.connect_timeout}
                if isinstance(backend, StdioClientTransportOptions):
                    options["inherit_environment"] = backend.inherit_environment_variables
                app = McpProxy(backend, name=name, **options).app
                try:
                    await stack.enter_async_context(app.running())
                except Exception as exc:  # one server down must not sink the others
                    logger.warning("server %s left out: %s", name, exc)
                    self.unreachable[name] = exc
                    continue
                reached[name] = app
            check_clashes(reached)
            for name, app in reached.items():
                self.front.mount(app, name, on_conflict="error")
            self._client = await stack.enter_async_context(
                McpClient.in_memory(self.front, **self.client_options)
            )
            self._stack = stack.pop_all()
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        stack, self._stack, self._client = self._stack, None, None
        if stack is not None:
            await stack.aclose()


__all__ = ["ServerGroup"]

"""Many backends behind one endpoint: a config file in the common ``mcpServers`` shape,
each server proxied and mounted under its name as prefix."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from mcpkit.client import StdioClientTransportOptions
from mcpkit.proxy._backend import HttpBackend
from mcpkit.proxy._clashes import check_clashes
from mcpkit.proxy._proxy import McpProxy
from mcpkit.server._app import McpServerApp

#: The transport names of an entry with a URL, as the clients' config files spell them.
_TRANSPORTS = {
    "auto": "auto",
    "http": "http",
    "streamable-http": "http",
    "streamable_http": "http",
    "streamablehttp": "http",
    "sse": "sse",
    "ws": "ws",
    "websocket": "ws",
}


def load_servers_config(
    source: str | Path | dict[str, Any],
) -> dict[str, HttpBackend | StdioClientTransportOptions]:
    """The backends of ``{"mcpServers": {name: {"command", "args", "env", "inheritEnv"} |
    {"url", "headers", "transport" (or "type")}}}`` (a path, or the parsed dict; VS Code's
    ``"servers"`` too); ``ValueError`` naming what is wrong. A command's options inherit
    the proxy's environment only with ``"inheritEnv": true`` (``McpProxy`` starts it in a
    minimal one plus its ``env`` otherwise)."""
    if isinstance(source, dict):
        data: Any = source
    else:
        try:
            data = json.loads(Path(source).read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ValueError(f"{source}: not JSON ({exc})") from None
    # "servers" is VS Code's name for the same object.
    servers = data.get("mcpServers", data.get("servers")) if isinstance(data, dict) else None
    if not isinstance(servers, dict) or not servers:
        raise ValueError('a servers config needs a non-empty "mcpServers" object')
    backends: dict[str, HttpBackend | StdioClientTransportOptions] = {}
    for name, entry in servers.items():
        if not isinstance(entry, dict):
            raise ValueError(f"mcpServers.{name} must be an object")
        if isinstance(entry.get("url"), str):
            headers = entry.get("headers") or {}
            if not isinstance(headers, dict):
                raise ValueError(f"mcpServers.{name}.headers must be an object")
            # "type" is what Claude Code and VS Code write; "streamable-http" is FastMCP's.
            given = entry.get("transport") or entry.get("type") or "auto"
            transport = _TRANSPORTS.get(str(given).lower())
            if transport is None:
                raise ValueError(
                    f"mcpServers.{name}: transport {given!r} is not one of http, sse or ws"
                )
            backends[name] = HttpBackend(
                entry["url"], {str(k): str(v) for k, v in headers.items()}, transport
            )
        elif isinstance(entry.get("command"), str):
            args = entry.get("args") or []
            env = entry.get("env") or {}
            if not isinstance(args, list) or not isinstance(env, dict):
                raise ValueError(f"mcpServers.{name}: args must be a list and env an object")
            inherit = entry.get("inheritEnv", False)
            if not isinstance(inherit, bool):
                raise ValueError(f"mcpServers.{name}.inheritEnv must be true or false")
            backends[name] = StdioClientTransportOptions(
                command=entry["command"],
                arguments=[str(a) for a in args],
                name=name,
                inherit_environment_variables=inherit,
                environment_variables={str(k): str(v) for k, v in env.items()},
            )
        else:
            raise ValueError(f'mcpServers.{name} needs a "command" or a "url"')
    return backends


def proxy_servers(source: str | Path | dict[str, Any], **proxy_options: Any) -> McpServerApp:
    """One app serving every server of a config, each mounted under its name as prefix
    (tool ``name_tool``, resource ``scheme://name/path``); ``proxy_options`` go to each
    ``McpProxy`` (``inherit_environment=True`` for all; else each entry's ``inheritEnv``).

    Two servers that would serve the same name (server ``a``'s tool ``b_c`` and server
    ``a_b``'s ``c``) stop the start with ``ServerNameClashError`` naming both; one a
    backend adds later is not served (the first keeps it; a warning is logged)."""
    front = McpServerApp(name="mcpkit-proxy")
    apps: dict[str, McpServerApp] = {}
    for name, backend in load_servers_config(source).items():
        options = dict(proxy_options)
        if isinstance(backend, StdioClientTransportOptions):
            options.setdefault("inherit_environment", backend.inherit_environment_variables)
        apps[name] = McpProxy(backend, name=name, **options).app
        front.mount(apps[name], name, on_conflict="error")

    @contextlib.asynccontextmanager
    async def start_backends() -> AsyncIterator[None]:
        # Before the mounts start them: their catalogs are read once all have started.
        async with contextlib.AsyncExitStack() as stack:
            for app in apps.values():
                await stack.enter_async_context(app.running())
            check_clashes(apps)
            yield

    front.lifespan(start_backends)
    return front

"""The options of ``mcpkit run``: their names on the command line and their defaults, once.

The fast parser (``mcpkit.cli._run.parse_fast``), the typer command
(``mcpkit.cli._commands.run``) and the ``MCPKIT_*`` settings (``mcpkit.cli._settings``)
are all built from these tables.
"""

from __future__ import annotations

from typing import Any

TRANSPORTS = ("stdio", "http", "sse", "ws")
#: What ``--auth`` signs users in with (``mcpkit.cli._auth``): a provider's preset, any
#: OpenID Connect provider (``oidc``), or a development provider served beside (``dev``).
AUTH_PROVIDERS = ("github", "google", "entra", "auth0", "okta", "keycloak", "oidc", "dev")

DEFAULTS: dict[str, Any] = {
    "transport": "stdio",
    "host": "127.0.0.1",
    "port": 3001,
    "endpoint": "/mcp",
    "stateless": False,
    "redis_url": None,
    "shutdown_grace": None,
    "workers": 1,
    "json_output": False,
    "auth": None,
}

#: Settings of what ``mcpkit run`` and ``mcpkit proxy`` do to their process, on every
#: transport (``mcpkit.cli._program``), and their defaults. They are the program and
#: may change the interpreter's state; no option of the library's offers it, since a
#: library lives in the process of a program of the user's.
PROGRAM_DEFAULTS: dict[str, Any] = {"freeze_gc_at_startup": True}

#: option -> parameter, for the options that take a value
VALUE_OPTIONS = {
    "--transport": "transport",
    "-t": "transport",
    "--host": "host",
    "--port": "port",
    "--endpoint": "endpoint",
    "--redis-url": "redis_url",
    "--shutdown-grace": "shutdown_grace",
    "--workers": "workers",
    "--auth": "auth",
}
#: flag -> (parameter, value)
FLAGS = {
    "--stateless": ("stateless", True),
    "--no-stateless": ("stateless", False),
    "--json": ("json_output", True),
}
#: the global options that may stand before the command name
GLOBAL_FLAGS = ("--debug",)

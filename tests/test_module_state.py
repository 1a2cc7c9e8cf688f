"""mcpkit keeps no mutable state at module level: caches, counters and sweepers belong to the
object that owns them (an app, a handler, a client), so two apps, two event loops or two
users in one process share nothing. What a module does hold mutable is listed here, each
with why it never changes; a new one fails until it moves into its owner (or is listed,
with its reason). Serving traffic must leave every listed one as it was."""

from __future__ import annotations

import collections
import copy
import dataclasses
import enum
import importlib
import pkgutil
import types
import weakref
from typing import Any

import httpx

import mcpkit
from mcpkit import McpClient, McpServerApp, mcp_prompt, mcp_resource, mcp_tool
from mcpkit.transports.http import StreamableHttpServerOptions, create_asgi_app

_MUTABLE = (
    dict,
    list,
    set,
    bytearray,
    collections.deque,
    weakref.WeakKeyDictionary,
    weakref.WeakValueDictionary,
    weakref.WeakSet,
)

_TABLE = "a constant table, written once at import"
_LAZY = "the names a package imports lazily (PEP 562), a constant table"
_TEMPLATE = "a template only ever copied (McpSession.for_request)"

#: (module, name) -> why it never changes.
ALLOWED: dict[tuple[str, str], str] = {
    ("mcpkit", "_EXPORTS"): _LAZY,
    ("mcpkit", "_MODULE_OF"): _LAZY,
    ("mcpkit.auth", "_LAZY"): _LAZY,
    ("mcpkit.auth", "_LAZY_NAMES"): _LAZY,
    ("mcpkit.client", "_EXPORTS"): _LAZY,
    ("mcpkit.client", "_MODULE_OF"): _LAZY,
    ("mcpkit.auth._dpop", "_DEFAULT_PORTS"): _TABLE,
    ("mcpkit.auth._jwt", "_KTY_OF_ALG"): _TABLE,
    ("mcpkit.cli._client_configs", "CLIENTS"): _TABLE,
    ("mcpkit.cli._commands", "DEFAULTS"): _TABLE,
    ("mcpkit.cli._errors", "_PLACEHOLDERS"): _TABLE,
    ("mcpkit.cli._install", "CLIENTS"): _TABLE,
    ("mcpkit.cli._dotenv", "_ESCAPES"): _TABLE,
    ("mcpkit.cli._run", "DEFAULTS"): _TABLE,
    ("mcpkit.cli._run", "VALUE_OPTIONS"): _TABLE,
    ("mcpkit.cli._run", "FLAGS"): _TABLE,
    ("mcpkit.cli._program", "PROGRAM_DEFAULTS"): _TABLE,
    ("mcpkit.cli._run_options", "DEFAULTS"): _TABLE,
    ("mcpkit.cli._run_options", "VALUE_OPTIONS"): _TABLE,
    ("mcpkit.cli._run_options", "FLAGS"): _TABLE,
    ("mcpkit.cli._run_options", "PROGRAM_DEFAULTS"): _TABLE,
    ("mcpkit.cli._settings", "_RUN_ONLY"): _TABLE,
    ("mcpkit.cli._settings", "_SECURITY_ENV"): _TABLE,
    ("mcpkit.cli._settings", "DESCRIPTIONS"): _TABLE,
    ("mcpkit.cli._settings", "_MINIMUM"): _TABLE,
    ("mcpkit.cli._settings", "_MAXIMUM"): _TABLE,
    ("mcpkit.cli._settings", "_EXAMPLES"): _TABLE,
    ("mcpkit.cli._settings", "_PARSERS"): _TABLE,
    ("mcpkit.cli._settings", "BY_FIELD"): _TABLE,
    ("mcpkit.cli._settings", "DEFAULTS"): _TABLE,
    ("mcpkit.cli._settings", "VALUE_OPTIONS"): _TABLE,
    ("mcpkit.cli._settings", "FLAGS"): _TABLE,
    ("mcpkit.cli._settings", "PROGRAM_DEFAULTS"): _TABLE,
    ("mcpkit.client._server_messages", "INPUT_CAPABILITY"): _TABLE,
    ("mcpkit.client._server_messages", "_LIST_CHANGED"): _TABLE,
    ("mcpkit.client._subscriptions", "LIST_CHANGED_FLAGS"): _TABLE,
    ("mcpkit.openapi", "METHOD_ANNOTATIONS"): _TABLE,
    ("mcpkit.openapi._bridge", "METHOD_ANNOTATIONS"): _TABLE,
    ("mcpkit.openapi._factory", "METHOD_ANNOTATIONS"): _TABLE,
    ("mcpkit.openapi._operations", "_DEFAULT_STYLE"): _TABLE,
    ("mcpkit.otel._client", "_TRANSPORTS"): _TABLE,
    ("mcpkit.otel._client", "_HTTP"): _TABLE,
    ("mcpkit.protocol._headers", "NAME_FIELDS"): _TABLE,
    ("mcpkit.protocol._uri_template", "_OPERATOR_TABLE"): _TABLE,
    ("mcpkit.protocol._uri_template", "_POSITIONAL"): _TABLE,
    ("mcpkit.protocol.types", "_latest_names"): "the generated module's __all__, re-exported",
    ("mcpkit.proxy._config", "_TRANSPORTS"): _TABLE,
    ("mcpkit.proxy._proxy", "_INJECTED"): _TABLE,
    ("mcpkit.proxy._proxy", "_CAPABILITY_OF"): _TABLE,
    ("mcpkit.server._their_names", "_THEIR_NAMES"): _TABLE,
    ("mcpkit.server._compose", "_KINDS_OF"): _TABLE,
    ("mcpkit.server._decorators", "_TASK_FLAGS"): _TABLE,
    ("mcpkit.server._decorators", "_THEIR_OPTIONS"): _TABLE,
    ("mcpkit.server._eras.downgrade", "CONTENT_TYPES_SINCE"): _TABLE,
    ("mcpkit.server._eras.downgrade", "_DESCRIPTION_SINCE"): _TABLE,
    ("mcpkit.server._eras.downgrade", "_TOOL_SINCE"): _TABLE,
    ("mcpkit.server._eras.downgrade", "_SERVER_INFO_SINCE"): _TABLE,
    ("mcpkit.server._schema.json_schema", "_JSON_TYPES"): _TABLE,
    ("mcpkit.server._engine.listen", "LIST_CHANGED"): _TABLE,
    ("mcpkit.server._engine.middleware", "NAME_FIELDS"): _TABLE,
    ("mcpkit.server._engine.listen_request", "LIST_CHANGED"): _TABLE,
    ("mcpkit.server._eras.mrtr", "_CAPABILITY_OF"): _TABLE,
    ("mcpkit.server._engine.session", "_LOG_RANK"): _TABLE,
    ("mcpkit.server._engine.session", "_REQUEST"): _TEMPLATE,
    ("mcpkit.server._engine.session", "_MODERN_REQUEST"): _TEMPLATE,
    ("mcpkit.server._tasks.wire_2025", "TASKS_CAPABILITY"): _TABLE,
    ("mcpkit.server._tasks.manager", "TASKS_CAPABILITY"): _TABLE,
    ("mcpkit.transports.http._asgi", "_KNOWN_NAMES"): _TABLE,
    ("mcpkit.transports.http._streamable.modern_post", "NAME_FIELDS"): _TABLE,
    ("mcpkit.transports.http._streamable.modern_post", "MODERN_ERROR_STATUS"): _TABLE,
    ("mcpkit.transports.http._streamable.modern_post", "_VERSION_HEADER_VALUES"): _TABLE,
    ("mcpkit.transports.http._streamable.handler", "MODERN_ERROR_STATUS"): _TABLE,
}


def _modules() -> list[types.ModuleType]:
    found = [mcpkit]
    for info in pkgutil.walk_packages(mcpkit.__path__, "mcpkit."):
        if ".types._v" in info.name:  # generated message types: classes only
            continue
        try:
            found.append(importlib.import_module(info.name))
        except ImportError:  # an extra this environment lacks: its module is not a user's
            continue
    return found


def _mutable(value: Any) -> bool:
    if isinstance(value, _MUTABLE):
        return True
    kind = type(value)
    if not kind.__module__.startswith("mcpkit") or isinstance(value, (type, enum.Enum)):
        return False
    if dataclasses.is_dataclass(value) and kind.__dataclass_params__.frozen:  # type: ignore[attr-defined]
        return False
    return hasattr(value, "__dict__") or bool(getattr(kind, "__slots__", ()))


def module_level_mutables() -> dict[tuple[str, str], Any]:
    held: dict[tuple[str, str], Any] = {}
    for module in _modules():
        for name, value in vars(module).items():
            if name.startswith("__") or isinstance(value, types.ModuleType):
                continue
            if getattr(value, "__module__", None) not in (None, module.__name__) and isinstance(
                value, type
            ):
                continue
            if _mutable(value):
                held[(module.__name__, name)] = value
    return held


def test_no_module_holds_mutable_state_beyond_the_listed_tables():
    held = module_level_mutables()
    new = sorted(set(held) - set(ALLOWED))
    assert not new, (
        "module-level mutable objects: move each into the object that owns it "
        f"(an app, a handler, a client), or list it with why it never changes: {new}"
    )


def test_the_list_names_only_what_exists():
    held = module_level_mutables()
    gone = sorted(key for key in ALLOWED if key not in held)
    importable = {m.__name__ for m in _modules()}
    assert not [key for key in gone if key[0] in importable]


def _snapshot(value: Any) -> Any:
    if isinstance(value, (weakref.WeakKeyDictionary, weakref.WeakValueDictionary)):
        return len(value)
    if hasattr(value, "__dict__") and not isinstance(value, (dict, list, set)):
        return repr(sorted(vars(value).items()))
    return repr(copy.copy(value))


@mcp_tool
def add(a: int, b: int) -> int:
    return a + b


@mcp_resource("note://{name}")
def note(name: str) -> str:
    return f"note {name}"


@mcp_prompt
def greet(name: str) -> str:
    return f"hello {name}"


async def test_traffic_changes_no_listed_object():
    held = module_level_mutables()
    before = {key: _snapshot(value) for key, value in held.items()}
    app = McpServerApp(add, note, greet)
    async with McpClient.in_memory(app) as client:
        await client.call_tool("add", {"a": 1, "b": 2})
        await client.read_resource("note://x")
        await client.get_prompt("greet", {"name": "y"})
    asgi = create_asgi_app(McpServerApp(add), StreamableHttpServerOptions(stateless=True))
    transport = httpx.ASGITransport(app=asgi)
    headers = {"accept": "application/json, text/event-stream"}
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
        for version, extra in (("2025-11-25", {}), ("2026-07-28", {"mcp-method": "tools/call"})):
            call = {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": "add", "arguments": {"a": 1, "b": 2}},
            }
            if version == "2026-07-28":
                call["params"]["_meta"] = {
                    "io.modelcontextprotocol/protocolVersion": version,
                    "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
                    "io.modelcontextprotocol/clientCapabilities": {},
                }
                extra["mcp-name"] = "add"
            await http.post(
                "/mcp",
                json=call,
                headers={**headers, "mcp-protocol-version": version, **extra},
            )
    after = {key: _snapshot(value) for key, value in held.items()}
    changed = sorted(key for key in before if before[key] != after[key])
    assert not changed

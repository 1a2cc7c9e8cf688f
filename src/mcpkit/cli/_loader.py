"""Finds the server app in a user's file: ``path/to/file.py[:OBJECT]``."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

from mcpkit.server._app import McpServerApp
from mcpkit.server._decorators import SERVER_ATTR


def _import_file(path: Path) -> Any:
    name = f"_mcpkit_user_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise FileNotFoundError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    sys.path.insert(0, str(path.parent))
    spec.loader.exec_module(module)
    return module


def _as_app(obj: Any) -> McpServerApp:
    if isinstance(obj, McpServerApp):
        return obj
    if isinstance(obj, type) and hasattr(obj, SERVER_ATTR):
        return McpServerApp(obj)
    if callable(obj):
        produced = obj()
        if isinstance(produced, McpServerApp):
            return produced
    raise TypeError(f"{obj!r} is neither an McpServerApp nor an @mcp_server class")


def load_app(target: str) -> McpServerApp:
    """The app named by ``FILE[:OBJECT]``; without OBJECT: ``app``, else the one app or
    ``@mcp_server`` classes found in the file."""
    file_part, _, object_name = target.partition(":")
    path = Path(file_part).resolve()
    if not path.exists():
        raise FileNotFoundError(f"no such file: {file_part}")
    module = _import_file(path)
    if object_name:
        return _as_app(getattr(module, object_name))
    members = vars(module)
    if isinstance(members.get("app"), McpServerApp):
        return members["app"]
    apps = [value for value in members.values() if isinstance(value, McpServerApp)]
    if len(apps) == 1:
        return apps[0]
    servers = [
        value for value in members.values()
        if isinstance(value, type) and hasattr(value, SERVER_ATTR) and value.__module__ == module.__name__
    ]
    if servers and not apps:
        return McpServerApp(*servers)
    raise LookupError(f"no single server in {file_part}: name one as {file_part}:OBJECT")

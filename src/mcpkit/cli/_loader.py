"""Finds the server app in a user's file: ``path/to/file.py[:OBJECT]``.

What can go wrong is raised as one of three errors the command reports in a line or two
(``mcpkit.cli._errors``): ``TargetNotFoundError`` (no such file), ``UserCodeError`` (the
file raised while it was imported, or while an object named in it was called), and
``AppNotFoundError`` (no single server in it).

Loading also looks for what the file decorated but the app does not serve (an ``@mcp_tool``
function never passed to ``McpServerApp``): such a slip serves nothing, silently, so each
is a ``warning:`` line on stderr."""

from __future__ import annotations

import importlib.util
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

from mcpkit.server._app import McpServerApp
from mcpkit.server._compose import _reaches
from mcpkit.server._decorators import (
    PROMPT_ATTR,
    REGISTERED_ATTR,
    RESOURCE_ATTR,
    SERVER_ATTR,
    TOOL_ATTR,
)
from mcpkit.server._registration import is_member

_DRIVE = re.compile(r"[A-Za-z]:[\\/]")
_MODULE_NAME = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*\Z")


def split_target(target: str) -> tuple[str, str]:
    """``FILE[:OBJECT]`` into its two parts; a Windows drive (``C:\\``) is part of FILE."""
    start = 2 if _DRIVE.match(target) else 0
    colon = target.find(":", start)
    return (target, "") if colon < 0 else (target[:colon], target[colon + 1 :])


class TargetNotFoundError(FileNotFoundError):
    """``FILE`` of ``FILE[:OBJECT]`` does not exist."""

    def __init__(self, given: str, tried: Path) -> None:
        super().__init__(f"no such file: {given}")
        self.given = given
        self.tried = tried


class AppNotFoundError(LookupError):
    """The file holds no server, several, or not the object named; ``candidates`` are the
    names that would work as ``FILE:OBJECT``."""

    def __init__(self, message: str, file: str, candidates: list[str]) -> None:
        super().__init__(message)
        self.message = message
        self.file = file
        self.candidates = candidates


class UserCodeError(Exception):
    """The user's file raised (``__cause__`` is what it raised)."""

    def __init__(self, path: Path, error: BaseException) -> None:
        super().__init__(f"{path}: {type(error).__name__}: {error}")
        self.path = path
        self.error = error


def _import_file(path: Path) -> Any:
    name = f"_mcpkit_user_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise AppNotFoundError(f"{path.name} is not a Python file", str(path), [])
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    sys.path.insert(0, str(path.parent))
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        sys.modules.pop(name, None)
        raise UserCodeError(path, exc) from exc
    return module


def _import_module(name: str, tried: Path) -> tuple[Any, Path]:
    """The module ``name`` (a ``MODULE:OBJECT`` target), imported as ``python -m`` would
    find it from the working directory, and its file."""
    import importlib

    cwd = str(Path.cwd())
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    try:
        spec = importlib.util.find_spec(name)
    except ModuleNotFoundError:
        spec = None
    except Exception as exc:  # importing its parent package raised
        raise UserCodeError(tried, exc) from exc
    if spec is None:
        missing = TargetNotFoundError(name, tried)
        missing.args = (f"no such file or module: {name}",)
        raise missing
    origin = Path(spec.origin).resolve() if spec.has_location and spec.origin else tried
    try:
        module = importlib.import_module(name)
    except Exception as exc:
        raise UserCodeError(origin, exc) from exc
    return module, origin


def _is_server_class(value: Any, module: Any) -> bool:
    return (
        isinstance(value, type)
        and hasattr(value, SERVER_ATTR)
        and value.__module__ == module.__name__
    )


def _module_functions(module: Any) -> list[Any]:
    """The decorated functions defined in the module itself (not imported into it)."""
    return [
        value
        for name, value in vars(module).items()
        if not name.startswith("_")
        and not isinstance(value, type)
        and getattr(value, "__module__", None) == module.__name__
        and is_member(value)
    ]


#: What serves an app of its own (its ``.app``): a file may hold only these.
_WRAPPERS = (("mcpkit.proxy._proxy", "McpProxy"), ("mcpkit.transports.http._app", "McpAsgiApp"))


def _served(value: Any) -> McpServerApp | None:
    """The app ``value`` is or wraps (``McpProxy``, ``create_asgi_app``'s), else None."""
    if isinstance(value, McpServerApp):
        return value
    for module_name, class_name in _WRAPPERS:  # loaded already if the file made one
        cls = getattr(sys.modules.get(module_name), class_name, None)
        if cls is not None and isinstance(value, cls):
            return value.app  # type: ignore[no-any-return]
    return None


def _candidates(module: Any) -> list[str]:
    """Names in the module that ``FILE:OBJECT`` could name."""
    return [
        name
        for name, value in vars(module).items()
        if not name.startswith("_")
        and (_served(value) is not None or _is_server_class(value, module))
    ]


def _as_app(obj: Any, path: Path, label: str, module: Any) -> McpServerApp:
    served = _served(obj)
    if served is not None:
        return served
    if isinstance(obj, type) and hasattr(obj, SERVER_ATTR):
        try:
            return McpServerApp(obj)
        except Exception as exc:
            raise UserCodeError(path, exc) from exc
    if callable(obj):
        try:
            produced = obj()
        except Exception as exc:
            raise UserCodeError(path, exc) from exc
        if isinstance(produced, McpServerApp):
            return produced
        raise AppNotFoundError(
            f"{label}() returned {type(produced).__name__}, not an McpServerApp",
            str(path),
            _candidates(module),
        )
    raise AppNotFoundError(
        f"{label} is neither an McpServerApp nor an @mcp_server class",
        str(path),
        _candidates(module),
    )


class Unserved(NamedTuple):
    """Something the file decorated that the app does not serve."""

    name: str  #: its name in the file
    decorator: str  #: "@mcp_tool", ...
    served_as: str  #: the name a client would have called it by
    fix: str  #: how to serve it

    def warning(self) -> str:
        return (
            f"{self.name} is decorated with {self.decorator} but not served by the app; {self.fix}"
        )


class LoadedServer(NamedTuple):
    app: McpServerApp
    unserved: list[Unserved]


#: The function decorators, each with the app decorator that would serve the function.
_FUNCTION_DECORATORS = (
    (TOOL_ATTR, "@mcp_tool", "@app.tool()"),
    (RESOURCE_ATTR, "@mcp_resource", "@app.resource(uri)"),
    (PROMPT_ATTR, "@mcp_prompt", "@app.prompt()"),
)


def load_app(target: str, *, warn: bool = True) -> McpServerApp:
    """The app named by ``FILE[:OBJECT]``; without OBJECT: ``app``, else the one app, or
    the file's ``@mcp_server`` classes and decorated module-level functions together.
    Warns on stderr of what the file decorated but the app does not serve (unless ``warn``
    is false: a worker loading what its supervisor has already warned of)."""
    return load_server(target, warn=warn).app


def load_server(target: str, *, warn: bool = True) -> LoadedServer:
    """``load_app``, with what the file decorated but the app does not serve."""
    module, path, file_part, object_name = _load_module(target)
    app = _find_app(module, path, file_part, object_name)
    unserved = unserved_members(module, app)
    if warn:
        for item in unserved:
            sys.stderr.write(f"warning: {item.warning()}\n")
        sys.stderr.flush()
    return LoadedServer(app, unserved)


def _load_module(target: str) -> tuple[Any, Path, str, str]:
    """The module ``target`` names, its file, and ``target``'s two parts."""
    file_part, object_name = split_target(target)
    path = Path(file_part).resolve()
    if not path.exists() and _MODULE_NAME.match(file_part) and not file_part.endswith(".py"):
        module, path = _import_module(file_part, path)
    else:
        if not path.exists():
            raise TargetNotFoundError(file_part, path)
        if path.is_dir():
            raise AppNotFoundError(f"{file_part} is a directory, not a Python file", file_part, [])
        module = _import_file(path)
    return module, path, file_part, object_name


def _find_app(module: Any, path: Path, file_part: str, object_name: str) -> McpServerApp:
    if object_name:
        if not hasattr(module, object_name):
            raise AppNotFoundError(
                f"{file_part} has no object named {object_name!r}", file_part, _candidates(module)
            )
        return _as_app(getattr(module, object_name), path, f"{file_part}:{object_name}", module)
    members = vars(module)
    named = _served(members.get("app"))
    if named is not None:
        return named
    # An app and create_asgi_app(app), or McpProxy(...) and its .app, are one server; an
    # app mounted into another (a proxy into a hub) is served by that one.
    served = {id(app): app for app in map(_served, members.values()) if app is not None}
    apps = [
        app
        for app in served.values()
        if not any(other is not app and _reaches(other, app) for other in served.values())
    ]
    if len(apps) == 1:
        return apps[0]
    servers = [value for value in members.values() if _is_server_class(value, module)]
    functions = _module_functions(module)
    if (servers or functions) and not apps:
        try:
            return McpServerApp(*servers, *functions)
        except Exception as exc:
            raise UserCodeError(path, exc) from exc
    candidates = _candidates(module)
    if not candidates:
        raise AppNotFoundError(
            f"no server in {file_part}: no McpServerApp, no @mcp_server class and no"
            " @mcp_tool/@mcp_resource/@mcp_prompt function",
            file_part,
            [],
        )
    raise AppNotFoundError(f"{file_part} holds more than one server", file_part, candidates)


def unserved_members(module: Any, app: McpServerApp) -> list[Unserved]:
    """The module's own decorated functions no app registered, and, when the module builds
    its own apps, its ``@mcp_server`` classes none of them serves (without an app of its
    own, the classes are alternatives the target chose among)."""
    module_apps = [app for app in map(_served, vars(module).values()) if app is not None]
    found = []
    for name, value in vars(module).items():
        if name.startswith("_") or getattr(value, "__module__", None) != module.__name__:
            continue
        if isinstance(value, type):
            if (
                module_apps
                and _is_server_class(value, module)
                and not _serves_class([app, *module_apps], value)
            ):
                found.append(
                    Unserved(name, "@mcp_server", name, f"pass it to McpServerApp({name}, ...)")
                )
        elif is_member(value) and not getattr(value, REGISTERED_ATTR, False):
            found.extend(_unserved_function(name, value))
    return found


def _unserved_function(name: str, fn: Any) -> list[Unserved]:
    """``fn`` as an ``Unserved``, under its first decorator (none if it is only a completion
    or a lifespan: those are not checked)."""
    for attr, decorator, app_decorator in _FUNCTION_DECORATORS:
        spec = getattr(fn, attr, None)
        if spec is not None:
            served_as = getattr(spec, "name", None) or name
            fix = f"pass it to McpServerApp({name}, ...) or decorate it with {app_decorator}"
            return [Unserved(name, decorator, served_as, fix)]
    return []


def _serves_class(apps: Sequence[Any], cls: type) -> bool:
    """Whether an instance of ``cls`` is served by one of ``apps`` or the apps mounted in them."""
    return any(
        any(isinstance(instance, cls) for instance in app.instances)
        or _serves_class([mount.app for mount in app.mounts], cls)
        for app in apps
    )

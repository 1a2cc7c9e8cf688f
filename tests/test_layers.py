"""The layers point one way. Walks every ``import`` in ``src/mcpkit`` (function-level and
``TYPE_CHECKING`` ones too: an import deferred to first use is still an arrow) and fails on
one against the rules: protocol (wire names, era rules, frames) ← stores and the message
bus (interfaces below the engine, implementations beside them) ← the engine ← transports;
the programming model's parts sit on the engine beside the transports, and the app class
(``McpServerApp``) on top of both, so ``app.run()`` and ``from_openapi`` point down; the
client uses the protocol and the transports, never the engine; bridges and tools sit on
top. No exception list: a wrong arrow is fixed, not excused. And no module reaches itself
again through its imports: there is no import cycle."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"

#: Modules every layer may use: the exception tree, error codes, the version, the extras
#: hint, the runtime probe and the forwarded attribute.
BASICS = frozenset({"_codes", "_exceptions", "_version", "_extras", "_runtime", "_forwarding"})

#: What each layer may import besides itself and the basics. A layer is the first package
#: under ``mcpkit``, except in ``mcpkit.server``, which holds three (``_layer``): the
#: engine, the programming model's parts, and the app class on top of both. ``auth`` holds
#: the identity types every layer passes around and the token checks the transports run;
#: its ``client`` half is the client's.
ALLOWED: dict[str, frozenset[str]] = {
    "protocol": frozenset(),
    "stores": frozenset({"protocol"}),
    "auth": frozenset({"protocol"}),
    # the dispatcher, connections, sessions, eras, schemas: what any transport serves
    "engine": frozenset({"protocol", "stores", "auth"}),
    "transports": frozenset({"protocol", "stores", "auth", "engine"}),
    # the catalog, decorators, handlers, tasks, files, composition, interceptors
    "server": frozenset({"protocol", "stores", "auth", "engine"}),
    "client": frozenset({"protocol", "transports", "auth"}),
    # puts an API's operations on an app, whose tools call it through httpx
    "openapi": frozenset({"protocol", "engine", "server"}),
    # McpServerApp: the model's parts on an engine, served (run) by the transports
    "app": frozenset({"protocol", "stores", "auth", "engine", "server", "transports", "openapi"}),
    # traces the engine's dispatcher and the client's session, from above both
    "otel": frozenset({"protocol", "engine", "server", "app", "client"}),
    # serves a backend, reached through the client, as an app
    "proxy": frozenset({"protocol", "engine", "server", "app", "client"}),
    # what users' test suites import: the client wired to an app in memory
    "testing": frozenset({"protocol", "engine", "server", "app", "transports", "client"}),
    "cli": frozenset(
        {
            "protocol",
            "stores",
            "auth",
            "engine",
            "server",
            "app",
            "transports",
            "client",
            "openapi",
            "proxy",
        }
    ),
}

#: The engine's packages inside ``mcpkit.server`` (and the injection markers, plain
#: declarations the schemas recognise).
ENGINE_PARTS = (
    "mcpkit.server._engine",
    "mcpkit.server._eras",
    "mcpkit.server._schema",
    "mcpkit.server._inject.markers",
)
#: The app class and the package that exports it.
APP_PARTS = ("mcpkit.server._app",)

#: What the engine and the model's parts may take from ``auth``: the identity types, not
#: the token checks.
SERVER_AUTH = frozenset({"mcpkit.auth._types"})


def _module_name(path: Path, root: Path = SRC) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_module(name: str, root: Path) -> bool:
    path = root.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _import_statements(path: Path, module: str) -> list[tuple[str, list[str]]]:
    """Every import of an mcpkit module in the file, wherever it stands: the module named
    (a relative one resolved) and the names taken from it (none for ``import x``)."""
    found: list[tuple[str, list[str]]] = []
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.extend((a.name, []) for a in node.names if a.name.startswith("mcpkit"))
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against the importing package
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            if target.startswith("mcpkit"):
                found.append((target, [alias.name for alias in node.names]))
    return found


def _imports(path: Path, module: str, root: Path = SRC) -> set[str]:
    """The modules ``path`` imports: ``from package import module`` names the module, not
    the package (whose ``__init__`` any import of its modules runs anyway)."""
    found: set[str] = set()
    for target, names in _import_statements(path, module):
        submodules = {f"{target}.{name}" for name in names if _is_module(f"{target}.{name}", root)}
        found |= submodules
        if len(submodules) < len(names) or not names:  # names defined in ``target`` itself
            found.add(target)
    return found


def _layer(module: str) -> str:
    if module == "mcpkit.server" or module.startswith(APP_PARTS):
        return "app"
    if module.startswith(ENGINE_PARTS):
        return "engine"
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _violations(root: Path = SRC) -> list[str]:
    wrong = []
    for path in sorted((root / "mcpkit").rglob("*.py")):
        module = _module_name(path, root)
        source = _layer(module)
        if source in ("", "__main__") or source in BASICS:
            continue  # the facade (lazy re-exports), the entry point, the basics
        if source not in ALLOWED:
            wrong.append(f"{module}: layer {source!r} has no place in the rules")
            continue
        for target in sorted(_imports(path, module, root)):
            layer = _layer(target)
            if layer in ("", source) or layer in BASICS:
                continue
            if layer not in ALLOWED[source]:
                wrong.append(f"{module} -> {target}")
            elif source in ("engine", "server") and layer == "auth" and target not in SERVER_AUTH:
                wrong.append(f"{module} -> {target} (the engine takes only identity types)")
    return wrong


def test_every_import_points_down_the_layers() -> None:
    assert _violations() == []


def test_the_walk_finds_a_wrong_arrow(tmp_path: Path) -> None:
    """The rules bite: an engine module importing a transport, a client module importing
    the engine lazily, a package with no place are reported; a relative import resolves."""
    files = {
        "server/_probe.py": "from mcpkit.transports.http import create_asgi_app\n",
        "server/_fine.py": "from ..protocol import x\nfrom . import _probe\n",
        "client/_probe.py": "def f():\n    from ..server import _probe\n",
        "gadgets/__init__.py": "",
        # a transport takes an engine, never the model; the app on top may run transports
        "transports/_probe.py": "from mcpkit.server._handlers import MethodHandlers\n",
        "server/_app.py": "def run():\n    from mcpkit.transports import _probe\n",
        "server/_engine/probe.py": "from mcpkit.server import _app\n",
    }
    for name, text in files.items():
        (tmp_path / "mcpkit" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "mcpkit" / name).write_text(text, encoding="utf-8")
    assert _violations(tmp_path) == [
        "mcpkit.client._probe -> mcpkit.server._probe",
        "mcpkit.gadgets: layer 'gadgets' has no place in the rules",
        "mcpkit.server._engine.probe -> mcpkit.server._app",
        "mcpkit.server._probe -> mcpkit.transports.http",
        "mcpkit.transports._probe -> mcpkit.server._handlers",
    ]


#: Inside a layer, the parts point one way too: ``(importer, imported)`` module prefixes,
#: each with why the arrow is wrong. A prefix ends at a dot or the name's end.
INNER_RULES: dict[tuple[str, str], str] = {
    # Any ASGI server serves the app (a host's uvicorn, hypercorn): only the process
    # runner and its workers use mcpkit's HTTP server part.
    ("mcpkit.transports.http._app", "mcpkit.transports.http._server"): "the ASGI app",
    ("mcpkit.transports.http._streamable", "mcpkit.transports.http._server"): "a transport",
    ("mcpkit.transports.http._legacy_sse", "mcpkit.transports.http._server"): "a transport",
    ("mcpkit.transports.http._websocket", "mcpkit.transports.http._server"): "a transport",
    ("mcpkit.transports.http._asgi", "mcpkit.transports.http._server"): "the ASGI app",
    ("mcpkit.transports.http._security", "mcpkit.transports.http._server"): "the ASGI app",
    ("mcpkit.transports.http._auth_layer", "mcpkit.transports.http._server"): "the ASGI app",
    ("mcpkit.transports.http._connection_guards", "mcpkit.transports.http._server"): "the app",
    ("mcpkit.transports.http._request_watch", "mcpkit.transports.http._server"): "the app",
    # Schemas are computed from signatures alone.
    ("mcpkit.server._schema", "mcpkit.server._engine"): "schemas need no engine",
    ("mcpkit.server._schema", "mcpkit.server._tasks"): "schemas need no tasks",
    ("mcpkit.server._schema", "mcpkit.server._eras"): "schemas are era-free",
    ("mcpkit.server._schema", "mcpkit.server._app"): "schemas need no app",
    # The eras shape messages; they serve no catalog and run no task.
    ("mcpkit.server._eras", "mcpkit.server._tasks"): "an era runs no task",
    ("mcpkit.server._eras", "mcpkit.server._files"): "an era reads no file",
    ("mcpkit.server._eras", "mcpkit.server._app"): "an era knows no app",
    # The engine runs what is registered; tasks, files and injection sit on top of it.
    ("mcpkit.server._engine", "mcpkit.server._tasks"): "tasks sit on the engine",
    ("mcpkit.server._engine", "mcpkit.server._files"): "files sit on the engine",
    ("mcpkit.server._engine", "mcpkit.server._inject"): "injection sits on the engine",
    # The engine serves whatever installs its handlers: it knows no programming model.
    ("mcpkit.server._engine", "mcpkit.server._app"): "the engine knows no model",
    ("mcpkit.server._engine", "mcpkit.server._builder"): "the engine knows no model",
    ("mcpkit.server._engine", "mcpkit.server._catalog"): "the engine knows no model",
    ("mcpkit.server._engine", "mcpkit.server._compose"): "the engine knows no model",
    ("mcpkit.server._engine", "mcpkit.server._context"): "the engine knows no model",
    ("mcpkit.server._engine", "mcpkit.server._decorators"): "the engine knows no model",
    ("mcpkit.server._engine", "mcpkit.server._elicitation"): "the engine knows no model",
    ("mcpkit.server._engine", "mcpkit.server._entries"): "the engine knows no model",
    ("mcpkit.server._engine", "mcpkit.server._handlers"): "the engine knows no model",
    ("mcpkit.server._engine", "mcpkit.server._pipeline"): "the engine knows no model",
    ("mcpkit.server._engine", "mcpkit.server._prefixing"): "the engine knows no model",
    ("mcpkit.server._engine", "mcpkit.server._results"): "the engine knows no model",
    ("mcpkit.server._engine", "mcpkit.server.interceptors"): "the engine knows no model",
    ("mcpkit.server._engine", "mcpkit.server.middleware"): "the engine knows no model",
    ("mcpkit.server._inject", "mcpkit.server._tasks"): "injection runs no task",
    ("mcpkit.server._inject", "mcpkit.server._files"): "injection reads no file",
}


def _under(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def _inner_violations(root: Path = SRC) -> list[str]:
    wrong = []
    for path in sorted((root / "mcpkit").rglob("*.py")):
        module = _module_name(path, root)
        for target in sorted(_imports(path, module, root)):
            for (importer, imported), why in INNER_RULES.items():
                if _under(module, importer) and _under(target, imported):
                    wrong.append(f"{module} -> {target} ({why})")
    return wrong


def test_every_import_points_down_inside_its_layer() -> None:
    assert _inner_violations() == []


def test_the_inner_rules_bite(tmp_path: Path) -> None:
    files = {
        "server/_schema/probe.py": "from mcpkit.server._engine.dispatcher import x\n",
        "transports/http/_app.py": "def f():\n    from ._server import serve\n",
        "transports/http/_server/fine.py": "from .. import _app\n",
    }
    for name, text in files.items():
        (tmp_path / "mcpkit" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "mcpkit" / name).write_text(text, encoding="utf-8")
    assert _inner_violations(tmp_path) == [
        "mcpkit.server._schema.probe -> mcpkit.server._engine.dispatcher (schemas need no engine)",
        "mcpkit.transports.http._app -> mcpkit.transports.http._server (the ASGI app)",
    ]


def test_the_protocol_layer_imports_no_engine_no_asyncio_no_http() -> None:
    code = (
        "import sys, mcpkit.protocol, mcpkit.protocol.types\n"
        "loaded = [m for m in sys.modules if m in ('asyncio', 'httpx', 'uvicorn')"
        " or m.startswith(('mcpkit.server', 'mcpkit.transports', 'mcpkit.client'))]\n"
        "print(loaded)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def _import_graph(root: Path = SRC) -> dict[str, set[str]]:
    """Each module under ``mcpkit`` and the modules it imports. ``from package import
    name`` is an arrow to the module ``package.name`` when there is one, else to the
    package."""
    paths = {_module_name(path, root): path for path in (root / "mcpkit").rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for module, path in paths.items():
        arrows = _imports(path, module, root) & paths.keys()
        arrows.discard(module)
        graph[module] = arrows
    return graph


def _import_cycles(root: Path = SRC) -> list[list[str]]:
    """The import cycles among mcpkit's modules: the strongly connected components of more
    than one module (Tarjan), each sorted, in order of their first module."""
    graph = _import_graph(root)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for target in sorted(graph[module]):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in on_stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == module:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10 * len(graph)))
    try:
        for module in sorted(graph):
            if module not in index:
                visit(module)
    finally:
        sys.setrecursionlimit(limit)
    return sorted(cycles)


def test_no_import_cycle() -> None:
    """No module of mcpkit imports itself again through others, counting every import:
    module-level, deferred, and under ``TYPE_CHECKING`` (a part that names its owner's
    class closes a cycle too; it names an interface of what it uses instead)."""
    assert _import_cycles() == []


def test_the_cycle_finder_finds_a_cycle(tmp_path: Path) -> None:
    """A cycle through a deferred import, one through a package's re-export of its own
    module, and one under TYPE_CHECKING are found; an arrow that goes one way is not."""
    files = {
        "client/__init__.py": "from ._a import A\n",
        "client/_a.py": "def f():\n    from ._b import B\n",
        "client/_b.py": "from mcpkit.client import A\n",
        "client/_c.py": "from . import _d\n",
        "client/_d.py": (
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ._c import C\n"
        ),
        "client/_e.py": "from ._a import A\n",
    }
    for name, text in files.items():
        (tmp_path / "mcpkit" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "mcpkit" / name).write_text(text, encoding="utf-8")
    assert _import_cycles(tmp_path) == [
        ["mcpkit.client", "mcpkit.client._a", "mcpkit.client._b"],
        ["mcpkit.client._c", "mcpkit.client._d"],
    ]

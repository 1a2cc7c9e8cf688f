"""A host program that uses mcpkit as a library and reports what of its process changed.

``python host_state_program.py SERVING [CHANGE]`` notes the process-wide state a host owns
(the collector, ``sys`` and ``threading`` hooks, signal handlers, warning filters, logging,
the event loop policy and the loop's own settings, the environment, locale, limits, the
threads running). Then it imports mcpkit and serves an app: with ``uvicorn``, by its own
uvicorn in its own loop (as it configures it), called over HTTP in both eras, then in
memory; with ``run_http_server``, by mcpkit's serving function, called over HTTP in both
eras, then interrupted with SIGINT. Once the app has stopped, it notes the state again and
prints, as JSON, each item whose value changed: ``{"item": [before, after]}``. ``CHANGE``
names a change the program makes itself after the first note (how a test shows the
comparison sees one).
"""

from __future__ import annotations

import asyncio
import datetime
import gc
import json
import locale
import logging
import os
import resource
import signal
import socket
import sys
import threading
import time
import warnings
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository, for tests.*

from tests.wire import initialize_request


class _OtherPolicy(asyncio.DefaultEventLoopPolicy):
    """An event loop policy of the host's own (what the ``loop-policy`` change sets)."""


CHANGES = {
    "warnings": lambda: warnings.simplefilter("ignore"),
    "collector": gc.freeze,
    "signal": lambda: signal.signal(signal.SIGUSR1, lambda *_: None),
    "logging": lambda: logging.getLogger().setLevel(logging.CRITICAL),
    "switch-interval": lambda: sys.setswitchinterval(0.5),
    "loop-policy": lambda: asyncio.set_event_loop_policy(_OtherPolicy()),
    "thread": lambda: threading.Thread(
        target=time.sleep, args=(30,), name="left-running", daemon=True
    ).start(),
}


#: A default no JSON holds: left out of a tool's schema.
UNJSONABLE = object()


def _handler(handler: Any) -> str:
    """A signal handler, by identity (a repr may show the state of the object it is bound to)."""
    if handler is None or isinstance(handler, signal.Handlers):
        return repr(handler)
    return f"{type(handler).__name__} at {id(handler):#x}"


def _logger_state() -> dict[str, Any]:
    root = logging.getLogger()
    loggers = {
        name: (logger.level, logger.propagate, logger.disabled, [repr(h) for h in logger.handlers])
        for name, logger in logging.root.manager.loggerDict.items()
        if isinstance(logger, logging.Logger)
    }
    return {
        "root": (root.level, [repr(h) for h in root.handlers]),
        "disable": logging.root.manager.disable,
        "logger class": repr(logging.getLoggerClass()),
        "record factory": repr(logging.getLogRecordFactory()),
        "loggers": loggers,
    }


def note(loop: asyncio.AbstractEventLoop | None = None) -> dict[str, Any]:
    """What a host owns in its process, each as a comparable value."""
    gc.collect()  # CPython 3.12 freezes objects of its own as it collects
    state: dict[str, Any] = {
        "gc enabled": gc.isenabled(),
        "gc threshold": gc.get_threshold(),
        "gc freeze count": gc.get_freeze_count(),
        "gc debug": gc.get_debug(),
        "gc callbacks": [repr(c) for c in gc.callbacks],
        "switch interval": sys.getswitchinterval(),
        "recursion limit": sys.getrecursionlimit(),
        "excepthook": repr(sys.excepthook),
        "unraisablehook": repr(sys.unraisablehook),
        "displayhook": repr(sys.displayhook),
        "breakpointhook": repr(sys.breakpointhook),
        "stdin/stdout/stderr": [repr(sys.stdin), repr(sys.stdout), repr(sys.stderr)],
        "sys.path": list(sys.path),
        "meta_path": [repr(f) for f in sys.meta_path if "_distutils_hack" not in repr(f)],
        "path_hooks": [repr(h) for h in sys.path_hooks],
        "trace/profile": [repr(sys.gettrace()), repr(sys.getprofile())],
        "asyncgen hooks": repr(sys.get_asyncgen_hooks()),
        "coroutine origin tracking": sys.get_coroutine_origin_tracking_depth(),
        "dont_write_bytecode": sys.dont_write_bytecode,
        "threading excepthook": repr(threading.excepthook),
        "threading stack size": threading.stack_size(),
        "threads": sorted(t.name for t in threading.enumerate()),
        "warnings filters": [repr(f) for f in warnings.filters],
        "showwarning": repr(warnings.showwarning),
        "logging": _logger_state(),
        "event loop policy": repr(type(asyncio.get_event_loop_policy())),
        "environment": dict(os.environ),
        "cwd": os.getcwd(),
        "socket timeout": socket.getdefaulttimeout(),
        "locale": locale.setlocale(locale.LC_ALL, None),
        "open files limit": resource.getrlimit(resource.RLIMIT_NOFILE),
    }
    for sig in signal.valid_signals():
        if isinstance(sig, signal.Signals):
            state[f"signal {sig.name}"] = _handler(signal.getsignal(sig))
    if loop is not None:
        state["loop exception handler"] = repr(loop.get_exception_handler())
        state["loop task factory"] = repr(loop.get_task_factory())
        state["loop debug"] = loop.get_debug()
        state["loop slow callback"] = loop.slow_callback_duration
    return state


def differences(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    changed: dict[str, Any] = {}
    for item, value in before.items():
        if item == "logging":  # mcpkit's own loggers, and its dependencies', may be new
            for part, was in value.items():
                now = after[item][part]
                if part == "loggers":
                    now = {name: now.get(name) for name in was}
                if now != was:
                    changed[f"logging {part}"] = [was, now]
        elif after[item] != value:
            changed[item] = [value, after[item]]
    return changed


def make_app() -> Any:
    from mcpkit import McpServerApp

    app = McpServerApp("host-state")

    @app.tool()
    async def add(a: int, b: int) -> int:
        return a + b

    @app.tool()
    def blocking(text: str) -> str:  # runs on a worker thread
        return text.upper()

    @app.tool()
    def when(day: datetime.date, note: Any = UNJSONABLE) -> str:
        return day.isoformat()

    return app


async def call_over_http(url: str) -> None:
    """Calls in a session (async, sync and date-typed tools, then DELETE), and in 2026-07-28."""
    import httpx

    accept = {"accept": "application/json, text/event-stream"}
    async with httpx.AsyncClient(timeout=10) as http:
        opened = await http.post(url, headers=accept, json=initialize_request())
        assert opened.status_code == 200, opened.text
        session = {
            **accept,
            "mcp-session-id": opened.headers["mcp-session-id"],
            "mcp-protocol-version": "2025-11-25",
        }
        await http.post(
            url, headers=session, json={"jsonrpc": "2.0", "method": "notifications/initialized"}
        )
        calls = [
            ("add", {"a": 1, "b": 2}),
            ("blocking", {"text": "x"}),
            ("when", {"day": "2026-01-02"}),
        ]
        for call_id, (name, arguments) in enumerate(calls, start=2):
            answer = await http.post(
                url,
                headers=session,
                json={
                    "jsonrpc": "2.0",
                    "id": call_id,
                    "method": "tools/call",
                    "params": {"name": name, "arguments": arguments},
                },
            )
            result = answer.json().get("result", {})
            assert answer.status_code == 200 and "content" in result, answer.text
            assert not result.get("isError"), answer.text
        assert (await http.delete(url, headers=session)).status_code == 200
        modern = await http.post(
            url,
            headers={
                **accept,
                "mcp-protocol-version": "2026-07-28",
                "mcp-method": "tools/call",
                "mcp-name": "add",
            },
            json={
                "jsonrpc": "2.0",
                "id": 9,
                "method": "tools/call",
                "params": {
                    "name": "add",
                    "arguments": {"a": 2, "b": 2},
                    "_meta": {
                        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                        "io.modelcontextprotocol/clientCapabilities": {},
                    },
                },
            },
        )
        assert modern.status_code == 200 and '"text":"4"' in modern.text, modern.text


async def served_by_the_hosts_uvicorn() -> None:
    """An app served by the host's own uvicorn (its defaults, the lifespan on), called over
    HTTP, then in memory."""
    import mcpkit.testing
    from mcpkit.transports.http import create_asgi_app
    from tests.http_server import serve_asgi  # imports mcpkit: only once the state is noted

    app = make_app()
    async with serve_asgi(create_asgi_app(app), lifespan="on") as base:
        await call_over_http(f"{base}/mcp")
    async with mcpkit.testing.connected(app) as client:
        assert (await client.call_tool("add", {"a": 3, "b": 4})).structured_content == {"result": 7}
        assert (await client.call_tool("blocking", {"text": "y"})).content[0].text == "Y"


def served_by_run_http_server() -> None:
    """The program serving the app itself (``run_http_server``, which takes SIGINT and SIGTERM
    while it serves), called over HTTP, then interrupted as a user would: SIGINT."""
    from mcpkit.transports.http import StreamableHttpServerOptions, run_http_server
    from tests.http_server import bound_socket

    sock = bound_socket()
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
    caller: list[threading.Thread] = []
    failures: list[BaseException] = []

    def call_then_interrupt() -> None:
        try:
            asyncio.run(call_over_http(url))
        except BaseException as exc:  # said after the server has stopped
            failures.append(exc)
        os.kill(os.getpid(), signal.SIGINT)

    def started() -> None:
        caller.append(threading.Thread(target=call_then_interrupt, name="caller"))
        caller[0].start()

    options = StreamableHttpServerOptions(host="127.0.0.1")
    run_http_server(make_app(), options, sock=sock, on_started=started, log_level="warning")
    caller[0].join()
    if failures:
        raise failures[0]


def main(serving: str, change: str | None) -> None:
    if serving == "uvicorn":

        async def noted() -> dict[str, Any]:
            loop = asyncio.get_running_loop()
            before = note(loop)
            if change is not None:
                CHANGES[change]()
            await served_by_the_hosts_uvicorn()
            return differences(before, note(loop))

        changed = asyncio.run(noted())
    else:
        before = note()
        if change is not None:
            CHANGES[change]()
        served_by_run_http_server()
        changed = differences(before, note())
    print(json.dumps(changed, default=repr))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None)

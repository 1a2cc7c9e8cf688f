"""The fuzzer's connection to a live server: what every transport shares (the ledger of owed
replies, the checks on each message the server sends, answers to the server's own
requests, the health call) and the stdio transport. HTTP is in tests/fuzz/_http_target.py.

Every reply is checked against the era's schema.json as it arrives; each request id is
entered in the ledger with the (min, max) replies the oracle says it is owed, so a reply
arriving late (a slow tool) still counts against its own request, and a reply for an id
never sent, or one too many, is a defect.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections import Counter, deque
from dataclasses import dataclass, field
from typing import Any

import jsonschema  # type: ignore[import-untyped]

from tests.fuzz._inputs import MODERN, Catalog, Input, Inputs, modern_meta
from tests.fuzz._oracle import encode, expect_frame, id_key, stdio_frames
from tests.fuzz._server import ServerProcess
from tests.wire import RESULT_TYPES, check, load_schema

#: Seconds a request may take to be answered before its reply counts as lost.
REPLY_TIMEOUT = 5.0
_MORE_RESULTS = {
    "tasks/get": "GetTaskResult",
    "tasks/list": "ListTasksResult",
    "tasks/cancel": "CancelTaskResult",
}
HEALTH_CALL = {"name": "calculate", "arguments": {"a": 2, "b": 3}}


@dataclass
class Defect:
    kind: str  # lost | duplicate | unexpected | invalid | anon | crash | http-5xx | internal
    target: str
    label: str
    detail: str
    sample: str = ""

    def __str__(self) -> str:
        sample = f"\n      input: {self.sample}" if self.sample else ""
        return f"[{self.target}] {self.kind}: {self.label}: {self.detail}{sample}"


@dataclass
class Stats:
    """What one fuzz run did and found."""

    target: str
    inputs: Counter[str] = field(default_factory=Counter)
    labels: Counter[str] = field(default_factory=Counter)
    replies: Counter[str] = field(default_factory=Counter)
    statuses: Counter[int] = field(default_factory=Counter)
    server_requests: Counter[str] = field(default_factory=Counter)
    notifications: int = 0
    health_checks: int = 0
    crashes: int = 0
    defects: list[Defect] = field(default_factory=list)
    rss_start: int = 0
    rss_end: int = 0
    seconds: float = 0.0
    slowest: tuple[float, str, str] = (0.0, "", "")

    def count(self, kind: str) -> int:
        return sum(1 for d in self.defects if d.kind == kind)


@dataclass
class _Owed:
    low: int
    high: int
    label: str
    method: str | None
    sample: str
    got: int = 0
    reused: bool = False  # sent again under another method: its result shape is ambiguous


def sample_of(frame: bytes, limit: int = 300) -> str:
    text = repr(frame[:limit])
    return text + (f" ... ({len(frame)} bytes)" if len(frame) > limit else "")


class Target:
    """One connection the fuzzer drives. Subclasses move the bytes."""

    name = "target"
    stdio = False
    http = False

    def __init__(self, version: str, seed: int = 0) -> None:
        self.version = version
        self.modern = version == MODERN
        self.rng = random.Random(seed)
        self.stats = Stats(self.name)
        self.inputs: Inputs | None = None
        self.server: ServerProcess | None = None
        self._ledger: dict[Any, _Owed] = {}
        self._anon = 0  # id-less errors received so far
        self._waiters: dict[Any, asyncio.Future[dict[str, Any]]] = {}
        self._health_ids = 0
        self._tasks: set[asyncio.Task[Any]] = set()
        self._recent: deque[tuple[str, bytes]] = deque(maxlen=200)  # for reports

    # -- to implement ---------------------------------------------------------------------

    async def start(self) -> None:
        raise NotImplementedError

    async def stop(self) -> None:
        raise NotImplementedError

    async def send_input(self, made: Input) -> None:
        """Send the input's frames; return once its replies have come, or REPLY_TIMEOUT."""
        raise NotImplementedError

    async def call(self, method: str, params: dict[str, Any] | None) -> dict[str, Any]:
        """A request of the fuzzer's own (catalog, health): its reply message."""
        raise NotImplementedError

    async def answer(self, message: dict[str, Any]) -> None:
        """Send a response to a server-to-client request."""
        raise NotImplementedError

    @property
    def batches(self) -> bool:
        return self.version == "2025-03-26"

    # -- shared ---------------------------------------------------------------------------

    def params(self, params: dict[str, Any] | None) -> dict[str, Any] | None:
        if self.modern:
            return {**(params or {}), "_meta": modern_meta()}
        return params

    async def read_catalog(self) -> Catalog:
        catalog = Catalog()
        tools = await self.call("tools/list", self.params({}))
        catalog.tools = tools.get("result", {}).get("tools", [])
        prompts = await self.call("prompts/list", self.params({}))
        catalog.prompts = prompts.get("result", {}).get("prompts", [])
        resources = await self.call("resources/list", self.params({}))
        catalog.resources = [r["uri"] for r in resources.get("result", {}).get("resources", [])]
        templates = await self.call("resources/templates/list", self.params({}))
        catalog.templates = [
            t["uriTemplate"] for t in templates.get("result", {}).get("resourceTemplates", [])
        ]
        return catalog

    async def health(self) -> bool:
        """The server still answers an ordinary call correctly."""
        try:
            async with asyncio.timeout(REPLY_TIMEOUT):
                reply = await self.call("tools/call", self.params(HEALTH_CALL))
        except TimeoutError:
            reply = {"error": "no reply within the timeout"}
        result = reply.get("result") or {}
        # Before 2025-06-18 there is no structuredContent: the sum comes as text only.
        content = result.get("content") or [{}]
        answered = result.get("structuredContent") == {"result": 5.0} or (
            "structuredContent" not in result and content[0].get("text") in ("5", "5.0")
        )
        ok = answered and not result.get("isError")
        if ok:
            self.stats.health_checks += 1
        return ok

    def next_health_id(self) -> str:
        self._health_ids += 1
        return f"health-{self._health_ids}"

    def owe(self, made: Input, *, stdio: bool) -> None:
        """Enter the input's owed replies in the ledger (and let its label be counted)."""
        self.stats.inputs[made.kind] += 1
        self.stats.labels[made.label] += 1
        self._recent.extend((made.label, frame) for frame in made.frames)
        expect = made.expect
        if not expect.ids and expect.anon == (0, 0) and not made.relaxed:
            frames = stdio_frames(b"\n".join(made.frames)) if stdio else made.frames
            for frame in frames:
                expect_frame(frame, expect, batches=self.batches)
        methods = request_methods(made.frames)
        sample = sample_of(made.frames[0]) if made.frames else ""
        for key, (low, high) in expect.ids.items():
            owed = self._ledger.get(key)
            if owed is None:
                self._ledger[key] = _Owed(low, high, made.label, methods.get(key), sample)
            else:  # an id sent again (the wrong-id mutation reuses old ones)
                owed.low += low
                owed.high += high
                owed.label, owed.sample, owed.method = made.label, sample, methods.get(key)
                owed.reused = True

    def excuse(self, made: Input) -> None:
        """The input's request was refused before its body was read (its headers past the
        server's bound): no reply can name its id, so none is owed."""
        for key in made.expect.ids:
            owed = self._ledger.get(key)
            if owed is not None:
                owed.low = min(owed.low, owed.got)

    def settled(self, made: Input) -> bool:
        return all(self._ledger[key].got >= self._ledger[key].low for key in made.expect.ids)

    async def wait_settled(self, made: Input, timeout: float = REPLY_TIMEOUT) -> None:
        try:
            async with asyncio.timeout(timeout):
                while not self.settled(made):
                    await asyncio.sleep(0.002)
        except TimeoutError:
            pass
        for key in made.expect.ids:
            owed = self._ledger[key]
            if owed.got < owed.low:
                self.defect(
                    "lost",
                    owed.label,
                    f"id {key[1]!r} got {owed.got} replies, owed {owed.low}",
                    owed.sample,
                )
                owed.low = owed.got  # counted once

    def anon_mark(self) -> int:
        return self._anon

    def check_anon(self, made: Input, since: int) -> None:
        got = self._anon - since
        low, high = made.expect.anon
        if not low <= got <= high:
            sample = sample_of(made.frames[0]) if made.frames else ""
            owed = f"{low}" if low == high else f"{low} to {high}"
            self.defect("anon", made.label, f"{got} id-less error replies, owed {owed}", sample)

    def defect(self, kind: str, label: str, detail: str, sample: str = "") -> None:
        where = self.name
        if not self.modern and self.version not in where:  # HTTP rotates its versions
            where = f"{where} {self.version}"
        self.stats.defects.append(Defect(kind, where, label, detail, sample))

    # -- each message from the server -----------------------------------------------------

    def received(self, message: Any) -> None:
        """Check and route one decoded message (or a batch of them)."""
        if isinstance(message, list) and message:
            for item in message:
                self.received(item)
            return
        if not isinstance(message, dict):
            self.defect("invalid", "output", f"not a JSON-RPC message: {message!r:.200}")
            return
        if "method" in message:
            self._check(message, "ServerRequest" if "id" in message else "ServerNotification")
            if "id" in message:
                self.stats.server_requests[str(message["method"])] += 1
                self.spawn(self._answer(message))
            else:
                self.stats.notifications += 1
            return
        rid = message.get("id")
        waiter = self._waiters.pop(id_key(rid), None) if rid is not None else None
        if waiter is not None:
            self._check_response(message, None)
            if not waiter.done():
                waiter.set_result(message)
            return
        error = message.get("error")
        self.stats.replies["result" if "result" in message else f"error {_code(error)}"] += 1
        if rid is None:
            self._check_response(message, None)
            self._anon += 1
            return
        owed = self._ledger.get(id_key(rid))
        if owed is None:
            needle = json.dumps(rid).encode()
            sent = [(label, f) for label, f in self._recent if needle in f]
            label, frame = sent[-1] if sent else ("output", b"")
            detail = f"a reply for id {rid!r}, never sent as a request: {json.dumps(message):.200}"
            self.defect("unexpected", label, detail, sample_of(frame))
            return
        owed.got += 1
        if owed.got > owed.high:
            self.defect(
                "duplicate",
                owed.label,
                f"id {rid!r}: reply {owed.got}, owed at most {owed.high}",
                owed.sample,
            )
        self._check_response(message, owed)
        if isinstance(error, dict) and error.get("code") == -32603:
            self.defect("internal", owed.label, f"{error.get('message')!r:.300}", owed.sample)
        result = message.get("result")
        if isinstance(result, dict) and isinstance(result.get("task"), dict):
            task_id = result["task"].get("taskId")
            if isinstance(task_id, str) and self.inputs is not None:
                self.inputs.catalog.task_ids.append(task_id)

    def _check_response(self, message: dict[str, Any], owed: _Owed | None) -> None:
        modern_names = self.version >= "2025-11-25"
        if "error" in message:
            # Only 2025-11-25 and later define an error without an id (unreadable request).
            version = self.version if "id" in message else "2025-11-25"
            name = "JSONRPCErrorResponse" if version >= "2025-11-25" else "JSONRPCError"
            self._check(message, name, version)
            return
        self._check(message, "JSONRPCResultResponse" if modern_names else "JSONRPCResponse")
        result = message.get("result")
        method = owed.method if owed is not None and not owed.reused else None
        if not isinstance(result, dict) or method is None:
            return
        if isinstance(result.get("task"), dict):
            self._check(result, "CreateTaskResult")
        elif result.get("resultType") == "input_required":
            self._check(result, "InputRequiredResult")
        elif method in RESULT_TYPES or method in _MORE_RESULTS:
            self._check(result, RESULT_TYPES.get(method) or _MORE_RESULTS[method])

    def _check(self, message: Any, definition: str, version: str | None = None) -> None:
        version = version or self.version
        if definition not in (load_schema(version).get("$defs") or {}) and definition not in (
            load_schema(version).get("definitions") or {}
        ):
            if definition in ("ServerRequest", "ServerNotification", "JSONRPCResultResponse"):
                self.defect("invalid", definition, f"no {definition} in {version}", str(message))
            return  # a result of another era's method (server/discover answered in any era)
        try:
            check(version, definition, message)
        except (jsonschema.ValidationError, KeyError) as exc:
            detail = getattr(exc, "message", str(exc))
            self.defect("invalid", definition, f"{detail:.300}", f"{json.dumps(message):.300}")

    async def _answer(self, request: dict[str, Any]) -> None:
        """Answer as a client would: mostly a schema-made result, sometimes an error."""
        assert self.inputs is not None
        roll = self.rng.random()
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": request["id"]}
        if roll < 0.7:
            reply["result"] = self.inputs.client_result(str(request["method"]))
        elif roll < 0.9:
            reply["error"] = {"code": -32603, "message": "the fuzzer declines"}
        else:
            reply["result"] = self.inputs.gen.any_json()
        await self.answer(reply)

    def spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def settle_tasks(self) -> None:
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=REPLY_TIMEOUT)


def _code(error: Any) -> Any:
    return error.get("code") if isinstance(error, dict) else "?"


def request_methods(frames: list[bytes]) -> dict[Any, str]:
    """The method of each request (by id) in ``frames``, for checking result shapes."""
    out: dict[Any, str] = {}
    for frame in frames:
        try:
            value = json.loads(frame)
        except (ValueError, RecursionError):
            continue
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, dict) and isinstance(item.get("method"), str) and "id" in item:
                try:
                    out[id_key(item["id"])] = item["method"]
                except TypeError:
                    continue
    return out


# --------------------------------------------------------------------------- stdio


class StdioTarget(Target):
    """``mcpkit run examples/everything.py`` on stdio: the handshake era (initialize, then
    every request in that session), or 2026-07-28 (``_meta`` on every request)."""

    stdio = True

    def __init__(self, version: str, seed: int = 0) -> None:
        self.name = "stdio-modern" if version == MODERN else f"stdio {version}"
        super().__init__(version, seed)
        self._reader: asyncio.Task[None] | None = None
        self._write_lock = asyncio.Lock()

    async def start(self) -> None:
        self.server = ServerProcess.everything("stdio")
        await self.server.start()
        self._reader = asyncio.create_task(self._read())
        if not self.modern:
            init = await self.call(
                "initialize",
                {
                    "protocolVersion": self.version,
                    "capabilities": {"sampling": {}, "elicitation": {}, "roots": {}},
                    "clientInfo": {"name": "mcpkit-fuzzer", "version": "1"},
                },
            )
            assert init["result"]["protocolVersion"] == self.version, init
            await self.write(encode({"jsonrpc": "2.0", "method": "notifications/initialized"}))

    async def stop(self) -> None:
        await self.settle_tasks()
        if self.server is not None:
            await self.server.stop()
        if self._reader is not None:
            self._reader.cancel()

    async def write(self, payload: bytes) -> None:
        assert self.server is not None and self.server.proc is not None
        stdin = self.server.proc.stdin
        assert stdin is not None
        async with self._write_lock:
            stdin.write(payload + b"\n")
            await stdin.drain()

    async def _read(self) -> None:
        assert self.server is not None and self.server.proc is not None
        stdout = self.server.proc.stdout
        assert stdout is not None
        while line := await stdout.readline():
            try:
                message = json.loads(line)
            except ValueError:
                self.defect("invalid", "output", f"a line that is not JSON: {line[:200]!r}")
                continue
            self.received(message)

    async def call(self, method: str, params: dict[str, Any] | None) -> dict[str, Any]:
        rid = self.next_health_id()
        waiter = asyncio.get_running_loop().create_future()
        self._waiters[id_key(rid)] = waiter
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            message["params"] = params
        await self.write(encode(message))
        async with asyncio.timeout(REPLY_TIMEOUT):
            reply: dict[str, Any] = await waiter
        return reply

    async def answer(self, message: dict[str, Any]) -> None:
        await self.write(encode(message))

    async def send_input(self, made: Input) -> None:
        self.owe(made, stdio=True)
        since = self.anon_mark()
        await self.write(b"\n".join(made.frames))
        for rid in made.cancel_after:
            await asyncio.sleep(0.05)
            assert self.inputs is not None
            await self.write(self.inputs.cancel_frame(rid))
        await self.wait_settled(made)
        # The health call goes after the input on the same stream, so the id-less errors
        # the input earned have all arrived once it is answered.
        healthy = await self.health()
        self.check_anon(made, since)
        if not healthy:
            raise ServerDown("the health call failed")


class ServerDown(Exception):
    """The server stopped answering the health call."""

"""The tasks extension (``io.modelcontextprotocol/tasks``, SEP-2663) on the server side.

A ``tools/call`` for a tool declared with ``task_support="optional"`` or ``"required"``
from a client that declares the extension in the request's ``clientCapabilities`` is
answered with a ``CreateTaskResult`` (``resultType: "task"``) once the task is stored; the
tool then runs in a background asyncio task owned by the app (at most
``max_running`` at once; the others wait their turn in ``working``). The client polls
``tasks/get``, answers input requests with ``tasks/update`` and may ``tasks/cancel``.
``subscriptions/listen`` with ``notifications.taskIds`` streams ``notifications/tasks``.

Input during a task follows the multi round-trip model (SEP-2322): a tool that asks for
input it has no answer for raises ``InputRequired``; the task parks in ``input_required``
with those ``inputRequests``. When ``tasks/update`` has answered every one of them, the tool
runs again from the top and this time finds its answers (and its ``request_state``). All of
it lives in the ``TaskStore``, so a parked task resumes even on another process.

A tool that wants input *before* its task exists (MRTR first, task afterwards) is marked
``@deferred_task`` and calls ``await start_task(ctx)`` when the synchronous part is done:
until then its input requests are ordinary ``InputRequiredResult`` rounds; at that call the
client gets the ``CreateTaskResult`` and the tool keeps running as the task.

A client that does not declare the extension never gets a task: ``optional`` tools run
synchronously, ``required`` ones fail with -32021 naming the extension.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypeVar

from mcpkit._codes import ErrorCode
from mcpkit._exceptions import InternalError, InvalidParamsError, MethodNotFoundError, ProtocolError
from mcpkit.protocol._jsonrpc import JsonRpcRequest
from mcpkit.protocol._modern import SUBSCRIPTION_ID_KEY
from mcpkit.server._binding import CURRENT_BINDING, TransportBinding
from mcpkit.server._listen import Subscription
from mcpkit.server._mrtr import InputRequired, RoundInputs, round_inputs, valid_response
from mcpkit.server._session import McpSession
from mcpkit.server._unexpected import internal_error
from mcpkit.stores._tasks import InMemoryTaskStore, TaskRecord, TaskStore, TaskStoreFullError

if TYPE_CHECKING:
    from mcpkit.server._app import McpServerApp
    from mcpkit.server._context import McpToolContext

logger = logging.getLogger("mcpkit.server.tasks")

F = TypeVar("F", bound=Callable[..., Any])

TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
#: Tasks whose tool runs at once; more wait in ``working`` for a free slot.
DEFAULT_MAX_RUNNING_TASKS = 32
#: How long a task stays retrievable after its creation (``ttlMs``).
DEFAULT_TASK_TTL_MS = 60 * 60 * 1000
#: The polling interval suggested to clients (``pollIntervalMs``).
DEFAULT_POLL_INTERVAL_MS = 500
#: Seconds between two sweeps of expired tasks.
DEFAULT_SWEEP_INTERVAL = 60.0
#: Task ids one ``subscriptions/listen`` may watch.
MAX_LISTEN_TASK_IDS = 1000
#: How long one listener may take to accept a status notification before it is skipped.
NOTIFY_TIMEOUT = 5.0

DEFERRED_ATTR = "__mcp_task_deferred__"
#: ``TransportBinding.extras`` keys: the id of the task a call runs as; the hook that
#: starts the task of a deferred call.
TASK_ID_KEY = "tasks.task_id"
_START_KEY = "tasks.start"

ExecuteTool = Callable[
    [Any, dict[str, Any], JsonRpcRequest, TransportBinding], Awaitable[dict[str, Any]]
]
Principal = Callable[[TransportBinding], "str | None"]


# --------------------------------------------------------------------------- the tool side


def deferred_task(fn: F) -> F:
    """Mark a task-supporting tool that starts its task itself: it runs as an ordinary call
    (multi round-trip input included) until it calls ``await start_task(ctx)``."""
    setattr(fn, DEFERRED_ATTR, True)
    return fn


async def start_task(ctx: McpToolContext) -> bool:
    """End the synchronous part of a ``@deferred_task`` call: the client gets its
    ``CreateTaskResult`` now and the rest of the tool runs as the task. Returns whether the
    call runs as a task (False: the client did not declare the extension, so it goes on
    synchronously). A no-op when the call already runs as a task."""
    start = ctx.binding.extras.get(_START_KEY)
    if start is not None:
        await start()
    return ctx.binding.extras.get(TASK_ID_KEY) is not None


def current_task_id(ctx: McpToolContext) -> str | None:
    """The id of the task this call runs as; None for an ordinary call."""
    return ctx.binding.extras.get(TASK_ID_KEY)


# --------------------------------------------------------------------------- wire shapes


class MissingTasksExtensionError(ProtocolError):
    """-32021: the request needs the tasks extension the client did not declare."""

    code = ErrorCode.MISSING_REQUIRED_CAPABILITY

    def __init__(
        self, message: str = f"Missing required client capability: extension {TASKS_EXTENSION}"
    ) -> None:
        super().__init__(message, {"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}})


def declares_tasks(binding: TransportBinding) -> bool:
    """Whether this (2026-07-28) request declares the tasks extension in its capabilities."""
    if not binding.extras.get("modern"):
        return False
    extensions = (binding.client_capabilities or {}).get("extensions")
    return isinstance(extensions, dict) and isinstance(extensions.get(TASKS_EXTENSION), dict)


def iso_time(timestamp: float) -> str:
    return (
        datetime.fromtimestamp(timestamp, UTC)
        .isoformat(timespec="milliseconds")
        .replace("+00:00", "Z")
    )


def task_wire(record: TaskRecord) -> dict[str, Any]:
    """The ``Task`` fields of a record."""
    wire: dict[str, Any] = {
        "taskId": record.task_id,
        "status": record.status,
        "createdAt": iso_time(record.created_at),
        "lastUpdatedAt": iso_time(record.last_updated_at),
        "ttlMs": record.ttl_ms,
    }
    if record.poll_interval_ms is not None:
        wire["pollIntervalMs"] = record.poll_interval_ms
    if record.status_message:
        wire["statusMessage"] = record.status_message
    return wire


def detailed_task(record: TaskRecord) -> dict[str, Any]:
    """The ``DetailedTask`` of ``tasks/get`` and ``notifications/tasks``."""
    wire = task_wire(record)
    if record.status == "input_required":
        wire["inputRequests"] = dict(record.input_requests)
    elif record.status == "completed":
        wire["result"] = record.result if record.result is not None else {"content": []}
    elif record.status == "failed":
        wire["error"] = record.error or {"code": ErrorCode.INTERNAL_ERROR, "message": "Task failed"}
    return wire


def create_task_result(record: TaskRecord) -> dict[str, Any]:
    """The flat ``CreateTaskResult`` (``Result & Task``) answering the call."""
    return {"resultType": "task", **task_wire(record)}


def default_principal(binding: TransportBinding) -> str | None:
    """Who a task belongs to: the authenticated client and subject, when there is one."""
    try:
        from mcpkit.auth._types import current_auth
    except Exception:  # pragma: no cover - auth is part of the package
        return None
    auth = current_auth()
    if auth is None:
        return None
    return f"{auth.client_id or ''}|{auth.subject or ''}"


async def _discard(message: dict[str, Any]) -> None:
    """Where a task's progress and log notifications go: nowhere (SEP-2663)."""


# --------------------------------------------------------------------------- the engine


class TaskManager:
    """Creates, runs, parks, resumes and cancels tasks; serves ``tasks/get``,
    ``tasks/update`` and ``tasks/cancel``. One per app (``app.tasks``)."""

    def __init__(
        self,
        app: McpServerApp,
        store: TaskStore | None = None,
        *,
        max_running: int = DEFAULT_MAX_RUNNING_TASKS,
        ttl_ms: int | None = DEFAULT_TASK_TTL_MS,
        poll_interval_ms: int | None = DEFAULT_POLL_INTERVAL_MS,
        sweep_interval: float = DEFAULT_SWEEP_INTERVAL,
        principal: Principal = default_principal,
    ) -> None:
        if max_running < 1:
            raise ValueError("max_running must be at least 1")
        self.app = app
        self.store: TaskStore = store if store is not None else InMemoryTaskStore()
        self.max_running = max_running
        self.ttl_ms = ttl_ms
        self.poll_interval_ms = poll_interval_ms
        self.sweep_interval = sweep_interval
        self.principal = principal
        #: Runs a tool to its ``CallToolResult``; installed by the method handlers.
        self.execute_tool: ExecuteTool | None = None
        self._slots = asyncio.Semaphore(max_running)
        self._running = 0
        self._runners: dict[str, asyncio.Task[Any]] = {}
        self._cancelling: set[str] = set()
        self._locks: dict[str, list[Any]] = {}  # task id -> [lock, users]
        self._watchers: dict[str, dict[str, Callable[[dict[str, Any]], Awaitable[None]]]] = {}
        self._sweeper: asyncio.Task[None] | None = None
        self._stopping = False

    @property
    def running(self) -> int:
        """Tasks whose tool is running now."""
        return self._running

    # tools/call -------------------------------------------------------------------------

    def mode_for(self, entry: Any, binding: TransportBinding) -> str | None:
        """How this call runs: None (synchronously), ``"task"`` (a task from the start) or
        ``"deferred"`` (the tool starts its task itself). Raises -32021 for a tool that
        runs only as a task when the client did not declare the extension."""
        support = getattr(entry, "task_support", None)
        if support not in ("optional", "required") or not binding.extras.get("modern"):
            return None
        if TASK_ID_KEY in binding.extras:
            return None
        if not declares_tasks(binding):
            if support == "required":
                raise MissingTasksExtensionError(
                    f"Tool '{entry.name}' runs only as a task: the client must declare the {TASKS_EXTENSION} extension"
                )
            return None
        return "deferred" if getattr(entry.fn, DEFERRED_ATTR, False) else "task"

    async def call_tool(
        self,
        mode: str,
        entry: Any,
        kwargs: dict[str, Any],
        request: JsonRpcRequest,
        binding: TransportBinding,
    ) -> dict[str, Any]:
        """Answer a task-eligible ``tools/call`` (see ``mode_for``)."""
        if mode == "deferred":
            return await self._call_deferred(entry, kwargs, request, binding)
        record = self._new_record(request, binding)
        await self._create(record)
        self._launch(record.task_id)
        return create_task_result(record)

    def _new_record(self, request: JsonRpcRequest, binding: TransportBinding) -> TaskRecord:
        params = request.params or {}
        session = binding.session
        now = time.time()
        record = TaskRecord(
            task_id=str(uuid.uuid4()),
            status="working",
            created_at=now,
            last_updated_at=now,
            ttl_ms=self.ttl_ms,
            poll_interval_ms=self.poll_interval_ms,
            method=request.method,
            params={"name": params.get("name"), "arguments": params.get("arguments") or {}},
            protocol_version=session.protocol_version if session is not None else None,
            client_capabilities=dict(binding.client_capabilities or {}),
            client_info=session.client_info if session is not None else None,
            owner=self.principal(binding),
        )
        inputs = round_inputs(binding)
        if isinstance(inputs, RoundInputs):
            record.responses = dict(inputs.responses)
            record.issued = dict(inputs.issued)
            record.state = inputs.state
        return record

    async def _create(self, record: TaskRecord) -> None:
        try:
            await self.store.create(record)
        except TaskStoreFullError:
            raise InternalError("Server busy: too many tasks; try again later") from None
        self._ensure_sweeper()

    async def _call_deferred(
        self, entry: Any, kwargs: dict[str, Any], request: JsonRpcRequest, binding: TransportBinding
    ) -> dict[str, Any]:
        handoff: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        started: dict[str, str] = {}

        async def start() -> None:
            if started or binding.extras.pop(_START_KEY, None) is None:
                return
            await self._acquire_slot()
            try:
                record = self._new_record(request, binding)
                await self._create(record)
            except BaseException:
                self._release_slot()
                raise
            started["task_id"] = record.task_id
            # From here on the call belongs to the task, not to the request.
            binding.send = _discard
            binding.extras.pop("close_sse_stream", None)
            binding.extras[TASK_ID_KEY] = record.task_id
            me = asyncio.current_task()
            if me is not None:
                self._track(record.task_id, me)
            handoff.set_result(create_task_result(record))

        binding.extras[_START_KEY] = start
        child: asyncio.Task[dict[str, Any]]
        child = asyncio.create_task(self._drive(entry, kwargs, request, binding, started))
        try:
            await asyncio.wait({child, handoff}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            if not handoff.done():
                child.cancel()
            raise
        if handoff.done():
            return handoff.result()
        return child.result()

    async def _drive(
        self,
        entry: Any,
        kwargs: dict[str, Any],
        request: JsonRpcRequest,
        binding: TransportBinding,
        started: dict[str, str],
    ) -> Any:
        """A deferred call: an ordinary call until ``start_task``, the task afterwards."""
        assert self.execute_tool is not None
        result: Any = None
        outcome: BaseException | None = None
        try:
            result = await self.execute_tool(entry, kwargs, request, binding)
        except BaseException as exc:
            if not started:
                raise
            outcome = exc
        if not started:
            return result
        self._release_slot()
        task_id = started["task_id"]
        try:
            if outcome is None:
                await self._settle(task_id, "completed", result=result)
            elif isinstance(outcome, asyncio.CancelledError):
                self._uncancel()
                await self._on_cancelled(task_id)
            elif isinstance(outcome, Exception):
                await self._conclude(task_id, binding, outcome)
            else:
                raise outcome
        except asyncio.CancelledError:
            self._uncancel()
            await self._on_cancelled(task_id)
        except Exception:  # the store failed while recording the outcome
            logger.exception("task %s: could not record its outcome", task_id)
        return None

    @staticmethod
    def _uncancel() -> None:
        task = asyncio.current_task()
        if task is not None:
            task.uncancel()

    # running ----------------------------------------------------------------------------

    async def _acquire_slot(self) -> None:
        await self._slots.acquire()
        self._running += 1

    def _release_slot(self) -> None:
        self._running -= 1
        self._slots.release()

    @contextlib.asynccontextmanager
    async def _slot(self) -> AsyncIterator[None]:
        await self._acquire_slot()
        try:
            yield
        finally:
            self._release_slot()

    def _track(self, task_id: str, runner: asyncio.Task[Any]) -> None:
        self._runners[task_id] = runner

        def forget(done: asyncio.Task[Any]) -> None:
            if self._runners.get(task_id) is done:
                del self._runners[task_id]

        runner.add_done_callback(forget)

    def _launch(self, task_id: str) -> None:
        """Run (or run again) a task's tool in the background."""
        previous = self._runners.get(task_id)
        runner = asyncio.get_running_loop().create_task(
            self._run(task_id, previous), name=f"mcp-task-{task_id}"
        )
        self._track(task_id, runner)

    async def _run(self, task_id: str, previous: asyncio.Task[Any] | None) -> None:
        try:
            if previous is not None and not previous.done():
                await asyncio.wait({previous})  # the run that parked the task is still wrapping up
            async with self._slot():
                await self._run_once(task_id)
        except asyncio.CancelledError:
            self._uncancel()
            await self._on_cancelled(task_id)
        except Exception:  # the store failed while recording the outcome
            logger.exception("task %s: could not record its outcome", task_id)

    async def _run_once(self, task_id: str) -> None:
        record = await self.store.get(task_id)
        if record is None or record.terminal or record.status != "working":
            return
        if record.cancel_requested:
            await self._settle(task_id, "cancelled", message="Cancelled at the client's request")
            return
        binding = self._binding_for(record)
        CURRENT_BINDING.set(binding)
        assert self.execute_tool is not None
        try:
            name = record.params.get("name")
            entry = self.app.catalog.get_tool(name) if isinstance(name, str) else None
            if entry is None:
                raise InvalidParamsError(f"Unknown tool: {name}", {"name": name})
            arguments = record.params.get("arguments") or {}
            kwargs = (
                entry.signature.validate(arguments)
                if entry.signature is not None
                else dict(arguments)
            )
            request = JsonRpcRequest(f"task:{task_id}", record.method, dict(record.params))
            result = await self.execute_tool(entry, kwargs, request, binding)
        except Exception as exc:
            await self._conclude(task_id, binding, exc)
        else:
            await self._settle(task_id, "completed", result=result)

    def _binding_for(self, record: TaskRecord) -> TransportBinding:
        """A call's binding for a task run: the creating request's capabilities, the answers
        gathered so far, and no channel (tasks send no progress or log notifications)."""
        session = McpSession(None, key=f"task:{record.task_id}")
        session.ephemeral = session.modern = True
        session.initialize_seen = session.initialized = True
        session.protocol_version = record.protocol_version
        session.client_capabilities = record.client_capabilities
        session.client_info = record.client_info
        name = record.params.get("name")
        inputs = RoundInputs(
            record.method,
            name if isinstance(name, str) else None,
            responses=dict(record.responses),
            state=record.state,
            issued=dict(record.issued),
        )
        return TransportBinding(
            session=session,
            send=_discard,
            connection_key=f"task:{record.task_id}",
            extras={"modern": True, "mrtr": inputs, TASK_ID_KEY: record.task_id},
        )

    async def _conclude(self, task_id: str, binding: TransportBinding, exc: Exception) -> None:
        """Record how a run that raised ended."""
        if isinstance(exc, InputRequired):
            await self._park(task_id, round_inputs(binding), exc.requests)
        elif isinstance(exc, ProtocolError):
            await self._settle(task_id, "failed", error=exc.to_error(), message=exc.message)
        else:
            error = internal_error(
                exc,
                f"task {task_id}",
                expose=self.app.dispatcher.expose_internal_errors,
                logger=logger,
            )
            await self._settle(task_id, "failed", error=error.to_error(), message=error.message)

    async def _on_cancelled(self, task_id: str) -> None:
        if task_id in self._cancelling:
            self._cancelling.discard(task_id)
            await self._settle(task_id, "cancelled", message="Cancelled at the client's request")
        elif self._stopping:
            error = InternalError("The server stopped before the task finished")
            await self._settle(task_id, "failed", error=error.to_error(), message=error.message)
        # else: the task expired and was deleted; nothing to record

    # state changes ----------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def _locked(self, task_id: str) -> AsyncIterator[None]:
        """Serializes this process's read-modify-write cycles on one task."""
        slot = self._locks.get(task_id)
        if slot is None:
            slot = self._locks[task_id] = [asyncio.Lock(), 0]
        slot[1] += 1
        try:
            async with slot[0]:
                yield
        finally:
            slot[1] -= 1
            if slot[1] == 0 and self._locks.get(task_id) is slot:
                del self._locks[task_id]

    async def _settle(
        self,
        task_id: str,
        status: str,
        *,
        result: dict[str, Any] | None = None,
        error: dict[str, Any] | None = None,
        message: str | None = None,
    ) -> None:
        """Move a task to a final status (never out of one)."""
        async with self._locked(task_id):
            record = await self.store.get(task_id)
            if record is None or record.terminal:
                return
            if record.cancel_requested and status != "cancelled":
                status, result, error, message = (
                    "cancelled",
                    None,
                    None,
                    "Cancelled at the client's request",
                )
            record.status = status
            record.result = result if status == "completed" else None
            record.error = error if status == "failed" else None
            record.status_message = message
            record.input_requests = {}
            record.responses, record.state = {}, None  # the answers are not needed any more
            record.last_updated_at = time.time()
            await self.store.update(record)
        await self._notify(record)

    async def _park(self, task_id: str, inputs: Any, requests: dict[str, dict[str, Any]]) -> None:
        """The run needs input: keep what it gathered, wait for ``tasks/update``."""
        async with self._locked(task_id):
            record = await self.store.get(task_id)
            if record is None or record.terminal:
                return
            if record.cancel_requested:
                record.status, record.status_message = (
                    "cancelled",
                    "Cancelled at the client's request",
                )
                record.input_requests, record.responses, record.state = {}, {}, None
            else:
                if isinstance(inputs, RoundInputs):
                    record.responses = dict(inputs.responses)
                    record.issued.update(inputs.issued)
                    record.state = inputs.state
                for key, wanted in requests.items():
                    record.issued[key] = wanted.get("method", "")
                record.input_requests = dict(requests)
                record.status = "input_required"
                record.status_message = "Waiting for input from the client"
            record.last_updated_at = time.time()
            await self.store.update(record)
        await self._notify(record)

    # tasks/get, tasks/update, tasks/cancel -----------------------------------------------

    @staticmethod
    def _admit(request: JsonRpcRequest, binding: TransportBinding) -> str:
        """The task id of a tasks/* request from a client that declared the extension."""
        if not binding.extras.get("modern"):
            raise MethodNotFoundError(f"Method not found: {request.method}")
        if not declares_tasks(binding):
            raise MissingTasksExtensionError()
        task_id = (request.params or {}).get("taskId")
        if not isinstance(task_id, str) or not task_id:
            raise InvalidParamsError('"taskId" must be a non-empty string', {"param": "taskId"})
        return task_id

    async def lookup(self, task_id: str, binding: TransportBinding) -> TaskRecord | None:
        """The task when it exists and this request's principal may see it."""
        record = await self.store.get(task_id)
        if record is None:
            return None
        if record.owner is not None and record.owner != self.principal(binding):
            return None
        return record

    async def _visible(self, task_id: str, binding: TransportBinding) -> TaskRecord:
        record = await self.lookup(task_id, binding)
        if record is None:
            raise InvalidParamsError(
                "Failed to retrieve task: Task not found or expired", {"taskId": task_id}
            )
        return record

    async def get_task(self, request: JsonRpcRequest, binding: TransportBinding) -> dict[str, Any]:
        task_id = self._admit(request, binding)
        return detailed_task(await self._visible(task_id, binding))

    async def update_task(
        self, request: JsonRpcRequest, binding: TransportBinding
    ) -> dict[str, Any]:
        task_id = self._admit(request, binding)
        responses = (request.params or {}).get("inputResponses")
        if not isinstance(responses, dict):
            raise InvalidParamsError(
                '"inputResponses" must be an object', {"param": "inputResponses"}
            )
        changed = resume = False
        async with self._locked(task_id):
            record = await self._visible(task_id, binding)
            if record.status == "input_required":
                for key, value in responses.items():
                    wanted = record.input_requests.get(key)
                    # Unknown, answered or malformed answers are ignored (the key stays open).
                    if wanted is None or not valid_response(wanted.get("method", ""), value):
                        continue
                    record.responses[key] = value
                    del record.input_requests[key]
                    changed = True
                if changed:
                    if not record.input_requests:
                        record.status, record.status_message = "working", None
                        resume = True
                    record.last_updated_at = time.time()
                    await self.store.update(record)
        if changed:
            await self._notify(record)
        if resume:
            self._launch(task_id)
        return {}

    async def cancel_task(
        self, request: JsonRpcRequest, binding: TransportBinding
    ) -> dict[str, Any]:
        task_id = self._admit(request, binding)
        settled: TaskRecord | None = None
        async with self._locked(task_id):
            record = await self._visible(task_id, binding)
            if record.terminal:
                return {}  # idempotent
            record.cancel_requested = True
            runner = self._runners.get(task_id)
            if runner is not None and not runner.done():
                await self.store.update(record)
                self._cancelling.add(task_id)
                runner.cancel()
            else:  # parked, or nobody here runs it: cancelled now
                record.status, record.status_message = (
                    "cancelled",
                    "Cancelled at the client's request",
                )
                record.input_requests, record.responses, record.state = {}, {}, None
                record.last_updated_at = time.time()
                await self.store.update(record)
                settled = record
        if settled is not None:
            await self._notify(settled)
        return {}

    # status notifications ---------------------------------------------------------------

    def watch(
        self, task_id: str, key: str, deliver: Callable[[dict[str, Any]], Awaitable[None]]
    ) -> None:
        """Call ``deliver(detailed_task)`` whenever the task's status changes."""
        self._watchers.setdefault(task_id, {})[key] = deliver

    def unwatch(self, key: str, task_ids: list[str]) -> None:
        for task_id in task_ids:
            watchers = self._watchers.get(task_id)
            if watchers is not None:
                watchers.pop(key, None)
                if not watchers:
                    del self._watchers[task_id]

    async def _notify(self, record: TaskRecord) -> None:
        watchers = self._watchers.get(record.task_id)
        if not watchers:
            return
        payload = detailed_task(record)
        for key, deliver in list(watchers.items()):
            try:
                async with asyncio.timeout(NOTIFY_TIMEOUT):
                    await deliver(payload)
            except Exception:
                logger.warning("could not send notifications/tasks to %s", key, exc_info=True)

    def subscription(self, request: JsonRpcRequest, binding: TransportBinding) -> TaskSubscription:
        """A ``subscriptions/listen`` that also honours ``notifications.taskIds``."""
        return TaskSubscription(self.app, request, binding, self)

    # expiry and shutdown ----------------------------------------------------------------

    def _ensure_sweeper(self) -> None:
        loop = asyncio.get_running_loop()
        if self._sweeper is None or self._sweeper.done() or self._sweeper.get_loop() is not loop:
            self._sweeper = loop.create_task(self._sweep_forever(), name="mcp-task-sweeper")

    async def _sweep_forever(self) -> None:
        while True:
            await asyncio.sleep(self.sweep_interval)
            try:
                await self.sweep()
            except Exception:
                logger.exception("sweeping expired tasks failed")

    async def sweep(self) -> list[str]:
        """Delete the tasks past their TTL (stopping any still running); returns their ids."""
        expired = await self.store.purge_expired()
        for task_id in expired:
            runner = self._runners.get(task_id)
            if runner is not None:
                runner.cancel()
            self._watchers.pop(task_id, None)
        return expired

    async def stop(self) -> None:
        """Stop every running task (each ends ``failed``: the server stopped) and the sweeper."""
        self._stopping = True
        try:
            if self._sweeper is not None:
                self._sweeper.cancel()
                self._sweeper = None
            loop = asyncio.get_running_loop()
            runners = [r for r in self._runners.values() if r.get_loop() is loop and not r.done()]
            for runner in runners:
                runner.cancel()
            if runners:
                await asyncio.gather(*runners, return_exceptions=True)
        finally:
            self._stopping = False
            self._runners.clear()
            self._cancelling.clear()
            self._slots = asyncio.Semaphore(self.max_running)  # a later start may use another loop
            self._running = 0


class TaskSubscription(Subscription):
    """``subscriptions/listen`` plus ``notifications.taskIds``: ``notifications/tasks`` for
    the listed tasks the caller may see (acknowledged in ``taskIds``), starting with each
    one's current state."""

    def __init__(
        self,
        app: McpServerApp,
        request: JsonRpcRequest,
        binding: TransportBinding,
        manager: TaskManager,
    ) -> None:
        super().__init__(app, request, binding)
        self.manager = manager
        self.requested_ids: list[str] = []
        self.task_ids: list[str] = []
        ids = ((request.params or {}).get("notifications") or {}).get("taskIds")
        if ids is None:
            return
        if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
            raise InvalidParamsError('"taskIds" must be a list of task ids')
        if len(ids) > MAX_LISTEN_TASK_IDS:
            raise InvalidParamsError(f"at most {MAX_LISTEN_TASK_IDS} task ids per subscription")
        if not declares_tasks(binding):
            raise MissingTasksExtensionError()
        self.requested_ids = list(dict.fromkeys(ids))

    async def _deliver_task(self, payload: dict[str, Any]) -> None:
        tagged = self._tagged("notifications/tasks", payload)
        await self.binding.send_notification("notifications/tasks", tagged["params"])

    async def run(self) -> dict[str, Any]:
        if not self.requested_ids:
            return await super().run()
        for task_id in self.requested_ids:
            if await self.manager.lookup(task_id, self.binding) is not None:
                self.task_ids.append(task_id)
        self.acknowledged["taskIds"] = list(self.task_ids)
        await self.binding.send_notification(
            "notifications/subscriptions/acknowledged",
            {"_meta": {SUBSCRIPTION_ID_KEY: self.id}, "notifications": self.acknowledged},
        )
        self.app.connections.register(self._deliver, self.key)
        for uri in self.uris:
            self.app.subscriptions.subscribe(uri, self.key, self._deliver)
        for task_id in self.task_ids:
            self.manager.watch(task_id, self.key, self._deliver_task)
        try:
            for task_id in self.task_ids:  # where each task stands now
                record = await self.manager.lookup(task_id, self.binding)
                if record is not None:
                    await self._deliver_task(detailed_task(record))
            await self.app.shutting_down.wait()
        finally:
            self.app.connections.unregister(self.key)
            self.app.subscriptions.unsubscribe_all(self.key)
            self.manager.unwatch(self.key, self.task_ids)
        return {"_meta": {SUBSCRIPTION_ID_KEY: self.id}}


__all__ = [
    "DEFAULT_MAX_RUNNING_TASKS",
    "DEFAULT_POLL_INTERVAL_MS",
    "DEFAULT_TASK_TTL_MS",
    "TASKS_EXTENSION",
    "MissingTasksExtensionError",
    "TaskManager",
    "TaskSubscription",
    "current_task_id",
    "declares_tasks",
    "deferred_task",
    "detailed_task",
    "start_task",
]

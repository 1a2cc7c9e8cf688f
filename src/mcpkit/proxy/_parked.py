"""Backend calls kept running across the rounds of a 2026-07-28 front request: the backend
asks (sampling, elicitation, roots) mid-call, the front answers ``input_required``, and the
client's retry carries the answer back to the same, still-waiting backend call."""

from __future__ import annotations

import asyncio
import itertools
import secrets
from collections.abc import Awaitable
from typing import Any

from mcpkit._exceptions import InternalError, InvalidParamsError, InvalidRequestError
from mcpkit.server._context import McpToolContext
from mcpkit.server._eras.mrtr import InputRequired

#: Backend calls waiting for a front client's retry at once.
DEFAULT_MAX_PARKED_CALLS = 64
#: Seconds a backend call waits for the front client's retry before it is cancelled.
DEFAULT_PARKED_CALL_TIMEOUT = 120.0
#: Backend requests one parked call may have waiting for answers at once.
MAX_OUTSTANDING_INPUTS = 16


def _unanswered(method: str) -> InternalError:
    return InternalError(f"{method}: the front call it was for ended before its client answered")


class ParkedCall:
    """One backend call and the backend's questions still waiting for the front's answers."""

    def __init__(self, call_id: str, task: asyncio.Task[Any]) -> None:
        self.id = call_id
        self.task = task
        self.inbox: asyncio.Queue[tuple[str, dict[str, Any] | None, asyncio.Future[Any]]] = (
            asyncio.Queue(MAX_OUTSTANDING_INPUTS)
        )
        #: key -> (method, params, the backend handler's future)
        self.outstanding: dict[str, tuple[str, dict[str, Any] | None, asyncio.Future[Any]]] = {}
        self._keys = itertools.count(1)
        #: The front round now driving the call (progress and logs go to it).
        self.ctx: McpToolContext | None = None
        self.expiry: asyncio.TimerHandle | None = None
        self.ended = False

    async def ask(self, method: str, params: dict[str, Any] | None) -> dict[str, Any]:
        """The backend's request: wait until a front round answers it."""
        if self.ended:
            raise _unanswered(method)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        await self.inbox.put((method, params, future))
        if self.ended:  # it ended while this waited for room
            raise _unanswered(method)
        result: dict[str, Any] = await future
        return result

    def end(self) -> None:
        """The call is over: the backend's questions still waiting are answered with an
        error, so that none of its handlers waits for ever."""
        self.ended = True
        waiting = list(self.outstanding.values())
        self.outstanding.clear()
        while not self.inbox.empty():
            waiting.append(self.inbox.get_nowait())
        for method, _, future in waiting:
            if not future.done():
                future.set_exception(_unanswered(method))

    def next_key(self) -> str:
        return f"proxy-{self.id[:8]}-{next(self._keys)}"


class ParkedCalls:
    """The parked calls of one proxy, at most ``max_calls``, each dropped after ``timeout``."""

    def __init__(
        self,
        *,
        max_calls: int = DEFAULT_MAX_PARKED_CALLS,
        timeout: float = DEFAULT_PARKED_CALL_TIMEOUT,
    ) -> None:
        self.max_calls = max_calls
        self.timeout = timeout
        self._calls: dict[str, ParkedCall] = {}

    def __len__(self) -> int:
        return len(self._calls)

    def start(self, work: Awaitable[Any]) -> ParkedCall:
        if len(self._calls) >= self.max_calls:
            raise InvalidRequestError(
                f"too many suspended calls (at most {self.max_calls}); retry later"
            )
        call = ParkedCall(secrets.token_hex(16), asyncio.ensure_future(work))
        self._calls[call.id] = call
        return call

    def resume(self, call_id: Any) -> ParkedCall:
        call = self._calls.get(call_id) if isinstance(call_id, str) else None
        if call is None:
            raise InvalidParamsError("Invalid requestState: the suspended backend call expired")
        if call.expiry is not None:
            call.expiry.cancel()
            call.expiry = None
        return call

    def suspend(self, call: ParkedCall) -> None:
        """The front round ended asking for input: expire the call unless it is retried."""
        call.expiry = asyncio.get_running_loop().call_later(self.timeout, self.drop, call)

    def drop_all(self) -> None:
        """Cancel every parked call (the proxy stops)."""
        for call in list(self._calls.values()):
            self.drop(call)

    def drop(self, call: ParkedCall) -> None:
        self._calls.pop(call.id, None)
        if call.expiry is not None:
            call.expiry.cancel()
        call.task.cancel()
        call.end()

    async def run_round(self, call: ParkedCall, ctx: McpToolContext) -> Any:
        """Drive one front round: answer what the retry carries, ask for what is missing
        (``InputRequired`` propagates, the call stays parked), return the backend's result."""
        ctx.request_state = call.id
        call.ctx = ctx
        try:
            while True:
                for key, (method, params, future) in list(call.outstanding.items()):
                    if future.done():
                        call.outstanding.pop(key)
                        continue
                    answers = await ctx.gather_inputs({key: (method, params)})
                    call.outstanding.pop(key, None)
                    if future.done():  # the call ended (``end``) while its client answered
                        continue
                    if key in answers:
                        future.set_result(answers[key])
                    else:
                        future.set_exception(
                            InvalidRequestError(f"The client does not support {method}")
                        )
                getter = asyncio.ensure_future(call.inbox.get())
                try:
                    done, _ = await asyncio.wait(
                        {call.task, getter}, return_when=asyncio.FIRST_COMPLETED
                    )
                finally:  # this round cancelled too: nothing is left waiting on the inbox
                    if not getter.done():
                        getter.cancel()
                if getter in done:
                    method, params, future = getter.result()
                    call.outstanding[call.next_key()] = (method, params, future)
                    continue
                self._calls.pop(call.id, None)
                call.end()
                return call.task.result()
        except asyncio.CancelledError:
            self.drop(call)
            raise
        except InputRequired:
            self.suspend(call)
            raise
        except BaseException:
            self.drop(call)
            raise

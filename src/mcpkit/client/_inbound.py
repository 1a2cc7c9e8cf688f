"""What a server sends a client session unasked: its requests (sampling, elicitation, roots,
ping), each answered in a task of its own, and its notifications, each run by its callback
in a task of its own. Both are bounded, so a server flooding them cannot make a task each:
past the bound a request is refused, a notification dropped."""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from mcpkit._exceptions import InternalError, MethodNotFoundError, ProtocolError, TransportError
from mcpkit.protocol._jsonrpc import JsonRpcRequest, RequestId, error_response, result_response

logger = logging.getLogger("mcpkit.client")

#: The server's requests (sampling, elicitation, roots, ping) one client answers at once;
#: past it a request is refused at once with -32603, as a busy server refuses one. As many
#: refusals again may be on their way; past those a request is dropped, with a warning.
DEFAULT_MAX_SERVER_REQUESTS = 64
#: Notification callbacks (``on_notification``, a request's progress callback) one client
#: runs at once; past it a notification is dropped, with one warning per flood: a server
#: flooding notifications at a slow callback would otherwise hold the client's memory.
DEFAULT_MAX_NOTIFICATION_CALLBACKS = 1024

Spawn = Callable[[Awaitable[Any]], "asyncio.Task[Any]"]


class Session(Protocol):
    """What of its session these read (a ``ClientSession``), each when it is needed: the
    bounds and the request handler may be set after the session is made."""

    max_server_requests: int
    max_notification_callbacks: int
    on_request: Callable[[str, dict[str, Any]], Awaitable[Any]] | None

    async def send(self, message: dict[str, Any]) -> None: ...


async def call_back(callback: Callable[..., Any], *args: Any) -> Any:
    value = callback(*args)
    return await value if inspect.isawaitable(value) else value


class ServerRequests:
    """The server's requests to one session: answered by its ``on_request`` (``ping`` by
    itself), at most ``session.max_server_requests`` at once; one more is refused at once
    (-32603 "Client busy"), and past as many refusals under way it is dropped. A request the
    server cancels (``notifications/cancelled``) has its handler cancelled and no answer."""

    __slots__ = ("_answering", "_answers", "_refusing", "_session", "_spawn")

    def __init__(self, session: Session, spawn: Spawn) -> None:
        self._session = session
        self._spawn = spawn
        self._answering = 0  # requests whose handler runs
        self._refusing = 0  # refusals being sent
        #: The requests being answered, by id: the server may cancel one.
        self._answers: dict[RequestId, asyncio.Task[None]] = {}

    def take(self, request: JsonRpcRequest) -> None:
        bound = self._session.max_server_requests
        if self._answering < bound:
            self._answering += 1
            self._answers[request.id] = self._spawn(self._answer(request))
        elif self._refusing < bound:
            self._refusing += 1
            self._spawn(self._refuse(request))
        else:
            logger.warning(
                "dropped server request %s: %d answers and %d refusals under way",
                request.method,
                self._answering,
                self._refusing,
            )

    def cancel(self, request_id: Any) -> None:
        """The server cancelled its request: its handler is cancelled, and no answer goes
        back (the spec's cancellation)."""
        if type(request_id) in (str, int):  # anything else names no request
            task = self._answers.get(request_id)
            if task is not None:
                task.cancel()

    async def _answer(self, request: JsonRpcRequest) -> None:
        try:
            await self._reply(request, await self._result_of(request))
        finally:
            self._answering -= 1
            if self._answers.get(request.id) is asyncio.current_task():
                del self._answers[request.id]

    async def _refuse(self, request: JsonRpcRequest) -> None:
        bound = self._session.max_server_requests
        busy = InternalError(f"Client busy: {bound} server requests already being answered")
        try:
            await self._reply(request, error_response(request.id, busy))
        finally:
            self._refusing -= 1

    async def _result_of(self, request: JsonRpcRequest) -> dict[str, Any]:
        """The response to one server request: its handler's result, or the error."""
        on_request = self._session.on_request
        try:
            if request.method == "ping":
                result: dict[str, Any] = {}
            elif on_request is None:
                raise MethodNotFoundError(f"Method not found: {request.method}")
            else:
                result = await on_request(request.method, request.params or {})
            return result_response(request.id, result)
        except ProtocolError as exc:
            return error_response(request.id, exc)
        except Exception as exc:
            logger.exception("handler for server request %s failed", request.method)
            return error_response(request.id, ProtocolError(str(exc)))

    async def _reply(self, request: JsonRpcRequest, reply: dict[str, Any]) -> None:
        try:
            await self._session.send(reply)
        except TransportError:
            logger.debug("could not answer server request %s", request.method, exc_info=True)


class NotificationCallbacks:
    """Runs notifications' callbacks for one session, each in a task of its own, at most
    ``session.max_notification_callbacks`` at once; past it a notification is dropped, with
    one warning per flood and its count once a callback ends."""

    __slots__ = ("_dropped", "_running", "_session", "_spawn")

    def __init__(self, session: Session, spawn: Spawn) -> None:
        self._session = session
        self._spawn = spawn
        self._running = 0
        self._dropped = 0  # since the callbacks were full

    def run(self, method: str, callback: Callable[..., Any], *args: Any) -> None:
        if self._running >= self._session.max_notification_callbacks:
            self._dropped += 1
            if self._dropped == 1:
                logger.warning(
                    "dropping server notifications (%s first): %d callbacks still running",
                    method,
                    self._running,
                )
            return
        self._running += 1
        self._spawn(self._call(callback, args))

    async def _call(self, callback: Callable[..., Any], args: tuple[Any, ...]) -> None:
        try:
            await call_back(callback, *args)
        finally:
            self._running -= 1
            if self._dropped:
                logger.warning("dropped %d server notifications", self._dropped)
                self._dropped = 0


__all__ = [
    "DEFAULT_MAX_NOTIFICATION_CALLBACKS",
    "DEFAULT_MAX_SERVER_REQUESTS",
    "NotificationCallbacks",
    "ServerRequests",
]

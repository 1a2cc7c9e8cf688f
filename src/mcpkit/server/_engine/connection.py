"""Drives one message-stream connection (stdio, in-memory, WebSocket, legacy SSE): frames
in, dispatch, frames out. Requests run concurrently, each in its own task, so a slow tool
never blocks a ping or the cancellation that targets it. The connection is opened and
closed in the engine through ``lifecycle``, as a Streamable HTTP session is."""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from msgspec.structs import replace

from mcpkit._exceptions import InvalidRequestError, MessageTooLargeError, ProtocolError
from mcpkit.protocol._jsonrpc import (
    DEFAULT_MAX_MESSAGE_BYTES,
    DEFAULT_MAX_MESSAGE_DEPTH,
    JsonRpcErrorResponse,
    JsonRpcNotification,
    JsonRpcRequest,
    JsonRpcResponse,
    decode_message,
    encode_message,
    error_response,
)
from mcpkit.protocol._versions import allows_batches
from mcpkit.server._engine.binding import CURRENT_BINDING, TransportBinding
from mcpkit.server._engine.engine import engine_of
from mcpkit.server._engine.lifecycle import close_connection, open_connection
from mcpkit.server._engine.session import McpSession
from mcpkit.server._engine.shutdown import ABORT_SETTLE, shutting_down_error
from mcpkit.server._engine.unexpected import internal_error

if TYPE_CHECKING:
    from mcpkit.auth._types import AuthInfo
    from mcpkit.protocol._stream import MessageStream
    from mcpkit.server._engine.engine import McpEngine, ServesAnEngine

logger = logging.getLogger("mcpkit.server")

#: Python 3.12+: a task that starts running at once, in its own task, and is scheduled only
#: if it waits (most requests never do: no trip through the event loop's queue each).
#: Earlier Pythons create an ordinary task.
_eager_task: Callable[[asyncio.AbstractEventLoop, Any], asyncio.Task[Any]] | None = getattr(
    asyncio, "eager_task_factory", None
)

WriteFrame = Callable[[bytes], Awaitable[None]]


class ServerConnection:
    """One client's connection to an engine (or the app holding it) over a frame-oriented
    transport; ``auth``: the identity the transport verified for it (None without bearer
    auth)."""

    def __init__(
        self,
        app: McpEngine | ServesAnEngine,
        write: WriteFrame,
        *,
        headers: Mapping[str, str] | None = None,
        execution_context: Any = None,
        max_message_bytes: int | None = DEFAULT_MAX_MESSAGE_BYTES,
        require_initialized: bool = False,
        max_message_depth: int | None = DEFAULT_MAX_MESSAGE_DEPTH,
        auth: AuthInfo | None = None,
        http_scope: dict[str, Any] | None = None,
    ) -> None:
        self.engine = engine = engine_of(app)
        self._write = write
        self.max_message_bytes = max_message_bytes
        self.max_message_depth = max_message_depth
        self.require_initialized = require_initialized
        self.session = McpSession(self.send)
        self._tasks: set[asyncio.Task[None]] = set()
        self.closed = False
        self.key = open_connection(engine, self.session, self.send, self)
        self.binding = TransportBinding(
            session=self.session,
            send=self.send,
            headers=headers,
            execution_context=execution_context,
            connection_key=self.key,
            auth=auth,
            http_scope=http_scope,
        )

    async def send(self, message: dict[str, Any]) -> None:
        """Write one message to the client."""
        await self._write(encode_message(message))

    def feed(
        self,
        frame: bytes | str,
        auth: AuthInfo | None = None,
        http_scope: dict[str, Any] | None = None,
    ) -> None:
        """Handle one inbound frame without waiting; bad input is answered, never raised.

        Requests and notifications run as tasks in arrival order; responses to our own
        requests resolve at once. ``auth``: the identity this frame came with, when it has
        one of its own (a legacy SSE POST), else the connection's; ``http_scope``: the HTTP
        request it came in, when it has one of its own (that POST), else the connection's.
        """
        binding = self.binding
        if auth is not None and auth is not self.session.seen_auth:  # a legacy SSE POST's
            self.engine.identities.seen(self.session, auth)
        if (auth is not None and auth is not binding.auth) or http_scope is not None:
            binding = replace(
                binding, auth=auth or binding.auth, http_scope=http_scope or binding.http_scope
            )
        try:
            decoded = decode_message(
                frame, max_bytes=self.max_message_bytes, max_depth=self.max_message_depth
            )
        except ProtocolError as exc:
            self._spawn(self._reply_error(getattr(exc, "request_id", None), exc))
            return
        except Exception as exc:  # a codec bug: answered, never raised into the transport
            self._spawn(self._reply_error(None, self._unexpected(exc, "decoding a message")))
            return
        try:
            if isinstance(decoded, list):
                self._spawn(self._receive_batch(decoded, binding))
            else:
                self._route(decoded, binding)
        except Exception as exc:  # the transport's read loop must survive it
            error = self._unexpected(exc, "routing a message")
            if isinstance(decoded, JsonRpcRequest):
                self._spawn(self._reply_error(decoded.id, error))

    def _unexpected(self, exc: Exception, what: str) -> ProtocolError:
        return internal_error(exc, what, expose=self.engine.dispatcher.expose_internal_errors)

    def feed_oversized(self) -> None:
        """Answer a frame the transport dropped for its size."""
        limit = self.max_message_bytes
        exc = MessageTooLargeError(f"Message exceeds the limit of {limit} bytes")
        self._spawn(self._reply_error(None, exc))

    async def receive(self, frame: bytes | str) -> None:
        """``feed`` for transports that read in a loop."""
        self.feed(frame)

    async def _reply_error(self, request_id: Any, exc: ProtocolError) -> None:
        try:
            await self.send(error_response(request_id, exc))
        except Exception:
            logger.debug("could not send error reply", exc_info=True)

    def _spawn(self, coro: Any) -> None:
        loop = asyncio.get_running_loop()
        task = loop.create_task(coro) if _eager_task is None else _eager_task(loop, coro)
        if not task.done():  # an eager task may have run to its end already
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    def _route(self, message: Any, binding: TransportBinding) -> None:
        if isinstance(message, JsonRpcRequest):
            if (
                self.require_initialized
                and not self.session.initialized
                and message.method not in ("initialize", "ping")
            ):
                error = InvalidRequestError("Send notifications/initialized before requests")
                self._spawn(self._reply_error(message.id, error))
            else:
                self._spawn(self._serve(message, binding))
        elif isinstance(message, JsonRpcNotification):
            if message.method == "notifications/initialized":
                # At once, not in the task: a request right behind it must see it.
                self.session.initialized = True
            self._spawn(self.engine.dispatcher.notify(message, binding))
        elif isinstance(message, (JsonRpcResponse, JsonRpcErrorResponse)):
            if not self.session.resolve(message):
                logger.debug("response %r matches no pending request", message.id)

    async def _serve(self, request: JsonRpcRequest, binding: TransportBinding) -> None:
        CURRENT_BINDING.set(binding)
        try:  # _dispatch(), inline: every request
            response = await self.engine.dispatcher.dispatch(request, binding)
        except Exception as exc:  # outside any handler: answered all the same
            error = self._unexpected(exc, f"request {request.method}")
            response = error_response(request.id, error)
        if response is not None and not self.closed:
            try:
                await self.send(response)
            except Exception:
                logger.debug("could not send response to %r", request.id, exc_info=True)

    async def _dispatch(
        self, request: JsonRpcRequest, binding: TransportBinding
    ) -> dict[str, Any] | None:
        try:
            return await self.engine.dispatcher.dispatch(request, binding)
        except Exception as exc:  # outside any handler: answered all the same
            return error_response(request.id, self._unexpected(exc, f"request {request.method}"))

    async def _receive_batch(self, items: list[Any], binding: TransportBinding) -> None:
        if not allows_batches(self.session.protocol_version):
            await self._reply_error(
                None,
                InvalidRequestError("JSON-RPC batches are not supported in this protocol version"),
            )
            return
        CURRENT_BINDING.set(binding)
        replies: list[Any] = []
        calls = []
        for item in items:
            if isinstance(item, ProtocolError):
                replies.append(error_response(getattr(item, "request_id", None), item))
            elif isinstance(item, JsonRpcRequest):
                calls.append(asyncio.ensure_future(self._dispatch(item, binding)))
            else:
                self._route(item, binding)
        replies.extend(r for r in await asyncio.gather(*calls) if r is not None)
        if replies:
            await self._write(encode_message(replies))

    async def drain(self, timeout: float, hurry: asyncio.Event | None = None) -> None:
        """Give requests still running up to ``timeout`` seconds to finish and answer (less
        if ``hurry`` is set meanwhile: a second signal)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        hurried = None if hurry is None else asyncio.ensure_future(hurry.wait())
        try:
            while self._tasks and (hurried is None or not hurried.done()):
                remaining = deadline - loop.time()
                if remaining <= 0:
                    break
                waiting: set[asyncio.Future[Any]] = set(self._tasks)
                if hurried is not None:
                    waiting.add(hurried)
                # Until one ends: a request still running may have started another.
                await asyncio.wait(
                    waiting,
                    timeout=None if math.isinf(remaining) else remaining,
                    return_when=asyncio.FIRST_COMPLETED,
                )
        finally:
            if hurried is not None:
                hurried.cancel()

    async def abort(self, settle: float = ABORT_SETTLE) -> None:
        """Cancel the requests still running, each answered -32000 "Server shutting down"
        (not left unanswered), and give those answers up to ``settle`` seconds to go out."""
        self.engine.dispatcher.abort(shutting_down_error(), self.key)
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=settle)

    async def close(self) -> None:
        """Cancel what still runs and forget the connection everywhere."""
        if self.closed:
            return
        self.closed = True
        # Before the await below: a close that is itself cancelled there still forgets us.
        close_connection(self.engine, self.key)
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
            self.engine.session_state.forget(self.key)  # what they kept while being cancelled
        self.session.close()  # from now on a call's state is its own (ctx.set_state)


async def serve_stream(
    app: McpEngine | ServesAnEngine,
    stream: MessageStream,
    *,
    max_message_bytes: int | None = DEFAULT_MAX_MESSAGE_BYTES,
    require_initialized: bool = False,
    headers: Mapping[str, str] | None = None,
    max_message_depth: int | None = DEFAULT_MAX_MESSAGE_DEPTH,
    auth: AuthInfo | None = None,
) -> None:
    """Serve one connection until its stream ends; ``auth``: the identity its calls run as
    (a stream whose peer was verified some other way, or a test's)."""
    connection = ServerConnection(
        app,
        stream.send,
        max_message_bytes=max_message_bytes,
        max_message_depth=max_message_depth,
        require_initialized=require_initialized,
        headers=headers,
        auth=auth,
    )
    try:
        while True:
            try:
                frame = await stream.receive()
            except MessageTooLargeError:
                connection.feed_oversized()
                continue
            if frame is None:
                break
            connection.feed(frame)
    finally:
        await connection.close()

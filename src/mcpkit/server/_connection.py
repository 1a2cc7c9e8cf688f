"""Drives one message-stream connection (stdio, in-memory, WebSocket): frames in, dispatch,
frames out. Requests run concurrently, each in its own task, so a slow tool never blocks a
ping or the cancellation that targets it."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from mcpkit._exceptions import InvalidRequestError, MessageTooLargeError, ProtocolError
from mcpkit.protocol._jsonrpc import (
    DEFAULT_MAX_MESSAGE_BYTES,
    JsonRpcErrorResponse,
    JsonRpcNotification,
    JsonRpcRequest,
    JsonRpcResponse,
    decode_message,
    encode_message,
    error_response,
)
from mcpkit.protocol._versions import allows_batches
from mcpkit.server._binding import CURRENT_BINDING, TransportBinding
from mcpkit.server._session import McpSession

if TYPE_CHECKING:
    from mcpkit.server._app import McpServerApp
    from mcpkit.transports._base import MessageStream

logger = logging.getLogger("mcpkit.server")

WriteFrame = Callable[[bytes], Awaitable[None]]


class ServerConnection:
    """One client's connection to an app over a frame-oriented transport."""

    def __init__(
        self,
        app: McpServerApp,
        write: WriteFrame,
        *,
        headers: Mapping[str, str] | None = None,
        execution_context: Any = None,
        max_message_bytes: int | None = DEFAULT_MAX_MESSAGE_BYTES,
        require_initialized: bool = False,
    ) -> None:
        self.app = app
        self._write = write
        self.max_message_bytes = max_message_bytes
        self.require_initialized = require_initialized
        self.session = McpSession(self.send)
        self.key = app.connections.register(self.send, self.session.key)
        self.binding = TransportBinding(
            session=self.session,
            send=self.send,
            headers=headers,
            execution_context=execution_context,
            connection_key=self.key,
        )
        self._tasks: set[asyncio.Task[None]] = set()
        self.closed = False

    async def send(self, message: dict[str, Any]) -> None:
        """Write one message to the client."""
        await self._write(encode_message(message))

    def feed(self, frame: bytes | str) -> None:
        """Handle one inbound frame without waiting; bad input is answered, never raised.

        Requests and notifications run as tasks in arrival order; responses to our own
        requests resolve at once.
        """
        try:
            decoded = decode_message(frame, max_bytes=self.max_message_bytes)
        except ProtocolError as exc:
            self._spawn(self._reply_error(getattr(exc, "request_id", None), exc))
            return
        if isinstance(decoded, list):
            self._spawn(self._receive_batch(decoded))
        else:
            self._route(decoded)

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
        task = asyncio.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _route(self, message: Any) -> None:
        if isinstance(message, JsonRpcRequest):
            if (
                self.require_initialized
                and not self.session.initialized
                and message.method not in ("initialize", "ping")
            ):
                error = InvalidRequestError("Send notifications/initialized before requests")
                self._spawn(self._reply_error(message.id, error))
            else:
                self._spawn(self._serve(message))
        elif isinstance(message, JsonRpcNotification):
            if message.method == "notifications/initialized":
                # At once, not in the task: a request right behind it must see it.
                self.session.initialized = True
            self._spawn(self.app.dispatcher.notify(message, self.binding))
        elif isinstance(message, (JsonRpcResponse, JsonRpcErrorResponse)):
            if not self.session.resolve(message):
                logger.debug("response %r matches no pending request", message.id)

    async def _serve(self, request: JsonRpcRequest) -> None:
        CURRENT_BINDING.set(self.binding)
        response = await self.app.dispatcher.dispatch(request, self.binding)
        if response is not None and not self.closed:
            try:
                await self.send(response)
            except Exception:
                logger.debug("could not send response to %r", request.id, exc_info=True)

    async def _receive_batch(self, items: list[Any]) -> None:
        if not allows_batches(self.session.protocol_version):
            await self._reply_error(
                None,
                InvalidRequestError("JSON-RPC batches are not supported in this protocol version"),
            )
            return
        CURRENT_BINDING.set(self.binding)
        replies: list[Any] = []
        calls = []
        for item in items:
            if isinstance(item, ProtocolError):
                replies.append(error_response(getattr(item, "request_id", None), item))
            elif isinstance(item, JsonRpcRequest):
                calls.append(
                    asyncio.ensure_future(self.app.dispatcher.dispatch(item, self.binding))
                )
            else:
                self._route(item)
        replies.extend(r for r in await asyncio.gather(*calls) if r is not None)
        if replies:
            await self._write(encode_message(replies))

    async def drain(self, timeout: float) -> None:
        """Give requests still running up to ``timeout`` seconds to finish and answer."""
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=timeout)

    async def close(self) -> None:
        """Cancel what still runs and forget the connection everywhere."""
        if self.closed:
            return
        self.closed = True
        self.app.dispatcher.cancel_connection(self.key)
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        self.session.close()
        self.app.connections.unregister(self.key)
        self.app.subscriptions.unsubscribe_all(self.session.key)


async def serve_stream(
    app: McpServerApp,
    stream: MessageStream,
    *,
    max_message_bytes: int | None = DEFAULT_MAX_MESSAGE_BYTES,
    require_initialized: bool = False,
    headers: Mapping[str, str] | None = None,
) -> None:
    """Serve one connection until its stream ends."""
    connection = ServerConnection(
        app,
        stream.send,
        max_message_bytes=max_message_bytes,
        require_initialized=require_initialized,
        headers=headers,
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

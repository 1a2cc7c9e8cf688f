"""Streamable HTTP sessions shared between instances (several processes behind a load
balancer, one Redis): what the handler does differently when any instance may serve any
request of a session.

- A session another instance created is adopted from its stored record (protocol version,
  client capabilities and info, log level, subscriptions); changes to that state are
  saved and published so the other replicas follow.
- Messages for the client are stored in the shared event store, which feeds them to the
  GET that holds the client's stream, on whichever instance (``StreamRelay``). A broadcast
  delivered by several replicas of one session is stored once (``DELIVERY_ID``).
- Server-to-client request ids carry the sending instance's id; the client's answer,
  posted anywhere, is routed back to it on the bus. So are cancellations.
- Catalog and resource changes fan out on the bus (``McpConnectionRegistry``,
  ``ResourceSubscriptionManager``), each instance delivering to its own connections.

Messages on the bus: channel ``session`` carries ``{"op", "session_id", ...}`` for every
instance (``ended``, ``updated``, ``listener``, ``cancel``, ``attached``); channel
``instance.{id}`` carries answers for one instance (``response``; the legacy SSE transport
adds its own ops there, see ``_legacy_sse.py``). What this module does
not own: the wire (``handler.py``), the record and its backends (``mcpkit.stores``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from mcpkit._codes import ErrorCode
from mcpkit._exceptions import ProtocolError, SessionLimitReached, StoreUnavailableError
from mcpkit.protocol._jsonrpc import (
    JsonRpcErrorResponse,
    JsonRpcNotification,
    JsonRpcRequest,
    JsonRpcResponse,
    decode_message,
    encode_json,
    error_response,
)
from mcpkit.protocol._versions import resumable_streams
from mcpkit.server._engine.lifecycle import open_connection
from mcpkit.stores._bus import InProcessMessageBus, new_instance_id
from mcpkit.stores._events import InMemoryEventStore, event_seq
from mcpkit.stores._sessions import SessionRecord
from mcpkit.transports.http._asgi import Receive, Send, send_json, send_response, start_sse
from mcpkit.transports.http._streamable.get import end_at_token_expiry
from mcpkit.transports.http._streamable.relay import StreamRelay
from mcpkit.transports.http._streamable.replies import fail, store_unavailable
from mcpkit.transports.http._streamable.streams import Replayer

if TYPE_CHECKING:
    from mcpkit.server._engine.binding import TransportBinding
    from mcpkit.transports.http._streamable.endpoint import StreamableEndpoint
    from mcpkit.transports.http._streamable.sessions import StreamableSession

logger = logging.getLogger("mcpkit.http")

SESSION_CHANNEL = "session"
#: Messages that may change what a session's record holds; after one, the record is saved
#: (and the other replicas told) if it did change. Other requests cost no store I/O.
STATEFUL_METHODS = frozenset(
    {
        "notifications/initialized",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
    }
)
_CANCEL_METHODS = frozenset({"notifications/cancelled", "$/cancelRequest"})


def instance_channel(instance_id: str) -> str:
    """The bus channel only the instance ``instance_id`` listens on."""
    return f"instance.{instance_id}"


class SessionCluster:
    """The shared-session side of one ``StreamableEndpoint``."""

    def __init__(self, handler: StreamableEndpoint) -> None:
        self.handler = handler
        self.engine = handler.engine
        self.options = handler.options
        self.sessions = handler.sessions
        self.event_store = handler.event_store
        self.bus = handler.options.message_bus
        self.instance_id = self.bus.instance_id if self.bus is not None else new_instance_id()
        self.started = self.bus is None
        self._starting: asyncio.Task[None] | None = None
        if self.sessions.shared:
            self.sessions.request_id_prefix = f"{self.instance_id}/"
            self.sessions.on_adopt(self._adopted)
            remote_bus = self.bus is not None and not isinstance(self.bus, InProcessMessageBus)
            if remote_bus and isinstance(self.event_store, InMemoryEventStore):
                logger.warning(
                    "sessions are shared but events are kept in memory: a client's stream only "
                    "gets what the instance holding it sends (use RedisEventStore)"
                )
        if self.bus is not None:
            self.engine.connections.set_bus(self.bus)
            self.engine.subscriptions.set_bus(self.bus)
            self.bus.subscribe(SESSION_CHANNEL, self._on_session_message)
            self.bus.subscribe(instance_channel(self.instance_id), self._on_instance_message)

    async def start(self) -> None:
        """Start the bus on the first request (the ASGI lifespan belongs to the app)."""
        if self._starting is None or (
            self._starting.done() and self._starting.exception() is not None
        ):
            self._starting = asyncio.get_running_loop().create_task(self.bus.start())
        await asyncio.shield(self._starting)
        self.started = True

    async def aclose(self) -> None:
        if self.bus is not None and self.started:
            await self.bus.aclose()

    async def publish(self, channel: str, message: dict[str, Any]) -> None:
        if self.bus is None:
            return
        try:
            await self.bus.publish(channel, message)
        except StoreUnavailableError as exc:
            logger.warning("could not tell the other instances (%s): %s", message.get("op"), exc)

    async def publish_ended(self, session_id: str) -> None:
        await self.publish(SESSION_CHANNEL, {"op": "ended", "session_id": session_id})

    # session state ------------------------------------------------------------------------

    def _subscriptions(self, session: StreamableSession) -> set[str]:
        return self.engine.subscriptions.subscriptions_of(session.mcp.key)

    def _adopted(self, session: StreamableSession, record: SessionRecord) -> None:
        """A session adopted from its record: reachable by broadcasts and its subscriptions."""
        open_connection(self.engine, session.mcp, session.standalone.write)
        self._sync_subscriptions(session, record.subscriptions)

    def _sync_subscriptions(self, session: StreamableSession, uris: list[str]) -> None:
        key, wanted = session.mcp.key, set(uris)
        subscriptions = self.engine.subscriptions
        held = subscriptions.subscriptions_of(key)
        for uri in held - wanted:
            subscriptions.unsubscribe(uri, key)
        for uri in wanted - held:
            subscriptions.subscribe(uri, key, session.mcp.send)  # type: ignore[arg-type]

    async def initialize(
        self,
        request: JsonRpcRequest,
        session: StreamableSession,
        binding: TransportBinding,
        send: Send,
        headers: list[tuple[bytes, bytes]],
    ) -> None:
        """``initialize`` on a new shared session: stored before it is answered, so the cap
        holds across instances and any instance can serve the next request."""
        response = await self.engine.dispatcher.dispatch(request, binding)
        if response is None:
            self.sessions.remove(session.session_id)
            await send_response(send, 202, b"", headers)
            return
        if "result" not in response or not session.mcp.initialize_seen:
            self.sessions.remove(session.session_id)
            await send_json(send, 200, response, headers)
            return
        try:
            await self.sessions.persist(session, self._subscriptions(session))
        except (SessionLimitReached, StoreUnavailableError) as exc:
            self.sessions.remove(session.session_id)
            if isinstance(exc, SessionLimitReached):
                error = ProtocolError(
                    "Too many sessions; try again later", code=ErrorCode.INTERNAL_ERROR
                )
                await send_json(send, 503, error_response(request.id, error), headers[:1])
            else:
                await store_unavailable(send, exc, request.id)
            return
        await send_json(send, 200, response, headers)

    async def save(self, session: StreamableSession) -> None:
        """After a request: store and publish the session's state if it changed."""
        if not self.sessions.shared:
            return
        before = session.saved
        try:
            record = await self.sessions.save_if_changed(session, self._subscriptions(session))
        except StoreUnavailableError as exc:
            logger.warning("could not save session %s: %s", session.session_id, exc)
            return
        # Replicas act on the log level and the subscriptions only (``initialized`` is kept
        # for the record): no message when nothing they use changed.
        if record is not None and (
            before is None or before[2:] != (record.log_level, frozenset(record.subscriptions))
        ):
            await self.publish(
                SESSION_CHANNEL,
                {"op": "updated", "session_id": session.session_id, "record": asdict(record)},
            )

    # routing ------------------------------------------------------------------------------

    async def route_response(
        self, session: StreamableSession | None, message: JsonRpcResponse | JsonRpcErrorResponse
    ) -> None:
        """The client answered a server-to-client request another instance sent: pass it on.
        Raises ``StoreUnavailableError`` when the bus is down or that instance does not
        listen (reconnecting, or gone): it waits for this answer, so the client hears it
        was not passed on (503) and may post it again."""
        request_id = message.id
        if session is None or not isinstance(request_id, str) or "/" not in request_id:
            logger.debug("response %r matches no pending request", request_id)
            return
        owner = request_id.split("/", 1)[0]
        if owner == self.instance_id or self.bus is None:
            return  # ours, and no longer waited for
        received = await self.bus.publish(
            instance_channel(owner),
            {"op": "response", "session_id": session.session_id, "message": message.to_dict()},
        )
        if received == 0:  # None: the bus cannot tell
            raise StoreUnavailableError(
                f"the answer reached no instance: {owner}, which waits for it, is not listening"
            )

    async def after_notification(
        self, session: StreamableSession, note: JsonRpcNotification
    ) -> None:
        """A cancellation for a request this instance is not running goes to the others."""
        if note.method not in _CANCEL_METHODS or self.bus is None:
            return
        params = note.params or {}
        request_id = params.get("requestId", params.get("id"))
        if not isinstance(request_id, (str, int)) or isinstance(request_id, bool):
            return
        if not self.engine.dispatcher.is_cancel_requested(session.mcp.key, request_id):
            await self.publish(
                SESSION_CHANNEL,
                {"op": "cancel", "session_id": session.session_id, "request_id": request_id},
            )

    async def _on_instance_message(self, message: dict[str, Any]) -> None:
        if message.get("op") != "response":
            return
        session = self.sessions.local(message.get("session_id", ""))
        if session is None:
            return
        decoded = decode_message(encode_json(message["message"]), max_bytes=None)
        if isinstance(decoded, (JsonRpcResponse, JsonRpcErrorResponse)):
            session.mcp.resolve(decoded)

    async def _on_session_message(self, message: dict[str, Any]) -> None:
        op = message.get("op")
        session_id = message.get("session_id", "")
        session = self.sessions.local(session_id)
        if session is None:
            return
        if op == "ended":
            self.sessions.remove(session_id, ended=False)
        elif op == "updated":
            record = SessionRecord.from_dict(message["record"])
            session.apply(record)
            self._sync_subscriptions(session, record.subscriptions)
        elif op == "listener":
            listener = session.listener
            if listener is not None and listener.token != message.get("token"):
                listener.close()  # the client's standalone stream moved to another instance
        elif op == "cancel":
            self.engine.dispatcher.cancel(session.mcp.key, message.get("request_id"))  # type: ignore[arg-type]
        elif op == "attached":
            stream = session.streams.get(message.get("stream_id", ""))
            if stream is not None:
                stream.remote_reader = True

    # GET ----------------------------------------------------------------------------------

    async def get(
        self,
        session: StreamableSession,
        send: Send,
        receive: Receive,
        version: str | None,
        last_event_id: str | None,
    ) -> None:
        """The standalone stream, or a resumed one, relayed from the shared event store:
        what any instance writes for the client reaches it through this GET."""
        handler = self.handler
        if last_event_id is None and session.listener is not None:
            await fail(
                send, 409, ErrorCode.INVALID_REQUEST, "A stream is already open for this session"
            )
            return
        relay = StreamRelay(
            send,
            session.session_id,
            self.event_store,
            self.options.retry_ms,
            max_queued=self.options.max_queued_messages,
            write_timeout=self.options.sse_write_timeout,
        )
        stop: Callable[[], Awaitable[None]] | None
        try:
            stop = await self.event_store.listen(session.session_id, relay.feed)
        except StoreUnavailableError as exc:
            await store_unavailable(send, exc)
            return
        session.add_relay(relay)
        try:
            await start_sse(send, handler.response_headers(session, version))
            local = await self._open(session, relay, version, last_event_id)
            if local is not None and stop is not None:  # the call runs here: serve it directly
                await stop()
                stop = None
                session.discard_relay(relay)
                await handler.listen.serve_stream(
                    local, session, send, receive, _replayer(send, relay.last_id or last_event_id)
                )
                return
            if not relay.answered:
                keep_alive = asyncio.ensure_future(
                    relay.keep_alive(self.options.sse_keep_alive_ms / 1000)
                )
                expiry = end_at_token_expiry(relay.close)
                try:
                    await relay.run(receive)
                finally:
                    keep_alive.cancel()
                    if expiry is not None:
                        expiry.cancel()
        except StoreUnavailableError as exc:
            logger.warning(
                "event store unavailable: ending the stream of session %s (%s)",
                session.session_id,
                exc,
            )
        finally:
            session.discard_relay(relay)
            if stop is not None:
                try:
                    await stop()
                except StoreUnavailableError:
                    pass
            await relay.end_response()

    async def _open(
        self,
        session: StreamableSession,
        relay: StreamRelay,
        version: str | None,
        last_event_id: str | None,
    ) -> Any:
        """Position the relay: a fresh standalone stream (primed), or after
        ``last_event_id`` (replayed). Returns the local stream to serve instead, when the
        resumed stream belongs to a call running on this instance."""
        session_id = session.session_id
        if last_event_id is None:
            await self._take_listener(session, relay)
            if resumable_streams(session.protocol_version):
                event_id = await self.event_store.store_event(session_id, "_get", None)
                relay.prime_seq = event_seq(event_id) if event_id else 0
            return None
        relay.last_id, relay.last_seq = last_event_id, event_seq(last_event_id)
        found = await self.event_store.replay_events_after(
            session_id, last_event_id, relay.replayed
        )
        if found is None or found == "_get":
            relay.stream_id = "_get"
            await self._take_listener(session, relay)
            return None
        relay.stream_id = found
        local = session.streams.get(found)
        if local is not None:
            return local
        if not relay.answered:
            await self.publish(
                SESSION_CHANNEL, {"op": "attached", "session_id": session_id, "stream_id": found}
            )
        return None

    async def _take_listener(self, session: StreamableSession, relay: StreamRelay) -> None:
        """This GET now carries the standalone stream; any other (here or elsewhere) ends."""
        relay.stream_id = "_get"
        previous = session.listener
        if previous is not None and previous is not relay:
            previous.close()
        session.listener = relay
        await self.publish(
            SESSION_CHANNEL,
            {"op": "listener", "session_id": session.session_id, "token": relay.token},
        )


def _replayer(send: Send, last_id: str | None) -> Replayer:
    return Replayer(send, last_id or "")

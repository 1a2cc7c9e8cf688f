"""``McpClient.listen()``: a stream of the change notifications the client opted in to.

2026-07-28: one long-lived ``subscriptions/listen`` request; the server acknowledges it
(``notifications/subscriptions/acknowledged``), then tags every notification of the
subscription with its id (the request's JSON-RPC id) in ``_meta``, which is how they are
told apart on a shared channel (stdio). Over Streamable HTTP they arrive on the request's
own SSE response. Leaving the ``async with`` cancels the request (stdio: a
``notifications/cancelled``; HTTP: the stream is closed). A successful response ends the
subscription gracefully: iteration stops. A server that refuses the request (-32601 from
one without it: the era has nothing to fall back on) fails ``listen()`` at once; one that
never acknowledges it, after ``request_timeout``.

Handshake era: there is no ``subscriptions/listen`` (an mcpkit server answers -32601); the
same API is served by ``resources/subscribe`` (and ``resources/unsubscribe`` on the way
out) for the resource URIs, and by the list-changed notifications the server sends anyway.
A subscription the server refuses fails ``listen()``, the ones made before it undone.
"""

from __future__ import annotations

import asyncio
import logging
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mcpkit._exceptions import MCPError, RequestTimeoutError
from mcpkit.protocol._modern import SUBSCRIPTION_ID_KEY
from mcpkit.protocol._versions import Era

if TYPE_CHECKING:
    from mcpkit.client._modern_requests import RequestChannel

logger = logging.getLogger("mcpkit.client")

__all__ = ["ListenStream", "Listening", "NotificationListeners", "ServerNotification"]

#: Filter flag -> the notification it opts in to.
LIST_CHANGED_FLAGS = {
    "toolsListChanged": "notifications/tools/list_changed",
    "promptsListChanged": "notifications/prompts/list_changed",
    "resourcesListChanged": "notifications/resources/list_changed",
}
ACKNOWLEDGED = "notifications/subscriptions/acknowledged"
RESOURCE_UPDATED = "notifications/resources/updated"
#: Notifications one subscription buffers before the oldest are dropped (a reader that
#: stopped reading must not grow memory without bound).
DEFAULT_MAX_BUFFERED = 1024
#: ``listen()`` blocks one client may have open at once.
DEFAULT_MAX_LISTENERS = 256

_END = object()


@dataclass(frozen=True, slots=True)
class ServerNotification:
    """One notification from the server: its method and params."""

    method: str
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def uri(self) -> str | None:
        """The resource URI of a ``notifications/resources/updated``."""
        uri = self.params.get("uri")
        return uri if isinstance(uri, str) else None


def subscription_id_of(params: dict[str, Any]) -> Any:
    """The subscription a 2026-07-28 notification is tagged with (None: untagged)."""
    meta = params.get("_meta")
    return meta.get(SUBSCRIPTION_ID_KEY) if isinstance(meta, dict) else None


class NotificationListeners:
    """The open ``listen()`` streams of one client, and which of them a notification is for:
    the one its subscription id names (2026-07-28), else every handshake-era stream that
    wants it."""

    def __init__(self, *, max_listeners: int = DEFAULT_MAX_LISTENERS) -> None:
        self.max_listeners = max_listeners
        self._tagged: dict[Any, ListenStream] = {}
        self._untagged: set[ListenStream] = set()

    def __len__(self) -> int:
        return len(self._tagged) + len(self._untagged)

    def add(self, stream: ListenStream, subscription_id: Any = None) -> None:
        """Route to ``stream`` what is tagged ``subscription_id`` (None: what it ``wants``)."""
        if len(self) >= self.max_listeners:
            raise MCPError(f"too many listen() blocks open at once (max {self.max_listeners})")
        if subscription_id is None:
            self._untagged.add(stream)
        else:
            self._tagged[subscription_id] = stream

    def remove(self, stream: ListenStream, subscription_id: Any = None) -> None:
        """Stop routing to ``stream``."""
        if subscription_id is None:
            self._untagged.discard(stream)
        elif self._tagged.get(subscription_id) is stream:
            del self._tagged[subscription_id]

    def route(self, method: str, params: dict[str, Any]) -> None:
        """Hand a notification to the streams it is for (an acknowledgement settles one)."""
        stream = self._tagged.get(subscription_id_of(params)) if self._tagged else None
        if stream is not None:
            if method == ACKNOWLEDGED:
                stream._acknowledge(params.get("notifications"))
            else:
                stream._push(ServerNotification(method, params))
            return
        for listener in self._untagged:
            if listener.wants(method, params):
                listener._push(ServerNotification(method, params))


class ListenStream:
    """The notifications of one subscription: ``async for note in stream``.

    ``acknowledged`` is the filter the server agreed to honour (types it does not support
    are left out). Iteration ends when the server ends the subscription gracefully, and
    raises when the subscription failed (an error response, a dropped connection).
    """

    def __init__(
        self,
        channel: RequestChannel,
        listeners: NotificationListeners,
        notifications: dict[str, Any],
        *,
        max_buffered: int = DEFAULT_MAX_BUFFERED,
    ) -> None:
        self._channel = channel
        self._listeners = listeners
        #: The filter asked for (``toolsListChanged``, ..., ``resourceSubscriptions``).
        self.requested = notifications
        self.acknowledged: dict[str, Any] | None = None
        #: The subscription's id: the JSON-RPC id of its ``subscriptions/listen`` (modern).
        self.subscription_id: Any = None
        #: True once the server ended the subscription with a successful response.
        self.closed_gracefully = False
        self._queue: asyncio.Queue[Any] = asyncio.Queue()
        self._max_buffered = max_buffered
        self._ack: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._task: asyncio.Task[Any] | None = None
        self._error: BaseException | None = None
        self._ended = False
        self._subscribed_uris: list[str] = []

    # what the client routes here --------------------------------------------------------

    def wants(self, method: str, params: dict[str, Any]) -> bool:
        """Whether an untagged (handshake-era) notification belongs to this stream."""
        if method == RESOURCE_UPDATED:
            return params.get("uri") in self._subscribed_uris
        return any(
            self.requested.get(flag) is True and m == method
            for flag, m in LIST_CHANGED_FLAGS.items()
        )

    def _acknowledge(self, notifications: Any) -> None:
        self.acknowledged = notifications if isinstance(notifications, dict) else {}
        if not self._ack.done():
            self._ack.set_result(None)

    def _push(self, note: ServerNotification) -> None:
        if self._ended:
            return
        if self._queue.qsize() >= self._max_buffered:
            self._queue.get_nowait()
            logger.warning(
                "subscription %s: reader too slow, dropped the oldest notification",
                self.subscription_id,
            )
        self._queue.put_nowait(note)

    def _finish(self, error: BaseException | None = None, *, graceful: bool = False) -> None:
        if self._ended:
            return
        self._ended = True
        self._error = error
        self.closed_gracefully = graceful
        if not self._ack.done():
            self._ack.set_exception(
                error or MCPError("the subscription ended before it was acknowledged")
            )
            self._ack.exception()  # retrieved: no "never retrieved" warning when nobody waits
        self._queue.put_nowait(_END)

    # iteration --------------------------------------------------------------------------

    def __aiter__(self) -> ListenStream:
        return self

    async def __anext__(self) -> ServerNotification:
        item = await self._queue.get()
        if item is _END:
            self._queue.put_nowait(_END)  # later calls end too
            if self._error is not None:
                raise self._error
            raise StopAsyncIteration
        return item  # type: ignore[no-any-return]

    # lifecycle ---------------------------------------------------------------------------

    async def _open(self) -> None:
        channel = self._channel
        session = channel.session
        if channel.state.era is Era.MODERN:
            self.subscription_id = session.new_request_id()
            self._listeners.add(self, self.subscription_id)
            params = {
                "notifications": self.requested,
                "_meta": channel.meta_for(channel.state.protocol_version),
            }
            self._task = asyncio.ensure_future(
                session.request(
                    "subscriptions/listen",
                    params,
                    timeout=math.inf,
                    request_id=self.subscription_id,
                )
            )
            self._task.add_done_callback(self._request_done)
        else:
            try:
                await self._open_handshake_era()
            except BaseException:
                await self._close()  # unsubscribes the URIs it had subscribed
                raise
        timeout = session.request_timeout
        try:
            async with asyncio.timeout(timeout):
                await asyncio.shield(self._ack)
        except TimeoutError:
            await self._close()
            raise RequestTimeoutError(
                f"subscriptions/listen was not acknowledged within {timeout} s"
            ) from None
        except BaseException:
            await self._close()
            raise

    def _request_done(self, task: asyncio.Task[Any]) -> None:
        if task.cancelled():
            self._finish()
        elif task.exception() is not None:
            self._finish(task.exception())
        else:
            self._finish(graceful=True)

    async def _open_handshake_era(self) -> None:
        self._listeners.add(self)
        server_info = self._channel.state.server_info
        agreed: dict[str, Any] = {
            flag: True for flag in LIST_CHANGED_FLAGS if self.requested.get(flag) is True
        }
        uris = [u for u in self.requested.get("resourceSubscriptions") or [] if isinstance(u, str)]
        caps = server_info.capabilities if server_info is not None else None
        if uris and caps is not None and caps.resources is not None and caps.resources.subscribe:
            for uri in uris:
                await self._channel.session.request("resources/subscribe", {"uri": uri})
                self._subscribed_uris.append(uri)
            agreed["resourceSubscriptions"] = list(self._subscribed_uris)
        self._acknowledge(agreed)

    async def _close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._listeners.remove(self, self.subscription_id)
        else:
            self._listeners.remove(self)
            for uri in self._subscribed_uris:
                try:
                    await self._channel.session.request("resources/unsubscribe", {"uri": uri})
                except MCPError:
                    logger.debug("resources/unsubscribe %s failed", uri, exc_info=True)
        self._finish()


class Listening:
    """``async with client.listen(...) as stream``."""

    def __init__(
        self,
        channel: RequestChannel,
        listeners: NotificationListeners,
        notifications: dict[str, Any],
    ) -> None:
        self._channel = channel
        self._listeners = listeners
        self._notifications = notifications
        self._stream: ListenStream | None = None

    async def __aenter__(self) -> ListenStream:
        self._stream = ListenStream(self._channel, self._listeners, self._notifications)
        await self._stream._open()
        return self._stream

    async def __aexit__(self, *exc: object) -> None:
        if self._stream is not None:
            await self._stream._close()

"""``McpClient.listen()``: a stream of the change notifications the client opted in to.

2026-07-28: one long-lived ``subscriptions/listen`` request; the server acknowledges it
(``notifications/subscriptions/acknowledged``), then tags every notification of the
subscription with its id (the request's JSON-RPC id) in ``_meta``, which is how they are
told apart on a shared channel (stdio). Over Streamable HTTP they arrive on the request's
own SSE response. Leaving the ``async with`` cancels the request (stdio: a
``notifications/cancelled``; HTTP: the stream is closed). A successful response ends the
subscription gracefully: iteration stops.

Handshake era: there is no ``subscriptions/listen``; the same API is served by
``resources/subscribe`` (and ``resources/unsubscribe`` on the way out) for the resource
URIs, and by the list-changed notifications the server sends anyway.
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
    from mcpkit.client._client import McpClient

logger = logging.getLogger("mcpkit.client")

__all__ = ["ListenStream", "ServerNotification"]

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
    meta = params.get("_meta")
    return meta.get(SUBSCRIPTION_ID_KEY) if isinstance(meta, dict) else None


class ListenStream:
    """The notifications of one subscription: ``async for note in stream``.

    ``acknowledged`` is the filter the server agreed to honour (types it does not support
    are left out). Iteration ends when the server ends the subscription gracefully, and
    raises when the subscription failed (an error response, a dropped connection).
    """

    def __init__(
        self,
        client: McpClient,
        notifications: dict[str, Any],
        *,
        max_buffered: int = DEFAULT_MAX_BUFFERED,
    ) -> None:
        self._client = client
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
        client = self._client
        if client.era is Era.MODERN:
            session = client.session
            self.subscription_id = session.new_request_id()
            client._subscriptions[self.subscription_id] = self
            params = {
                "notifications": self.requested,
                "_meta": client._meta_for(client.protocol_version),
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
            await self._open_handshake_era()
        timeout = client.session.request_timeout
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
        client = self._client
        client._legacy_listeners.add(self)
        agreed: dict[str, Any] = {
            flag: True for flag in LIST_CHANGED_FLAGS if self.requested.get(flag) is True
        }
        uris = [u for u in self.requested.get("resourceSubscriptions") or [] if isinstance(u, str)]
        caps = client.server_info.capabilities if client.server_info is not None else None
        if uris and caps is not None and caps.resources is not None and caps.resources.subscribe:
            for uri in uris:
                await client.session.request("resources/subscribe", {"uri": uri})
                self._subscribed_uris.append(uri)
            agreed["resourceSubscriptions"] = list(self._subscribed_uris)
        self._acknowledge(agreed)

    async def _close(self) -> None:
        client = self._client
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            client._subscriptions.pop(self.subscription_id, None)
        else:
            client._legacy_listeners.discard(self)
            for uri in self._subscribed_uris:
                try:
                    await client.session.request("resources/unsubscribe", {"uri": uri})
                except MCPError:
                    logger.debug("resources/unsubscribe %s failed", uri, exc_info=True)
        self._finish()


class Listening:
    """``async with client.listen(...) as stream``."""

    def __init__(self, client: McpClient, notifications: dict[str, Any]) -> None:
        self._client = client
        self._notifications = notifications
        self._stream: ListenStream | None = None

    async def __aenter__(self) -> ListenStream:
        self._stream = ListenStream(self._client, self._notifications)
        await self._stream._open()
        return self._stream

    async def __aexit__(self, *exc: object) -> None:
        if self._stream is not None:
            await self._stream._close()

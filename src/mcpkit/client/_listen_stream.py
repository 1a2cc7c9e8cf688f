"""The GET "listen stream" of Streamable HTTP: the server's unsolicited messages.

Opened after ``notifications/initialized`` (or at once when resuming a known session) and
held open for the life of the transport, reconnecting with ``Last-Event-ID`` when it drops.
A server that offers none is not an error: the stream is given up silently.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from mcpkit._exceptions import ConnectionClosedError
from mcpkit.client._http_options import SSE, describe_status
from mcpkit.client._sse_streams import GetOutcome, ResumePoint, SseStreamReading

logger = logging.getLogger("mcpkit.client.http")

__all__ = ["LISTEN_READY_TIMEOUT", "ListenStreamHandling", "ListenStreamState"]

#: Seconds ``notifications/initialized`` waits for the listen stream's GET to be answered,
#: so the stream is there before the first request (and its messages are not missed).
LISTEN_READY_TIMEOUT = 2.0


class ListenStreamState:
    """Where the GET listen stream is (``StreamableHttpClientTransport.listen_state``)."""

    OFF = "off"  # not opened (disabled, or before initialization)
    CONNECTING = "connecting"
    OPEN = "open"
    RECONNECTING = "reconnecting"
    UNSUPPORTED = "unsupported"  # the server does not offer one: given up silently
    FAILED = "failed"  # reconnects exhausted
    CLOSED = "closed"


class ListenStreamHandling(SseStreamReading):
    """The listen stream of ``StreamableHttpClientTransport`` (a mixin: it reads through
    the transport's requester and ``_headers``, and stops when the transport ends)."""

    listen_state: str
    _listen_task: asyncio.Task[None] | None
    _listen_ready: asyncio.Event | None
    _closed: bool
    _fatal: ConnectionClosedError | None
    _headers: Callable[[], dict[str, str]]

    def _start_listening(self) -> None:
        if (
            self._listen_task is None
            and not self._closed
            and self._fatal is None
            and self.options.listen_stream_enabled
        ):
            self.listen_state = ListenStreamState.CONNECTING
            self._listen_ready = asyncio.Event()
            self._listen_task = asyncio.ensure_future(self._listen())
            self._listen_task.add_done_callback(self._listen_ended)

    def _listen_ended(self, _task: asyncio.Future[Any]) -> None:
        if self._listen_ready is not None:
            self._listen_ready.set()

    async def _wait_listen_ready(self) -> None:
        """Wait (bounded) until the listen stream's first GET has been answered."""
        if self._listen_ready is None:
            return
        try:
            async with asyncio.timeout(LISTEN_READY_TIMEOUT):
                await self._listen_ready.wait()
        except TimeoutError:
            logger.debug("%s: listen stream not answered yet; going on", self.options.display_name)

    def _listen_answered(self, is_event_stream: bool) -> None:
        if is_event_stream:
            self.listen_state = ListenStreamState.OPEN
        if self._listen_ready is not None:
            self._listen_ready.set()

    async def _listen(self) -> None:
        """Hold the GET stream open, reconnecting (with ``Last-Event-ID``) when it drops.

        4xx (404 and 405 included) and a 200 that is not an event stream mean the server
        offers no listen stream: given up silently. 408, 429, 5xx, other 2xx and network
        failures are retried with backoff, at most ``max_reconnect_attempts`` in a row.
        """
        name = self.options.display_name
        point = ResumePoint()
        while not self._closed:
            headers = self._headers()
            headers["Accept"] = SSE
            if point.last_event_id and not self.options.stateless:
                headers["Last-Event-ID"] = point.last_event_id
            async with self._open_sse_get(
                headers, point, None, label="listen stream", on_answer=self._listen_answered
            ) as attempt:
                if attempt.outcome is GetOutcome.TOO_LARGE:
                    logger.warning("%s: listen stream given up: %s", name, attempt.error)
                    self.listen_state = ListenStreamState.FAILED
                    return
                if attempt.outcome is GetOutcome.REFUSED:
                    assert attempt.response is not None
                    logger.debug(
                        "%s: no listen stream (%s)", name, describe_status(attempt.response)
                    )
                    self.listen_state = ListenStreamState.UNSUPPORTED
                    return
                if attempt.outcome is GetOutcome.READ:
                    self.listen_state = ListenStreamState.RECONNECTING
            if point.failures > self.options.max_reconnect_attempts:
                logger.warning(
                    "%s: listen stream given up after %d failed attempts", name, point.failures
                )
                self.listen_state = ListenStreamState.FAILED
                return
            self.listen_state = ListenStreamState.RECONNECTING
            await asyncio.sleep(point.next_delay())

"""Reading SSE streams into the Streamable HTTP transport, and reopening them with GET.

Two streams are reopened with ``GET`` + ``Last-Event-ID`` when they drop: a request's
response stream (until its response arrives, SEP-1699) and the listen stream (for as long
as the transport lives). Both wait the server's ``retry`` before reconnecting, back off
after failures, honour ``Retry-After`` and give up after ``max_reconnect_attempts``
failures in a row. ``ResumePoint`` keeps that count; ``_open_sse_get`` makes one attempt
and says how it went, leaving what to do about it to the caller.
"""

from __future__ import annotations

import enum
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import httpx

from mcpkit._exceptions import MessageTooLargeError, TransportError
from mcpkit.client._http_options import (
    SSE,
    HttpClientTransportOptions,
    HttpRequester,
    backoff_delay,
    content_type,
    retry_after,
)
from mcpkit.protocol._sse import SseDecoder

logger = logging.getLogger("mcpkit.client.http")

__all__ = [
    "AwaitedRequest",
    "GetAttempt",
    "GetOutcome",
    "ResumePoint",
    "SseStreamReading",
    "reconnect_delay",
]

#: Longest ``Retry-After`` honoured, in seconds.
MAX_RETRY_AFTER = 60.0


def reconnect_delay(failures: int, retry_ms: int | None, retry_after_s: float | None) -> float:
    """Seconds before reconnecting an SSE stream after ``failures`` consecutive failures.

    The server's ``retry`` is obeyed exactly for a reconnect after a stream that worked
    (SEP-1699: the client MUST wait that long); after failures the wait backs off, never
    below ``retry``. A ``Retry-After`` (408/429/5xx) sets the wait for the next attempt.
    """
    if retry_after_s is not None:
        return min(retry_after_s, MAX_RETRY_AFTER)
    if failures == 0:
        return retry_ms / 1000 if retry_ms is not None else backoff_delay(0)
    return max((retry_ms or 0) / 1000, backoff_delay(failures - 1))


def worth_retrying(status: int) -> bool:
    """A GET answer that may go better next time: 408, 429, 5xx, or a 2xx other than 200."""
    return status in (408, 429) or status >= 500 or 200 < status < 300


@dataclass(slots=True)
class ResumePoint:
    """Where a reconnecting SSE stream stands."""

    #: The id of the last event received: the next GET resumes after it.
    last_event_id: str | None = None
    #: The server's ``retry`` (milliseconds), once it sent one.
    retry_ms: int | None = None
    #: Failed attempts in a row.
    failures: int = 0
    #: A ``Retry-After`` for the next wait only.
    retry_after_s: float | None = None

    def next_delay(self) -> float:
        """Seconds to wait before the next attempt."""
        delay = reconnect_delay(self.failures, self.retry_ms, self.retry_after_s)
        self.retry_after_s = None
        return delay

    def stream_read(self, decoder: SseDecoder, events: int) -> None:
        """A stream was read until it ended; one that carried no event counts as a failure."""
        self.last_event_id = decoder.last_event_id or self.last_event_id
        if decoder.retry is not None:
            self.retry_ms = decoder.retry
        self.failures = 0 if events else self.failures + 1

    def attempt_failed(self, retry_after_s: float | None = None) -> None:
        self.failures += 1
        self.retry_after_s = retry_after_s


class GetOutcome(enum.Enum):
    """How one GET of an SSE stream went."""

    #: An event stream was read until it ended (or until its request was answered).
    READ = "read"
    #: Worth another try: no connection, or an answer that ``worth_retrying``.
    RETRY = "retry"
    #: An event past ``max_sse_event_bytes``: the stream cannot be trusted any more.
    TOO_LARGE = "too-large"
    #: Any other answer; the response is still open for the caller to read.
    REFUSED = "refused"


@dataclass(slots=True)
class GetAttempt:
    """One GET's outcome, with its response (open until the ``async with`` ends) and the
    oversized event's error, when there is one."""

    outcome: GetOutcome
    response: httpx.Response | None = None
    error: MessageTooLargeError | None = None


class AwaitedRequest(Protocol):
    """The request a response stream is read for (``Inflight``, in ``_response_streams``):
    its stream is read no further once it is answered."""

    @property
    def ids(self) -> tuple[Any, ...]:
        """The JSON-RPC ids of the request (several for a batch)."""
        ...

    @property
    def answered(self) -> bool:
        """Whether its response has been delivered."""
        ...


class SseStreamReading:
    """SSE reading of ``StreamableHttpClientTransport`` (a mixin: it delivers every
    ``message`` event through the transport's ``_deliver``)."""

    options: HttpClientTransportOptions
    endpoint: str

    if TYPE_CHECKING:  # the transport's property

        @property
        def requester(self) -> HttpRequester: ...

    _deliver: Callable[[bytes], Any]

    async def _pump(
        self, response: httpx.Response, decoder: SseDecoder, record: AwaitedRequest | None
    ) -> int:
        """Deliver an SSE stream's messages until it ends or ``record`` is answered.

        Returns the number of events dispatched (priming events included).
        """
        events = 0
        async for chunk in response.aiter_bytes():
            for event in decoder.feed(chunk):
                events += 1
                if event.data and event.event in (None, "message"):
                    await self._deliver(event.data.encode("utf-8"))
            if record is not None and record.ids and record.answered:
                break  # its stream has served its purpose
        return events

    @asynccontextmanager
    async def _open_sse_get(
        self,
        headers: dict[str, str],
        point: ResumePoint,
        record: AwaitedRequest | None,
        *,
        label: str,
        on_answer: Callable[[bool], None] | None = None,
    ) -> AsyncIterator[GetAttempt]:
        """GET an SSE stream once and read it, counting the attempt in ``point``.

        ``on_answer(is_event_stream)`` is told as soon as the server answered. The response
        is closed when the ``async with`` block ends.
        """
        name = self.options.display_name
        try:
            response = await self.requester.open("GET", self.endpoint, headers)
        except TransportError as exc:
            logger.debug("%s: %s failed to connect: %r", name, label, exc)
            point.attempt_failed()
            yield GetAttempt(GetOutcome.RETRY)
            return
        try:
            status = response.status_code
            is_event_stream = status == 200 and content_type(response) == SSE
            if on_answer is not None:
                on_answer(is_event_stream)
            if is_event_stream:
                decoder = SseDecoder(max_event_bytes=self.options.max_sse_event_bytes)
                events = 0
                try:
                    events = await self._pump(response, decoder, record)
                except httpx.HTTPError as exc:
                    logger.debug("%s: %s broke: %r", name, label, exc)
                except MessageTooLargeError as exc:
                    yield GetAttempt(GetOutcome.TOO_LARGE, response, exc)
                    return
                point.stream_read(decoder, events)
                yield GetAttempt(GetOutcome.READ, response)
            elif worth_retrying(status):
                point.attempt_failed(retry_after(response))
                yield GetAttempt(GetOutcome.RETRY, response)
            else:
                yield GetAttempt(GetOutcome.REFUSED, response)
        finally:
            await response.aclose()

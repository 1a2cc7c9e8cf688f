"""The answer to one request POSTed over Streamable HTTP, until its response is delivered.

A POST answers with JSON (one frame or a batch) or with an SSE stream whose ``message``
events are delivered as they arrive. A handshake-era stream that ends before the response
is resumed with ``GET`` + ``Last-Event-ID`` (SEP-1699); a 2026-07-28 one is not resumable.
Whatever goes wrong reaches the request as a JSON-RPC error response (``_fail``), so one
failed request never takes the transport down with it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
import msgspec

from mcpkit._codes import ErrorCode
from mcpkit._exceptions import ConnectionClosedError, MessageTooLargeError, TransportError
from mcpkit.client._http_options import (
    JSON,
    SESSION_HEADER,
    SSE,
    HttpStatusError,
    content_type,
    describe_status,
    error_body,
    read_body,
    status_error,
)
from mcpkit.client._modern_http import STREAM_BROKEN, StreamBrokenError
from mcpkit.client._sse_streams import GetOutcome, ResumePoint, SseStreamReading
from mcpkit.protocol._jsonrpc import encode_json
from mcpkit.protocol._sse import SseDecoder

logger = logging.getLogger("mcpkit.client.http")

__all__ = ["Inflight", "ResponseStreamHandling", "rpc_error_in"]


@dataclass(slots=True)
class Inflight:
    """A request whose response has not arrived yet."""

    answered: bool = False
    task: asyncio.Task[Any] | None = None
    ids: tuple[Any, ...] = field(default_factory=tuple)
    #: A 2026-07-28 request: its stream is not resumed, and cancelling it closes it.
    modern: bool = False


def rpc_error_in(body: bytes) -> dict[str, Any] | None:
    """The JSON-RPC ``error`` object an HTTP error body carries, if it is one."""
    try:
        value = msgspec.json.decode(body)
    except msgspec.DecodeError:
        return None
    if isinstance(value, dict) and isinstance(value.get("error"), dict):
        error: dict[str, Any] = value["error"]
        if isinstance(error.get("code"), int) and isinstance(error.get("message"), str):
            return error
    return None


def error_for(exc: BaseException) -> dict[str, Any]:
    """The JSON-RPC ``error`` a request gets for ``exc``: the server's own, when an HTTP
    error body carried one, else one made from the exception."""
    if isinstance(exc, HttpStatusError):
        error = rpc_error_in(exc.body)
        if error is not None:
            return {**error, "message": f"{error['message']} (HTTP {exc.status_code})"}
    code = getattr(exc, "code", None)
    made: dict[str, Any] = {
        "code": code if isinstance(code, int) else int(ErrorCode.INTERNAL_ERROR),
        "message": str(exc),
    }
    if isinstance(exc, HttpStatusError):
        made["data"] = {"httpStatus": exc.status_code}
    elif isinstance(exc, StreamBrokenError):
        made["data"] = {STREAM_BROKEN: True}
    return made


class ResponseStreamHandling(SseStreamReading):
    """Request answers of ``StreamableHttpClientTransport`` (a mixin: it POSTs with the
    transport's ``_open_post`` and keeps its records in ``_inflight``)."""

    _inflight: dict[Any, Inflight]
    _closed: bool
    _open_post: Callable[..., Awaitable[httpx.Response]]
    _headers: Callable[[], dict[str, str]]
    _forget: Callable[[tuple[Any, ...]], None]
    _session_expired: Callable[[httpx.Response, bytes], ConnectionClosedError]
    _renewable: Callable[[], bool]

    async def _request_flow(
        self, frame: bytes, record: Inflight, modern_headers: dict[str, str] | None = None
    ) -> None:
        try:
            try:
                response = await self._open_post(frame, modern_headers=modern_headers)
            except ConnectionClosedError:
                return  # the transport has ended; the engine hears it from receive()
            except TransportError as exc:
                await self._fail(record, exc)
                return
            await self._consume(response, record)
        finally:
            self._forget(record.ids)

    async def _consume(self, response: httpx.Response, record: Inflight) -> None:
        """Deliver what a POST answered with; resume its stream if it ends too early."""
        try:
            kind = content_type(response)
            if response.status_code == 202:
                if record.modern and not record.answered:
                    # 2026-07-28 has no other stream: waiting would only end in a timeout
                    await self._fail(
                        record,
                        TransportError(
                            f"the server answered {describe_status(response)} to a 2026-07-28 "
                            "request: no response can follow (this era has no other stream)"
                        ),
                    )
                return  # accepted: the answer comes on another stream
            if kind == SSE:
                await self._consume_stream(response, record)
            elif kind == JSON:
                await self._consume_json(response, record)
            elif not record.answered:
                await self._fail(
                    record,
                    TransportError(
                        f"unexpected response content type {kind!r} ({describe_status(response)})"
                    ),
                )
        finally:
            await response.aclose()
            self._forget(record.ids)

    async def _consume_stream(self, response: httpx.Response, record: Inflight) -> None:
        decoder = SseDecoder(max_event_bytes=self.options.max_sse_event_bytes)
        try:
            await self._pump(response, decoder, record)
        except MessageTooLargeError as exc:
            await self._fail(record, exc)
            return
        except httpx.HTTPError as exc:
            logger.debug("%s: POST stream broke: %r", self.options.display_name, exc)
        finally:
            await response.aclose()
        if not record.answered and record.modern:
            await self._fail(
                record,
                StreamBrokenError(
                    "the server ended the response stream before answering (2026-07-28 "
                    "streams are not resumable: the request must be sent again)"
                ),
            )
        elif not record.answered:
            await self._resume(record, decoder.last_event_id, decoder.retry)

    async def _consume_json(self, response: httpx.Response, record: Inflight) -> None:
        try:
            body = await read_body(response, self.options.max_response_bytes)
        except MessageTooLargeError as exc:
            await self._fail(record, exc)
            return
        except httpx.HTTPError as exc:
            await self._fail(record, TransportError(f"reading the response failed: {exc!r}"))
            return
        if body.strip():
            await self._deliver(body)
        if not record.answered:
            await self._fail(record, TransportError("the server's JSON answer held no response"))

    async def _resume(
        self, record: Inflight, last_event_id: str | None, retry_ms: int | None
    ) -> None:
        """Reconnect to an interrupted response stream until its response arrives (SEP-1699)."""
        if self.options.stateless or not last_event_id:
            await self._fail(
                record,
                TransportError(
                    "the server ended the response stream before answering, without an event id to resume from"
                ),
            )
            return
        point = ResumePoint(last_event_id=last_event_id, retry_ms=retry_ms)
        while not record.answered:
            await asyncio.sleep(point.next_delay())
            if record.answered:
                return
            headers = self._headers()
            headers["Accept"] = SSE
            headers["Last-Event-ID"] = point.last_event_id or last_event_id
            async with self._open_sse_get(
                headers, point, record, label="resumed stream"
            ) as attempt:
                if attempt.outcome is GetOutcome.TOO_LARGE:
                    assert attempt.error is not None
                    await self._fail(record, attempt.error)
                    return
                if attempt.outcome is GetOutcome.REFUSED:
                    assert attempt.response is not None
                    body = await error_body(attempt.response)
                    if attempt.response.status_code == 404 and SESSION_HEADER in headers:
                        if not self._renewable():
                            self._session_expired(attempt.response, body)
                            return
                        # The answer went with the old session; the next request starts a
                        # new one (sending this one again could run it twice).
                        await self._fail(
                            record,
                            TransportError(
                                "the server forgot the session before answering this request;"
                                " its answer is lost (later requests start a new session)"
                            ),
                        )
                    else:
                        await self._fail(
                            record, status_error("GET", self.endpoint, attempt.response, body)
                        )
                    return
            if point.failures > self.options.max_reconnect_attempts:
                await self._fail(
                    record,
                    TransportError(
                        f"could not resume the response stream after {point.failures} attempts"
                    ),
                )
                return

    async def _fail(self, record: Inflight, exc: BaseException) -> None:
        """Answer every unanswered request of ``record`` with a JSON-RPC error."""
        if record.answered or self._closed:
            return
        error = error_for(exc)
        for request_id in record.ids:
            if request_id in self._inflight:
                await self._deliver(
                    encode_json({"jsonrpc": "2.0", "id": request_id, "error": error})
                )
        record.answered = True

"""The legacy HTTP+SSE client transport (MCP 2024-11-05).

``GET`` the SSE URL; the server's first event, ``endpoint``, names (relatively or absolutely,
resolved against the stream's URL, same origin only) where to POST messages. Every frame is
then a POST to that endpoint, and every server message a ``message`` event on the GET
stream. The stream ending ends the transport; this transport has no resumption.
"""

from __future__ import annotations

import asyncio
import logging
from urllib.parse import urljoin

import httpx

from mcpkit._exceptions import ConnectionClosedError, MessageTooLargeError, TransportError
from mcpkit.client._http_options import (
    DEFAULT_HTTP_TIMEOUT,
    JSON,
    SSE,
    HttpClientTransportOptions,
    HttpRequester,
    content_type,
    error_body,
    new_http_client,
    same_origin,
    status_error,
)
from mcpkit.client._inbox import InboxTransport
from mcpkit.protocol._sse import SseDecoder

logger = logging.getLogger("mcpkit.client.http")

__all__ = ["LegacySseClientTransport"]


class LegacySseClientTransport(InboxTransport):
    """A ``MessageStream`` over the 2024-11-05 HTTP+SSE transport.

    ``start()`` opens the stream and waits (``request_timeout``) for the ``endpoint`` event.
    """

    #: This transport predates the 2026-07-28 era: clients speak the handshake era on it.
    modern_capable = False

    def __init__(
        self,
        options: HttpClientTransportOptions,
        *,
        http_client: httpx.AsyncClient | None = None,
    ) -> None:
        super().__init__(options.max_queued_frames)
        self.options = options
        self.sse_url = options.endpoint
        self._client = http_client
        self._owns_client = http_client is None
        self._requester: HttpRequester | None = None
        #: Where messages are POSTed (known once ``start()`` returns).
        self.message_url: str | None = None
        self._stream_url = options.endpoint
        self._endpoint: asyncio.Future[str] | None = None
        self._reader: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Open the GET event stream and wait for the ``endpoint`` event (the POST URL)."""
        if self._requester is not None:
            return
        if self.options.known_session_id and not self.options.stateless:
            raise TransportError(
                "known_session_id resumes a Streamable HTTP session; the legacy HTTP+SSE "
                "transport ties its session to its own GET stream and cannot resume one"
            )
        if self._client is None:
            self._client = new_http_client(self.options)
        self._requester = HttpRequester(self.options, self._client)
        response = await self._requester.open("GET", self.sse_url, {"Accept": SSE})
        if response.status_code != 200 or content_type(response) != SSE:
            try:
                body = await error_body(response)
            finally:
                await response.aclose()
            if response.status_code == 200:
                raise TransportError(
                    f"GET {self.sse_url} answered {content_type(response) or 'no content type'}, "
                    "not an event stream"
                )
            raise status_error("GET", self.sse_url, response, body)
        self._stream_url = str(response.url)
        self._endpoint = asyncio.get_running_loop().create_future()
        self._reader = asyncio.ensure_future(self._read(response))
        timeout = self.options.request_timeout or DEFAULT_HTTP_TIMEOUT
        try:
            async with asyncio.timeout(timeout):
                self.message_url = await asyncio.shield(self._endpoint)
        except TimeoutError:
            await self.aclose()
            raise TransportError(
                f"{self.sse_url} sent no endpoint event within {timeout} s"
            ) from None
        except BaseException:
            await self.aclose()
            raise

    def _set_endpoint(self, data: str) -> None:
        assert self._endpoint is not None
        if self._endpoint.done():
            logger.debug("%s: ignored a second endpoint event", self.options.display_name)
            return
        url = urljoin(self._stream_url, data.strip())
        if not same_origin(url, self._stream_url):
            self._endpoint.set_exception(
                TransportError(
                    f"the endpoint event names {url}, another origin than {self._stream_url}"
                )
            )
        else:
            self._endpoint.set_result(url)

    async def _read(self, response: httpx.Response) -> None:
        decoder = SseDecoder(max_event_bytes=self.options.max_sse_event_bytes)
        error: ConnectionClosedError | None = None
        try:
            async for chunk in response.aiter_bytes():
                for event in decoder.feed(chunk):
                    if event.event == "endpoint":
                        self._set_endpoint(event.data)
                    elif event.event in (None, "message") and event.data:
                        await self._inbox.put(event.data.encode("utf-8"))
            error = ConnectionClosedError(f"the server closed the SSE stream {self._stream_url}")
        except httpx.HTTPError as exc:
            error = ConnectionClosedError(f"the SSE stream {self._stream_url} failed: {exc!r}")
        except MessageTooLargeError as exc:
            error = ConnectionClosedError(
                f"the SSE stream {self._stream_url} is out of sync: {exc}"
            )
        finally:
            await response.aclose()
            if self._endpoint is not None and not self._endpoint.done():
                self._endpoint.set_exception(
                    error or ConnectionClosedError("the SSE stream ended before its endpoint event")
                )
            if not self._closed:
                self._fatal = error
                self._inbox.close(error)

    async def send(self, frame: bytes) -> None:
        """POST one frame to the message URL (answers come on the event stream)."""
        self._raise_if_ended()
        if self._closed or self._requester is None or self.message_url is None:
            raise ConnectionClosedError("the SSE transport is not connected")
        headers = {"Content-Type": JSON, "Accept": f"{JSON}, {SSE}"}
        response = await self._requester.open(
            "POST", self.message_url, headers, content=frame, streaming=False
        )
        try:
            if 200 <= response.status_code < 300:
                return
            body = await error_body(response)
        finally:
            await response.aclose()
        if response.status_code == 404:
            # The server has forgotten this connection's session.
            exc = ConnectionClosedError(
                f"the SSE session at {self.message_url} is gone (HTTP 404); connect again"
            )
            self._end(exc)
            raise exc
        raise status_error("POST", self.message_url, response, body)

    def _end(self, exc: ConnectionClosedError) -> None:
        if self._fatal is None:
            self._fatal = exc
            self._inbox.close(exc)
            if self._reader is not None and self._reader is not asyncio.current_task():
                self._reader.cancel()

    async def aclose(self) -> None:
        """Close the event stream and the HTTP client this transport made."""
        if not self._begin_close():
            return
        if self._reader is not None and not self._reader.done():
            self._reader.cancel()
            await asyncio.gather(self._reader, return_exceptions=True)
        if self._endpoint is not None and not self._endpoint.done():
            self._endpoint.cancel()
        if self._owns_client and self._client is not None:
            await self._client.aclose()
        self._inbox.close()

    def __repr__(self) -> str:
        return f"<LegacySseClientTransport {self.sse_url} -> {self.message_url}>"

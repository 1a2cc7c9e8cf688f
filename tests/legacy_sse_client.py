"""A raw legacy HTTP+SSE client for tests: one GET stream, POSTs to the endpoint it
announces; schema-checks what it reads."""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any, Self
from urllib.parse import parse_qs, urljoin, urlsplit

import httpx

from mcpkit.protocol import SseDecoder, SseEvent
from tests.wire import SchemaChecker, initialize_request


def init_message(version: str = "2024-11-05", request_id: int = 1) -> dict[str, Any]:
    return initialize_request(version, request_id, elicitation={})


class LegacyStream:
    """A raw legacy SSE client: one GET stream, POSTs to its endpoint; schema-checks what it reads."""

    def __init__(
        self,
        http: httpx.AsyncClient,
        url: str,
        *,
        version: str = "2024-11-05",
        wait: float = 5.0,
        stream_timeout: httpx.Timeout | None = None,
    ) -> None:
        self.http = http
        self.url = url
        self.version = version
        #: Seconds to wait for the next event.
        self.wait = wait
        self._stream_timeout = stream_timeout
        self.events: asyncio.Queue[SseEvent | None] = asyncio.Queue()
        self.raw = bytearray()
        self.checker = SchemaChecker(version)
        self.endpoint = ""
        self.session_id = ""
        self._stack = contextlib.AsyncExitStack()
        self._reader: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Self:
        options: dict[str, Any] = (
            {} if self._stream_timeout is None else {"timeout": self._stream_timeout}
        )
        self.response = await self._stack.enter_async_context(
            self.http.stream(
                "GET", f"{self.url}/sse", headers={"accept": "text/event-stream"}, **options
            )
        )
        assert self.response.status_code == 200, self.response.status_code
        assert self.response.headers["content-type"].startswith("text/event-stream")
        self._reader = asyncio.create_task(self._read())
        first = await self.next_event()
        assert first is not None and first.event == "endpoint"
        self.endpoint = first.data
        self.session_id = parse_qs(urlsplit(first.data).query)["session_id"][0]
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    async def close(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
            await asyncio.gather(self._reader, return_exceptions=True)
        await self._stack.aclose()

    async def _read(self) -> None:
        decoder = SseDecoder()
        try:
            async for chunk in self.response.aiter_bytes():
                self.raw.extend(chunk)
                for event in decoder.feed(chunk):
                    await self.events.put(event)
        except httpx.HTTPError:
            pass
        finally:
            await self.events.put(None)  # the stream ended

    async def next_event(self) -> SseEvent | None:
        async with asyncio.timeout(self.wait):
            return await self.events.get()

    async def next_message(self) -> dict[str, Any]:
        event = await self.next_event()
        assert event is not None, "stream ended"
        assert event.event == "message", event
        message = json.loads(event.data)
        self.checker.from_server(message)
        return message

    async def ended(self) -> bool:
        """Reads until the stream ends; True if it did within the bound."""
        with contextlib.suppress(TimeoutError):
            while (await self.next_event()) is not None:
                pass
            return True
        return False

    async def post(self, message: Any, **kwargs: Any) -> httpx.Response:
        if isinstance(message, dict):
            self.checker.outgoing_from_client(message)
            kwargs["json"] = message
        else:
            kwargs["content"] = message
            kwargs.setdefault("headers", {"content-type": "application/json"})
        return await self.http.post(urljoin(self.url, self.endpoint), **kwargs)

    async def initialize(self, version: str = "2024-11-05") -> dict[str, Any]:
        assert (await self.post(init_message(version))).status_code == 202
        reply = await self.next_message()
        assert (
            await self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        ).status_code == 202
        return reply

"""Reaching an ASGI app in-process: an httpx client over ``httpx.ASGITransport``, the app's
lifespan run from the MCP app's, and its OpenAPI document read without a server."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from typing import Any

import httpx

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
#: An ASGI 3 application.
AsgiApp = Callable[[Scope, Receive, Send], Awaitable[None]]

#: Seconds the ASGI app's lifespan start-up and shutdown may take each.
LIFESPAN_TIMEOUT = 30.0
#: Seconds fetching the OpenAPI document in-process may take.
FETCH_TIMEOUT = 30.0


class InProcessApp:
    """Wraps an ASGI app for ``httpx.ASGITransport``: each request's scope carries a copy
    of the state the app's lifespan set (what servers do for Starlette's ``request.state``)."""

    def __init__(self, app: AsgiApp) -> None:
        self.app = app
        #: The lifespan state (``scope["state"]`` of the lifespan), once it started.
        self.state: dict[str, Any] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") in ("http", "websocket") and self.state:
            scope = {**scope, "state": dict(self.state)}
        await self.app(scope, receive, send)

    def client(
        self, base_url: str, headers: httpx.Headers | dict[str, str] | None
    ) -> httpx.AsyncClient:
        """An httpx client whose requests this app serves, in-process."""
        return httpx.AsyncClient(
            transport=httpx.ASGITransport(app=self),
            base_url=base_url,
            headers=headers,
        )

    @contextlib.asynccontextmanager
    async def lifespan(self) -> AsyncIterator[None]:
        """Run the app's ASGI lifespan around the block: ``lifespan.startup`` before it,
        ``lifespan.shutdown`` after. An app that does not speak the lifespan protocol (it
        raises on the ``lifespan`` scope) runs without one; a failed start-up is a
        ``RuntimeError`` carrying the app's message."""
        inbox: asyncio.Queue[Message] = asyncio.Queue()
        outbox: asyncio.Queue[Message] = asyncio.Queue()
        state: dict[str, Any] = {}
        scope: Scope = {
            "type": "lifespan",
            "asgi": {"version": "3.0", "spec_version": "2.0"},
            "state": state,
        }

        async def run() -> None:
            await self.app(scope, inbox.get, outbox.put)

        task = asyncio.create_task(run())
        await inbox.put({"type": "lifespan.startup"})
        try:
            started = await _answer(task, outbox)
        except BaseException:
            task.cancel()
            raise
        if started is None:  # no lifespan support: nothing to shut down either
            yield
            return
        if started.get("type") == "lifespan.startup.failed":
            task.cancel()
            raise RuntimeError(f"the ASGI app failed to start: {started.get('message', '')}")
        self.state = state
        try:
            yield
        finally:
            self.state = {}
            await inbox.put({"type": "lifespan.shutdown"})
            try:
                await _answer(task, outbox)
            finally:
                if not task.done():
                    task.cancel()
                with contextlib.suppress(BaseException):
                    await task


async def _answer(task: asyncio.Task[None], outbox: asyncio.Queue[Message]) -> Message | None:
    """The app's next lifespan message; ``None`` when the app returned or raised first."""
    getter = asyncio.ensure_future(outbox.get())
    try:
        async with asyncio.timeout(LIFESPAN_TIMEOUT):
            await asyncio.wait({getter, task}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        if not getter.done():
            getter.cancel()
    if getter.done() and not getter.cancelled():
        return getter.result()
    if task.done() and not task.cancelled():
        task.exception()  # retrieved: an app without lifespan support raises here
    return None


def fetch_document(app: AsgiApp, base_url: str, path: str) -> Any:
    """GET ``path`` from ``app`` in-process and parse it as JSON; runs on a thread of its
    own with its own event loop, so it works whether or not the caller is inside one.
    ``httpx.HTTPStatusError`` for a status that is not 2xx."""
    outcome: dict[str, Any] = {}

    async def fetch() -> Any:
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url=base_url
        ) as client:
            response = await client.get(path)
            response.raise_for_status()
            return response.json()

    def work() -> None:
        try:
            outcome["value"] = asyncio.run(asyncio.wait_for(fetch(), FETCH_TIMEOUT))
        except BaseException as exc:
            outcome["error"] = exc

    thread = threading.Thread(target=work, name="mcpkit-openapi-fetch", daemon=True)
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]

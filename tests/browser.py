"""A real browser for the tests: headless Chromium (Debian's package; ``./dev test``
installs it), driven over the Chrome DevTools Protocol with ``websockets``. Each ``Browser``
is a fresh profile in a temporary folder (its own cookies), one page, and every wait is
bounded: what the page was showing is in the error when a wait runs out."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import re
import shutil
import tempfile
from collections.abc import AsyncIterator
from typing import Any

import pytest
import websockets

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)"
)

#: How long Chromium may take to start, and any one wait for a page.
START_TIMEOUT = 20.0
WAIT_TIMEOUT = 15.0


class BrowserError(AssertionError):
    """A page that did not show what was waited for, or a DevTools call that failed."""


class Browser:
    """One page of a headless Chromium. Use ``launch()``."""

    def __init__(self, ws: Any, session: str) -> None:
        self._ws = ws
        self._session = session
        self._ids = itertools.count(1)
        self._answers: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        async for raw in self._ws:
            message = json.loads(raw)
            future = self._answers.pop(message.get("id", -1), None)
            if future is not None and not future.done():
                future.set_result(message)
        for future in self._answers.values():
            future.set_exception(BrowserError("the browser closed its DevTools connection"))

    async def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """One DevTools command to the page; its result."""
        ident = next(self._ids)
        future = asyncio.get_running_loop().create_future()
        self._answers[ident] = future
        message = {"id": ident, "method": method, "params": params or {}}
        if self._session:
            message["sessionId"] = self._session
        await self._ws.send(json.dumps(message))
        async with asyncio.timeout(WAIT_TIMEOUT):
            answer = await future
        if "error" in answer:
            raise BrowserError(f"{method}: {answer['error']}")
        return dict(answer["result"])

    async def goto(self, url: str) -> None:
        answer = await self.send("Page.navigate", {"url": url})
        if answer.get("errorText"):
            raise BrowserError(f"navigating to {url}: {answer['errorText']}")

    async def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (JSON-like values)."""
        answer = await self.send(
            "Runtime.evaluate", {"expression": expression, "returnByValue": True}
        )
        if "exceptionDetails" in answer:
            raise BrowserError(f"{expression}: {answer['exceptionDetails']}")
        return answer["result"].get("value")

    async def state(self) -> dict[str, str]:
        """The page's URL, title and text."""
        try:
            return dict(
                await self.evaluate(
                    "({url: location.href, title: document.title,"
                    " text: document.body ? document.body.innerText : ''})"
                )
            )
        except BrowserError as exc:
            return {"url": "?", "title": "?", "text": str(exc)}

    async def wait_for(self, expression: str, what: str, timeout: float = WAIT_TIMEOUT) -> Any:
        """Polls ``expression`` until it is truthy (a page being left or loaded is waited
        out); its value. ``what``: what is waited for, for the error."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            with contextlib.suppress(BrowserError, TimeoutError):
                value = await self.evaluate(expression)
                if value:
                    return value
            if loop.time() > deadline:
                raise BrowserError(
                    f"waited {timeout:g} s for {what}; the page: {await self.state()}"
                )
            await asyncio.sleep(0.05)

    async def fill(self, fields: dict[str, str]) -> None:
        """Sets form fields by name."""
        for name, value in fields.items():
            found = await self.evaluate(
                f"(() => {{ const f = document.querySelector({json.dumps(f'[name={name!r}]')});"
                f" if (!f) return false; f.value = {json.dumps(value)}; return true; }})()"
            )
            if not found:
                raise BrowserError(f"no field {name!r}; the page: {await self.state()}")

    async def click(self, selector: str) -> None:
        """Clicks the element ``selector`` names once it is there (a form's button)."""
        await self.wait_for(f"!!document.querySelector({json.dumps(selector)})", selector)
        await self.evaluate(f"document.querySelector({json.dumps(selector)}).click()")

    async def close(self) -> None:
        await self._ws.close()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self._reader


async def _devtools_url(stderr: asyncio.StreamReader, seen: list[str]) -> str:
    while True:
        line = await stderr.readline()
        if not line:
            raise BrowserError("chromium exited before DevTools listened:\n" + "".join(seen[-20:]))
        text = line.decode(errors="replace")
        seen.append(text)
        found = re.search(r"DevTools listening on (ws://\S+)", text)
        if found:
            return found.group(1)


async def _drain(stderr: asyncio.StreamReader) -> None:
    while await stderr.readline():
        pass


@contextlib.asynccontextmanager
async def launch() -> AsyncIterator[Browser]:
    """A headless Chromium with a fresh profile, one blank page; killed on leaving. Hosts
    other than 127.0.0.1 do not resolve, so a page's outside resources (a web font) fail at
    once instead of waiting on the network."""
    assert CHROMIUM is not None
    profile = tempfile.mkdtemp(prefix="mcpkit-chromium-")
    process = await asyncio.create_subprocess_exec(
        CHROMIUM,
        "--headless=new",
        "--no-sandbox",  # the tests may run as root
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
        "--remote-debugging-port=0",
        f"--user-data-dir={profile}",
        "about:blank",
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    assert process.stderr is not None
    drain: asyncio.Task[None] | None = None
    browser: Browser | None = None
    try:
        seen: list[str] = []
        try:
            async with asyncio.timeout(START_TIMEOUT):
                url = await _devtools_url(process.stderr, seen)
        except TimeoutError:
            raise BrowserError(
                f"chromium did not start in {START_TIMEOUT:g} s:\n" + "".join(seen[-20:])
            ) from None
        drain = asyncio.create_task(_drain(process.stderr))
        ws = await websockets.connect(url, max_size=None, open_timeout=START_TIMEOUT)
        root = Browser(ws, "")
        target = await root.send("Target.createTarget", {"url": "about:blank"})
        attached = await root.send(
            "Target.attachToTarget", {"targetId": target["targetId"], "flatten": True}
        )
        root._session = attached["sessionId"]
        browser = root
        await browser.send("Page.enable")
        await browser.send("Runtime.enable")
        yield browser
    finally:
        if browser is not None:
            await browser.close()
        if process.returncode is None:
            process.kill()
        await process.wait()
        if drain is not None:
            await drain
        shutil.rmtree(profile, ignore_errors=True)

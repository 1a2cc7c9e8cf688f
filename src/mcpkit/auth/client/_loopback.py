"""Where a native client's login comes back to (RFC 8252 §7.3): a small HTTP server on
127.0.0.1 that takes the one request the authorization server's redirect brings, checks
its ``state``, answers a page saying the browser window may be closed, and stops.

Everything is bounded: a request's head (``MAX_REQUEST_BYTES``), the time a connection
gets to send it (``READ_TIMEOUT``), the connections open at once (``MAX_CONNECTIONS``), and
the wait for the login (the caller's timeout).
"""

from __future__ import annotations

import asyncio
import contextlib
import html
from collections.abc import Sequence
from urllib.parse import parse_qsl, urlsplit

from mcpkit.auth._types import OAuthError

#: The path of the redirect URI: ``http://127.0.0.1:PORT/callback``.
CALLBACK_PATH = "/callback"
#: Bytes a request's line and headers may take.
MAX_REQUEST_BYTES = 8 * 1024
#: Seconds a connection gets to send its request's head.
READ_TIMEOUT = 10.0
#: Connections served at once; more are closed unanswered.
MAX_CONNECTIONS = 8
_LOOPBACK_HOSTS = ("127.0.0.1", "localhost")


def loopback_ports(uris: Sequence[str]) -> list[int]:
    """The ports of the loopback ``http`` redirect URIs among ``uris`` (ours to reuse)."""
    ports = []
    for uri in uris:
        parts = urlsplit(uri)
        with contextlib.suppress(ValueError):
            if parts.scheme == "http" and parts.hostname in _LOOPBACK_HOSTS and parts.port:
                ports.append(parts.port)
    return ports


def _page(title: str, text: str) -> str:
    return (
        "<!doctype html><html><head><meta charset='utf-8'><title>mcpkit login</title></head>"
        f"<body style='font-family:sans-serif;margin:3em'><h1>{html.escape(title)}</h1>"
        f"<p>{html.escape(text)}</p></body></html>"
    )


class LoopbackReceiver:
    """The redirect URI of one login at a time: ``open`` listens and says the URI,
    ``expect`` names the request's ``state``, ``wait`` gives the redirect's query
    parameters, ``close`` stops listening (after the first callback it stops by itself)."""

    def __init__(self, *, host: str = "127.0.0.1", port: int = 0) -> None:
        self.host = host
        self.port = port
        self.redirect_uri: str | None = None
        self._server: asyncio.Server | None = None
        self._result: asyncio.Future[dict[str, str]] | None = None
        self._state: str | None = None
        self._writers: set[asyncio.StreamWriter] = set()

    async def open(self, registered: Sequence[str] = ()) -> str:
        """Listen, and return the redirect URI. The port is the one configured; with 0,
        that of a loopback URI in ``registered`` (a registration kept from an earlier
        login) while it is free, else one the system picks."""
        await self.close()
        candidates = [self.port] if self.port else [*loopback_ports(registered), 0]
        for port in candidates:
            try:
                self._server = await asyncio.start_server(
                    self._serve, self.host, port, limit=MAX_REQUEST_BYTES
                )
                break
            except OSError as exc:
                if port == candidates[-1]:
                    raise OAuthError(
                        f"cannot listen for the login on {self.host}:{port}: {exc.strerror or exc}"
                        + ("; choose another redirect port" if self.port else "")
                    ) from exc
        assert self._server is not None
        bound = self._server.sockets[0].getsockname()[1]
        self._result = asyncio.get_running_loop().create_future()
        self._state = None
        self.redirect_uri = f"http://{self.host}:{bound}{CALLBACK_PATH}"
        return self.redirect_uri

    def expect(self, state: str | None) -> None:
        """The ``state`` the callback must carry (that of the authorization request)."""
        self._state = state

    async def wait(self) -> dict[str, str]:
        """The query parameters of the callback, once it came. Raises ``OAuthError`` when
        its ``state`` was not the one expected. Bound it with the caller's timeout."""
        if self._result is None:
            raise RuntimeError("open() the receiver before waiting on it")
        return await asyncio.shield(self._result)

    async def close(self) -> None:
        """Stop listening (a callback not yet come will not be taken)."""
        server, self._server = self._server, None
        if server is not None:
            server.close()
            for writer in list(self._writers):  # idle connections (a browser's spares)
                writer.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(server.wait_closed(), READ_TIMEOUT)
        if self._result is not None and not self._result.done():
            self._result.cancel()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if len(self._writers) >= MAX_CONNECTIONS:
            writer.close()
            return
        self._writers.add(writer)
        try:
            status, title, text = await self._answer(reader)
            body = _page(title, text).encode("utf-8")
            writer.write(
                f"HTTP/1.1 {status}\r\ncontent-type: text/html; charset=utf-8\r\n"
                f"content-length: {len(body)}\r\ncache-control: no-store\r\n"
                "referrer-policy: no-referrer\r\nx-content-type-options: nosniff\r\n"
                "connection: close\r\n\r\n".encode("ascii")
                + body
            )
            async with asyncio.timeout(READ_TIMEOUT):
                await writer.drain()
        except (OSError, TimeoutError):
            pass
        finally:
            self._writers.discard(writer)
            writer.close()
            if self._result is not None and self._result.done() and self._server is not None:
                self._server.close()  # one callback: nothing more is taken

    async def _answer(self, reader: asyncio.StreamReader) -> tuple[str, str, str]:
        """(status line rest, title, text) for one request; a callback settles the wait."""
        try:
            async with asyncio.timeout(READ_TIMEOUT):
                head = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.LimitOverrunError, ValueError):
            return "431 Request Header Fields Too Large", "Request too large", ""
        except (asyncio.IncompleteReadError, TimeoutError):
            return "408 Request Timeout", "No request", ""
        parts = head.split(b"\r\n", 1)[0].decode("latin-1").split(" ")
        if len(parts) != 3 or not parts[2].startswith("HTTP/"):
            return "400 Bad Request", "Not an HTTP request", ""
        method, target, _ = parts
        path, _, query = target.partition("?")
        if path != CALLBACK_PATH:
            return "404 Not Found", "Not found", ""
        if method != "GET":
            return "405 Method Not Allowed", "Method not allowed", ""
        result = self._result
        if result is None or result.done():
            return "410 Gone", "This login is over", "Start it again from the program."
        params = dict(parse_qsl(query, keep_blank_values=True))
        if params.get("state") != self._state:
            result.set_exception(
                OAuthError(
                    "the login came back with another state than the one sent; refused "
                    "(a stale or forged redirect): log in again",
                    error="invalid_state",
                )
            )
            return "400 Bad Request", "Login refused", "This answer was not for this login."
        result.set_result(params)
        if params.get("error"):
            detail = params.get("error_description") or params["error"]
            return "200 OK", "Login failed", f"{detail}. You can close this window."
        return "200 OK", "Logged in", "You can close this window and go back to the program."


__all__ = ["CALLBACK_PATH", "LoopbackReceiver", "loopback_ports"]

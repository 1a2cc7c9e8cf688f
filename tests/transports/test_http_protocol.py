"""The header bounds ``uvicorn_http_protocol`` puts around uvicorn's own httptools protocol
change nothing else on the wire: the same test app served twice on 127.0.0.1, once by
uvicorn's protocol (``http="httptools"``) and once within the bounds, gets the same raw
requests, and the two answers are compared byte for byte (the ``date`` value aside), as are
what the app sees in its scope and ``receive``.
Each case also checks the answer itself, so two servers broken the same way fail too."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import re
import socket
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import pytest
import uvicorn

from mcpkit.transports.http import StreamableHttpServerOptions
from mcpkit.transports.http._server.protocol import uvicorn_http_protocol

# Each case checks the answer itself too, as the newest uvicorn gives it (older ones differ:
# HTTP/1.0 without "connection: close", say); the lowest-floor job leaves the module out.
pytestmark = pytest.mark.uvicorn_answers

# -- the app ---------------------------------------------------------------------------------

#: What the app saw, per server port: ``(path, what)`` pairs (``record``/``recorded``).
_RECORDS: dict[int, list[tuple[str, str]]] = {}
_RECORDS_LOCK = threading.Lock()
#: The app's own tasks still running (``/detached``).
_TASKS: set[asyncio.Future[None]] = set()


def record(scope: dict[str, Any], what: str) -> None:
    with _RECORDS_LOCK:
        _RECORDS.setdefault(scope["server"][1], []).append((scope["path"], what))


def recorded(port: int, path: str) -> list[str]:
    with _RECORDS_LOCK:
        return [what for seen, what in _RECORDS.get(port, []) if seen == path]


async def read_body(receive: Any) -> tuple[bytes, list[list[Any]]]:
    """The request body, and the messages it came in: ``[type, body length, more_body]``."""
    body = b""
    messages = []
    while True:
        message = await receive()
        messages.append([message["type"], len(message.get("body", b"")), message.get("more_body")])
        if message["type"] != "http.request":
            return body, messages
        body += message["body"]
        if not message["more_body"]:
            return body, messages


async def answer(send: Any, body: bytes, status: int = 200, **headers: str) -> None:
    """A whole response: content-type text/plain unless ``headers`` say (``_`` for ``-``)."""
    fields = {"content-type": "text/plain", "content-length": str(len(body))}
    fields.update((name.replace("_", "-"), value) for name, value in headers.items())
    encoded = [(name.encode(), value.encode()) for name, value in fields.items()]
    await send({"type": "http.response.start", "status": status, "headers": encoded})
    await send({"type": "http.response.body", "body": body})


def start(status: int = 200, headers: list[tuple[bytes, bytes]] | None = None) -> dict[str, Any]:
    return {"type": "http.response.start", "status": status, "headers": headers or []}


def body(data: bytes = b"", more: bool = False) -> dict[str, Any]:
    return {"type": "http.response.body", "body": data, "more_body": more}


def describe_scope(scope: dict[str, Any]) -> dict[str, Any]:
    client = scope["client"]
    return {
        "type": scope["type"],
        "method": scope.get("method"),
        "path": scope["path"],
        "raw_path": scope["raw_path"].decode("latin1"),
        "query_string": scope["query_string"].decode("latin1"),
        "http_version": scope["http_version"],
        "scheme": scope["scheme"],
        "client": client[0],
        # the socket's own port differs between the servers; a forwarded one does not
        "client_port": client[1] if client[0] != "127.0.0.1" else None,
        "headers": [
            [name.decode("latin1"), value.decode("latin1")] for name, value in scope["headers"]
        ],
        "root_path": scope["root_path"],
        "state": type(scope["state"]).__name__,
        "asgi": scope["asgi"],
    }


async def websocket_app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    assert (await receive())["type"] == "websocket.connect"
    await send({"type": "websocket.accept"})
    await send({"type": "websocket.send", "text": json.dumps(describe_scope(scope))})
    await send({"type": "websocket.close", "code": 1000})


async def app(scope: dict[str, Any], receive: Any, send: Any) -> Any:
    """One behaviour per path; every path not listed echoes."""
    if scope["type"] == "websocket":
        return await websocket_app(scope, receive, send)
    path = scope["path"].removeprefix(scope["root_path"])
    if path.startswith("/scope"):
        await read_body(receive)
        await answer(
            send, json.dumps(describe_scope(scope)).encode(), content_type="application/json"
        )
    elif path == "/messages":  # the body, and the receive() messages it came in
        data, messages = await read_body(receive)
        reply = {"body": data.decode("latin1"), "messages": messages}
        await answer(send, json.dumps(reply).encode())
    elif path == "/hash":
        data, _ = await read_body(receive)
        await answer(send, f"{len(data)} {hashlib.sha256(data).hexdigest()}".encode())
    elif path == "/stream":  # no content-length: chunked, one body message empty
        await send(start(200, [(b"content-type", b"text/plain")]))
        for piece in (b"one", b"", b"two", b"three"):
            await send(body(piece, more=True))
        await send(body())
    elif path == "/stream-last":  # the last piece in the last message
        await send(start(200))
        await send(body(b"first", more=True))
        await send(body(b"last"))
    elif path == "/head":  # GET and HEAD alike: content-length and a body
        await answer(send, b"hello")
    elif path == "/no-length":  # HEAD: neither content-length nor chunked
        await send(start(200))
        await send(body(b"data"))
    elif path == "/no-content":
        await send(start(204))
        await send(body())
    elif path == "/not-modified":
        await send(start(304, [(b"etag", b'"x"')]))
        await send(body())
    elif path == "/pieces":  # content-length, the body in several messages
        await send(start(200, [(b"content-length", b"10")]))
        for piece in (b"ab", b"", b"cdef"):
            await send(body(piece, more=True))
        await send(body(b"ghij"))
    elif path == "/close":  # the app asks for the connection to close
        await answer(send, b"bye", connection="close")
    elif path == "/boom-before":
        raise RuntimeError("boom before the response")
    elif path == "/boom-after":
        await send(start(200, [(b"content-length", b"10")]))
        await send(body(b"half", more=True))
        raise RuntimeError("boom after the response started")
    elif path == "/no-response":
        return None
    elif path == "/incomplete":
        await send(start(200, [(b"content-length", b"10")]))
        await send(body(b"half", more=True))
    elif path == "/started-only":
        await send(start(200))
    elif path == "/return-value":
        await answer(send, b"ok")
        return "not None"
    elif path == "/body-first":
        await send(body(b"no start"))
    elif path == "/after-complete":
        await answer(send, b"done")
        await send(body(b"more"))
    elif path == "/bad-header-name":
        await send(start(200, [(b"bad name", b"x"), (b"content-length", b"0")]))
        await send(body())
    elif path == "/bad-header-value":
        await send(start(200, [(b"x-bad", b"a\r\nb"), (b"content-length", b"0")]))
        await send(body())
    elif path == "/bad-status":
        await send(start(600))
        await send(body())
    elif path == "/short":
        await send(start(200, [(b"content-length", b"10")]))
        await send(body(b"abc"))
    elif path == "/long":
        await send(start(200, [(b"content-length", b"3")]))
        await send(body(b"abcdef"))
    elif path == "/both-framings":  # content-length, then transfer-encoding: chunked
        await send(start(200, [(b"content-length", b"3"), (b"transfer-encoding", b"chunked")]))
        await send(body(b"abc"))
    elif path == "/early":  # answered before its body is read
        await answer(send, b"early")
    elif path == "/poll-disconnect":  # receive() under a timeout, twice, while nothing comes
        await read_body(receive)
        outcomes = []
        for _ in range(2):
            try:
                outcomes.append((await asyncio.wait_for(receive(), 0.05))["type"])
            except BaseException as exc:  # what the app would see
                outcomes.append(type(exc).__name__)
        await answer(send, ",".join(outcomes).encode())
    elif path == "/delayed":  # answered 0.3 s after it came
        record(scope, "started")
        await asyncio.sleep(0.3)
        await answer(send, b"late")
    elif path == "/big":  # 4 MiB in 64 KiB messages: send() waits while the client reads not
        await send(start(200))
        for index in range(64):
            await send(body(bytes([65 + index % 26]) * 65536, more=True))
        await send(body())
    elif path == "/wait-disconnect":  # the body, then receive() again until the client leaves
        await read_body(receive)
        record(scope, "waiting")
        record(scope, (await receive())["type"])
    elif path == "/detached":  # a task of the app's calls receive() after the app returned
        await read_body(receive)
        await send(start(200, [(b"content-length", b"10")]))

        async def listen() -> None:
            try:
                record(scope, (await receive())["type"])
            except Exception as exc:  # what the app would see
                record(scope, f"{type(exc).__name__}: {exc}")

        task = asyncio.ensure_future(listen())
        _TASKS.add(task)
        task.add_done_callback(_TASKS.discard)
    elif path == "/slow-stream":  # a chunked answer, a tick every 0.125 s
        await read_body(receive)
        await send(start(200))
        for _ in range(int(scope["query_string"] or 8)):
            await send(body(b"tick", more=True))
            await asyncio.sleep(0.125)
        await send(body())
    else:
        data, _ = await read_body(receive)
        await answer(send, data, x_method=scope["method"])
    return None


# -- the servers -----------------------------------------------------------------------------


class Served:
    """A uvicorn server in a thread of its own (own event loop), on a free port."""

    def __init__(self, name: str, **config: Any) -> None:
        self.name = name
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        self.port: int = sock.getsockname()[1]
        with _RECORDS_LOCK:  # a port freed by an earlier server: not its records
            _RECORDS.pop(self.port, None)
        settings: dict[str, Any] = {
            "loop": "uvloop",
            "lifespan": "off",
            "log_level": "warning",
            "server_header": False,
            "timeout_graceful_shutdown": 2,
            **config,
        }
        self.server = uvicorn.Server(uvicorn.Config(app, **settings))
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [sock]}, daemon=True
        )
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            assert self.thread.is_alive() and time.monotonic() < deadline, f"{name} did not start"
            time.sleep(0.01)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)
        assert not self.thread.is_alive(), f"{self.name} did not stop"


def stop_all(*served: Served) -> None:
    for each in served:
        each.server.should_exit = True
    for each in served:
        each.stop()


@dataclass
class Pair:
    stock: Served
    mcpkit: Served

    def __iter__(self) -> Iterator[Served]:
        return iter((self.stock, self.mcpkit))


@contextlib.contextmanager
def serving_pair(
    options: StreamableHttpServerOptions | None = None, **config: Any
) -> Iterator[Pair]:
    """The test app served by uvicorn's httptools protocol and by mcpkit's, with ``config``."""
    protocol = uvicorn_http_protocol(options or StreamableHttpServerOptions())
    stock = Served("uvicorn", http="httptools", **config)
    try:
        mine = Served("mcpkit", **protocol, **config)
    except BaseException:
        stock.stop()
        raise
    try:
        yield Pair(stock, mine)
    finally:
        stop_all(stock, mine)


@pytest.fixture(scope="module")
def servers() -> Iterator[Pair]:
    with serving_pair() as pair:
        yield pair


@pytest.fixture(scope="module")
def untrusted() -> Iterator[Pair]:
    with serving_pair(forwarded_allow_ips="10.0.0.1") as pair:
        yield pair


@pytest.fixture(scope="module")
def rooted() -> Iterator[Pair]:
    with serving_pair(root_path="/prefix") as pair:
        yield pair


@pytest.fixture(scope="module")
def no_proxy() -> Iterator[Pair]:
    with serving_pair(proxy_headers=False) as pair:
        yield pair


@pytest.fixture(scope="module")
def limited() -> Iterator[Pair]:
    # uvicorn counts the connection asking too, so 1 would refuse every request: 2 lets one
    # connection in and refuses a second while the first is open.
    with serving_pair(limit_concurrency=2) as pair:
        yield pair


@pytest.fixture(scope="module")
def quick() -> Iterator[Pair]:
    """Short keep-alive and header times (mcpkit's sweep every 0.25 s)."""
    with serving_pair(
        StreamableHttpServerOptions(header_read_timeout=1.0), timeout_keep_alive=1
    ) as pair:
        yield pair


# -- the client ------------------------------------------------------------------------------


@dataclass
class Response:
    status: int
    headers: dict[str, str]
    body: bytes


def parse(data: bytes, head: bool = False) -> list[Response]:
    """The complete responses at the start of ``data`` (1xx ones included, bodies unchunked)."""
    found: list[Response] = []
    at = 0
    while (end := data.find(b"\r\n\r\n", at)) >= 0:
        lines = data[at:end].decode("latin1").split("\r\n")
        status = int(lines[0].split(" ")[1])
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        at = end + 4
        content = b""
        pieces = []
        if status >= 200 and not head and status not in (204, 304):
            if headers.get("transfer-encoding") == "chunked":
                while (line_end := data.find(b"\r\n", at)) >= 0:
                    size = int(data[at:line_end].split(b";")[0], 16)
                    if len(data) < line_end + 2 + size + 2:
                        return found
                    pieces.append(data[line_end + 2 : line_end + 2 + size])
                    at = line_end + 2 + size + 2
                    if size == 0:
                        content = b"".join(pieces)
                        break
                else:
                    return found
            elif "content-length" in headers:
                size = int(headers["content-length"])
                if len(data) < at + size:
                    return found
                content = data[at : at + size]
                at += size
            else:
                return found  # read until the close: not complete here
        found.append(Response(status, headers, content))
    return found


def finals(data: bytes, head: bool = False) -> list[Response]:
    return [response for response in parse(data, head) if response.status >= 200]


class Client:
    """A raw connection: what it sent, what came back, and whether the server closed it."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        self.data = b""
        self.closed = False

    def send(self, data: bytes) -> None:
        try:
            self.sock.sendall(data)
        except OSError:  # the server closed (reset) it: what comes back tells
            pass

    def read(self, until: Callable[[bytes], bool] | None = None, timeout: float = 3.0) -> bytes:
        """Read until ``until(data)`` holds, then until the server closes or 0.05 s pass
        quietly; without ``until``, until the server closes. At most ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        done = False
        while not self.closed:
            if not done and until is not None and until(self.data):
                done = True
                deadline = min(deadline, time.monotonic() + 0.05)
            left = deadline - time.monotonic()
            if left <= 0:
                break
            self.sock.settimeout(left)
            try:
                chunk = self.sock.recv(65536)
            except TimeoutError:
                break
            except ConnectionResetError:
                chunk = b""
            if chunk:
                self.data += chunk
            else:
                self.closed = True
        return self.data

    def close(self) -> None:
        self.sock.close()


def wait_recorded(port: int, path: str, count: int, timeout: float = 5.0) -> list[str]:
    """What the app of the server on ``port`` recorded for ``path``, once ``count`` things."""
    deadline = time.monotonic() + timeout
    while len(seen := recorded(port, path)) < count:
        assert time.monotonic() < deadline, f"timed out waiting for {path}'s records on {port}"
        time.sleep(0.01)
    return seen


def responses(count: int, head: bool = False) -> Callable[[bytes], bool]:
    return lambda data: len(finals(data, head)) >= count


_DATE = re.compile(rb"(?im)^date: [^\r\n]*\r\n")


def normal(data: bytes) -> bytes:
    return _DATE.sub(b"date: <date>\r\n", data)


def exchange(
    port: int, *parts: bytes | float, until: Callable[[bytes], bool] | None = None
) -> tuple[bytes, bool]:
    """Send ``parts`` (a float: a pause), read the answer: (its bytes, ``date`` set, closed)."""
    client = Client(port)
    try:
        for part in parts:
            if isinstance(part, float):
                time.sleep(part)
            else:
                client.send(part)
        client.read(until)
        return normal(client.data), client.closed
    finally:
        client.close()


def both(pair: Pair, run: Callable[[int], Any], parallel: bool = False) -> Any:
    """``run(port)`` against each server; asserts the results equal, returns uvicorn's."""
    if parallel:
        with ThreadPoolExecutor(2) as pool:
            stock, mine = pool.map(run, (pair.stock.port, pair.mcpkit.port))
    else:
        stock, mine = run(pair.stock.port), run(pair.mcpkit.port)
    assert mine == stock, (
        f"mcpkit's protocol differs from uvicorn's:\nuvicorn: {stock!r}\nmcpkit:  {mine!r}"
    )
    return stock


def same_exchange(
    pair: Pair, *parts: bytes | float, until: Callable[[bytes], bool] | None = None
) -> tuple[bytes, bool]:
    answer: tuple[bytes, bool] = both(pair, lambda port: exchange(port, *parts, until=until))
    return answer


def req(
    method: str, target: str, data: bytes | None = None, *headers: str, version: str = "1.1"
) -> bytes:
    lines = [f"{method} {target} HTTP/{version}", "Host: 127.0.0.1", *headers]
    if data is not None:
        lines.append(f"Content-Length: {len(data)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + (data or b"")


def chunked(*pieces: bytes, trailers: bytes = b"") -> bytes:
    return (
        b"".join(b"%x\r\n%b\r\n" % (len(piece), piece) for piece in pieces)
        + b"0\r\n"
        + trailers
        + b"\r\n"
    )


# -- the cases -------------------------------------------------------------------------------


def test_keep_alive_requests_on_one_connection(servers: Pair) -> None:
    def run(port: int) -> tuple[bytes, bool]:
        client = Client(port)
        try:
            client.send(req("GET", "/echo"))
            client.read(responses(1))
            client.send(req("POST", "/echo", b"hello there", "Content-Type: text/plain"))
            client.read(responses(2))
            return normal(client.data), client.closed
        finally:
            client.close()

    data, closed = both(servers, run)
    got = finals(data)
    assert [(r.status, r.body, r.headers["x-method"]) for r in got] == [
        (200, b"", "GET"),
        (200, b"hello there", "POST"),
    ]
    assert not closed and "connection" not in got[1].headers


def test_pipelined_requests_in_one_send(servers: Pair) -> None:
    sent = req("GET", "/echo") + req("POST", "/echo", b"second") + req("GET", "/stream")
    data, closed = same_exchange(servers, sent, until=responses(3))
    got = finals(data)
    assert [(r.status, r.body) for r in got] == [
        (200, b""),
        (200, b"second"),
        (200, b"onetwothree"),
    ]
    assert not closed


def test_many_pipelined_requests(servers: Pair) -> None:
    sent = b"".join(req("POST", "/echo", b"%d" % index) for index in range(50))
    data, closed = same_exchange(servers, sent, until=responses(50))
    assert [r.body for r in finals(data)] == [b"%d" % index for index in range(50)]
    assert not closed


def test_unread_body_then_the_next_request(servers: Pair) -> None:
    sent = req("POST", "/early", b"a body nobody reads") + req("GET", "/head")
    data, closed = same_exchange(servers, sent, until=responses(2))
    assert [r.body for r in finals(data)] == [b"early", b"hello"] and not closed


def test_pipelined_requests_after_a_slow_one(servers: Pair) -> None:
    sent = req("POST", "/slow-stream?3", b"") + req("GET", "/head") + req("GET", "/close")
    data, closed = same_exchange(servers, sent, until=responses(3))
    assert [(r.status, r.body) for r in finals(data)] == [
        (200, b"tick" * 3),
        (200, b"hello"),
        (200, b"bye"),
    ]
    assert closed


@pytest.mark.parametrize(
    ("pieces", "trailers"),
    [((b"hello", b" ", b"world"), b""), ((b"x" * 5000, b"y"), b"X-Trailer: yes\r\n"), ((), b"")],
    ids=["three-chunks", "with-trailer", "empty"],
)
def test_chunked_request_body(servers: Pair, pieces: tuple[bytes, ...], trailers: bytes) -> None:
    head = b"POST /messages HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n"
    data, _ = same_exchange(servers, head + chunked(*pieces, trailers=trailers), until=responses(1))
    reply = json.loads(finals(data)[0].body)
    assert reply == {
        "body": b"".join(pieces).decode(),
        "messages": [["http.request", len(reply["body"]), False]],
    }


def test_chunked_request_body_in_pieces_and_its_scope(servers: Pair) -> None:
    head = b"POST /scope HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n"
    body_bytes = chunked(b"abc", b"defg", trailers=b"X-Late: 1\r\n")
    data, _ = same_exchange(
        servers, head, 0.05, body_bytes[:7], 0.05, body_bytes[7:], until=responses(1)
    )
    seen = json.loads(finals(data)[0].body)
    assert ["transfer-encoding", "chunked"] in seen["headers"]


def test_expect_100_continue(servers: Pair) -> None:
    def run(port: int) -> tuple[bytes, bool]:
        client = Client(port)
        try:
            client.send(req("POST", "/messages", None, "Content-Length: 7", "Expect: 100-continue"))
            client.read(lambda data: b"\r\n\r\n" in data)
            assert client.data == b"HTTP/1.1 100 Continue\r\n\r\n"
            client.send(b"payload")
            client.read(responses(1))
            return normal(client.data), client.closed
        finally:
            client.close()

    data, _ = both(servers, run)
    got = parse(data)
    assert [r.status for r in got] == [100, 200]
    assert json.loads(got[1].body) == {"body": "payload", "messages": [["http.request", 7, False]]}


def test_expect_100_continue_answered_without_reading(servers: Pair) -> None:
    # the app answers without receive(): no 100 Continue, the body may never come
    sent = req("POST", "/early", None, "Content-Length: 7", "Expect: 100-continue")
    data, closed = same_exchange(servers, sent, until=responses(1))
    assert [(r.status, r.body) for r in parse(data)] == [(200, b"early")]
    assert not closed


@pytest.mark.parametrize(
    ("method", "path", "status", "headers"),
    [
        ("HEAD", "/head", 200, {"content-length": "5"}),
        ("HEAD", "/no-length", 200, {}),
        ("HEAD", "/stream", 200, {}),
        ("GET", "/no-content", 204, {}),
        ("GET", "/not-modified", 304, {"etag": '"x"'}),
        ("HEAD", "/no-content", 204, {}),
    ],
)
def test_responses_without_a_body(
    servers: Pair, method: str, path: str, status: int, headers: dict[str, str]
) -> None:
    # a second request after it on the connection shows no body bytes came in between
    sent = req(method, path) + req("GET", "/head")
    data, closed = same_exchange(servers, sent, until=lambda data: data.endswith(b"hello"))
    first = parse(data, head=True)[0]
    assert first.status == status and first.body == b""
    assert {name: first.headers[name] for name in headers} == headers
    assert "transfer-encoding" not in first.headers
    assert data.count(b"HTTP/1.1 ") == 2 and data.endswith(b"\r\n\r\nhello") and not closed


@pytest.mark.parametrize(
    "sent",
    [
        req("GET", "/echo", version="1.0"),
        req("POST", "/echo", b"ten", "Connection: keep-alive", version="1.0"),
        req("GET", "/stream", version="1.0"),
        req("GET", "/echo", None, "Connection: close"),
        req("POST", "/stream", b"x", "Connection: Close"),
        req("GET", "/echo", None, "Connection: close") + req("GET", "/echo"),
        req("GET", "/close") + req("GET", "/echo"),
    ],
    ids=[
        "1.0",
        "1.0-keep-alive",
        "1.0-stream",
        "close",
        "close-stream",
        "close-then-more",
        "app-closes",
    ],
)
def test_connection_closed_after_the_response(servers: Pair, sent: bytes) -> None:
    data, closed = same_exchange(servers, sent)
    assert closed and data.startswith(b"HTTP/1.1 200 OK\r\n")
    assert data.count(b"HTTP/1.1 ") == 1 and b"connection: close\r\n" in data


def test_streaming_response(servers: Pair) -> None:
    data, _ = same_exchange(
        servers, req("GET", "/stream") + req("GET", "/stream-last"), until=responses(2)
    )
    assert (
        b"transfer-encoding: chunked\r\n\r\n3\r\none\r\n3\r\ntwo\r\n5\r\nthree\r\n0\r\n\r\n" in data
    )
    assert data.endswith(b"5\r\nfirst\r\n4\r\nlast\r\n0\r\n\r\n")
    assert [r.body for r in finals(data)] == [b"onetwothree", b"firstlast"]


def test_content_length_in_pieces(servers: Pair) -> None:
    data, closed = same_exchange(servers, req("GET", "/pieces"), until=responses(1))
    assert finals(data)[0].body == b"abcdefghij" and not closed


OK_HEAD = b"HTTP/1.1 200 OK\r\ndate: <date>\r\n"
SERVER_ERROR = (
    b"HTTP/1.1 500 Internal Server Error\r\ndate: <date>\r\ncontent-type: text/plain; charset=utf-8"
    b"\r\ncontent-length: 21\r\nconnection: close\r\n\r\nInternal Server Error"
)


@pytest.mark.parametrize(
    ("path", "answer"),
    [
        ("/boom-before", SERVER_ERROR),
        ("/no-response", SERVER_ERROR),
        ("/body-first", SERVER_ERROR),
        ("/bad-header-name", b""),
        ("/bad-header-value", b""),
        ("/bad-status", b""),
        ("/boom-after", OK_HEAD + b"content-length: 10\r\n\r\nhalf"),
        ("/incomplete", OK_HEAD + b"content-length: 10\r\n\r\nhalf"),
        ("/started-only", OK_HEAD + b"transfer-encoding: chunked\r\n\r\n"),
        ("/short", OK_HEAD + b"content-length: 10\r\n\r\nabc"),
        ("/long", OK_HEAD + b"content-length: 3\r\n\r\n"),
        ("/return-value", OK_HEAD + b"content-type: text/plain\r\ncontent-length: 2\r\n\r\nok"),
        ("/after-complete", OK_HEAD + b"content-type: text/plain\r\ncontent-length: 4\r\n\r\ndone"),
    ],
)
def test_app_errors(servers: Pair, path: str, answer: bytes) -> None:
    # the request after it shows the connection closed: it is never answered
    data, closed = same_exchange(servers, req("GET", path) + req("GET", "/head"))
    assert data == answer and closed


def test_content_length_and_chunked_from_the_app(servers: Pair) -> None:
    data, _ = same_exchange(servers, req("GET", "/both-framings"), until=responses(1))
    assert b"content-length: 3\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n" in data


@pytest.mark.parametrize(
    "sent",
    [
        b"GARBAGE\r\n\r\n",
        b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + bytes(40),
        b"GET /echo HTTP/9.9\r\n\r\n",
        b"GET /echo HTTP/1.1\r\nHost : x\r\n\r\n",
        b"GET /\xff HTTP/1.1\r\nHost: x\r\n\r\n",
        b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n",
        b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
        b"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\n",
        req("GET", "/echo") + b"NOT HTTP\r\n\r\n",
        b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
    ],
    ids=[
        "garbage",
        "tls",
        "version",
        "space-before-colon",
        "non-ascii",
        "bad-length",
        "two-lengths",
        "bad-chunk",
        "after-a-good-one",
        "length-and-chunked",
    ],
)
def test_invalid_requests(servers: Pair, sent: bytes) -> None:
    data, closed = same_exchange(servers, sent)
    assert closed and data.endswith(
        b"HTTP/1.1 400 Bad Request\r\ndate: <date>\r\ncontent-type: text/plain; charset=utf-8\r\n"
        b"content-length: 30\r\nconnection: close\r\n\r\nInvalid HTTP request received."
    )


@pytest.mark.parametrize(
    ("target", "path", "raw_path", "query"),
    [
        ("/scope", "/scope", "/scope", ""),
        (
            "/scope/a%20b%2Fc%C3%A9?x=%20y&z=1+2",
            "/scope/a b/cé",
            "/scope/a%20b%2Fc%C3%A9",
            "x=%20y&z=1+2",
        ),
        ("/scope?", "/scope", "/scope", ""),
        ("/scope#fragment", "/scope", "/scope", ""),
        ("http://127.0.0.1/scope?a=1", "/scope", "/scope", "a=1"),
        ("http://user@example.com:81/scope/x?b=2", "/scope/x", "/scope/x", "b=2"),
    ],
    ids=[
        "plain",
        "percent-encoded",
        "empty-query",
        "fragment",
        "absolute-form",
        "absolute-form-userinfo",
    ],
)
def test_scope(servers: Pair, target: str, path: str, raw_path: str, query: str) -> None:
    sent = req("GET", target, None, "X-Custom:  padded \t", "x-custom: second")
    data, _ = same_exchange(servers, sent, until=responses(1))
    seen = json.loads(finals(data)[0].body)
    assert (seen["path"], seen["raw_path"].encode("latin1").decode(), seen["query_string"]) == (
        path,
        raw_path,
        query,
    )
    assert seen["method"] == "GET" and seen["http_version"] == "1.1" and seen["scheme"] == "http"
    assert seen["client"] == "127.0.0.1" and seen["root_path"] == "" and seen["state"] == "dict"
    assert seen["headers"] == [
        ["host", "127.0.0.1"],
        ["x-custom", "padded"],
        ["x-custom", "second"],
    ]


def test_scope_under_a_root_path(rooted: Pair) -> None:
    data, _ = same_exchange(rooted, req("GET", "/scope/x%2F?y"), until=responses(1))
    seen = json.loads(finals(data)[0].body)
    assert (seen["root_path"], seen["path"], seen["raw_path"]) == (
        "/prefix",
        "/prefix/scope/x/",
        "/prefix/scope/x%2F",
    )


def test_large_headers_within_max_header_bytes(servers: Pair) -> None:
    sent = req("GET", "/head", None, *(f"X-Big-{index}: {'v' * 1000}" for index in range(60)))
    data, _ = same_exchange(servers, sent, until=responses(1))
    assert finals(data)[0].body == b"hello"


def test_headers_past_max_header_bytes_the_one_intended_difference(servers: Pair) -> None:
    sent = req("GET", "/head", None, *(f"X-Big-{index}: {'v' * 1000}" for index in range(70)))
    stock = exchange(servers.stock.port, sent, until=responses(1))
    mine = exchange(servers.mcpkit.port, sent, until=responses(1))
    assert finals(stock[0])[0].body == b"hello"  # uvicorn: no bound
    assert mine[0].startswith(b"HTTP/1.1 431 Request Header Fields Too Large\r\n") and mine[1]


def test_slow_reader_of_a_large_response(servers: Pair) -> None:
    def run(port: int) -> tuple[bytes, bool]:
        client = Client(port)
        try:
            client.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
            client.send(req("GET", "/big") + req("GET", "/head"))
            time.sleep(0.2)  # the server's send() waits for room meanwhile
            client.read(lambda data: data.endswith(b"hello"))
            return normal(client.data), client.closed
        finally:
            client.close()

    data, closed = both(servers, run, parallel=True)
    first, second = finals(data)
    assert len(first.body) == 64 * 65536 and first.body[-1:] == b"L" and second.body == b"hello"
    assert not closed


def test_shutdown_closes_after_the_answer_in_flight() -> None:
    with serving_pair() as pair:
        clients = [Client(served.port) for served in pair]
        try:
            for client in clients:
                client.send(req("GET", "/delayed") + req("GET", "/head"))
            for served in pair:
                assert wait_recorded(served.port, "/delayed", 1) == ["started"]
            for served in pair:
                served.server.should_exit = True
            answers = [(normal(client.read()), client.closed) for client in clients]
        finally:
            for client in clients:
                client.close()
    assert answers[1] == answers[0], f"uvicorn: {answers[0]!r}\nmcpkit:  {answers[1]!r}"
    # uvicorn marks the connection's newest request (the pipelined one) as its last
    assert answers[0] == (
        OK_HEAD
        + b"content-type: text/plain\r\ncontent-length: 4\r\n\r\nlate"
        + OK_HEAD
        + b"content-type: text/plain\r\ncontent-length: 5\r\nconnection: close\r\n\r\nhello",
        True,
    )


def test_scope_of_an_http_1_0_post(servers: Pair) -> None:
    data, _ = same_exchange(servers, req("POST", "/scope?q", b"{}", version="1.0"))
    seen = json.loads(finals(data)[0].body)
    assert (seen["method"], seen["http_version"], seen["query_string"]) == ("POST", "1.0", "q")


FORWARDED = {
    "for-and-proto": ["X-Forwarded-For: 1.2.3.4", "X-Forwarded-Proto: https"],
    "chain": ["X-Forwarded-For: 1.2.3.4:5678, 10.0.0.2, 127.0.0.1"],
    "two-headers": [
        "X-Forwarded-For: 5.6.7.8",
        "X-Forwarded-For: 9.9.9.9:99",
        "X-Forwarded-Proto: wss",
    ],
    "bracketed-ipv6": ["X-Forwarded-For: [2001:db8::1]:443"],
    "unknown-proto": ["X-Forwarded-Proto: ftp"],
    "padded-proto": ["X-Forwarded-Proto:  https "],
    "empty-for": ["X-Forwarded-For: "],
    "all-trusted": ["X-Forwarded-For: 127.0.0.1:1234"],
}


@pytest.mark.parametrize("pair_name", ["servers", "untrusted", "no_proxy"])
@pytest.mark.parametrize("forwarded", FORWARDED.values(), ids=FORWARDED.keys())
def test_proxy_headers(
    request: pytest.FixtureRequest, pair_name: str, forwarded: list[str]
) -> None:
    pair = request.getfixturevalue(pair_name)
    sent = req("GET", "/scope", None, *forwarded) * 2  # per request, kept alive
    data, _ = same_exchange(pair, sent, until=responses(2))
    first, second = (json.loads(r.body) for r in finals(data))
    assert first == second
    if pair_name != "servers":  # not trusted, or not looked at
        assert (first["client"], first["scheme"]) == ("127.0.0.1", "http")
    elif forwarded == FORWARDED["for-and-proto"]:
        assert (first["client"], first["client_port"], first["scheme"]) == ("1.2.3.4", 0, "https")
    elif forwarded == FORWARDED["two-headers"]:
        assert (first["client"], first["client_port"], first["scheme"]) == ("9.9.9.9", 99, "wss")


def test_proxy_headers_on_a_websocket(servers: Pair) -> None:
    sent = req(
        "GET",
        "/ws?x=1",
        None,
        "Upgrade: websocket",
        "Connection: Upgrade",
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
        "Sec-WebSocket-Version: 13",
        "X-Forwarded-For: 1.2.3.4",
        "X-Forwarded-Proto: https",
    )
    data, _ = same_exchange(servers, sent, until=lambda data: b"\x88\x02\x03\xe8" in data)
    assert data.startswith(b"HTTP/1.1 101 Switching Protocols\r\n")
    assert b"Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n" in data
    for seen in (
        b'"type": "websocket"',
        b'"client": "1.2.3.4"',
        b'"scheme": "wss"',
        b'"query_string": "x=1"',
    ):
        assert seen in data


def test_unsupported_upgrade_is_served_as_http(servers: Pair) -> None:
    sent = req(
        "GET",
        "/echo",
        None,
        "Upgrade: h2c",
        "Connection: Upgrade, HTTP2-Settings",
        "HTTP2-Settings: AAMAAABkAAQAAP__",
    )
    data, _ = same_exchange(servers, sent, until=responses(1))
    assert [r.status for r in finals(data)] == [200]


def test_large_body_in_pieces(servers: Pair) -> None:
    payload = bytes(range(256)) * 4096  # 1 MiB
    piece = 64 * 1024
    parts: list[bytes | float] = [req("POST", "/hash", None, f"Content-Length: {len(payload)}")]
    for at in range(0, len(payload), piece):
        parts += [payload[at : at + piece], 0.002]
    data, closed = both(
        servers, lambda port: exchange(port, *parts, until=responses(1)), parallel=True
    )
    assert finals(data)[0].body == f"{len(payload)} {hashlib.sha256(payload).hexdigest()}".encode()
    assert not closed


def test_large_chunked_body_in_one_send(servers: Pair) -> None:
    payload = b"0123456789abcdef" * 65536  # 1 MiB, past uvicorn's high-water mark
    head = b"POST /hash HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n"
    sent = head + chunked(*(payload[at : at + 100_000] for at in range(0, len(payload), 100_000)))
    data, _ = both(servers, lambda port: exchange(port, sent, until=responses(1)), parallel=True)
    assert finals(data)[0].body == f"{len(payload)} {hashlib.sha256(payload).hexdigest()}".encode()


def test_client_disconnect_while_the_app_waits(servers: Pair) -> None:
    for served in servers:
        client = Client(served.port)
        client.send(req("POST", "/wait-disconnect", b"some body"))
        assert wait_recorded(served.port, "/wait-disconnect", 1) == ["waiting"]
        time.sleep(0.05)  # nothing is sent while the app waits
        client.close()
        wait_recorded(served.port, "/wait-disconnect", 2)
        assert client.data == b""
    assert recorded(servers.stock.port, "/wait-disconnect") == ["waiting", "http.disconnect"]
    assert recorded(servers.mcpkit.port, "/wait-disconnect") == ["waiting", "http.disconnect"]


def test_concurrency_limit(limited: Pair) -> None:
    def run(port: int) -> tuple[bytes, bool, bytes, bool]:
        held = Client(port)
        try:
            held.send(req("POST", "/wait-disconnect", b"x"))
            assert wait_recorded(port, "/wait-disconnect", 1) == ["waiting"]
            refused = exchange(port, req("GET", "/echo") + req("GET", "/echo"))
        finally:
            held.close()
        wait_recorded(port, "/wait-disconnect", 2)
        time.sleep(0.05)  # uvicorn drops the finished task a loop turn later
        served = exchange(port, req("GET", "/head"), until=responses(1))
        return (*refused, *served)

    refused, refused_closed, served, _ = both(limited, run)
    assert refused == (
        b"HTTP/1.1 503 Service Unavailable\r\ndate: <date>\r\ncontent-type: text/plain; charset=utf-8\r\n"
        b"content-length: 19\r\nconnection: close\r\n\r\nService Unavailable"
    )
    assert refused_closed and finals(served)[0].body == b"hello"


def test_keep_alive_timeout(quick: Pair) -> None:
    def run(port: int) -> tuple[bool, bool]:
        client = Client(port)
        try:
            client.send(req("GET", "/head"))
            client.read(responses(1), timeout=0.5)
            open_early = not client.closed
            client.read(timeout=4)  # closed by the server in the end
            return open_early, client.closed
        finally:
            client.close()

    assert both(quick, run, parallel=True) == (True, True)


# -- cases the first version of this protocol got wrong -------------------------------------


def test_receive_after_the_app_returned(servers: Pair) -> None:
    for served in servers:
        exchange(served.port, req("GET", "/detached"))
        wait_recorded(served.port, "/detached", 1)
    assert recorded(servers.stock.port, "/detached") == ["http.disconnect"]
    assert recorded(servers.mcpkit.port, "/detached") == recorded(servers.stock.port, "/detached")


def test_receive_again_after_a_timed_out_receive(servers: Pair) -> None:
    data, _ = same_exchange(servers, req("POST", "/poll-disconnect", b"x"), until=responses(1))
    assert finals(data)[0].body == b"TimeoutError,TimeoutError"


def test_headers_ending_across_two_reads_then_a_large_body(servers: Pair) -> None:
    payload = b"z" * 200_000
    sent = req("POST", "/hash", None, f"Content-Length: {len(payload)}")
    data, _ = same_exchange(servers, sent[:-1], 0.05, sent[-1:] + payload, until=responses(1))
    assert finals(data)[0].body.startswith(b"200000 ")


def test_body_still_arriving_after_an_early_answer(quick: Pair) -> None:
    pieces = 10

    def run(port: int) -> tuple[bytes, bool]:
        parts: list[bytes | float] = [req("POST", "/early", None, f"Content-Length: {pieces * 8}")]
        parts += [b"12345678", 0.2] * pieces  # 2 s, past the 1 s keep-alive time
        parts.append(req("GET", "/head"))
        return exchange(port, *parts, until=responses(2))

    data, _ = both(quick, run, parallel=True)
    assert [r.body for r in finals(data)] == [b"early", b"hello"]


def test_stray_crlf_while_a_response_streams(quick: Pair) -> None:
    sent = req("POST", "/slow-stream?16", b"")  # an answer over 2 s
    data, closed = both(
        quick, lambda port: exchange(port, sent, 0.05, b"\r\n", until=responses(1)), parallel=True
    )
    assert finals(data)[0].body == b"tick" * 16 and not closed


def test_access_log(servers: Pair) -> None:
    lines: list[tuple[int | None, str]] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append((record.thread, re.sub(r":\d+ - ", ":PORT - ", record.getMessage())))

    access = logging.getLogger("uvicorn.access")
    handler, level = Collect(), access.level
    access.addHandler(handler)
    access.setLevel(logging.INFO)
    try:
        for served in servers:
            exchange(served.port, req("GET", "/head?x=1"), until=responses(1))
    finally:
        access.removeHandler(handler)
        access.setLevel(level)
    per_server = [
        [line for thread, line in lines if thread == served.thread.ident] for served in servers
    ]
    assert per_server[0] == ['127.0.0.1:PORT - "GET /head?x=1 HTTP/1.1" 200']
    assert per_server[1] == per_server[0]

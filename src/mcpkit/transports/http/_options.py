"""Options of the HTTP server transports: one value object, every bound named."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mcpkit.protocol._jsonrpc import DEFAULT_MAX_MESSAGE_DEPTH

#: Largest POST body accepted; larger bodies get 413.
DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024
#: Live sessions at once; initialize past it gets 503.
DEFAULT_MAX_SESSIONS = 10_000
#: Seconds a session may sit unused before it expires.
DEFAULT_SESSION_IDLE_TIMEOUT = 30 * 60.0
#: Milliseconds clients wait before reconnecting a closed SSE stream (SEP-1699 ``retry``).
DEFAULT_RETRY_MS = 1000
#: Seconds a call whose stream dropped keeps running, waiting for the client to resume it.
DEFAULT_RESUME_GRACE = 30.0
#: Messages queued for one SSE response (a GET or POST stream, a legacy SSE session), or
#: waiting to go out on one WebSocket, whose client is momentarily slow; past it the client
#: is taken as not reading and its response (socket) is dropped (Streamable HTTP: the client
#: resumes with Last-Event-ID).
DEFAULT_MAX_QUEUED_MESSAGES = 1024
#: Seconds one write to an SSE response or a WebSocket may stay blocked (its client stopped
#: reading) before the response (socket) is dropped, as when its queue fills.
DEFAULT_SSE_WRITE_TIMEOUT = 10.0
#: Bytes of one JSON answer (a tool's result, a resource's contents); past it, -32603.
DEFAULT_MAX_ANSWER_BYTES = 64 * 1024 * 1024
#: Seconds a POST body may take to arrive in full; a slower one is answered 408 (uvicorn
#: bounds neither slow headers nor slow bodies). 4 MiB (the body bound) in 30 s is ~1.1 Mbit/s.
DEFAULT_BODY_READ_TIMEOUT = 30.0
#: Seconds a connection may take from its first byte (or its opening) to the end of a
#: request's headers; past it the connection is closed. Served by ``mcpkit run`` /
#: ``serve_http`` (uvicorn alone bounds neither).
DEFAULT_HEADER_READ_TIMEOUT = 10.0
#: Bytes of one request's line and headers (the 2026-07-28 ``Mcp-Param-*`` headers included);
#: past it, 431 and the connection is closed.
DEFAULT_MAX_HEADER_BYTES = 64 * 1024
#: Requests one endpoint serves at once in one event loop (a process; each worker of
#: ``--workers`` has its own): Streamable HTTP POSTs from their first byte to their answer's
#: last, legacy SSE POSTs while their body is read. Past it, 503 with ``Retry-After`` at
#: once, the body unread. Above the app's bound on open 2026-07-28 listens (10,000, each a
#: POST in progress), so calls still find room when every listen is taken.
DEFAULT_MAX_CONCURRENT_REQUESTS = 20_000


@dataclass(frozen=True, slots=True)
class TransportSecuritySettings:
    """Which Host and Origin values a request may carry.

    Origin, which browsers send, is checked on every bind: admitted are the
    ``allowed_origins`` (``"*"``: any), else the server's own origin (the Host it was asked
    by) and pages on localhost, 127.0.0.1 or [::1] (any port); ``null`` only where listed. A
    request without Origin (a client that is not a browser) is not affected.

    Host is checked (DNS-rebinding protection) where ``enable_dns_rebinding_protection`` is
    True, or when it is None (the default) on a loopback bind and wherever ``allowed_hosts``
    is set. Empty ``allowed_hosts`` admit only localhost, 127.0.0.1 and [::1] (any port).
    Bound beyond loopback without ``allowed_hosts``, Host is not checked and the server
    says so once at start-up.
    """

    enable_dns_rebinding_protection: bool | None = None
    allowed_hosts: tuple[str, ...] = ()
    allowed_origins: tuple[str, ...] = ()


@dataclass(slots=True)
class StreamableHttpServerOptions:
    """How the HTTP server listens and behaves (Streamable HTTP, legacy SSE, WebSocket)."""

    port: int = 3001
    endpoint: str = "/mcp"
    host: str = "127.0.0.1"
    stateless: bool = False
    enable_legacy_sse: bool = True
    enable_websocket: bool = True
    sse_keep_alive_ms: int = 15_000
    event_store: Any = None  # EventStore; None → InMemoryEventStore
    #: A ``SessionStore`` (mcpkit.stores) shared with other instances, which then adopt
    #: each other's sessions; or a ``StreamableSessionStore``; None → in memory.
    session_store: Any = None
    #: A ``MessageBus`` linking the instances that serve this endpoint (broadcasts, resource
    #: updates, answers to server-to-client requests); None → this process only.
    message_bus: Any = None
    server_name: str | None = None
    server_version: str | None = None
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    #: Deepest nesting of arrays and objects in one message (POST body, WebSocket message),
    #: the message object counting 1; deeper gets -32600 (None: only the decoder's own limit).
    max_message_depth: int | None = DEFAULT_MAX_MESSAGE_DEPTH
    max_sessions: int = DEFAULT_MAX_SESSIONS
    session_idle_timeout: float = DEFAULT_SESSION_IDLE_TIMEOUT
    retry_ms: int = DEFAULT_RETRY_MS
    resume_grace: float = DEFAULT_RESUME_GRACE
    max_queued_messages: int = DEFAULT_MAX_QUEUED_MESSAGES
    #: Seconds one write of an answer may stay blocked: an SSE event, a WebSocket message,
    #: or a piece of a large JSON answer (``ANSWER_PIECE_BYTES``); past it the client is
    #: taken to have stopped reading, and the answer is dropped (the connection closed).
    sse_write_timeout: float = DEFAULT_SSE_WRITE_TIMEOUT
    #: Bytes of one JSON answer; a larger one is answered with a -32603 error naming it.
    max_answer_bytes: int = DEFAULT_MAX_ANSWER_BYTES
    #: Seconds a POST body may take to arrive in full (None: no bound); past it, 408.
    body_read_timeout: float | None = DEFAULT_BODY_READ_TIMEOUT
    #: Seconds to receive a request's headers (None: no bound); past it, the connection closes.
    header_read_timeout: float | None = DEFAULT_HEADER_READ_TIMEOUT
    #: Bytes of a request's line and headers; past it, 431.
    max_header_bytes: int = DEFAULT_MAX_HEADER_BYTES
    #: Requests this endpoint serves at once per event loop; past it, 503 with
    #: ``Retry-After`` before the body is read (a 2026-07-28 or stateless POST is a
    #: connection of its own, so no per-session bound adds up to this).
    max_concurrent_requests: int = DEFAULT_MAX_CONCURRENT_REQUESTS
    transport_security: TransportSecuritySettings = field(default_factory=TransportSecuritySettings)
    bearer_auth: Any = None  # BearerAuthConfig (authorization issue)
    #: An authorization server served beside the endpoint (``mcpkit.auth.OAuthProxy``): its
    #: ``endpoints()`` are routed without the transport's checks (they run their own), and,
    #: unless ``bearer_auth`` is set, its ``bearer_auth()`` gates the MCP endpoints.
    auth_server: Any = None
    #: Connection-level check on a WebSocket upgrade, ``(headers) -> bool`` (or awaitable);
    #: False refuses before the handshake.
    websocket_guard: Any = None
    #: Guards run on every HTTP request to an MCP endpoint and every WebSocket upgrade,
    #: before any MCP message: each a callable or has ``can_connect(ctx)`` /
    #: ``can_activate(ctx)``, given an ``McpExecutionContext`` with ``kind == "connection"``;
    #: False refuses (403, WebSocket close 1008). See docs/injection.md.
    connection_guards: tuple[Any, ...] = ()

    @property
    def base_path(self) -> str:
        """The endpoint without a trailing slash (the legacy SSE and WebSocket paths hang from
        it)."""
        return self.endpoint.rstrip("/")

"""Every exception mcpkit raises, under one root.

    MCPError
    ├── ProtocolError            a fault with a JSON-RPC error reply (code, message, data)
    │   ├── ParseError                    -32700  bytes that are not JSON
    │   ├── InvalidRequestError           -32600  JSON that is not a valid JSON-RPC message
    │   │   └── MessageTooLargeError              a frame past its named bound
    │   │       └── MessageTooDeepError           nested past ``max_message_depth``
    │   ├── MethodNotFoundError           -32601
    │   ├── InvalidParamsError            -32602  unknown tool or prompt, bad params
    │   ├── InternalError                 -32603
    │   │   └── McpForbiddenError                 a guard refused (data.type == "FORBIDDEN")
    │   ├── ResourceNotFoundError         -32002  (-32602 in the 2026-07-28 era)
    │   ├── MissingCapabilityError        -32021  the client lacks a capability the call needs
    │   └── UrlElicitationRequiredError   -32042
    ├── ToolError                a tool raises it on purpose: its text is the isError result
    │   └── StateLimitError               ``ctx.set_state`` past a bound of ``app.session_state``
    ├── McpCallError             the peer answered a request with a JSON-RPC error
    ├── RequestTimeoutError      no answer within the request's timeout
    ├── TransportError           the connection failed or closed
    │   └── ConnectionClosedError
    └── StoreError               a session, event or bus backend refused or failed
        ├── StoreUnavailableError         the backend (Redis, SQLite) cannot be reached; HTTP 503
        └── SessionLimitReached           the session cap is full; HTTP 503

A ``ProtocolError`` raised inside a handler becomes the error reply of that request;
``to_error()`` gives the wire form.
"""

from __future__ import annotations

from typing import Any

from mcpkit._codes import ErrorCode


class MCPError(Exception):
    """Root of every mcpkit exception."""


class ProtocolError(MCPError):
    """A fault that maps to a JSON-RPC error object."""

    code: int = ErrorCode.INTERNAL_ERROR

    def __init__(self, message: str, data: Any = None, *, code: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.data = data
        if code is not None:
            self.code = code

    def to_error(self) -> dict[str, Any]:
        """The JSON-RPC ``error`` member for this fault."""
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


class ParseError(ProtocolError):
    """The message is not valid JSON (-32700)."""

    code = ErrorCode.PARSE_ERROR


class InvalidRequestError(ProtocolError):
    """The message is not a valid request (-32600)."""

    code = ErrorCode.INVALID_REQUEST


class InsufficientScopeError(InvalidRequestError):
    """A signed-in caller's token lacks the scopes of a step-up component
    (``require_scopes(..., step_up=True)``): -32600 with the scopes in ``data["scope"]``.
    Over Streamable HTTP the request is answered 403 ``insufficient_scope`` instead, the
    challenge a client steps up on."""

    def __init__(self, kind: str, name: str, scopes: tuple[str, ...]) -> None:
        super().__init__(
            f"Insufficient scope: the {kind} {name!r} needs {' '.join(scopes)}",
            {"scope": " ".join(scopes)},
        )
        self.scopes = scopes


class MessageTooLargeError(InvalidRequestError):
    """A message exceeded a configured size bound."""


class MessageTooDeepError(MessageTooLargeError):
    """A message nests arrays and objects past the depth bound (``max_message_depth``)."""


class MethodNotFoundError(ProtocolError):
    """The method does not exist or is not offered (-32601)."""

    code = ErrorCode.METHOD_NOT_FOUND


class InvalidParamsError(ProtocolError):
    """The request's params are invalid (-32602)."""

    code = ErrorCode.INVALID_PARAMS


class InternalError(ProtocolError):
    """The server failed while handling the request (-32603)."""

    code = ErrorCode.INTERNAL_ERROR


class McpForbiddenError(InternalError):
    """A guard refused a call; the reply carries ``data: {"type": "FORBIDDEN", "guard": NAME}``."""

    def __init__(self, guard: str, target: str) -> None:
        super().__init__(
            f"Guard '{guard}' denied the call for '{target}'",
            {"type": "FORBIDDEN", "guard": guard},
        )
        self.guard = guard


class ResourceNotFoundError(ProtocolError):
    """No resource has the URI asked for (-32002)."""

    code = ErrorCode.RESOURCE_NOT_FOUND

    def __init__(self, uri: str) -> None:
        super().__init__(f"Resource not found: {uri}", {"uri": uri})
        self.uri = uri


class MissingCapabilityError(ProtocolError):
    """A call needs a client capability (sampling, elicitation, roots) the client lacks.

    In both eras it is the protocol error -32021 with ``data.requiredCapabilities`` (the
    2026-07-28 code; docs/eras.md says why the handshake era does the same), unless the
    call catches it.
    """

    code = ErrorCode.MISSING_REQUIRED_CAPABILITY

    def __init__(self, capability: str) -> None:
        super().__init__(
            f"Client does not support {capability}", {"requiredCapabilities": {capability: {}}}
        )
        self.capability = capability


class UrlElicitationRequiredError(ProtocolError):
    """Raised by a tool that needs the user to visit URLs first (2025-11-25 URL elicitation)."""

    code = ErrorCode.URL_ELICITATION_REQUIRED

    def __init__(self, elicitations: list[dict[str, Any]], message: str | None = None) -> None:
        super().__init__(message or "URL elicitation required", {"elicitations": elicitations})


class ToolError(MCPError):
    """Raise it in a tool to fail the call with a message for the model: its text is the
    ``isError`` result, logged at INFO without a traceback (it is no bug), and sent even
    under ``McpServerApp(mask_error_details=True)``, which hides the text of any other
    exception a tool raises. In a resource or a prompt it fails the request (-32603) with
    its text, where any other exception's is hidden behind an error id."""


class StateLimitError(ToolError):
    """``ctx.set_state`` would take the state of a session (or request) past a bound of
    ``app.session_state``: ``max_keys`` keys or ``max_bytes`` bytes. Nothing was stored. A
    ``ToolError``: unless the tool catches it, its text is the call's ``isError`` result."""


class McpCallError(MCPError):
    """The peer answered with a JSON-RPC error."""

    def __init__(self, message: str, code: int, data: Any = None) -> None:
        super().__init__(f"{message} (code {code})")
        self.message = message
        self.code = code
        self.data = data


class RequestTimeoutError(MCPError, TimeoutError):
    """A request got no answer within its timeout; the peer was sent a cancellation. A
    ``TimeoutError`` too, so ``except TimeoutError`` catches it as it catches asyncio's."""


class TransportError(MCPError):
    """The underlying connection failed."""


class ConnectionClosedError(TransportError):
    """The connection closed while a request was waiting."""


class AuthError(MCPError):
    """A token or proof was refused, or what checks it (a key set) could not be had."""


class StoreError(MCPError):
    """A store (sessions, events, the message bus) refused or failed an operation."""


class StoreUnavailableError(StoreError):
    """The store's backend cannot be reached (Redis down, SQLite file locked): the request
    that needed it fails with HTTP 503 and a JSON-RPC error; later requests retry it."""


class SessionLimitReached(StoreError):
    """The session cap is full (``max_sessions`` live sessions, across every instance that
    shares the store); ``initialize`` gets HTTP 503."""

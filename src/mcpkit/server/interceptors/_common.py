"""What the built-in interceptors share: the MCP method a call answers, how a call
ended, who made it, and its arguments as plain JSON."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from mcpkit._exceptions import ProtocolError
from mcpkit.auth._types import session_owner
from mcpkit.server._context import McpToolContext
from mcpkit.server._engine.execution import McpExecutionContext
from mcpkit.server._eras.mrtr import InputRequired
from mcpkit.server._results import _builtins

#: The request method behind each kind of call an interceptor sees.
METHOD_OF_KIND = {"tool": "tools/call", "resource": "resources/read", "prompt": "prompts/get"}

OK = "ok"
#: A tool answered with an ``isError`` result, or the call raised.
ERROR = "error"
#: The call was refused with a JSON-RPC error (a guard, a rate limit, bad input).
REFUSED = "refused"
CANCELLED = "cancelled"
#: 2026-07-28: the call asked the client for input and will be retried with it.
INPUT_REQUIRED = "input_required"


def method_of(ctx: McpExecutionContext) -> str:
    """The MCP method the call answers (``tools/call``, ``resources/read``, ``prompts/get``)."""
    return METHOD_OF_KIND.get(ctx.kind, ctx.kind)


def is_error_result(value: Any) -> bool:
    """Whether a call's value is a tool's ``isError`` result."""
    if isinstance(value, dict):
        return value.get("isError") is True
    return getattr(value, "isError", None) is True or getattr(value, "is_error", None) is True


def outcome_of(value: Any = None, exc: BaseException | None = None) -> str:
    """One word for how a call ended (``ok``, ``error``, ``refused``, ``cancelled``,
    ``input_required``)."""
    if exc is None:
        return ERROR if is_error_result(value) else OK
    if isinstance(exc, asyncio.CancelledError):
        return CANCELLED
    if isinstance(exc, InputRequired):
        return INPUT_REQUIRED
    if isinstance(exc, ProtocolError):
        return REFUSED
    return ERROR


def identity_of(ctx: McpExecutionContext) -> str | None:
    """A stable, non-secret key for the authenticated principal of a call (a digest of the
    token's issuer, client and subject), None without bearer auth."""
    return session_owner(ctx.auth)


def session_of(ctx: McpExecutionContext) -> str | None:
    """The lasting session a call belongs to: the ``Mcp-Session-Id`` session over HTTP, the
    connection over stdio, in memory and WebSocket (handshake era); None for the one-request
    sessions of 2026-07-28 and stateless HTTP."""
    binding = ctx.binding
    session = binding.session if binding is not None else None
    if session is None or session.ephemeral:
        return ctx.session_id
    return session.session_id or session.key


def plain_arguments(ctx: McpExecutionContext) -> dict[str, Any]:
    """The call's arguments as JSON values, without injected contexts."""
    plain: dict[str, Any] = {}
    for name, value in ctx.arguments.items():
        if isinstance(value, McpToolContext):
            continue
        try:
            plain[name] = _builtins(value)
        except Exception:  # not convertible: still part of the call, by its text
            plain[name] = repr(value)
    return plain


def canonical_arguments(ctx: McpExecutionContext) -> str:
    """The arguments as canonical JSON (sorted keys, no spaces): equal calls, equal text."""
    return json.dumps(
        plain_arguments(ctx),
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
        default=repr,
    )

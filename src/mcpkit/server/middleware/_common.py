"""What the built-in middleware share: what kind of call a message is, how it ended, who
made it, and its arguments as plain JSON."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from mcpkit._exceptions import ProtocolError
from mcpkit.auth._types import session_owner
from mcpkit.server._context import McpToolContext
from mcpkit.server._engine.middleware import METHOD_OF_KIND, MiddlewareContext
from mcpkit.server._eras.mrtr import InputRequired
from mcpkit.server._results import _builtins

#: The kind of component each call method reaches.
KIND_OF_METHOD: Mapping[str, str] = MappingProxyType(
    {method: kind for kind, method in METHOD_OF_KIND.items()}
)

OK = "ok"
#: A tool answered with an ``isError`` result, or the call raised.
ERROR = "error"
#: The call was refused with a JSON-RPC error (a guard, a rate limit, bad input).
REFUSED = "refused"
CANCELLED = "cancelled"
#: 2026-07-28: the call asked the client for input and will be retried with it.
INPUT_REQUIRED = "input_required"


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


def identity_of(context: MiddlewareContext) -> str | None:
    """A stable, non-secret key for the authenticated principal of a call (a digest of the
    token's issuer, client and subject), None without bearer auth."""
    return session_owner(context.auth)


def session_of(context: MiddlewareContext) -> str | None:
    """The lasting session a call belongs to: the ``Mcp-Session-Id`` session over HTTP, the
    connection over stdio, in memory and WebSocket (handshake era); None for the one-request
    sessions of 2026-07-28 and stateless HTTP."""
    session = context.binding.session
    if session is None or session.ephemeral:
        return context.session_id
    return session.session_id or session.key


def plain_arguments(context: MiddlewareContext) -> dict[str, Any]:
    """The call's arguments as JSON values, without injected contexts."""
    plain: dict[str, Any] = {}
    for name, value in context.arguments.items():
        if isinstance(value, McpToolContext):
            continue
        try:
            plain[name] = _builtins(value)
        except Exception:  # not convertible: its repr still tells calls apart
            plain[name] = repr(value)
    return plain


def canonical_arguments(context: MiddlewareContext) -> str:
    """The arguments as canonical JSON (sorted keys, no spaces): equal calls, equal text."""
    return json.dumps(
        plain_arguments(context),
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
        default=repr,
    )

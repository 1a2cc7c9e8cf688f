"""A 2026-07-28 backend's multi round-trip requests (SEP-2322) relayed to the front client.

Each request to the backend declares the *front* client's capabilities in ``_meta``, so the
backend asks only for input the front can give. A 2026-07-28 front gets the backend's
``inputRequests`` (keys and all, several per round) as they are, and the backend's
``requestState`` rides inside the front engine's own signed state; the front's retry carries
its ``inputResponses`` back unchanged. A handshake-era front is asked each input in turn,
as its version has it, and the proxy sends the backend's next round itself.
"""

from __future__ import annotations

from typing import Any

from mcpkit._exceptions import InternalError, MissingCapabilityError
from mcpkit.client import McpClient
from mcpkit.protocol._modern import (
    CLIENT_CAPABILITIES_KEY,
    CLIENT_INFO_KEY,
    LOG_LEVEL_KEY,
    PROTOCOL_VERSION_KEY,
)
from mcpkit.server._context import McpToolContext
from mcpkit.server._eras.mrtr import InputRequired, capability_for, round_inputs

#: Rounds of input one call to the backend may ask for while the proxy answers them
#: for a handshake-era front (a 2026-07-28 front counts its own rounds).
MAX_BACKEND_INPUT_ROUNDS = 8


def front_capabilities(ctx: McpToolContext) -> dict[str, Any]:
    """The front client's capabilities as a 2026-07-28 request declares them."""
    capabilities = dict(ctx.client_capabilities)
    if "roots" in capabilities:
        capabilities["roots"] = {}  # no roots/list_changed in this era
    return capabilities


def _meta(client: McpClient, ctx: McpToolContext, given: Any) -> dict[str, Any]:
    meta = dict(given) if isinstance(given, dict) else {}
    meta[PROTOCOL_VERSION_KEY] = client.protocol_version
    meta[CLIENT_CAPABILITIES_KEY] = front_capabilities(ctx)
    meta[CLIENT_INFO_KEY] = client.client_info
    if client.log_level is not None:
        meta[LOG_LEVEL_KEY] = client.log_level
    return meta


def _is_input_required(result: Any) -> bool:
    return isinstance(result, dict) and result.get("resultType") == "input_required"


async def relay_rounds(
    client: McpClient,
    ctx: McpToolContext,
    method: str,
    params: dict[str, Any],
    progress: Any,
) -> Any:
    """``method`` on a 2026-07-28 ``client``, its input rounds put to ``ctx``'s client;
    returns the backend's final result (``InputRequired`` ends a 2026-07-28 front's round)."""
    base = dict(params)
    given_meta = base.pop("_meta", None)
    inputs = round_inputs(ctx.binding)
    retry: dict[str, Any] = {}
    if inputs is not None:  # a 2026-07-28 front: this round's answers go to the backend
        if inputs.responses:
            retry["inputResponses"] = dict(inputs.responses)
        if inputs.state is not None:
            retry["requestState"] = inputs.state
    for _ in range(MAX_BACKEND_INPUT_ROUNDS + 1):
        body = {**base, **retry, "_meta": _meta(client, ctx, given_meta)}
        result = await client.session.request(method, body, progress=progress)
        if not _is_input_required(result):
            return result
        requests = result.get("inputRequests") or {}
        if inputs is not None:
            ctx.request_state = result.get("requestState")
            raise InputRequired(requests)
        retry = {"inputResponses": await _ask_handshake_front(ctx, requests)}
        if "requestState" in result:
            retry["requestState"] = result["requestState"]
    raise InternalError(
        f"{method}: the backend still asked for input after {MAX_BACKEND_INPUT_ROUNDS} rounds"
    )


async def _ask_handshake_front(ctx: McpToolContext, requests: Any) -> dict[str, Any]:
    """The front client's answers to the backend's ``inputRequests``; -32021 for one it
    cannot take (its version has no such request or form), as from a direct server."""
    if not isinstance(requests, dict):
        raise InternalError(f"the backend's inputRequests is not an object: {requests!r}")
    wanted: dict[str, tuple[str, dict[str, Any] | None]] = {}
    for key, request in requests.items():
        kind = request.get("method") if isinstance(request, dict) else None
        if not isinstance(kind, str):
            raise InternalError(f"the backend's input request {key!r} has no method")
        wanted[key] = (kind, request.get("params"))
    answers = await ctx.gather_inputs(wanted)
    for key, (kind, _) in wanted.items():
        if key not in answers:
            raise MissingCapabilityError(capability_for(kind))
    return answers

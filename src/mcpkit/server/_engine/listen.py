"""``subscriptions/listen`` (2026-07-28): one long-lived request whose response stream
carries the change notifications the client opted in to, each tagged with the
subscription's id (the request's JSON-RPC id).

A handshake-era session has no such method (it has ``resources/subscribe`` and the
list-changed notifications every session gets): its ``subscriptions/listen`` is answered
-32601 at once, not held open unanswered until its client gives up.

Its params are checked field by field (-32602 naming the field), and a connection holds at
most ``max_listens_per_connection`` open at once (``OpenListens``): each one is a request
in flight until it ends, and listens alone must never fill the connection's
``max_in_flight_per_connection``, or nothing else it sends would be served."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from mcpkit._exceptions import InternalError, InvalidParamsError, MethodNotFoundError
from mcpkit.server._engine.subscriptions import check_subscribed_uri
from mcpkit.server._eras.mrtr import json_type

if TYPE_CHECKING:
    from mcpkit.server._engine.binding import TransportBinding
    from mcpkit.server._engine.dispatcher import McpDispatcher

LIST_CHANGED = {
    "toolsListChanged": "notifications/tools/list_changed",
    "promptsListChanged": "notifications/prompts/list_changed",
    "resourcesListChanged": "notifications/resources/list_changed",
}
#: Resource URIs one subscription may watch.
DEFAULT_MAX_RESOURCE_SUBSCRIPTIONS = 1000
#: ``subscriptions/listen`` requests one connection may hold open at once; past it -32603.
#: Well under the dispatcher's 128 requests in flight per connection, which they count in.
DEFAULT_MAX_LISTENS_PER_CONNECTION = 16
#: ``subscriptions/listen`` requests one app holds open at once, every connection counted:
#: over stateless HTTP each POST is a connection of its own, which the per-connection bound
#: alone would leave unbounded. Past it -32603.
DEFAULT_MAX_OPEN_LISTENS = 10_000


class OpenListens:
    """The ``subscriptions/listen`` requests open on each connection of one app, at most
    ``max_per_connection`` each, and always fewer than the dispatcher's
    ``max_in_flight_per_connection``: a connection keeps room for its other requests. At
    most ``max_open`` in all (``DEFAULT_MAX_OPEN_LISTENS``; may be set on the app's
    ``engine.listens``)."""

    def __init__(
        self,
        max_per_connection: int,
        dispatcher: McpDispatcher,
        max_open: int = DEFAULT_MAX_OPEN_LISTENS,
    ) -> None:
        if max_per_connection < 0:
            raise ValueError("max_listens_per_connection must not be negative")
        self.max_per_connection = max_per_connection
        self.max_open = max_open
        self._dispatcher = dispatcher
        self._open: dict[str, int] = {}
        self._total = 0

    @property
    def total(self) -> int:
        """The listens open now, every connection counted."""
        return self._total

    @property
    def limit(self) -> int:
        """The bound in force (the dispatcher's may be changed after the app is made)."""
        return min(self.max_per_connection, self._dispatcher.max_in_flight_per_connection - 1)

    def count(self, connection_key: str) -> int:
        """The listens open on a connection now."""
        return self._open.get(connection_key, 0)

    @contextlib.contextmanager
    def hold(self, connection_key: str) -> Iterator[None]:
        """One more listen open on the connection while inside; ``InternalError`` (-32603)
        when it has as many as it may."""
        count = self._open.get(connection_key, 0)
        limit = self.limit
        if count >= limit:
            raise InternalError(
                f"Too many subscriptions/listen open on this connection (at most {limit}): "
                "cancel one, or open one listen naming everything wanted",
                {"maxListens": limit},
            )
        if self._total >= self.max_open:
            raise InternalError(
                f"Too many subscriptions/listen open on this server (at most {self.max_open})",
                {"maxOpenListens": self.max_open},
            )
        self._open[connection_key] = count + 1
        self._total += 1
        try:
            yield
        finally:
            self._total -= 1
            remaining = self._open[connection_key] - 1
            if remaining:
                self._open[connection_key] = remaining
            else:
                del self._open[connection_key]


def listen_filter(params: Any) -> dict[str, Any]:
    """The ``notifications`` object of a ``subscriptions/listen``'s params, each field the
    spec defines checked for its type (``InvalidParamsError`` naming the one that is not);
    an absent one is an empty filter. Other fields are left to their readers."""
    if params is None:
        return {}
    if not isinstance(params, dict):
        raise _wrong_type("params", "an object", params)
    if "notifications" not in params:
        return {}
    wanted = params["notifications"]
    if not isinstance(wanted, dict):
        raise _wrong_type("notifications", "an object", wanted)
    for flag in LIST_CHANGED:
        if flag in wanted and not isinstance(wanted[flag], bool):
            raise _wrong_type(f"notifications.{flag}", "a boolean", wanted[flag])
    if "resourceSubscriptions" in wanted:
        uris = wanted["resourceSubscriptions"]
        if not isinstance(uris, list) or not all(isinstance(u, str) for u in uris):
            raise _wrong_type("notifications.resourceSubscriptions", "a list of URIs", uris)
        for uri in uris:
            try:
                check_subscribed_uri(uri)
            except ValueError as exc:
                raise InvalidParamsError(
                    f"subscriptions/listen: {exc}",
                    {"field": "notifications.resourceSubscriptions"},
                ) from None
    return wanted


def _wrong_type(field: str, expected: str, value: Any) -> InvalidParamsError:
    return InvalidParamsError(
        f'subscriptions/listen: "{field}" must be {expected}, not {json_type(value)}',
        {"field": field},
    )


def handshake_era_listen(binding: TransportBinding) -> MethodNotFoundError:
    """The refusal of a ``subscriptions/listen`` outside the 2026-07-28 era."""
    session = binding.session
    version = session.protocol_version if session is not None else None
    return MethodNotFoundError(
        "Method not found: subscriptions/listen is a 2026-07-28 request, and this session "
        f"speaks {version or 'a handshake-era version'}: use resources/subscribe (the "
        "list_changed notifications come without asking)"
    )

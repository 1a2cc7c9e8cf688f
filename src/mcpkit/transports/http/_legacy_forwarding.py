"""Legacy SSE across instances: a POST that reaches an instance other than the one holding
its session's stream is forwarded over the message bus (bounded, with a timeout), and
the holder feeds it to the session's connection."""

from __future__ import annotations

import asyncio
import base64
import logging
import secrets
from typing import TYPE_CHECKING, Any, Protocol

from mcpkit._exceptions import StoreUnavailableError
from mcpkit.transports.http._streamable.cluster import SessionCluster, instance_channel

if TYPE_CHECKING:
    pass


logger = logging.getLogger("mcpkit.http")

#: Between the owning instance's id and the rest of a legacy session id.
_OWNER_SEPARATOR = "."


class DeliversForwarded(Protocol):
    """The legacy SSE endpoint as forwarding sees it (``LegacySseHandler``): it feeds a
    message posted elsewhere to one of its sessions, and says whether it could."""

    def deliver(self, session_id: str, body: bytes, identity: str | None) -> bool: ...


class _ForwardsFull(Exception):
    """Too many forwarded POSTs already wait for their confirmation."""


class _Forwarding:
    """Legacy sessions across instances: hands POSTs for sessions held elsewhere to their
    owner over the bus, and takes those the other instances hand to this one."""

    def __init__(
        self,
        handler: DeliversForwarded,
        cluster: SessionCluster,
        timeout: float,
        max_pending: int,
    ) -> None:
        self.handler = handler
        self.cluster = cluster
        self.bus = cluster.bus
        self.instance_id = cluster.instance_id
        self.timeout = timeout
        self.max_pending = max_pending
        #: Confirmations awaited, by ticket: True when the owner took the message.
        self._pending: dict[str, asyncio.Future[bool]] = {}
        self.bus.subscribe(instance_channel(self.instance_id), self._on_instance_message)

    def new_session_id(self) -> str:
        return f"{self.instance_id}{_OWNER_SEPARATOR}{secrets.token_urlsafe(24)}"

    def owner_elsewhere(self, session_id: str) -> str | None:
        """The other instance a session id names as its owner; None if it names none, or this one."""
        owner, separator, _ = session_id.rpartition(_OWNER_SEPARATOR)
        if not separator or not owner or owner == self.instance_id:
            return None
        return owner

    async def ready(self) -> None:
        """Start the bus (once, shared with Streamable HTTP): forwarded messages and their
        confirmations arrive on it. Raises ``StoreUnavailableError``."""
        if not self.cluster.started:
            await self.cluster.start()

    # the instance that got the POST -------------------------------------------------------

    async def forward(
        self, owner: str, session_id: str, body: bytes, identity: str | None = None
    ) -> bool:
        """Hand ``body``, posted by ``identity`` (``session_owner`` of the poster), to
        ``owner``; True once it took it, False when it holds no such session of that
        identity or did not say so within ``timeout``. Raises ``StoreUnavailableError``
        (the bus is down) and ``_ForwardsFull``."""
        await self.ready()
        if len(self._pending) >= self.max_pending:
            raise _ForwardsFull
        ticket = secrets.token_hex(8)
        # Registered before publishing: an in-process bus confirms within ``publish``.
        confirmed: asyncio.Future[bool]
        confirmed = self._pending[ticket] = asyncio.get_running_loop().create_future()
        message = {
            "op": "legacy_message",
            "session_id": session_id,
            "reply_to": self.instance_id,
            "ticket": ticket,
            "identity": identity,
            **_pack_body(body),
        }
        try:
            if await self.bus.publish(instance_channel(owner), message) == 0:
                return False  # nobody listens for that instance: it is gone
            async with asyncio.timeout(self.timeout):
                return await confirmed
        except TimeoutError:
            logger.debug(
                "instance %s did not confirm a message for legacy session %s", owner, session_id
            )
            return False
        finally:
            self._pending.pop(ticket, None)

    def _confirmed(self, message: dict[str, Any]) -> None:
        waiting = self._pending.pop(message.get("ticket", ""), None)
        if waiting is not None and not waiting.done():
            waiting.set_result(bool(message.get("taken")))

    # the owner ----------------------------------------------------------------------------

    async def _on_instance_message(self, message: dict[str, Any]) -> None:
        op = message.get("op")
        if op == "legacy_message":
            await self._take(message)
        elif op == "legacy_taken":
            self._confirmed(message)

    async def _take(self, message: dict[str, Any]) -> None:
        """A message posted elsewhere for one of this instance's sessions: feed it, then
        tell the sender whether it was taken."""
        identity = message.get("identity")
        taken = self.handler.deliver(
            message.get("session_id", ""),
            _unpack_body(message),
            identity if isinstance(identity, str) else None,
        )
        reply = {"op": "legacy_taken", "ticket": message.get("ticket"), "taken": taken}
        try:
            await self.bus.publish(instance_channel(message.get("reply_to", "")), reply)
        except StoreUnavailableError as exc:  # the sender times out and answers 404
            logger.warning("could not confirm a forwarded legacy SSE message: %s", exc)


def _pack_body(body: bytes) -> dict[str, str]:
    """A POST body as a JSON field: as text when it is UTF-8 (JSON-RPC always is), else in
    base64, so even a malformed body reaches the owner byte for byte and is answered there."""
    try:
        return {"body": body.decode("utf-8")}
    except UnicodeDecodeError:
        return {"body_b64": base64.b64encode(body).decode("ascii")}


def _unpack_body(message: dict[str, Any]) -> bytes:
    text = message.get("body")
    if isinstance(text, str):
        return text.encode("utf-8")
    return base64.b64decode(message.get("body_b64") or b"")

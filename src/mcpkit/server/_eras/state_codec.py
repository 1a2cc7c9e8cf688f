"""``RequestStateCodec``: signing and verifying the ``requestState`` a 2026-07-28 server
hands a client between rounds of a multi-round-trip request (``mrtr``), whose payload
``state_binding`` binds to the caller, the arguments and an expiry."""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from typing import Any

import msgspec

from mcpkit._exceptions import InvalidParamsError

#: Largest ``requestState`` accepted back from a client.
DEFAULT_MAX_REQUEST_STATE_BYTES = 64 * 1024


class RequestStateCodec:
    """Signs and verifies ``requestState`` (HMAC-SHA256 over a compact JSON payload).

    Instances behind a load balancer must share ``secret`` so any of them can verify.
    """

    def __init__(
        self, secret: bytes | None = None, *, max_bytes: int = DEFAULT_MAX_REQUEST_STATE_BYTES
    ) -> None:
        self._key = secret or secrets.token_bytes(32)
        #: Whether the secret was given (else made here, known to this process alone).
        self.chosen = bool(secret)
        self.max_bytes = max_bytes

    def share(self, secret: bytes) -> None:
        """Take ``secret`` when none was chosen: the workers of one server (``--workers``)
        each make an app, and any of them may get a request another one's state names."""
        if not self.chosen:
            self._key = secret

    def encode(self, payload: dict[str, Any]) -> str:
        body = base64.urlsafe_b64encode(msgspec.json.encode(payload)).rstrip(b"=")
        mac = base64.urlsafe_b64encode(hmac.new(self._key, body, hashlib.sha256).digest()).rstrip(
            b"="
        )
        return (body + b"." + mac).decode()

    def decode(self, state: Any) -> dict[str, Any]:
        """The payload of a state we issued; ``InvalidParamsError`` for anything else."""
        if not isinstance(state, str) or len(state) > self.max_bytes:
            raise InvalidParamsError("Invalid requestState")
        body, _, mac = state.encode().partition(b".")
        expected = base64.urlsafe_b64encode(
            hmac.new(self._key, body, hashlib.sha256).digest()
        ).rstrip(b"=")
        if not mac or not hmac.compare_digest(mac, expected):
            raise InvalidParamsError(
                "Invalid requestState: it was altered or not issued by this server"
            )
        try:
            payload = msgspec.json.decode(base64.urlsafe_b64decode(body + b"=" * (-len(body) % 4)))
        except (ValueError, msgspec.DecodeError):
            raise InvalidParamsError("Invalid requestState") from None
        if not isinstance(payload, dict):
            raise InvalidParamsError("Invalid requestState")
        return payload


__all__ = ["DEFAULT_MAX_REQUEST_STATE_BYTES", "RequestStateCodec"]

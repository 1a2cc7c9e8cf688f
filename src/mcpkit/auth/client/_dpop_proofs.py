"""DPoP proofs (RFC 9449) for the provider's requests, each with the ``DPoP-Nonce`` its
origin last gave.

Makes no key (``DPoPProofFactory`` does) and decides nothing about tokens.
"""

from __future__ import annotations

from typing import Any

from mcpkit.auth.client._discovery import origin
from mcpkit.auth.client._settings import ProviderSettings
from mcpkit.auth.client._storage import OAuthToken


class DPoPProofs:
    """The proofs of one provider and the nonces it was given; none when DPoP is off."""

    def __init__(self, settings: ProviderSettings) -> None:
        self._settings = settings
        self._nonces: dict[str, str] = {}

    @property
    def enabled(self) -> bool:
        """Whether the provider asks for DPoP-bound tokens."""
        return self._settings.dpop is not None

    def apply(self, context: Any, headers: dict[str, str], token: OAuthToken | None) -> None:
        """A fresh proof for this request to the MCP server, when ``token`` is DPoP-bound."""
        dpop = self._settings.dpop
        if dpop is None or token is None or not token.is_dpop:
            return
        headers["DPoP"] = dpop.proof(
            context.method,
            context.url,
            access_token=token.access_token,
            nonce=self._nonces.get(origin(context.url)),
        )

    def apply_to_token_request(self, headers: dict[str, str], endpoint: str) -> None:
        """A fresh proof for a POST to the token endpoint, when DPoP is on."""
        dpop = self._settings.dpop
        if dpop is not None:
            headers["DPoP"] = dpop.proof("POST", endpoint, nonce=self._nonces.get(origin(endpoint)))

    def remember(self, url: str, nonce: str) -> None:
        """Keep the nonce the origin of ``url`` gave, for its next proofs."""
        self._nonces[origin(url)] = nonce

    def observe(self, context: Any) -> None:
        """Remember a ``DPoP-Nonce`` a response carried (2xx and SSE included)."""
        nonce = getattr(context, "dpop_nonce", None)
        if nonce:
            self.remember(context.url, nonce)

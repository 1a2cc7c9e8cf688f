"""``McpClient.http(url, auth=...)``: an ``OAuthClientProvider`` installed on a copy of the
transport's options, a usable token made ready before the first request (the one kept, a
refresh, else a login), and the provider closed with the client.

``auth`` is ``"oauth"`` (``OAuthLogin()``), an ``OAuthLogin``, or an ``OAuthClientProvider``
of the caller's (left open: it is theirs).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable
from typing import Any

from mcpkit.auth.client import OAuthClientProvider
from mcpkit.auth.client._login import OAuthLogin
from mcpkit.client._http_options import HttpClientTransportOptions

__all__ = ["HttpLogin"]


class HttpLogin:
    """The ``auth`` of one HTTP client: ``options`` to make its transport with,
    ``starter`` to start it, ``aclose`` to end it."""

    def __init__(self, options: HttpClientTransportOptions | str, auth: Any) -> None:
        if isinstance(options, str):
            options = HttpClientTransportOptions(endpoint=options)
        else:
            options = dataclasses.replace(options)  # the caller's options keep their hooks
        self._owned = not isinstance(auth, OAuthClientProvider)
        if auth == "oauth":
            auth = OAuthLogin()
        if isinstance(auth, OAuthLogin):
            auth = auth.provider(options.endpoint)
        if not isinstance(auth, OAuthClientProvider):
            raise TypeError(
                f"auth takes 'oauth', an OAuthLogin or an OAuthClientProvider, not {auth!r}"
            )
        self.provider = auth
        self.options = auth.install(options)

    def starter(self, start: Callable[[], Awaitable[None]]) -> Callable[[], Awaitable[None]]:
        """``start`` (the transport's), once the provider has a token to send."""

        async def start_with_token() -> None:
            await self.provider.ensure_token()
            await start()

        return start_with_token

    async def aclose(self) -> None:
        """Close the provider, unless the caller gave it."""
        if self._owned:
            await self.provider.aclose()

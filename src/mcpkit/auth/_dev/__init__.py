"""``DevAuthServer``: a development identity provider (OpenID Connect) with users in memory."""

from mcpkit.auth._dev._server import DevAuthServer, DevUser

__all__ = ["DevAuthServer", "DevUser"]

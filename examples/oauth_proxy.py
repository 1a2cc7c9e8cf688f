"""An MCP server that signs its users in: OAuthProxy in front of DevAuthServer.

    python examples/oauth_proxy.py

serves the development identity provider on http://127.0.0.1:9000 (users alice/wonderland
and bob/builder) and the MCP server with its authorization server on
http://127.0.0.1:8000 (the endpoint at /mcp). Point an MCP client that speaks OAuth (the
MCP Inspector, Claude, mcpkit's OAuthClientProvider) at http://127.0.0.1:8000/mcp: it
registers, the browser shows the consent page, then the provider's login, and the
``whoami`` tool answers with the user signed in.

For a real provider, replace DevAuthServer by its discovery URL and the client id and
secret it gave for the redirect URI http://127.0.0.1:8000/oauth/callback.
"""

from __future__ import annotations

import asyncio

import uvicorn

from mcpkit import McpServerApp, McpToolContext, mcp_server, mcp_tool
from mcpkit.auth import DevAuthServer, DevUser, OAuthProxy, OidcUpstream
from mcpkit.transports.http import StreamableHttpServerOptions, create_asgi_app

MCP = "http://127.0.0.1:8000"
IDP = "http://127.0.0.1:9000"


@mcp_server(name="whoami", version="1.0.0")
class WhoAmI:
    @mcp_tool()
    def whoami(self, ctx: McpToolContext) -> str:
        """Who signed in, as the proxy's token says."""
        auth = ctx.auth
        if auth is None:
            return "nobody"
        return f"{auth.claims.get('name')} <{auth.claims.get('email')}> via {auth.claims.get('upstream')}"


def build() -> tuple[DevAuthServer, object]:
    """The identity provider and the MCP server's ASGI app, wired together."""
    dev = DevAuthServer(
        IDP,
        [
            DevUser("alice", "wonderland", email="alice@example.com", name="Alice"),
            DevUser("bob", "builder", email="bob@example.com", name="Bob"),
        ],
    )
    dev.add_client("mcp-server", "dev-secret", [f"{MCP}/oauth/callback"])
    proxy = OAuthProxy(
        upstream=OidcUpstream(dev.discovery_url, "mcp-server", "dev-secret", name="dev"),
        base_url=MCP,
        resource=f"{MCP}/mcp",
        scopes=("mcp",),
    )
    options = StreamableHttpServerOptions(port=8000, auth_server=proxy)
    return dev, create_asgi_app(McpServerApp(WhoAmI), options)


async def main() -> None:
    dev, app = build()
    servers = [
        uvicorn.Server(uvicorn.Config(dev, host="127.0.0.1", port=9000)),
        uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=8000)),  # type: ignore[arg-type]
    ]
    await asyncio.gather(*(server.serve() for server in servers))


if __name__ == "__main__":
    asyncio.run(main())

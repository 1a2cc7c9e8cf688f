"""Names two servers of one config would both serve: each is mounted under its name as
prefix, so server ``a``'s tool ``b_c`` and server ``a_b``'s tool ``c`` are both ``a_b_c``,
and one would silently hide the other."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from mcpkit._exceptions import MCPError
from mcpkit.server._app import McpServerApp
from mcpkit.server._prefixing import prefix_name, prefix_uri


class ServerNameClashError(MCPError, ValueError):
    """Two servers of a servers config would serve the same tool or prompt name, or the
    same resource URI: the proxy refuses to start, naming both."""


def _served(prefix: str, app: McpServerApp) -> Iterator[tuple[str, str, str]]:
    """(kind, name served, the server's own name) of each entry of ``app``."""
    catalog = app.catalog
    for tool in catalog.list_tools():
        yield "tool", prefix_name(prefix, tool.name), tool.name
    for prompt in catalog.list_prompts():
        yield "prompt", prefix_name(prefix, prompt.name), prompt.name
    for resource in catalog.list_resources():
        yield "resource", prefix_uri(prefix, resource.uri), resource.uri
    for template in catalog.list_resource_templates():
        served = prefix_uri(prefix, template.uri_template)
        yield "resource template", served, template.uri_template


def check_clashes(apps: Mapping[str, McpServerApp]) -> None:
    """Raise ``ServerNameClashError`` for the first name two of ``apps`` (server name ->
    its started proxy app) would both serve."""
    seen: dict[tuple[str, str], tuple[str, str]] = {}
    for server, app in apps.items():
        for kind, served, own in _served(server, app):
            first = seen.setdefault((kind, served), (server, own))
            if first[0] != server:
                raise ServerNameClashError(
                    f"{kind} {served!r} is both {first[1]!r} of server {first[0]!r} and "
                    f"{own!r} of server {server!r}: rename one of the servers in the config"
                )

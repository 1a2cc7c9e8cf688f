"""A hostile ``resources/read`` against resource templates over Streamable HTTP: a URI of
a megabyte that no template fits is answered -32002 at once, not after every way of
splitting it between the template's values was tried on the event loop (hours for
``{city}-{date}``), and the server serves on."""

from __future__ import annotations

from mcpkit import McpCallError, McpServerApp
from tests.http_server import http_client


def build() -> McpServerApp:
    app = McpServerApp("weather")

    @app.resource("weather://{city}-{date}")
    def forecast(city: str, date: str) -> str:
        return f"{city} on {date}: sunny"

    @app.resource("files://{name}{.ext}")
    def file(name: str, ext: str = "") -> str:
        return f"{name} ({ext or 'no extension'})"

    return app


async def test_a_long_uri_no_template_fits_is_not_found_and_the_server_serves_on() -> None:
    async with http_client(build(), "2025-11-25") as client:
        for uri in ("weather://" + "x-" * 50_000 + "/", "files://" + "x." * 50_000 + "/"):
            try:
                await client.read_resource(uri)
            except McpCallError as refused:
                assert refused.code == -32002
            else:
                raise AssertionError(f"{uri[:20]}... was read")
        read = await client.read_resource("weather://new-york-2026-01-01")
        assert read.contents[0].text == "new-york-2026-01 on 01: sunny"  # type: ignore[union-attr]

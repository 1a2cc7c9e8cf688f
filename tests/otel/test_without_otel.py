"""Off by default: serving and calling import nothing of OpenTelemetry, and without the
extra ``mcpkit.otel`` says which extra to install (fresh interpreters)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_serving_and_calling_without_instrumentation_imports_no_opentelemetry():
    done = run(
        """
        import asyncio, sys

        from mcpkit import McpClient, McpServerApp, mcp_tool
        from mcpkit.transports.http import create_asgi_app


        @mcp_tool()
        async def get_weather(city: str) -> str:
            return f"{city}: sunny"


        async def main():
            app = McpServerApp(get_weather)
            create_asgi_app(app)
            async with McpClient.in_memory(app) as client:
                result = await client.call_tool("get_weather", {"city": "Oslo"})
                assert result.content[0].text == "Oslo: sunny", result

        asyncio.run(main())
        print(sorted(m for m in sys.modules if m.startswith("opentelemetry")))
        """
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_without_the_extra_mcpkit_otel_names_the_extra_and_mcpkit_still_works():
    done = run(
        """
        import importlib.abc, sys

        class NoOpenTelemetry(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path, target=None):
                if name == "opentelemetry" or name.startswith("opentelemetry."):
                    raise ModuleNotFoundError(f"No module named {name!r}", name=name)
                return None

        sys.meta_path.insert(0, NoOpenTelemetry())
        import mcpkit
        from mcpkit import McpServerApp
        try:
            import mcpkit.otel
        except ImportError as exc:
            print(exc)
        else:
            raise SystemExit("mcpkit.otel imported without opentelemetry")
        """
    )
    assert done.returncode == 0, done.stderr
    assert "pip install 'mcpkit[otel]'" in done.stdout

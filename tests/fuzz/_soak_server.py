"""examples/everything.py over Streamable HTTP with options ``mcpkit run`` has no flag for
(a short session idle timeout, so that a soak run sees sessions expire), for
tests/fuzz/_soak.py. Prints the same banner as ``mcpkit run`` once it serves.

    python tests/fuzz/_soak_server.py [--idle-timeout 3] [--port 0]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from mcpkit.cli._loader import load_app
from mcpkit.transports.http import StreamableHttpServerOptions
from mcpkit.transports.http._server.serve import bind_http_socket, run_http_server

EVERYTHING = Path(__file__).resolve().parents[2] / "examples" / "everything.py"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--idle-timeout", type=float, default=3.0)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--sse-keep-alive-ms", type=int, default=1000)
    args = parser.parse_args()
    app = load_app(str(EVERYTHING))
    options = StreamableHttpServerOptions(
        port=args.port,
        session_idle_timeout=args.idle_timeout,
        # Short keep-alives: a dropped GET stream is noticed on the next one.
        sse_keep_alive_ms=args.sse_keep_alive_ms,
    )
    sock = bind_http_socket(options.host, options.port)

    def banner() -> None:
        port = sock.getsockname()[1]
        sys.stderr.write(f"soak: serving {app.name} on http://127.0.0.1:{port}{options.endpoint}\n")
        sys.stderr.flush()

    run_http_server(app, options, sock=sock, on_started=banner)


if __name__ == "__main__":
    main()

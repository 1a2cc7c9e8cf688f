"""mcpkit served by ``mcpkit run -t http`` itself (``mcpkit.cli.main``, in this process):
uvicorn's protocol inside the command's header watch and the collector frozen after
start-up, as the command does being the program; the same app as ``http_mcpkit.py``,
stateless or stateful by ``BENCH_MODE``.

    python http_mcpkit_served.py PORT
"""

import sys

from http_mcpkit import STATELESS, Bench

from mcpkit import McpServerApp

server = McpServerApp(Bench)

if __name__ == "__main__":
    from mcpkit.cli import main

    command = ["run", f"{__file__}:server", "-t", "http", "--host", "127.0.0.1"]
    main([*command, "--port", sys.argv[1], *(["--stateless"] if STATELESS else [])])

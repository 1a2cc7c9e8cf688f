"""Tool search on a large catalog: an app of 1,000 tools behind ``ToolSearch``, a client
in memory. Measures what one ``search_tools`` call costs end to end (the index made once
per set of tools, then reused) against listing every tool, the size of what each sends
back, and how often the tool a query describes comes first.

    .venv/bin/python bench/tool_search.py [--tools 1000] [--queries 200]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import time
from typing import Any

from mcpkit import McpServerApp
from mcpkit.server.middleware import ToolSearch
from mcpkit.testing import connected

VERBS = ["get", "list", "create", "delete", "update", "search", "export", "sync", "archive"]
NOUNS = [
    "invoice", "customer", "order", "ticket", "report", "user", "project", "file", "email",
    "calendar", "payment", "shipment", "contract", "device", "alert", "backup", "license",
]  # fmt: skip
DOMAINS = ["billing", "support", "crm", "storage", "security", "logistics", "hr", "sales"]


def catalog(count: int, seed: int = 7) -> tuple[McpServerApp, list[tuple[str, str]]]:
    """``count`` tools, each named verb_noun_domain_n with a description of its own; and
    for each, a query a model might write for it."""
    rng = random.Random(seed)
    app = McpServerApp("large")
    queries: list[tuple[str, str]] = []
    for n in range(count):
        verb, noun, domain = rng.choice(VERBS), rng.choice(NOUNS), rng.choice(DOMAINS)
        name = f"{verb}_{noun}_{domain}_{n}"
        marker = f"tag{n}x"  # what tells this tool from its look-alikes
        description = f"{verb.title()} a {noun} in the {domain} system ({marker})."

        def tool(value: str = "") -> str:
            return value

        app.tool(name=name, description=description)(tool)
        queries.append((name, f"{verb} {noun} {domain} {marker}"))
    return app, queries


async def measure(count: int, runs: int) -> dict[str, Any]:
    app, queries = catalog(count)
    app.add_middleware(ToolSearch(app, max_results=8))
    plain, _ = catalog(count)
    async with connected(app) as client, connected(plain) as full:
        started = time.perf_counter()
        await client.call_tool("search_tools", {"query": "warm up"})  # the index made
        first = time.perf_counter() - started
        sample = random.Random(1).sample(queries, min(runs, len(queries)))
        hits, sizes = 0, []
        started = time.perf_counter()
        for name, query in sample:
            result = await client.call_tool("search_tools", {"query": query})
            text = result.content[0].text  # type: ignore[union-attr]
            sizes.append(len(text))
            hits += json.loads(text)[0]["name"] == name
        per_search = (time.perf_counter() - started) / len(sample)
        started = time.perf_counter()
        listed = await full.list_tools()
        per_list = time.perf_counter() - started
        listed_bytes = len(json.dumps([tool.input_schema for tool in listed])) + sum(
            len(tool.name) + len(tool.description or "") for tool in listed
        )
    return {
        "tools": count,
        "first search (index made) ms": round(first * 1000, 2),
        "search ms": round(per_search * 1000, 3),
        "list all ms": round(per_list * 1000, 2),
        "search answer bytes": round(sum(sizes) / len(sizes)),
        "list answer bytes (about)": listed_bytes,
        "top-1 hits": f"{hits}/{len(sample)}",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tools", type=int, default=1000)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    for key, value in asyncio.run(measure(args.tools, args.queries)).items():
        print(f"{key:28} {value}")


if __name__ == "__main__":
    main()

"""Memory of file resources read at once: an app reads at most ``max_concurrent_file_reads``
files at a time, each read holds the file once (and its base64 once, for a blob), and a file
past ``max_bytes`` is refused with an error saying so. Measured with tracemalloc on real files
read through the app's worker threads, as the engine reads them."""

from __future__ import annotations

import asyncio
import base64
import os
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from mcpkit import DirectoryResource, FileResource, McpCallError, McpServerApp, mcp_tool
from mcpkit._exceptions import InternalError
from mcpkit.server._files.contents import DEFAULT_MAX_CONCURRENT_FILE_READS
from mcpkit.testing import connected

SIZE = 2 * 1024 * 1024
READERS = 16


@mcp_tool
def noop() -> str:
    """Nothing."""
    return ""


async def peak_of_concurrent_reads(app: McpServerApp, read: Any) -> int:
    """The peak of memory traced while ``READERS`` reads run at once in the app's workers,
    each dropping its result in its thread (what the resource holds, not how fast the
    event loop takes results)."""

    def read_and_drop() -> bool:
        contents = read()
        return "blob" in contents or "text" in contents

    async def one() -> None:
        assert await app.sync_workers.run(read_and_drop, {})

    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        await asyncio.gather(*(one() for _ in range(READERS)))
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        app.sync_workers.close()


@pytest.mark.parametrize(("name", "copies"), [("big.bin", 2.67), ("big.txt", 2.0)])
async def test_concurrent_reads_of_a_large_file_are_bounded(
    tmp_path: Path, name: str, copies: float
) -> None:
    path = tmp_path / name
    path.write_bytes(os.urandom(SIZE) if name.endswith(".bin") else b"x" * SIZE)
    app = McpServerApp(noop, max_concurrent_file_reads=1)
    resource = app.add_resource(FileResource(path, watch=False))
    peak = await peak_of_concurrent_reads(app, resource.read)
    # One read at a time, holding the file and its base64 (a blob: 1 + 4/3, then 4/3 + 4/3
    # once the file is let go) or its text (1 + 1). Unbounded, with every chunk joined and
    # the base64 made whole, the same 16 reads peaked at 10-12 (blob) and 5-7 (text) x SIZE.
    assert peak < (copies + 0.5) * SIZE, f"peak {peak / SIZE:.2f} x the file's size"


async def test_a_directory_shares_the_apps_bound(tmp_path: Path) -> None:
    (tmp_path / "big.bin").write_bytes(os.urandom(SIZE))
    app = McpServerApp(noop, max_concurrent_file_reads=2)
    directory = app.add_resource(DirectoryResource(tmp_path, watch=False))
    peak = await peak_of_concurrent_reads(app, lambda: directory.read("big.bin"))
    assert peak < (2 * 2.67 + 0.5) * SIZE, f"peak {peak / SIZE:.2f} x the file's size"


async def test_contents_read_once_are_whole(tmp_path: Path) -> None:
    data = os.urandom(300_001)  # not a multiple of 3: the base64 ends padded
    (tmp_path / "a.bin").write_bytes(data)
    (tmp_path / "u.txt").write_text("héllo wörld\n" * 1000, encoding="utf-8")
    (tmp_path / "latin.txt").write_bytes("caf\xe9".encode("latin-1"))  # labelled text, not UTF-8
    (tmp_path / "empty").write_bytes(b"")
    directory = DirectoryResource(tmp_path, watch=False)
    assert base64.b64decode(directory.read("a.bin")["blob"]) == data
    assert directory.read("u.txt")["text"] == "héllo wörld\n" * 1000
    latin = directory.read("latin.txt")
    assert base64.b64decode(latin["blob"]) == b"caf\xe9" and latin["mimeType"] == "text/plain"
    assert directory.read("empty") == {"text": "", "mimeType": "text/plain"}


def test_the_bound_has_a_named_default() -> None:
    assert DEFAULT_MAX_CONCURRENT_FILE_READS >= 1
    assert McpServerApp(noop).max_concurrent_file_reads == DEFAULT_MAX_CONCURRENT_FILE_READS
    with pytest.raises(ValueError, match="max_concurrent_file_reads"):
        McpServerApp(noop, max_concurrent_file_reads=0)


async def test_a_file_past_max_bytes_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "big.bin"
    path.write_bytes(b"\x00" * 1001)
    resource = FileResource(path, uri="files://big", max_bytes=1000, watch=False)
    with pytest.raises(InternalError) as raised:
        resource.read()
    assert raised.value.data == {"uri": "files://big", "size": 1001, "maxBytes": 1000}
    app = McpServerApp(noop)
    app.add_resource(resource)
    async with connected(app) as client:
        with pytest.raises(McpCallError) as caught:
            await client.read_resource("files://big")
    assert caught.value.code == -32603
    assert "larger than the 1000 bytes" in str(caught.value) and "max_bytes" in str(caught.value)

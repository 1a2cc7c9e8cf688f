"""FileResource and DirectoryResource on real temporary directories: listing, text and blob
reads, every traversal form refused, subscriptions fed by real file writes, list_changed on
create and delete, in memory and over HTTP, in both eras; no polling with nobody listening."""

from __future__ import annotations

import asyncio
import base64
import mimetypes
import os
from pathlib import Path

import pytest

from mcpkit import DirectoryResource, FileResource, McpCallError, McpClient, McpServerApp, mcp_tool
from mcpkit._exceptions import ResourceNotFoundError
from mcpkit.server._files.contents import guess_mime_type
from mcpkit.testing import connected
from tests.http_server import serving

ERAS = ["2025-11-25", "2026-07-28"]
PREFIX = "files://docs/"
POLL = 0.02


@mcp_tool
def noop() -> str:
    """Nothing."""
    return ""


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    (root / "sub").mkdir(parents=True)
    (root / ".git").mkdir()
    (root / "a.txt").write_text("hello\n")
    (root / "b.bin").write_bytes(b"\x00\x01\x02")
    (root / "sub" / "c.json").write_text('{"x": 1}')
    (root / ".env").write_text("SECRET=1")
    (root / ".git" / "config").write_text("x")
    (tmp_path / "outside.txt").write_text("TOP SECRET")
    os.symlink(tmp_path / "outside.txt", root / "out_link.txt")
    os.symlink(tmp_path, root / "out_dir")
    os.symlink(root / "a.txt", root / "in_link.txt")
    return root


def make_app(root: Path, **options: object) -> tuple[McpServerApp, DirectoryResource]:
    app = McpServerApp(noop)
    directory = app.add_resource(
        DirectoryResource(root, uri_prefix=PREFIX, poll_interval=POLL, **options)  # type: ignore[arg-type]
    )
    return app, directory


async def test_listing_and_reads(tree: Path) -> None:
    app, _ = make_app(tree)
    async with connected(app) as client:
        listed = {r.uri: r for r in await client.list_resources()}
        assert sorted(listed) == [
            PREFIX + n for n in ("a.txt", "b.bin", "in_link.txt", "sub/c.json")
        ]
        assert listed[PREFIX + "a.txt"].size == 6
        assert listed[PREFIX + "sub/c.json"].mime_type == "application/json"
        [template] = await client.list_resource_templates()
        assert template.uri_template == PREFIX + "{+path}"
        text = (await client.read_resource(PREFIX + "a.txt")).contents[0]
        assert text.text == "hello\n" and text.mime_type == "text/plain"
        blob = (await client.read_resource(PREFIX + "b.bin")).contents[0]
        assert base64.b64decode(blob.blob) == b"\x00\x01\x02"
        # a file made after the listing is readable through the template
        (tree / "sub" / "late.md").write_text("# late")
        late = (await client.read_resource(PREFIX + "sub/late.md")).contents[0]
        assert late.text == "# late" and late.mime_type == "text/markdown"


INVALID = [
    "../outside.txt",
    "sub/../../outside.txt",
    "%2e%2e/outside.txt",
    "%2E%2E%2Foutside.txt",
    "sub%2f..%2f..%2foutside.txt",
    "./a.txt",
    "sub//c.json",
    "/etc/passwd",
    "%2fetc%2fpasswd",
    "..%5coutside.txt",
    "a.txt%00.png",
    "C:/Windows/win.ini",
]
NOT_FOUND = ["out_link.txt", "out_dir/outside.txt", ".env", ".git/config", "missing.txt", "sub"]


@pytest.mark.parametrize("path", INVALID)
async def test_traversal_spellings_are_invalid_params(tree: Path, path: str) -> None:
    app, _ = make_app(tree)
    async with connected(app) as client:
        with pytest.raises(McpCallError) as caught:
            await client.read_resource(PREFIX + path)
        assert caught.value.code == -32602
        assert "TOP SECRET" not in f"{caught.value} {caught.value.data}"


@pytest.mark.parametrize("path", NOT_FOUND)
async def test_what_lies_outside_or_is_excluded_is_not_found(tree: Path, path: str) -> None:
    app, _ = make_app(tree)
    async with connected(app) as client:
        with pytest.raises(McpCallError) as caught:
            await client.read_resource(PREFIX + path)
        assert caught.value.code == -32002


async def test_pattern_and_size_bounds(tree: Path) -> None:
    (tree / "sub" / "small.json").write_text("[]")
    app = McpServerApp(noop)
    app.add_resource(DirectoryResource(tree, uri_prefix=PREFIX, pattern="**/*.json", max_bytes=5))
    async with connected(app) as client:
        assert [r.uri for r in await client.list_resources()] == [
            PREFIX + "sub/c.json",
            PREFIX + "sub/small.json",
        ]
        with pytest.raises(McpCallError) as caught:
            await client.read_resource(PREFIX + "a.txt")  # exists, not matched
        assert caught.value.code == -32002
        with pytest.raises(McpCallError) as too_big:
            await client.read_resource(PREFIX + "sub/c.json")
        assert too_big.value.code == -32603 and "max_bytes" in str(too_big.value)
        assert (await client.read_resource(PREFIX + "sub/small.json")).contents[0].text == "[]"


async def test_max_files_bounds_the_listing(tree: Path) -> None:
    app, directory = make_app(tree, max_files=2)
    async with connected(app) as client:
        assert len(await client.list_resources()) == 2
        assert directory.truncated
        assert (await client.read_resource(PREFIX + "sub/c.json")).contents[0].text == '{"x": 1}'


async def next_note(stream: object, method: str, timeout: float = 5.0) -> object:
    async with asyncio.timeout(timeout):
        async for note in stream:  # type: ignore[attr-defined]
            if note.method == method:
                return note
    raise AssertionError(f"the stream ended before {method}")


async def exercise(client: McpClient, tree: Path) -> None:
    """Subscribe to a.txt, write it: updated; create and delete files: list_changed."""
    uri = PREFIX + "a.txt"
    async with client.listen(resources_list_changed=True, resource_subscriptions=[uri]) as stream:
        (tree / "a.txt").write_text("changed, and longer\n")
        note = await next_note(stream, "notifications/resources/updated")
        assert note.uri == uri  # type: ignore[attr-defined]
        assert (await client.read_resource(uri)).contents[0].text == "changed, and longer\n"
        (tree / "new.txt").write_text("new")
        await next_note(stream, "notifications/resources/list_changed")
        assert PREFIX + "new.txt" in [r.uri for r in await client.list_resources()]
        (tree / "new.txt").unlink()
        await next_note(stream, "notifications/resources/list_changed")
        assert PREFIX + "new.txt" not in [r.uri for r in await client.list_resources()]


@pytest.mark.parametrize("era", ERAS)
async def test_updates_and_list_changed_in_memory(tree: Path, era: str) -> None:
    app, _ = make_app(tree)
    async with connected(app, protocol_version=era) as client:
        await exercise(client, tree)


@pytest.mark.parametrize("era", ERAS)
async def test_updates_and_list_changed_over_http(tree: Path, era: str) -> None:
    app, _ = make_app(tree)
    async with serving(app) as (url, _asgi), McpClient.http(url, protocol_version=era) as client:
        await exercise(client, tree)


async def test_file_resource_updates_and_reads(tmp_path: Path) -> None:
    path = tmp_path / "notes.md"
    path.write_text("v1")
    app = McpServerApp(noop)
    resource = app.add_resource(FileResource(path, uri="notes://main", poll_interval=POLL))
    async with connected(app) as client:
        [listed] = await client.list_resources()
        assert listed.uri == "notes://main" and listed.mime_type == "text/markdown"
        async with client.listen(resource_subscriptions=["notes://main"]) as stream:
            path.write_text("version two")
            await next_note(stream, "notifications/resources/updated")
        assert (await client.read_resource("notes://main")).contents[0].text == "version two"
        path.unlink()
        with pytest.raises(McpCallError) as caught:
            await client.read_resource("notes://main")
        assert caught.value.code == -32002
    assert resource.watching is not None and not resource.watching.running


async def test_no_polling_while_nobody_listens(tree: Path) -> None:
    app, directory = make_app(tree)
    watch = directory.watching
    assert watch is not None
    await asyncio.sleep(POLL * 5)
    assert not watch.running and watch.polls == 0
    async with connected(app):
        assert watch.running
    assert not watch.running
    polls = watch.polls
    await asyncio.sleep(POLL * 5)
    assert watch.polls == polls


def write_undecodable(directory: Path) -> None:
    """A file whose name is no UTF-8 (``os.walk`` gives it with a surrogate escape): no URI
    can name it, so it can neither be listed nor read."""
    with open(os.path.join(os.fsencode(directory), b"bad\xff.txt"), "wb") as file:
        file.write(b"bad")


async def test_a_file_named_in_no_utf_8_is_left_out_of_the_listing(tree: Path) -> None:
    """It made ``add_resource`` raise ``UnicodeEncodeError``, and once the watch ran, ended
    it: no more listing changes, no more updates."""
    write_undecodable(tree)
    app, directory = make_app(tree)
    assert PREFIX + "a.txt" in directory.listed
    async with connected(app) as client:
        async with client.listen(resources_list_changed=True) as stream:
            write_undecodable(tree / "sub")
            (tree / "new.txt").write_text("new")
            await next_note(stream, "notifications/resources/list_changed")
        uris = [r.uri for r in await client.list_resources()]
        assert PREFIX + "new.txt" in uris and not [uri for uri in uris if "bad" in uri]
        with pytest.raises(McpCallError) as caught:
            await client.read_resource(PREFIX + "bad%FF.txt")
        assert caught.value.code == -32002


async def test_a_symlink_swapped_in_after_the_listing_is_not_followed(tree: Path) -> None:
    app, _ = make_app(tree)
    async with connected(app) as client:
        (tree / "a.txt").unlink()
        os.symlink(tree.parent / "outside.txt", tree / "a.txt")
        with pytest.raises(McpCallError) as caught:
            await client.read_resource(PREFIX + "a.txt")
        assert caught.value.code == -32002


def test_bad_construction(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        FileResource(tmp_path / "missing")
    with pytest.raises(ValueError):
        FileResource(tmp_path)
    with pytest.raises(NotADirectoryError):
        (tmp_path / "f").write_text("x")
        DirectoryResource(tmp_path / "f")
    with pytest.raises(TypeError, match="add_resource"):
        McpServerApp(noop).add_resource(object())


# hardening: what a symlink leads to, not only its name --------------------------------------


@pytest.fixture
def linked(tmp_path: Path) -> Path:
    """A root whose innocent names link to hidden files and directories inside it."""
    root = tmp_path / "root"
    (root / ".git").mkdir(parents=True)
    (root / ".env").write_text("SECRET=1")
    (root / ".git" / "config").write_text("[core] secret")
    (root / "plain.txt").write_text("plain")
    (tmp_path / "outside.txt").write_text("TOP SECRET")
    os.symlink(root / ".env", root / "notes.txt")  # absolute target
    os.symlink(".env", root / "relative.txt")  # relative target
    os.symlink(root / ".git", root / "cfg")  # a directory
    os.symlink(root / "plain.txt", root / "alias.txt")  # in the root, not hidden: served
    os.symlink(tmp_path / "outside.txt", root / "away.txt")
    return root


@pytest.mark.parametrize("path", ["notes.txt", "relative.txt", "cfg/config", "away.txt"])
async def test_a_link_to_a_hidden_or_outside_file_is_not_served(linked: Path, path: str) -> None:
    app, _ = make_app(linked)
    async with connected(app) as client:
        with pytest.raises(McpCallError) as caught:
            await client.read_resource(PREFIX + path)
        assert caught.value.code == -32002
        assert "SECRET" not in f"{caught.value} {caught.value.data}"


async def test_links_to_hidden_files_are_not_listed(linked: Path) -> None:
    app, directory = make_app(linked)
    async with connected(app) as client:
        listed = sorted(r.uri for r in await client.list_resources())
        assert listed == [PREFIX + "alias.txt", PREFIX + "plain.txt"]
        assert (await client.read_resource(PREFIX + "alias.txt")).contents[0].text == "plain"
    with pytest.raises(ResourceNotFoundError):
        directory.locate("notes.txt")


async def test_include_hidden_serves_what_the_links_lead_to(linked: Path) -> None:
    app, _ = make_app(linked, include_hidden=True)
    async with connected(app) as client:
        assert (await client.read_resource(PREFIX + "notes.txt")).contents[0].text == "SECRET=1"
        with pytest.raises(McpCallError) as caught:  # leaving the root: refused all the same
            await client.read_resource(PREFIX + "away.txt")
        assert caught.value.code == -32002


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("sound.wav", "audio/wav"),
        ("SONG.MP3", "audio/mpeg"),
        ("notes.md", "text/markdown"),
        ("chart.jpg", "image/jpeg"),
        ("data.parquet", None),
    ],
)
def test_common_media_types_are_the_same_on_every_machine(name: str, expected: str | None):
    """The system's MIME tables disagree (``.wav`` is ``audio/x-wav`` in some); the common
    media types come from mcpkit's own table, others from ``mimetypes``."""
    guessed = guess_mime_type(name)
    if expected is None:
        assert guessed == mimetypes.guess_type(name, strict=False)[0]
    else:
        assert guessed == expected

"""What a docs block's marker asks to have around it: a server the page shows, started the way
the page tells a reader to start it (``serve``), and a file a reader would have beside the
code (``file``). Used by tests/docs/_snippet_runner.py; standard library only (tests/ports.py
is too), but for the key it generates."""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

from tests.ports import launch

FILES = Path(__file__).with_name("snippet_files")
# a server answers within a second or two; past this, something is wrong with it
SERVER_START_TIMEOUT = 30.0


class FixtureError(RuntimeError):
    """A block's server or file could not be set up: the message says which and why."""


def server_command(target: str, url: str) -> list[str]:
    """``weather.py``: ``mcpkit run`` over HTTP, as docs/cli.md says; ``host:api``: uvicorn,
    as the framework pages say. On port 0: the page's port is where a reader serves, which
    pages run side by side would share; the server names the port it was given."""
    parts = urlsplit(url)
    if parts.scheme != "http" or parts.hostname != "127.0.0.1" or parts.port is None:
        raise FixtureError(f"serve {target}: {url!r} is not http://127.0.0.1:PORT/...")
    if target.endswith(".py"):
        command = [sys.executable, "-m", "mcpkit", "run", target, "-t", "http", "--port", "0"]
        return command + ([] if parts.path in ("", "/mcp") else ["--endpoint", parts.path])
    if ":" in target:
        return [sys.executable, "-m", "uvicorn", target, "--host", parts.hostname, "--port", "0"]
    raise FixtureError(f"serve {target}: neither a FILE.py nor a module:attribute")


@contextlib.contextmanager
def serving(where: str, target: str, url: str) -> Iterator[tuple[str, str]]:
    """Runs ``target`` in the current folder while the block runs, stopped however it ends;
    yields (the page's ``host:port``, the one served at), for the block's code to be read
    with the second in place of the first."""
    command = server_command(target, url)
    try:
        served = launch(command, stream="both", timeout=SERVER_START_TIMEOUT)
    except RuntimeError as exc:
        raise FixtureError(f"{where}: {exc}") from None
    try:
        yield urlsplit(url).netloc, f"127.0.0.1:{served.port}"
    finally:
        served.stop()


def generated_key() -> str:
    """A fresh EC P-256 private key in PEM, as a reader's own signing key would be."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    key = ec.generate_private_key(ec.SECP256R1())
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode("ascii")


def place_file(where: str, name: str) -> None:
    """Puts ``name`` in the current folder: generated for a key, else a copy of the small
    stand-in in tests/docs/snippet_files (a folder's whole tree for a folder)."""
    destination = Path(name)
    if Path(name).is_absolute() or ".." in Path(name).parts:
        raise FixtureError(f"{where}: file {name!r} must be a relative path inside the folder")
    destination.parent.mkdir(parents=True, exist_ok=True)
    if name.endswith(".pem"):
        destination.write_text(generated_key(), encoding="ascii")
        return
    source = FILES / name
    if source.is_dir():
        shutil.copytree(source, destination, dirs_exist_ok=True)
    elif source.is_file():
        shutil.copyfile(source, destination)
    else:
        raise FixtureError(f"{where}: no stand-in for file {name!r} in {FILES.name}/")


def with_commands_on_path() -> None:
    """The ``mcpkit`` command a page runs is the one installed beside this Python."""
    bin_dir = str(Path(sys.executable).parent)
    os.environ["PATH"] = os.pathsep.join([bin_dir, os.environ.get("PATH", "")])

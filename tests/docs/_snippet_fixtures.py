"""What a docs block's marker asks to have around it: a server the page shows, started the way
the page tells a reader to start it (``serve``), and a file a reader would have beside the
code (``file``). Used by tests/docs/_snippet_runner.py; standard library only, but for the
key it generates."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO
from urllib.parse import urlsplit

FILES = Path(__file__).with_name("snippet_files")
# a server answers within a second or two; past this, something is wrong with it
SERVER_START_TIMEOUT = 30.0
SERVER_STOP_TIMEOUT = 10.0
# what of a server's output a failure shows
SERVER_OUTPUT_SHOWN = 4000


class FixtureError(RuntimeError):
    """A block's server or file could not be set up: the message says which and why."""


def server_command(target: str, url: str) -> list[str]:
    """``weather.py``: ``mcpkit run`` over HTTP, as docs/cli.md says; ``host:api``: uvicorn,
    as the framework pages say."""
    parts = urlsplit(url)
    if parts.scheme != "http" or parts.hostname != "127.0.0.1" or parts.port is None:
        raise FixtureError(f"serve {target}: {url!r} is not http://127.0.0.1:PORT/...")
    host, port = parts.hostname, str(parts.port)
    if target.endswith(".py"):
        command = [sys.executable, "-m", "mcpkit", "run", target, "-t", "http", "--port", port]
        return command + ([] if parts.path in ("", "/mcp") else ["--endpoint", parts.path])
    if ":" in target:
        return [sys.executable, "-m", "uvicorn", target, "--host", host, "--port", port]
    raise FixtureError(f"serve {target}: neither a FILE.py nor a module:attribute")


def port_is_free(host: str, port: int) -> bool:
    with socket.socket() as probe:
        # a connection of a previous server lingering in TIME_WAIT does not make it taken
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError:
            return False
    return True


def answers(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


def output_of(log: IO[bytes]) -> str:
    log.seek(0)
    return log.read().decode("utf-8", "replace")[-SERVER_OUTPUT_SHOWN:]


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(SERVER_STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@contextlib.contextmanager
def serving(where: str, target: str, url: str) -> Iterator[None]:
    """Runs ``target`` in the current folder while the block runs; stopped however it ends."""
    command = server_command(target, url)
    parts = urlsplit(url)
    host, port = str(parts.hostname), int(parts.port or 0)
    if not port_is_free(host, port):
        raise FixtureError(f"{where}: port {port} is taken, so {target} cannot serve {url}")
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + SERVER_START_TIMEOUT
            while not answers(host, port):
                if process.poll() is not None:
                    raise FixtureError(
                        f"{where}: {' '.join(command[1:])} exited with {process.returncode}:\n"
                        + output_of(log)
                    )
                if time.monotonic() > deadline:
                    raise FixtureError(
                        f"{where}: {target} did not answer on {url} within "
                        f"{SERVER_START_TIMEOUT:.0f} s:\n" + output_of(log)
                    )
                time.sleep(0.1)
            yield
        finally:
            stop(process)


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

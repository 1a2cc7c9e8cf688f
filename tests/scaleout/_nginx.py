"""A real nginx (Debian's package; ``./dev test`` installs it) as a plain round-robin reverse
proxy in front of mcpkit instances: no stickiness, its own configuration, pid, temporary
and log files in a directory of the test's, on a loopback port of its own. Tests that need
it skip when the binary is missing."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from tests.ports import ADDRESS_IN_USE, PortTaken, on_a_free_port, stop_process

# /usr/sbin is not on every user's PATH.
NGINX = shutil.which("nginx", path=os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin"]))
needs_nginx = pytest.mark.skipif(
    NGINX is None, reason="nginx is not installed (apt-get install nginx)"
)

#: Seconds nginx gets to accept connections, and to stop.
STARTUP = 10.0

# One process (master_process off): one round-robin state, so sequential requests alternate
# strictly, and ending that process ends nginx (no orphaned workers).
CONFIG = """\
{user}daemon off;
master_process off;
pid {dir}/nginx.pid;
error_log {dir}/error.log info;
events {{
    worker_connections 256;
}}
http {{
    # The instances tried, in order (the last one answered): "127.0.0.1:A, 127.0.0.1:B".
    log_format upstreams '$request_method $uri $status session=$http_mcp_session_id '
                         'upstream_status=$upstream_status upstream=$upstream_addr';
    access_log {dir}/access.log upstreams;
    client_body_temp_path {dir}/client_body;
    proxy_temp_path {dir}/proxy;
    fastcgi_temp_path {dir}/fastcgi;
    uwsgi_temp_path {dir}/uwsgi;
    scgi_temp_path {dir}/scgi;

    upstream mcpkit {{
        # nginx's default fail_timeout (10 s) would keep a restarted instance idle that long.
{servers}
    }}
    server {{
        listen 127.0.0.1:{port};
        # Which nginx answers on the port: this one, not a program that took the port first.
        location = /nginx-ready {{
            return 200 "{dir}";
        }}
        location / {{
            proxy_pass http://mcpkit;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            # The client's own Host: by default nginx would send "mcpkit", the upstream's
            # name, which the DNS-rebinding guard refuses; and a forged Host must reach the
            # guard as sent (the conformance suite's dns-rebinding-protection scenario).
            proxy_set_header Host $http_host;
            proxy_buffering off;
            proxy_connect_timeout 2s;
            proxy_read_timeout 120s;
            proxy_send_timeout 120s;
            # A POST is not idempotent: without this nginx gives up on a dead instance
            # instead of trying the other (nothing reached the dead one: it refused).
            proxy_next_upstream error timeout non_idempotent;
        }}
    }}
}}
"""


def nginx_config(directory: Path, port: int, upstream_ports: list[int]) -> str:
    servers = "\n".join(
        f"        server 127.0.0.1:{p} max_fails=1 fail_timeout=1s;" for p in upstream_ports
    )
    # As root nginx looks up a user to own its temporary directories ("nobody", which not
    # every system has) unless told; as another user the directive only earns a warning.
    user = "user root;\n" if os.geteuid() == 0 else ""
    return CONFIG.format(user=user, dir=directory, port=port, servers=servers)


class Nginx:
    """One nginx process balancing round-robin over ``upstream_ports`` (127.0.0.1)."""

    def __init__(self, directory: Path, upstream_ports: list[int]) -> None:
        self.dir = directory
        self.upstream_ports = upstream_ports
        self.port = 0
        self.config = directory / "nginx.conf"
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def start(self) -> Nginx:
        # nginx cannot be told port 0: one chosen, another should it be taken meanwhile
        self.port = on_a_free_port(self._start_on)
        return self

    def _start_on(self, port: int) -> int:
        assert NGINX is not None
        self.config.write_text(nginx_config(self.dir, port, self.upstream_ports))
        self.log_path.unlink(missing_ok=True)  # a previous attempt's errors are not this one's
        # -e: the log of start-up errors too, before the configuration is read.
        command = [NGINX, "-p", str(self.dir), "-c", str(self.config), "-e", str(self.log_path)]
        self.process = subprocess.Popen(
            command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        deadline = time.monotonic() + STARTUP
        while time.monotonic() < deadline:
            if self._answers(port):
                return port
            if self.process.poll() is not None:
                self.process = None
                errors = self.errors()
                raise (PortTaken if ADDRESS_IN_USE.search(errors) else RuntimeError)(
                    f"nginx exited: {errors}"
                )
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"nginx did not start: {self.errors()}")

    def _answers(self, port: int) -> bool:
        try:
            ready = httpx.get(f"http://127.0.0.1:{port}/nginx-ready", timeout=1)
        except httpx.TransportError:
            return False
        return ready.text == str(self.dir)

    @property
    def log_path(self) -> Path:
        return self.dir / "error.log"

    def errors(self) -> str:
        return self.log_path.read_text()[-3000:] if self.log_path.exists() else "(no log)"

    def requests(self) -> list[str]:
        """The access log so far: a line a finished request, naming the instances tried."""
        log = self.dir / "access.log"
        return log.read_text().splitlines() if log.exists() else []

    def answering_ports(self) -> set[int]:
        """The ports of the instances that answered the requests finished so far."""
        answered = (line.rsplit("upstream=", 1)[1].split(", ")[-1] for line in self.requests())
        return {int(address.rsplit(":", 1)[1]) for address in answered if address != "-"}

    def stop(self) -> None:
        if self.process is not None:
            stop_process(self.process, STARTUP)
        self.process = None

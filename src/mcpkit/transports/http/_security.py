"""What a request's headers must say before anything else runs: Content-Type on POST; Origin,
when present, on every bind (the transport spec: servers MUST validate it, or any web page
the user opens could call the server); Host where DNS-rebinding protection is on (by default
on a loopback bind, and wherever ``allowed_hosts`` names the server). A request with more
than one Host header is refused on every bind (400, as RFC 9112 asks): the header map keeps
the last, while a proxy in front may have judged, or routed by, the first.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from urllib.parse import urlsplit

from mcpkit.transports.http._options import TransportSecuritySettings

#: Distinct Host values whose verdict is remembered (forgotten all at once past it).
MAX_REMEMBERED_HOSTS = 256

_LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "[::1]", "::1"})
#: Origins on these names are pages the user runs locally (an inspector, say): admitted
#: unless ``allowed_origins`` lists what is.
_LOOPBACK_ORIGIN_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})


def is_loopback_bind(host: str) -> bool:
    return host in _LOOPBACK_HOSTS or host.startswith("127.")


def repeats_host(raw_headers: Sequence[tuple[bytes, bytes]]) -> bool:
    """Whether the request's raw headers (ASGI: lower-case names) hold Host more than once."""
    seen = False
    for name, _ in raw_headers:
        if name == b"host":
            if seen:
                return True
            seen = True
    return False


def _hostname(host_header: str) -> str:
    if host_header.startswith("["):
        return host_header[: host_header.find("]") + 1]
    return host_header.rsplit(":", 1)[0] if host_header.count(":") == 1 else host_header


class TransportSecurityGuard:
    """Decides per request whether Host/Origin/Content-Type are acceptable.

    ``check`` returns None to admit, or (status, reason) to refuse.
    """

    def __init__(self, settings: TransportSecuritySettings, bind_host: str) -> None:
        self.allowed_hosts = frozenset(h.lower() for h in settings.allowed_hosts)
        self.allowed_origins = frozenset(o.lower().rstrip("/") for o in settings.allowed_origins)
        enabled = settings.enable_dns_rebinding_protection
        #: Host is checked: a loopback bind, or a server that names its hosts.
        self.enabled = (
            (is_loopback_bind(bind_host) or bool(self.allowed_hosts))
            if enabled is None
            else enabled
        )
        #: Bound beyond loopback with Host unchecked: said once at start-up.
        self.unchecked_host_warning = (
            None
            if self.enabled or is_loopback_bind(bind_host)
            else (
                f"serving on {bind_host} with no allowed_hosts: the Host header is not checked "
                "(DNS rebinding); list the names clients use in "
                "TransportSecuritySettings(allowed_hosts=...) or MCPKIT_ALLOWED_HOSTS"
            )
        )
        #: Host header value -> admitted; a client sends the same one on every request.
        self._host_verdicts: dict[str, bool] = {}

    def _host_ok(self, host: str) -> bool:
        verdict = self._host_verdicts.get(host)
        if verdict is None:
            verdict = self._judge_host(host.lower())
            if len(self._host_verdicts) >= MAX_REMEMBERED_HOSTS:
                self._host_verdicts.clear()
            self._host_verdicts[host] = verdict
        return verdict

    def _judge_host(self, host: str) -> bool:
        if self.allowed_hosts:
            return host in self.allowed_hosts or _hostname(host) in self.allowed_hosts
        return _hostname(host) in _LOOPBACK_HOSTS

    def _origin_ok(self, origin: str, host: str | None) -> bool:
        """A browser's page may call: one of ``allowed_origins`` ("*": any), else one of
        the server's own origin (the Host it was asked by) or on a loopback name. ``null``
        (a sandboxed or file page) only where listed."""
        origin = origin.lower().rstrip("/")
        if origin in self.allowed_origins or "*" in self.allowed_origins:
            return True
        parts = urlsplit(origin)
        if not parts.scheme or not parts.netloc:  # "null", or not an origin at all
            return False
        if host is not None and parts.netloc == host.lower():
            return True  # same origin: the page was served by this server
        return not self.allowed_origins and (parts.hostname or "") in _LOOPBACK_ORIGIN_NAMES

    def _host_refused(self, host: str | None) -> str:
        # A host app tried on localhost after listing its public name lands here too.
        admitted = "the names in allowed_hosts" if self.allowed_hosts else "loopback names"
        return (
            f"Host not allowed: {host} (only {admitted} are; list the names clients use in "
            "TransportSecuritySettings(allowed_hosts=...))"
        )

    def check(
        self,
        method: str,
        headers: Mapping[str, str],
        raw_headers: Sequence[tuple[bytes, bytes]] = (),
    ) -> tuple[int, str] | None:
        """``headers``: the request's header map; ``raw_headers``: the list it was made
        from (ASGI ``scope["headers"]``), looked through only when it is longer than the
        map, that is when some header came more than once (hardly ever)."""
        if len(raw_headers) > len(headers) and repeats_host(raw_headers):
            return 400, "Bad Request: more than one Host header"
        if method == "POST":
            content_type = headers.get("content-type", "")
            # The usual lower-case value passes on one method call; lower() for the rest.
            if not content_type.startswith("application/json") and not (
                content_type.lower().startswith("application/json")
            ):
                return 415, "Content-Type must be application/json"
        host = headers.get("host")
        # The remembered verdict first, without _host_ok's call: every request.
        if self.enabled and (
            host is None or not (self._host_verdicts.get(host) or self._host_ok(host))
        ):
            return 421, self._host_refused(host)
        origin = headers.get("origin")  # sent by browsers; other clients send none
        if origin is not None and not self._origin_ok(origin, host):
            return 403, (
                f"Origin not allowed: {origin} (list the web origins that may call this server "
                "in TransportSecuritySettings(allowed_origins=...))"
            )
        return None

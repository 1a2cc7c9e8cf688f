"""Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document, the MCP
authorization spec's client registration): a client whose ``client_id`` is an https URL
publishes its metadata there, and the proxy fetches it instead of a registration.

The URL must be https with a path (not ``/``), no dot segments, fragment or credentials.
The fetch is bounded (``DEFAULT_MAX_CLIENT_METADATA_BYTES``, the draft's 5 KB;
``DEFAULT_CLIENT_METADATA_TIMEOUT`` seconds; ``DEFAULT_MAX_CONCURRENT_FETCHES`` at once),
follows no redirect and takes only a 200. Against server-side request forgery the host is
resolved first and every address it resolves to must be public (no loopback, private,
link-local, shared, reserved or multicast address, nor an IPv6 form of one); the request
then connects to the address checked, naming the host in ``Host`` and the TLS SNI (the
certificate is verified for the host), so a second DNS answer cannot send it elsewhere.
Connections are never reused, so one host's verified connection never serves another.

The document must name the URL as its ``client_id`` (compared exactly), list its
``redirect_uris``, and be a public client (``token_endpoint_auth_method`` ``none``, no
secret). A valid one is cached per its ``Cache-Control`` (``max-age``, ``no-store``,
``no-cache``) or ``Expires``, at most ``MAX_CLIENT_METADATA_TTL`` seconds, in at most
``DEFAULT_MAX_CLIENT_DOCUMENTS`` entries, in the proxy object; errors are never cached.

``allow_insecure=True`` (tests and development only) lifts the address check and allows
``http://`` on a loopback host.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import socket
import time
from collections import OrderedDict
from collections.abc import Callable
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import SplitResult, urlsplit, urlunsplit

import httpx

from mcpkit.auth._proxy._http import LOOPBACK_HOSTS, OAuthEndpointError
from mcpkit.auth._proxy._records import ClientRecord

#: Largest client metadata document read (the draft recommends 5 kilobytes).
DEFAULT_MAX_CLIENT_METADATA_BYTES = 5 * 1024
#: Seconds resolving and fetching one document may take.
DEFAULT_CLIENT_METADATA_TIMEOUT = 5.0
#: Seconds a document served without cache headers is kept.
DEFAULT_CLIENT_METADATA_TTL = 300.0
#: Longest a document is kept, whatever its cache headers say.
MAX_CLIENT_METADATA_TTL = 24 * 3600.0
#: Documents cached at once; past it the least recently used is dropped.
DEFAULT_MAX_CLIENT_DOCUMENTS = 1000
#: Documents fetched at once; more wait (within their timeout).
DEFAULT_MAX_CONCURRENT_FETCHES = 16
#: Longest client_id URL accepted.
MAX_CLIENT_ID_URL = 2048

_DOT_SEGMENTS = frozenset({".", "..", "%2e", "%2e%2e", ".%2e", "%2e."})
_IP = ipaddress.IPv4Address | ipaddress.IPv6Address


def is_document_client_id(client_id: str) -> bool:
    """Whether ``client_id`` is a URL (a client metadata document's), not an id the proxy
    gave (those never hold ``://``)."""
    return client_id.startswith(("https://", "http://"))


def client_host(client_id: str) -> str:
    """The host a document client's ``client_id`` names (what the consent page shows)."""
    return urlsplit(client_id).hostname or client_id


def _refuse(url: str, reason: str) -> OAuthEndpointError:
    return OAuthEndpointError("invalid_client", f"the client metadata document {url} {reason}")


def check_client_id_url(url: str, allow_insecure: bool = False) -> SplitResult:
    """The parts of a client_id URL the draft allows (https, a path, no dot segments,
    fragment or credentials); ``allow_insecure``: http on a loopback host too."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        parts.port  # noqa: B018 - a bad port raises here
    except ValueError:
        raise _refuse(url, "is not a URL") from None
    secure = parts.scheme == "https" or (
        allow_insecure and parts.scheme == "http" and host in LOOPBACK_HOSTS
    )
    problem = (
        "is too long"
        if len(url) > MAX_CLIENT_ID_URL
        else "must be an https URL"
        if not secure or not host
        else "must name its host in ASCII (punycode)"
        if not host.isascii()
        else "must not hold credentials"
        if parts.username is not None or parts.password is not None
        else "must not have a fragment"
        if parts.fragment or "#" in url
        else "must have a path"
        if parts.path in ("", "/")
        else "must not have . or .. path segments"
        if any(s.lower() in _DOT_SEGMENTS for s in parts.path.split("/"))
        else None
    )
    if problem is not None:
        raise _refuse(url, problem)
    return parts


def is_public(address: _IP) -> bool:
    """Whether an address may be fetched from: global unicast, and no IPv6 form
    (IPv4-mapped, 6to4, Teredo) of one that is not."""
    if isinstance(address, ipaddress.IPv6Address):
        inner = [address.ipv4_mapped, address.sixtofour, (address.teredo or (None, None))[1]]
        if any(a is not None and not is_public(a) for a in inner):
            return False
    return address.is_global and not address.is_multicast


def cache_lifetime(headers: httpx.Headers, now: float, default: float, maximum: float) -> float:
    """Seconds a response may be kept (RFC 9111: ``no-store`` / ``no-cache``: 0; else
    ``s-maxage``, ``max-age`` or ``Expires``, less ``Age``), within ``[0, maximum]``."""
    directives: dict[str, str] = {}
    for part in headers.get_list("cache-control", split_commas=True):
        name, _, value = part.strip().partition("=")
        directives[name.strip().lower()] = value.strip().strip('"')
    try:
        if "no-store" in directives or "no-cache" in directives:
            return 0.0
        if "s-maxage" in directives or "max-age" in directives:
            lifetime = float(int(directives.get("s-maxage", directives.get("max-age", ""))))
        elif "expires" in headers:
            date = parsedate_to_datetime(headers["date"]).timestamp() if "date" in headers else now
            lifetime = parsedate_to_datetime(headers["expires"]).timestamp() - date
        else:
            lifetime = default
        lifetime -= int(headers.get("age", "0"))
    except (ValueError, TypeError, IndexError):
        return 0.0  # a header that cannot be read: not cached
    return max(0.0, min(lifetime, maximum))


class ClientDocuments:
    """Fetches, checks and caches client metadata documents for one proxy. ``to_client``
    turns a checked document into the client (the registration's own checks)."""

    def __init__(
        self,
        to_client: Callable[[dict[str, Any], str], ClientRecord],
        *,
        allow_insecure: bool = False,
        timeout: float = DEFAULT_CLIENT_METADATA_TIMEOUT,
        max_bytes: int = DEFAULT_MAX_CLIENT_METADATA_BYTES,
        max_entries: int = DEFAULT_MAX_CLIENT_DOCUMENTS,
        max_concurrent: int = DEFAULT_MAX_CONCURRENT_FETCHES,
        default_ttl: float = DEFAULT_CLIENT_METADATA_TTL,
        max_ttl: float = MAX_CLIENT_METADATA_TTL,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.to_client = to_client
        self.allow_insecure = allow_insecure
        self.timeout = timeout
        self.max_bytes = max_bytes
        self.max_entries = max(1, max_entries)
        self.default_ttl = default_ttl
        self.max_ttl = max_ttl
        self.clock = clock
        self.cache: OrderedDict[str, tuple[float, ClientRecord]] = OrderedDict()
        self._slots = asyncio.Semaphore(max(1, max_concurrent))
        self._http: httpx.AsyncClient | None = None

    @property
    def http(self) -> httpx.AsyncClient:
        """The HTTP client documents are fetched with: no redirects, no proxy from the
        environment (it would resolve the host itself), no connection kept."""
        if self._http is None:
            self._http = httpx.AsyncClient(
                timeout=self.timeout,
                follow_redirects=False,
                trust_env=False,
                limits=httpx.Limits(max_keepalive_connections=0),
            )
        return self._http

    async def aclose(self) -> None:
        """Close the HTTP client."""
        if self._http is not None:
            http, self._http = self._http, None
            await http.aclose()

    async def client(self, url: str) -> ClientRecord:
        """The client the document at ``url`` describes (cached, or fetched and checked);
        ``invalid_client`` (or the registration's error) when it cannot be used."""
        cached = self.cache.get(url)
        if cached is not None:
            if cached[0] > self.clock():
                self.cache.move_to_end(url)
                return cached[1]
            del self.cache[url]
        try:
            async with asyncio.timeout(self.timeout):
                async with self._slots:
                    document, lifetime = await self._fetch(url)
        except TimeoutError:
            raise _refuse(url, f"took longer than {self.timeout:g} s") from None
        client = self._check(url, document)
        if lifetime > 0:
            self.cache[url] = (self.clock() + lifetime, client)
            while len(self.cache) > self.max_entries:
                self.cache.popitem(last=False)
        return client

    def _check(self, url: str, document: dict[str, Any]) -> ClientRecord:
        if document.get("client_id") != url:
            raise _refuse(url, "names another client_id (it must be the document's URL)")
        if "client_secret" in document or "client_secret_expires_at" in document:
            raise _refuse(url, "holds a client secret (a document's client has none)")
        method = document.get("token_endpoint_auth_method", "none")
        if method != "none":
            raise _refuse(
                url,
                f"asks for token_endpoint_auth_method {method!r}: this server accepts only"
                " public clients (none) from client metadata documents",
            )
        if not isinstance(document.get("redirect_uris"), list) or not document["redirect_uris"]:
            raise _refuse(url, "lists no redirect_uris")
        return self.to_client({**document, "token_endpoint_auth_method": "none"}, url)

    async def _addresses(self, parts: SplitResult, port: int) -> list[str]:
        """The host's addresses, every one checked public (unless ``allow_insecure``)."""
        host = parts.hostname or ""
        try:
            found = await asyncio.get_running_loop().getaddrinfo(
                host, port, type=socket.SOCK_STREAM
            )
        except OSError as exc:
            raise _refuse(parts.geturl(), f"cannot be reached: {host} does not resolve") from exc
        addresses = list(dict.fromkeys(str(info[4][0]) for info in found))
        for address in addresses:
            ip = ipaddress.ip_address(address.partition("%")[0])
            if not self.allow_insecure and not is_public(ip):
                raise _refuse(
                    parts.geturl(), f"is not fetched: {host} resolves to a non-public address"
                )
        if not addresses:
            raise _refuse(parts.geturl(), f"cannot be reached: {host} has no address")
        return addresses

    async def _fetch(self, url: str) -> tuple[dict[str, Any], float]:
        """The document as JSON and how long it may be cached."""
        parts = check_client_id_url(url, self.allow_insecure)
        port = parts.port or (443 if parts.scheme == "https" else 80)
        failure: Exception | None = None
        for address in await self._addresses(parts, port):
            literal = f"[{address}]" if ":" in address else address
            target = urlunsplit(parts._replace(netloc=f"{literal}:{port}"))
            try:
                return await self._get(url, target, parts)
            except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
                failure = exc  # the next address
        raise _refuse(url, f"cannot be reached ({type(failure).__name__})")

    async def _get(self, url: str, target: str, parts: SplitResult) -> tuple[dict[str, Any], float]:
        headers = {"host": parts.netloc, "accept": "application/json"}
        extensions = {"sni_hostname": parts.hostname or ""}
        try:
            async with self.http.stream(
                "GET", target, headers=headers, extensions=extensions
            ) as response:
                if response.status_code != 200:
                    raise _refuse(url, f"answered HTTP {response.status_code}, not 200")
                declared = response.headers.get("content-length", "")
                if declared.isdigit() and int(declared) > self.max_bytes:
                    raise _refuse(url, f"is larger than {self.max_bytes} bytes")
                raw = bytearray()
                async for chunk in response.aiter_bytes():
                    raw += chunk
                    if len(raw) > self.max_bytes:
                        raise _refuse(url, f"is larger than {self.max_bytes} bytes")
                lifetime = cache_lifetime(
                    response.headers, self.clock(), self.default_ttl, self.max_ttl
                )
        except (httpx.ConnectError, httpx.ConnectTimeout):
            raise
        except httpx.HTTPError as exc:
            raise _refuse(url, f"could not be read ({type(exc).__name__})") from exc
        try:
            document = json.loads(bytes(raw))
        except ValueError:
            raise _refuse(url, "is not JSON") from None
        if not isinstance(document, dict):
            raise _refuse(url, "is not a JSON object")
        return document, lifetime


__all__ = [
    "DEFAULT_CLIENT_METADATA_TIMEOUT",
    "DEFAULT_CLIENT_METADATA_TTL",
    "DEFAULT_MAX_CLIENT_DOCUMENTS",
    "DEFAULT_MAX_CLIENT_METADATA_BYTES",
    "DEFAULT_MAX_CONCURRENT_FETCHES",
    "MAX_CLIENT_METADATA_TTL",
    "ClientDocuments",
    "cache_lifetime",
    "check_client_id_url",
    "client_host",
    "is_document_client_id",
    "is_public",
]

"""What HTTP clients found out about a server by probing it: the protocol era (and version)
it speaks, and the HTTP transport (Streamable HTTP or legacy HTTP+SSE) it answers on.

An ``EndpointMemory`` object holds it, never this module. Each HTTP transport makes its own
unless ``HttpClientTransportOptions.endpoint_memory`` hands it one, so clients share what
they found only when given the same object. Entries are keyed by the endpoint *and* the
credentials sent to it (``EndpointMemory.key``): a server may answer one caller differently
from another (a gateway routing by token, say), so one caller's answer is no answer for the
next.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar
from urllib.parse import urlsplit, urlunsplit

from mcpkit.protocol._versions import Era

if TYPE_CHECKING:
    from collections.abc import Mapping

    import httpx

    from mcpkit.client._transport_mode import HttpTransportMode

__all__ = ["MAX_CACHED_ERAS", "MAX_CACHED_MODES", "EndpointMemory", "EndpointOptions"]

#: Keys whose era is remembered (the least recently used is forgotten first).
MAX_CACHED_ERAS = 256
#: Keys whose HTTP transport mode is remembered (the least recently used is forgotten first).
MAX_CACHED_MODES = 256

_V = TypeVar("_V")


class EndpointOptions(Protocol):
    """What ``EndpointMemory.key`` reads of a transport's options
    (``HttpClientTransportOptions``): the endpoint and the credentials sent to it."""

    @property
    def endpoint(self) -> str: ...

    @property
    def additional_headers(self) -> Mapping[str, str]: ...

    @property
    def apply_per_request_headers(self) -> object: ...

    @property
    def auth_challenge_handler(self) -> object: ...

    @property
    def observe_response_challenge(self) -> object: ...


class _Lru(Generic[_V]):
    """A bounded map that forgets its least recently used entry first."""

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError(f"an EndpointMemory bound must be at least 1, not {limit}")
        self.limit = limit
        self._entries: OrderedDict[str, _V] = OrderedDict()
        # A memory may be shared by clients running on different threads' event loops.
        self._lock = threading.Lock()

    def get(self, key: str) -> _V | None:
        with self._lock:
            value = self._entries.get(key)
            if value is not None:
                self._entries.move_to_end(key)  # a read is a use
            return value

    def put(self, key: str, value: _V) -> None:
        with self._lock:
            self._entries[key] = value
            self._entries.move_to_end(key)
            while len(self._entries) > self.limit:
                self._entries.popitem(last=False)

    def pop(self, key: str) -> None:
        with self._lock:
            self._entries.pop(key, None)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)


class EndpointMemory:
    """The era and HTTP transport mode found per (endpoint, credentials), bounded and LRU.

    Give one object to several clients' ``HttpClientTransportOptions.endpoint_memory`` and
    a client can skip the probe another already made with the same credentials. The keys
    are ``EndpointMemory.key(options)``: a digest, so no header value is kept.
    """

    def __init__(
        self, *, max_eras: int = MAX_CACHED_ERAS, max_modes: int = MAX_CACHED_MODES
    ) -> None:
        self._eras: _Lru[tuple[Era, str]] = _Lru(max_eras)
        self._modes: _Lru[HttpTransportMode] = _Lru(max_modes)

    @staticmethod
    def key(options: EndpointOptions, http_client: httpx.AsyncClient | None = None) -> str:
        """What ``options`` (and the ``httpx`` client handed to the transport, if any) are
        remembered under: a SHA-256 of the normalised endpoint, every ``additional_headers``
        entry, and the identity of the auth hooks' owner (an ``OAuthClientProvider``
        installs bound methods: its object is the identity) and of the ``httpx`` client,
        which may carry credentials of its own."""
        parts = urlsplit(options.endpoint)
        endpoint = urlunsplit(
            (parts.scheme.lower(), parts.netloc.lower(), parts.path or "/", parts.query, "")
        )
        hooks = (
            options.apply_per_request_headers,
            options.auth_challenge_handler,
            options.observe_response_challenge,
        )
        # id() may be reused once an object is collected: at worst a new provider starts
        # from a stale answer, which the fallbacks correct (as when a server changes).
        identity = (
            endpoint,
            sorted((name.lower(), value) for name, value in options.additional_headers.items()),
            [_identity(getattr(hook, "__self__", hook)) for hook in hooks],
            _identity(http_client),
        )
        # Hashed whole: header values and a token in the URL's query are secrets.
        return hashlib.sha256(repr(identity).encode()).hexdigest()

    def detected_era(self, key: str) -> tuple[Era, str] | None:
        """(era, protocol version) a client found under ``key``, if any."""
        return self._eras.get(key)

    def remember_era(self, key: str, era: Era, version: str) -> None:
        """Keep the era and version found under ``key`` (the least recently used goes past
        the bound)."""
        self._eras.put(key, (era, version))

    def forget_era(self, key: str) -> None:
        """Drop what ``key``'s era was (the server changed): the next client probes."""
        self._eras.pop(key)

    def detected_mode(self, key: str) -> HttpTransportMode | None:
        """The HTTP transport AUTO_DETECT chose under ``key``, if any."""
        return self._modes.get(key)

    def remember_mode(self, key: str, mode: HttpTransportMode) -> None:
        """Keep the HTTP transport found under ``key``."""
        self._modes.put(key, mode)

    def forget_mode(self, key: str) -> None:
        """Drop the HTTP transport found under ``key``: the next client detects it again."""
        self._modes.pop(key)

    def clear(self) -> None:
        """Forget every era and transport mode: the next client probes again."""
        self._eras.clear()
        self._modes.clear()

    def __repr__(self) -> str:
        return f"EndpointMemory(eras={len(self._eras)}, modes={len(self._modes)})"


def _identity(obj: object) -> tuple[str, int] | None:
    return None if obj is None else (type(obj).__qualname__, id(obj))

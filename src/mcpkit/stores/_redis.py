"""Redis (``mcpkit[redis]``, redis-py asyncio) behind the stores and the bus: sessions,
events and the messages of several instances serving one endpoint.

``RedisHub`` is the connection one instance shares between its Redis stores and its bus:
a bounded pool for commands, and one pub/sub connection whose reader hands each message
to the callbacks of its channel. When Redis goes away, commands raise
``StoreUnavailableError`` (the HTTP transport answers 503) and the reader retries with
backoff; once back, it subscribes every channel again and tells each callback that
messages may have been missed (``None``), so event relays re-read the store.

Keys live under one prefix (``mcpkit`` by default); a session's event keys share a hash
tag. The session index is one key: Redis Cluster is not supported.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from mcpkit._exceptions import StoreUnavailableError
from mcpkit._extras import require

logger = logging.getLogger("mcpkit.stores")

T = TypeVar("T")

DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"
DEFAULT_PREFIX = "mcpkit"
#: Connections one instance's command pool may open; more concurrent commands wait.
DEFAULT_MAX_REDIS_CONNECTIONS = 64
#: Seconds a command (or a wait for a free pooled connection) may take before it fails.
DEFAULT_REDIS_TIMEOUT = 5.0
#: Seconds connecting may take.
DEFAULT_REDIS_CONNECT_TIMEOUT = 2.0
#: First and longest wait between two attempts to reconnect the pub/sub connection.
DEFAULT_RECONNECT_DELAY = 0.1
DEFAULT_MAX_RECONNECT_DELAY = 2.0

Callback = Callable[[bytes | None], None]


def import_redis() -> Any:
    """``redis.asyncio``, or an ImportError naming the extra."""
    return require("redis.asyncio", "redis", "the Redis stores")


def _redis_errors() -> tuple[type[BaseException], ...]:
    from redis.exceptions import RedisError

    return (RedisError, OSError, asyncio.TimeoutError)


class RedisHub:
    """One instance's Redis: ``url`` (``redis://host:port/db``) or a ``redis.asyncio.Redis``
    client. Pass the same hub to ``RedisSessionStore``, ``RedisEventStore`` and
    ``RedisMessageBus`` so they share its pool and its pub/sub connection."""

    def __init__(
        self,
        url: str | Any = DEFAULT_REDIS_URL,
        *,
        prefix: str = DEFAULT_PREFIX,
        max_connections: int = DEFAULT_MAX_REDIS_CONNECTIONS,
        timeout: float = DEFAULT_REDIS_TIMEOUT,
        connect_timeout: float = DEFAULT_REDIS_CONNECT_TIMEOUT,
    ) -> None:
        aioredis = import_redis()
        from redis.asyncio.retry import Retry
        from redis.backoff import ExponentialBackoff

        self.prefix = prefix
        self.timeout = timeout
        if isinstance(url, str):
            # One quick retry: a connection pooled before a Redis restart fails once, then
            # a fresh one works; while Redis is down the caller hears so within ~timeout.
            pool = aioredis.BlockingConnectionPool.from_url(
                url,
                max_connections=max_connections,
                timeout=timeout,
                socket_timeout=timeout,
                socket_connect_timeout=connect_timeout,
                retry=Retry(ExponentialBackoff(cap=0.05, base=0.01), 1),
            )
            self.client = aioredis.Redis(connection_pool=pool)
            self._owns_client = True
        else:
            self.client = url
            self._owns_client = False
        self.errors = _redis_errors()
        self._callbacks: dict[str, list[Callback]] = {}
        self._pending: dict[str, asyncio.Future[None]] = {}
        self._pubsub: Any = None
        self._reader: asyncio.Task[None] | None = None
        self._resync: set[str] = set()
        self._closed = False
        self.healthy = True

    def key(self, *parts: str) -> str:
        """A Redis key under this hub's prefix: ``prefix:part:part``."""
        return ":".join((self.prefix, *parts))

    async def call(self, awaitable: Awaitable[T]) -> T:
        """Await one Redis command; a failure becomes ``StoreUnavailableError``."""
        try:
            return await awaitable
        except self.errors as exc:
            raise StoreUnavailableError(
                f"Redis is unavailable: {exc or type(exc).__name__}"
            ) from exc

    def script(self, source: str) -> Callable[..., Awaitable[Any]]:
        """A Lua script run by SHA (loaded again after a Redis restart)."""
        compiled = self.client.register_script(source)

        async def run(keys: list[str], args: list[Any]) -> Any:
            return await self.call(compiled(keys=keys, args=args))

        return run

    async def ping(self) -> bool:
        """Whether Redis answers (False rather than an error when it cannot be reached)."""
        try:
            return bool(await self.call(self.client.ping()))
        except StoreUnavailableError:
            return False

    # pub/sub ------------------------------------------------------------------------------

    async def subscribe(self, channel: str, callback: Callback) -> None:
        """Call ``callback(data)`` for each message on ``channel``; returns once Redis has
        confirmed the subscription (a message published afterwards is not missed)."""
        if self._closed:
            raise StoreUnavailableError("the Redis hub is closed")
        callbacks = self._callbacks.get(channel)
        if callbacks is not None:
            callbacks.append(callback)
            pending = self._pending.get(channel)
            if pending is not None:
                await self._confirmed(channel, pending, callback)
            return
        self._callbacks[channel] = [callback]
        try:
            pubsub = self._ensure_pubsub()
            future = self._pending[channel] = asyncio.get_running_loop().create_future()
            await self.call(pubsub.subscribe(channel))
            self._ensure_reader()
        except BaseException:
            self._drop(channel, callback)
            raise
        await self._confirmed(channel, future, callback)

    async def _confirmed(
        self, channel: str, future: asyncio.Future[None], callback: Callback
    ) -> None:
        try:
            async with asyncio.timeout(self.timeout):
                await asyncio.shield(future)
        except BaseException as exc:
            self._drop(channel, callback)
            if isinstance(exc, (TimeoutError, StoreUnavailableError)):
                raise StoreUnavailableError(
                    f"Redis did not confirm the subscription to {channel}"
                ) from exc
            raise

    async def unsubscribe(self, channel: str, callback: Callback) -> None:
        """Stop calling ``callback`` for ``channel``; the last one leaves the channel."""
        if not self._drop(channel, callback) or self._pubsub is None:
            return
        try:
            await self.call(self._pubsub.unsubscribe(channel))
        except StoreUnavailableError:
            pass  # the reconnect will not subscribe it again

    def _drop(self, channel: str, callback: Callback) -> bool:
        """Forget a callback; True when it was the channel's last."""
        callbacks = self._callbacks.get(channel)
        if callbacks is None or callback not in callbacks:
            return False
        callbacks.remove(callback)
        if callbacks:
            return False
        del self._callbacks[channel]
        pending = self._pending.pop(channel, None)
        if pending is not None and not pending.done():
            pending.cancel()
        return True

    def _ensure_pubsub(self) -> Any:
        if self._pubsub is None:
            if self._reader is not None and not self._reader.done():
                raise StoreUnavailableError("Redis pub/sub connection lost; reconnecting")
            self._pubsub = self.client.pubsub()
        return self._pubsub

    def _ensure_reader(self) -> None:
        if self._reader is None or self._reader.done():
            self._reader = asyncio.get_running_loop().create_task(self._read())

    async def _read(self) -> None:
        delay = DEFAULT_RECONNECT_DELAY
        while not self._closed:
            try:
                if self._pubsub is None:
                    await self._resubscribe()
                    continue
                message = await self._pubsub.get_message(timeout=1.0)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                await self._lost(exc)
                await asyncio.sleep(delay)
                delay = min(delay * 2, DEFAULT_MAX_RECONNECT_DELAY)
                continue
            delay = DEFAULT_RECONNECT_DELAY
            if message is not None:
                self._handle(message)

    def _handle(self, message: dict[str, Any]) -> None:
        channel = message["channel"]
        channel = channel.decode() if isinstance(channel, bytes) else channel
        kind = message["type"]
        kind = kind.decode() if isinstance(kind, bytes) else kind
        if kind == "subscribe":
            pending = self._pending.pop(channel, None)
            if pending is not None and not pending.done():
                pending.set_result(None)
            if channel in self._resync:
                self._resync.discard(channel)
                self._deliver(channel, None)
        elif kind == "message":
            self._deliver(channel, message["data"])

    def _deliver(self, channel: str, data: bytes | None) -> None:
        for callback in list(self._callbacks.get(channel, ())):
            try:
                callback(data)
            except Exception:
                logger.warning("Redis message handler for %s failed", channel, exc_info=True)

    async def _lost(self, exc: BaseException) -> None:
        if self.healthy:
            logger.warning("Redis pub/sub connection lost (%s); reconnecting", exc)
        self.healthy = False
        pubsub, self._pubsub = self._pubsub, None
        for pending in list(self._pending.values()):
            if not pending.done():
                pending.set_exception(
                    StoreUnavailableError(f"Redis pub/sub connection lost: {exc}")
                )
                pending.exception()  # retrieved here; waiters see it too
        self._pending.clear()
        if pubsub is not None:
            try:
                await pubsub.aclose()
            except Exception:  # the connection is already broken
                logger.debug("closing a broken pub/sub connection failed", exc_info=True)

    async def _resubscribe(self) -> None:
        """A fresh pub/sub connection with every channel; once each is confirmed, its
        callbacks hear that messages may have been missed."""
        channels = list(self._callbacks)
        pubsub = self.client.pubsub()
        loop = asyncio.get_running_loop()
        for channel in channels:
            self._pending[channel] = loop.create_future()
        try:
            if channels:
                await pubsub.subscribe(*channels)
        except BaseException:
            await pubsub.aclose()
            raise
        self._pubsub = pubsub
        if not self.healthy:
            logger.warning("Redis pub/sub connection restored")
        self.healthy = True
        self._resync.update(channels)  # told once each subscription is confirmed

    async def aclose(self) -> None:
        """Stop the reader and close the pub/sub connection (and the pool, when the hub
        made it from a URL)."""
        self._closed = True
        if self._reader is not None:
            self._reader.cancel()
            await asyncio.gather(self._reader, return_exceptions=True)
        if self._pubsub is not None:
            try:
                await self._pubsub.aclose()
            except Exception:  # closing on the way out
                logger.debug("closing the pub/sub connection failed", exc_info=True)
            self._pubsub = None
        if self._owns_client:
            try:  # the pool was handed to the client, which would leave it open
                await self.client.aclose(close_connection_pool=True)
            except Exception:  # closing on the way out
                logger.debug("closing the Redis pool failed", exc_info=True)


def as_hub(redis: RedisHub | str | Any, prefix: str) -> RedisHub:
    return redis if isinstance(redis, RedisHub) else RedisHub(redis, prefix=prefix)

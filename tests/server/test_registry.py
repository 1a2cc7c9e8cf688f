"""Fan-out: a connection that fails is logged and skipped; the others still get the message."""

from __future__ import annotations

from mcpkit.server import McpConnectionRegistry, ResourceSubscriptionManager


async def test_broadcast_skips_a_failing_connection():
    registry = McpConnectionRegistry()
    got: list[dict] = []

    async def good(payload: dict) -> None:
        got.append(payload)

    async def broken(payload: dict) -> None:
        raise ConnectionResetError("gone")

    registry.register(good, "a")
    registry.register(broken, "b")
    registry.register(good, "c")
    delivered = await registry.broadcast_method("notifications/tools/list_changed")
    assert delivered == 2 and len(got) == 2
    registry.unregister("a")
    assert await registry.broadcast_method("notifications/prompts/list_changed") == 1


async def test_resource_updates_reach_only_subscribers_and_unsubscribe_all_forgets_a_session():
    subs = ResourceSubscriptionManager()
    got: list[tuple[str, str]] = []

    def sender(name: str):
        async def send(payload: dict) -> None:
            got.append((name, payload["params"]["uri"]))

        return send

    subs.subscribe("r://1", "s1", sender("s1"))
    subs.subscribe("r://1", "s2", sender("s2"))
    subs.subscribe("r://2", "s1", sender("s1"))
    assert await subs.notify_updated("r://1") == 2
    subs.unsubscribe_all("s1")
    assert await subs.notify_updated("r://2") == 0
    assert await subs.notify_updated("r://1") == 1
    assert sorted(got) == [("s1", "r://1"), ("s2", "r://1"), ("s2", "r://1")]

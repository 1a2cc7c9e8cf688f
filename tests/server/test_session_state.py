"""``McpSession``: both ways of making one set every slot, and a request's session needs no
handshake."""

from __future__ import annotations

from mcpkit.server import McpSession


def _unset_slots(session: McpSession) -> list[str]:
    return [name for name in McpSession.__slots__ if not hasattr(session, name)]


def test_every_slot_is_set_by_init_and_by_for_request() -> None:
    assert _unset_slots(McpSession()) == []
    assert _unset_slots(McpSession.for_request("k", "2026-07-28", {})) == []


def test_a_request_session_is_ready_and_ephemeral() -> None:
    session = McpSession.for_request(
        "m1", "2026-07-28", {"sampling": {}}, {"name": "c"}, "info", modern=True
    )
    assert (session.key, session.protocol_version, session.client_info) == (
        "m1",
        "2026-07-28",
        {"name": "c"},
    )
    assert session.client_capabilities == {"sampling": {}}
    assert session.initialize_seen and session.initialized and session.ephemeral and session.modern
    assert session.should_log("info") and not session.should_log("debug")


def test_a_stateless_handshake_session_logs_unless_told_otherwise() -> None:
    session = McpSession.for_request("sl1", "2025-11-25", None)
    assert not session.modern and session.should_log("debug")

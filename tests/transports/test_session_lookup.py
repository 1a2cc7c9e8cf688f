"""The in-memory session lookup every POST of a session makes (``owned_here``, and ``get``,
which checks no owner): the owner is checked before the session is marked used, and a
session idle too long is dropped on lookup."""

from __future__ import annotations

import time

import pytest

from mcpkit.transports.http import StreamableSessionStore


@pytest.fixture
async def store():
    made = StreamableSessionStore(idle_timeout=60.0)
    yield made
    made.close_all()


async def test_the_owner_finds_the_session_and_marks_it_used(store):
    session = store.create(None, 1000, owner="alice")
    session.last_seen -= 30
    before = time.monotonic()
    assert store.owned_here(session.session_id, "alice") is session
    assert session.last_seen >= before


async def test_another_identity_finds_nothing_and_does_not_keep_it_alive(store):
    session = store.create(None, 1000, owner="alice")
    session.last_seen -= 30
    seen = session.last_seen
    assert store.owned_here(session.session_id, "mallory") is None
    assert store.owned_here(session.session_id, None) is None
    assert session.last_seen == seen
    assert store.local(session.session_id) is session  # refused, not ended


async def test_a_session_of_no_one_is_refused_to_an_identity(store):
    session = store.create(None, 1000)
    assert store.owned_here(session.session_id, "alice") is None
    assert store.owned_here(session.session_id, None) is session


async def test_an_unknown_id_finds_nothing(store):
    assert store.owned_here("no-such-session", None) is None
    assert store.get("no-such-session") is None


async def test_a_session_idle_too_long_is_dropped_on_lookup(store):
    session = store.create(None, 1000, owner="alice")
    session.last_seen -= 61
    assert store.owned_here(session.session_id, "alice") is None
    assert store.local(session.session_id) is None


async def test_get_checks_no_owner_but_the_idle_time(store):
    held = store.create(None, 1000, owner="alice")
    assert store.get(held.session_id) is held
    idle = store.create(None, 1000, owner="bob")
    idle.last_seen -= 61
    assert store.get(idle.session_id) is None
    assert store.local(idle.session_id) is None

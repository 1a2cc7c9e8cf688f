"""The per-version rules the transports ask the protocol layer about instead of deciding
them themselves: which versions a request may name, which POSTs may carry a batch, which
sessions get resumable streams. Checked against every version the spec has."""

from __future__ import annotations

import pytest

from mcpkit.protocol._versions import (
    HANDSHAKE_VERSIONS,
    MODERN_VERSIONS,
    SUPPORTED_VERSIONS,
    V2024_11_05,
    V2025_03_26,
    V2025_06_18,
    V2025_11_25,
    V2026_07_28,
    allows_batch_post,
    allows_batches,
    is_modern,
    is_supported,
    resumable_streams,
)

UNKNOWN = ("2023-01-01", "2025-13-40", "", "latest", "2026-07-28 ")


@pytest.mark.parametrize("version", SUPPORTED_VERSIONS)
def test_every_known_version_is_supported(version: str) -> None:
    assert is_supported(version)


@pytest.mark.parametrize("version", UNKNOWN)
def test_an_unknown_version_is_not(version: str) -> None:
    assert not is_supported(version)
    assert not is_modern(version)


def test_no_header_is_served_with_the_version_the_server_assumes() -> None:
    assert is_supported(None)
    assert not is_modern(None)


def test_only_2026_07_28_is_modern() -> None:
    assert [v for v in SUPPORTED_VERSIONS if is_modern(v)] == [V2026_07_28]
    assert all(not is_modern(v) for v in HANDSHAKE_VERSIONS)
    assert MODERN_VERSIONS == (V2026_07_28,)


def test_batches_exist_in_2025_03_26_alone() -> None:
    assert [v for v in SUPPORTED_VERSIONS if allows_batches(v)] == [V2025_03_26]
    assert not allows_batches(None)


@pytest.mark.parametrize(
    ("session", "header", "allowed"),
    [
        (V2025_03_26, None, True),  # the session negotiated it
        (V2025_03_26, V2025_06_18, True),  # the session decides, not a stray header
        (None, V2025_03_26, True),  # no session (stateless): the header decides
        (V2025_06_18, V2025_03_26, True),  # as before the rules moved here
        (V2025_06_18, None, False),
        (V2025_11_25, V2025_11_25, False),
        (None, None, False),
        (None, V2026_07_28, False),
        (V2024_11_05, None, False),
    ],
)
def test_a_post_may_carry_a_batch_when_its_session_or_header_allows(
    session: str | None, header: str | None, allowed: bool
) -> None:
    assert allows_batch_post(session, header) is allowed


def test_streams_are_resumable_from_2025_11_25_on() -> None:
    resumable = [v for v in SUPPORTED_VERSIONS if resumable_streams(v)]
    assert resumable == [V2025_11_25, V2026_07_28]
    assert not resumable_streams(None)  # a session before its initialize

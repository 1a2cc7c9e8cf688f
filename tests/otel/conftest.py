from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.otel.recording import Recorder, recorder


@pytest.fixture
def telemetry() -> Iterator[Recorder]:
    yield from recorder()

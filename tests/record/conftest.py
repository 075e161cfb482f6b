"""Fixtures for the recorder tests."""

from __future__ import annotations

import pytest
from recorded_run_script import FakeClock, three_agent_run

from massgen.core.events import AnyEvent


@pytest.fixture
def events() -> list[AnyEvent]:
    return three_agent_run()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()

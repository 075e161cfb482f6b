import sys
from pathlib import Path

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).parent))

from chat_policy import chat_policy

from massgen.testing.fake_provider import FakeProvider


@pytest.fixture(autouse=True)
def _in_tmp(in_tmp):
    """Every chat test runs in a fresh folder and HOME."""


@pytest.fixture
def fake():
    with FakeProvider(chat_policy) as provider:
        yield provider


def write_team(folder: Path, base_url: str) -> Path:
    agents = [
        {"id": name, "backend": {"type": "chatcompletion", "model": model, "base_url": base_url}}
        for name, model in (("careful", "m-a"), ("balanced", "m-b"), ("creative", "m-c"))
    ]
    path = folder / "team.yaml"
    # The fake's agents write the same answer to a turn; these tests follow the votes, so
    # identical first answers must not end a turn before them (`orchestrator.agreement`).
    path.write_text(yaml.safe_dump({"agents": agents, "orchestrator": {"agreement": "none"}}))
    return path


@pytest.fixture
def team(tmp_path, fake) -> Path:
    return write_team(tmp_path, fake.base_url)

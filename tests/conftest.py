import sys
from pathlib import Path

import pytest

# Protocol tests share the scripted backend in tests/scripted.py.
sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run in a fresh folder with a fresh HOME: no config, .env or logs of the machine's."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("MASSGEN_LOG_BASE_DIR", raising=False)
    return tmp_path

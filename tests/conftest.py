import os
import pwd
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from massgen.core import safe_open

# Protocol tests share the scripted backend in tests/scripted.py.
sys.path.insert(0, str(Path(__file__).parent))

# Tests give runs a HOME of their own; the caches still go where the user's do, so the
# offline models (1.5 GB joined from their packages) are built once per machine, not once
# per test (a CI disk ran out when each test built its own).
os.environ.setdefault("XDG_CACHE_HOME", str(Path(pwd.getpwuid(os.getuid()).pw_dir) / ".cache"))


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run in a fresh folder with a fresh HOME: no config, .env or logs of the machine's."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("MASSGEN_LOG_BASE_DIR", raising=False)
    return tmp_path


@pytest.fixture(
    params=[
        pytest.param(True, id="openat2", marks=pytest.mark.skipif(
            not safe_open.has_openat2(), reason="this kernel has no openat2")),
        pytest.param(False, id="walk"),
    ]
)  # fmt: skip
def open_way(request: pytest.FixtureRequest) -> Iterator[bool]:
    """Run a test both ways `safe_open` opens beneath a root: the kernel's openat2 and the
    component-by-component walk (openat2 again afterwards, where the kernel has it)."""
    safe_open.use_openat2(request.param)
    yield request.param
    safe_open.use_openat2(True)

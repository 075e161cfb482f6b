import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from massgen.config import load_config
from massgen.core.errors import ConfigError


@dataclass
class Dirs:
    home: Path
    work: Path

    def write(self, name: str, text: str) -> Path:
        path = self.work / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    def config_error(self, text: str, name: str = "c.yaml") -> str:
        """The one line that loading `text` as the config file `name` is refused with,
        less the file's path in front."""
        path = self.write(name, text)
        with pytest.raises(ConfigError) as caught:
            load_config(path)
        return str(caught.value).removeprefix(f"{path}: ")


@pytest.fixture(autouse=True)
def dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Each test runs in an empty cwd and HOME, and leaves os.environ as it found it.

    The loader reads ./.env and ~/.config/massgen/.env, so without this a developer's own
    files would leak into the tests.
    """
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(work)
    saved = dict(os.environ)
    yield Dirs(home, work)
    os.environ.clear()
    os.environ.update(saved)

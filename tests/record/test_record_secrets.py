"""Secrets given in the config or on the command line never reach the log directory."""

from __future__ import annotations

from pathlib import Path

import yaml
from recorded_run_script import QUESTION, three_agent_run

from massgen.record import Recorder
from massgen.record.metadata import MASK, redact_args

SECRET = "sk-FAKE-7f3a9c-do-not-log"

CONFIG = {
    "agents": [
        {
            "id": "alpha",
            "backend": {
                "type": "openai",
                "model": "gpt-4o-mini",
                "api_key": SECRET,
                "api_key_env": "OPENAI_API_KEY",
                "max_tokens": 512,
            },
        },
        {"id": "beta", "backend": {"type": "claude", "headers": {"Authorization": SECRET}}},
    ],
    "mcp_servers": [{"name": "gh", "env": {"GITHUB_TOKEN": SECRET, "DB_PASSWORD": SECRET}}],
    "orchestrator": {"client_secret": SECRET, "timeout": 30},
}
ARGS = ["--config", "team.yaml", "--api-key", SECRET, f"--token={SECRET}", QUESTION]


def test_secrets_appear_in_no_file(tmp_path: Path) -> None:
    recorder = Recorder(
        tmp_path, question=QUESTION, config_raw=CONFIG, config_path="team.yaml", cli_args=ARGS
    )
    for event in three_agent_run():
        recorder.handle(event)
    recorder.close()
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert len(files) > 10
    assert [p for p in files if SECRET.encode() in p.read_bytes()] == []


def test_metadata_masks_secrets_and_keeps_the_rest(tmp_path: Path) -> None:
    Recorder(
        tmp_path, question=QUESTION, config_raw=CONFIG, config_path="team.yaml", cli_args=ARGS
    ).close()
    meta = yaml.safe_load((tmp_path / "execution_metadata.yaml").read_text(encoding="utf-8"))
    backend = meta["config"]["agents"][0]["backend"]
    assert backend == {
        "type": "openai",
        "model": "gpt-4o-mini",
        "api_key": MASK,
        "api_key_env": "OPENAI_API_KEY",
        "max_tokens": 512,
    }
    assert meta["config"]["agents"][1]["backend"]["headers"] == {"Authorization": MASK}
    assert meta["config"]["mcp_servers"][0]["env"] == {"GITHUB_TOKEN": MASK, "DB_PASSWORD": MASK}
    assert meta["config"]["orchestrator"] == {"client_secret": MASK, "timeout": 30}
    assert meta["config_path"] == "team.yaml"
    assert meta["cli_args"] == [
        "--config",
        "team.yaml",
        "--api-key",
        MASK,
        f"--token={MASK}",
        QUESTION,
    ]


def test_redact_args_leaves_ordinary_flags() -> None:
    assert redact_args(["--max-tokens", "5", "-v"]) == ["--max-tokens", "5", "-v"]

"""`command_line_sandbox: none` is loud in every view: the run's events carry an
`AgentWarning` for the agent (so the log, the plain, live and terminal views and the web
page show it), besides the line on stderr."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from massgen.cli import main
from massgen.testing.fake_provider import FakeProvider

pytestmark = pytest.mark.usefixtures("in_tmp")


def team_file(tmp_path: Path, base_url: str) -> Path:
    unconfined = {
        "enable_mcp_command_line": True,
        "command_line_sandbox": "none",
        "command_line_sandbox_acknowledge_unconfined": True,
    }
    agents = [
        {
            "id": "bare",
            "backend": {
                "type": "chatcompletion",
                "model": "m-a",
                "base_url": base_url,
                **unconfined,
            },
        },
        {
            "id": "boxed",
            "backend": {"type": "chatcompletion", "model": "m-b", "base_url": base_url},
        },
    ]
    path = tmp_path / "team.yaml"
    path.write_text(yaml.safe_dump({"agents": agents}))
    return path


def test_an_unsandboxed_agent_is_warned_about_in_the_log_and_the_plain_view(tmp_path, capsys):
    with FakeProvider() as fake:
        config = team_file(tmp_path, fake.base_url)
        assert main(["--config", str(config), "--automation", "q"]) == 0
        out, err = capsys.readouterr()
        log_dir = Path(
            next(line for line in out.splitlines() if line.startswith("LOG_DIR:")).split(": ", 1)[1]
        )
        events = [json.loads(line) for line in (log_dir / "events.jsonl").read_text().splitlines()]
        warned = [e for e in events if e["type"] == "agent_warning"]
        assert [e["agent"] for e in warned] == ["bare"]
        assert "UNSANDBOXED" in warned[0]["message"]
        kinds = [e["type"] for e in events]
        assert kinds.index("run_started") < kinds.index("agent_warning")
        assert "UNSANDBOXED" in err

        assert main(["--config", str(config), "--display", "plain", "--no-logs", "q"]) == 0
        shown = capsys.readouterr().out
        assert "[bare] ⚠ agent.backend" not in shown  # the path names the agent's entry
        assert "[bare] ⚠ agents[0].backend.command_line_sandbox is `none`" in shown
        assert "[boxed] ⚠" not in shown

"""How a run gets its engine: config blocks, roles, settings files, and off only loudly."""

from __future__ import annotations

import json

import pytest
from perm_helpers import zones

from massgen.config.schema import MassgenConfig
from massgen.core.effects import Run, Write
from massgen.core.errors import ConfigError
from massgen.permissions.engine import Call
from massgen.permissions.ledger import read
from massgen.permissions.policy import PolicyApprover
from massgen.runs.wiring import engine_for


def config(top=None, **agents) -> MassgenConfig:
    data: dict = {
        "agents": [
            {
                "id": a,
                "backend": {
                    "type": "chatcompletion",
                    **({"permissions": p} if p is not None else {}),
                },
            }
            for a, p in (agents or {"a": None}).items()
        ]
    }
    if top is not None:
        data["permissions"] = top
    return MassgenConfig.model_validate(data)


def test_permissions_false_is_off_and_says_so(tmp_path, capsys):
    assert engine_for(config(False), log_dir=tmp_path, project=tmp_path) is None
    assert "permission engine is OFF" in capsys.readouterr().err
    (record,) = read(tmp_path / "permissions.jsonl")
    assert record["decision"] == "off" and "OFF" in record["reason"]


def test_one_agent_off_is_said_too(tmp_path, capsys):
    engine = engine_for(config(a=False, b=None), log_dir=tmp_path, project=tmp_path)
    assert engine is not None and set(engine.books) == {"b"}
    assert "OFF for agent `a`" in capsys.readouterr().err


async def test_roles_and_rules_per_agent_and_from_settings_files(tmp_path):
    (tmp_path / ".massgen").mkdir()
    (tmp_path / ".massgen" / "settings.json").write_text(
        json.dumps({"permissions": {"deny": ["Command(make *)"]}})
    )
    (tmp_path / ".massgen" / "settings.local.json").write_text(
        json.dumps({"permissions": {"allow": ["Command(curl *)"]}})
    )
    top = {"automation_default": "deny-all"}
    engine = engine_for(
        config(top, reader={"role": "researcher"}, writer=None), log_dir=tmp_path, project=tmp_path
    )
    assert engine is not None and isinstance(engine.approver, PolicyApprover)
    assert engine.approver.mode == "deny-all"
    assert (engine.role("reader"), engine.role("writer")) == ("read-only", "read-write")
    assert engine.ledger.path == tmp_path / "permissions.jsonl"
    z = zones(tmp_path)

    async def ok(agent, effect):
        return (await engine.decide(Call(agent, "t", (effect,), z))).allowed

    ws = z.workspace
    assert not await ok("reader", Write(ws / "x"))
    assert await ok("writer", Write(ws / "x"))
    assert await ok("writer", Run(("curl", "x"), ws))  # allowed by settings.local.json
    assert not await ok("writer", Run(("make", "x"), ws))  # denied by settings.json


def test_a_bad_settings_file_is_a_config_error(tmp_path):
    (tmp_path / ".massgen").mkdir()
    (tmp_path / ".massgen" / "settings.json").write_text('{"permissions": {"allow": ["Read()"]}}')
    with pytest.raises(ConfigError, match=r"settings.json: permissions.allow\[0\]"):
        engine_for(config(), log_dir=tmp_path, project=tmp_path)


def test_the_callers_approver_wins(tmp_path):
    class Person:
        operator = "human"

        async def ask(self, request):
            raise AssertionError

    person = Person()
    assert engine_for(config(), log_dir=None, approver=person, project=tmp_path).approver is person


def test_the_readmes_permissions_example_loads():
    import re
    from pathlib import Path

    import yaml

    readme = (Path(__file__).parents[2] / "README.md").read_text()
    block = next(
        b for b in re.findall(r"```yaml\n(.*?)```", readme, re.S) if b.startswith("permissions:")
    )
    data = yaml.safe_load(block)
    loaded = MassgenConfig.model_validate(
        {"agents": [{"id": "a", "backend": {"type": "x"}}], **data}
    )
    assert loaded.permissions is not None and loaded.permissions.max_consecutive_auto == 20

"""`massgen install-skill`: the SKILL.md lands where each agent reads skills, in a fake HOME."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
import yaml

from massgen.cli import main

pytestmark = pytest.mark.usefixtures("in_tmp")


def front_matter(path: Path) -> dict[str, str]:
    text = path.read_text(encoding="utf-8")
    match = re.match(r"^---\n(.*?)\n---\n", text, re.DOTALL)
    assert match, "SKILL.md must open with YAML front matter"
    return yaml.safe_load(match.group(1))


def test_claude_gets_the_skill_and_the_registration_line(in_tmp: Path, capsys) -> None:
    assert main(["install-skill", "--claude"]) == 0
    skill = in_tmp / "home" / ".claude" / "skills" / "massgen" / "SKILL.md"
    meta = front_matter(skill)
    # The Agent Skills rules: the name is the folder's, lower case; a description that
    # says when to use it, within 1024 characters.
    assert meta["name"] == skill.parent.name == "massgen"
    assert "Use when" in meta["description"] and len(meta["description"]) <= 1024
    body = skill.read_text()
    assert "ask_team" in body and "--automation" in body and "WORTH:" in body
    out = capsys.readouterr().out
    assert "claude mcp add massgen -- massgen mcp" in out


def test_codex_gets_the_skill_and_a_valid_config_toml_entry(in_tmp: Path, capsys) -> None:
    assert main(["install-skill", "--codex"]) == 0
    assert (in_tmp / "home" / ".agents" / "skills" / "massgen" / "SKILL.md").is_file()
    out = capsys.readouterr().out
    entry = out[out.index("[mcp_servers.massgen]") :]
    parsed = tomllib.loads("\n".join(line.strip() for line in entry.splitlines()))
    assert parsed["mcp_servers"]["massgen"] == {"command": "massgen", "args": ["mcp"]}


def test_an_edited_skill_is_kept_unless_forced(in_tmp: Path, capsys) -> None:
    folder = in_tmp / "skills" / "massgen"
    assert main(["install-skill", "--path", str(folder)]) == 0
    assert main(["install-skill", "--path", str(folder)]) == 0  # the same text: fine
    skill = folder / "SKILL.md"
    skill.write_text(skill.read_text() + "\nMy own note.\n")
    capsys.readouterr()
    assert main(["install-skill", "--path", str(folder)]) == 1
    assert "My own note." in skill.read_text()
    assert "--force" in capsys.readouterr().err
    assert main(["install-skill", "--path", str(folder), "--force"]) == 0
    assert "My own note." not in skill.read_text()


def test_a_target_is_required(capsys) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["install-skill"])
    assert exit_.value.code != 0
    assert "--claude" in capsys.readouterr().err

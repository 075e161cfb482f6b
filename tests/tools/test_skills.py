"""Skills (`coordination.use_skills`): SKILL.md folders found in the project, the user's
home and the bundled set, listed in the system prompt, loaded with `load_skill` through
the permission engine; broken ones are left out with a warning naming the file."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
import yaml

import massgen
from massgen.config import config_from_dict, load_config
from massgen.config.predecessor import translate
from massgen.config.skills import bundled_names
from massgen.core.effects import Read
from massgen.core.errors import ConfigError
from massgen.core.toolbox import ToolContext
from massgen.core.types import ToolCall
from massgen.permissions.engine import Book, Engine
from massgen.permissions.guarded import Guarded
from massgen.permissions.policy import PolicyApprover
from massgen.runs.wiring import zones_of
from massgen.testing import FakeProvider, Reply, cooperative_agent
from massgen.tools import skills
from massgen.tools.skills import SkillToolbox, Sources, discover, prompt_section

CTX = ToolContext(agent="a1")
EMPTY = Path("/nonexistent-massgen-bundle")


def write_skill(root: Path, folder: str, front: str | None, body: str = "Do it well.") -> Path:
    directory = root / folder
    directory.mkdir(parents=True, exist_ok=True)
    text = body if front is None else f"---\n{textwrap.dedent(front).strip()}\n---\n{body}\n"
    (directory / "SKILL.md").write_text(text)
    return directory


def only(project: Path, **more) -> Sources:
    """Sources with nothing but `project` (no home, no bundled skills) unless given."""
    return Sources(project=project, user=more.get("user"), bundled=more.get("bundled", EMPTY))


def call(tool: str, **arguments) -> ToolCall:
    return ToolCall(id="c1", name=tool, arguments=json.dumps(arguments))


# ---------------------------------------------------------------- discovery


def test_project_user_and_bundled_skills_are_found_and_the_project_wins(tmp_path):
    project, user = tmp_path / "project", tmp_path / "home"
    write_skill(project, "pdf", "name: pdf\ndescription: Fill and read PDF forms.")
    write_skill(user, "pdf", "name: pdf\ndescription: The user's older pdf skill.")
    write_skill(user, "notes", "description: Keep meeting notes.")  # name: the folder's
    catalog = discover(Sources(project=project, user=user))
    found = {s.name: (s.location, s.description) for s in catalog.skills}
    assert found["pdf"] == ("project", "Fill and read PDF forms.")
    assert found["notes"] == ("user", "Keep meeting notes.")
    assert found["file-search"][0] == "builtin"
    assert catalog.warnings == ()


def test_massgen_skills_picks_bundled_skills_by_name(tmp_path):
    config = config_from_dict(
        {
            "agents": [{"id": "a", "backend": {"type": "openai"}}],
            "orchestrator": {
                "coordination": {"use_skills": True, "massgen_skills": ["file_search"]}
            },
        }
    )
    sources = skills.sources_of(config, cwd=tmp_path)
    assert sources.project == tmp_path / ".agent" / "skills"
    names = [s.name for s in discover(sources).skills if s.location == "builtin"]
    assert names == ["file-search"]
    everything = discover(Sources(project=tmp_path, user=None))
    assert {"file-search", "skill-creator"} <= {s.name for s in everything.skills}


def test_the_bundled_skills_are_real_and_valid():
    catalog = discover(Sources(project=EMPTY, user=None))
    assert catalog.warnings == ()
    assert set(bundled_names()) == {s.name for s in catalog.skills}
    for skill in catalog.skills:
        assert len(skill.description) > 40
        assert skill.file.stat().st_size > 500


def test_broken_skills_are_left_out_with_a_warning_naming_the_file(tmp_path):
    write_skill(tmp_path, "good", "name: good\ndescription: Works.")
    write_skill(tmp_path, "plain", None, "# no front matter at all")
    write_skill(tmp_path, "yaml", "name: yaml\ndescription: [unclosed")
    write_skill(tmp_path, "list", "- just\n- a list")
    write_skill(tmp_path, "nodesc", "name: nodesc")
    write_skill(tmp_path, "badname", "name: ../escape\ndescription: Sneaky.")
    (write_skill(tmp_path, "binary", None) / "SKILL.md").write_bytes(b"---\n\xff\xfe\n---\n")
    (tmp_path / "no-skill-md").mkdir()
    (tmp_path / "loose-file.md").write_text("not a folder")
    catalog = discover(only(tmp_path))
    assert [s.name for s in catalog.skills] == ["good"]
    warned = "\n".join(catalog.warnings)
    for folder in ("plain", "yaml", "list", "nodesc", "badname", "binary"):
        assert str(tmp_path / folder / "SKILL.md") in warned
    assert "not valid YAML at line" in warned
    assert "needs a `description`" in warned
    assert len(catalog.warnings) == 6


def test_discovery_is_bounded(tmp_path, monkeypatch):
    monkeypatch.setattr(skills, "MAX_SKILLS", 3)
    for i in range(5):
        write_skill(tmp_path, f"s{i}", f"description: Skill {i}.")
    big = write_skill(tmp_path, "huge", "description: Too big.", "x" * (skills.MAX_SKILL_BYTES))
    catalog = discover(only(tmp_path))
    assert [s.name for s in catalog.skills] == ["s0", "s1", "s2"]
    assert any("5 skills found; only the first 3" in w for w in catalog.warnings)
    assert any(str(big / "SKILL.md") in w and "larger than" in w for w in catalog.warnings)


def test_no_skills_at_all_is_a_warning_not_an_error(tmp_path):
    catalog = discover(only(tmp_path / "missing"))
    assert catalog.skills == ()
    assert "no skills were found" in catalog.warnings[0]


def test_previous_runs_evolving_skills_are_found_when_asked(tmp_path, monkeypatch):
    logs = tmp_path / ".massgen" / "massgen_logs"
    evolving = logs / "log_20261130_101010_000001" / "turn_1" / skills.EVOLVING.parent
    write_skill(evolving.parent, evolving.name, "name: csv-cleanup\ndescription: Clean CSVs.")
    config = {
        "agents": [{"id": "a", "backend": {"type": "openai"}}],
        "orchestrator": {"coordination": {"use_skills": True}},
    }
    monkeypatch.delenv("MASSGEN_LOG_BASE_DIR", raising=False)
    off = skills.sources_of(config_from_dict(config), cwd=tmp_path)
    assert off.previous_logs is None
    config["orchestrator"]["coordination"]["load_previous_session_skills"] = True
    on = skills.sources_of(config_from_dict(config), cwd=tmp_path)
    assert on.previous_logs == logs
    found = discover(Sources(project=EMPTY, bundled=EMPTY, previous_logs=logs))
    assert [(s.name, s.location) for s in found.skills] == [("csv-cleanup", "previous_session")]


# ---------------------------------------------------------------- the prompt


def test_the_prompt_lists_each_skill_and_says_how_to_load_it(tmp_path):
    write_skill(tmp_path, "charts", "description: Draw <good> charts & plots.")
    text = prompt_section(discover(only(tmp_path)))
    assert "call `load_skill` with its name" in text
    assert "<name>charts</name>" in text
    assert "<description>Draw &lt;good&gt; charts &amp; plots.</description>" in text
    assert "<location>project</location>" in text


# ---------------------------------------------------------------- the tools


def skill_tree(tmp_path: Path) -> tuple[Path, SkillToolbox]:
    folder = write_skill(
        tmp_path / "skills", "deploy", "name: deploy\ndescription: Ship it.", "# Deploy\nStep 1."
    )
    (folder / "scripts").mkdir()
    (folder / "scripts" / "check.sh").write_text("echo ok\n")
    (folder / ".hidden").write_text("no")
    (tmp_path / "outside.txt").write_text("secret")
    return folder, SkillToolbox(discover(only(tmp_path / "skills")))


async def test_load_skill_gives_the_body_and_the_files_beside_it(tmp_path):
    folder, box = skill_tree(tmp_path)
    assert {s.name for s in box.specs()} == {"load_skill", "read_skill_file"}
    assert all(s.annotations.read_only for s in box.specs())
    loaded = await box.call(call("load_skill", name="Deploy"), CTX)
    assert not loaded.is_error
    assert "# Deploy\nStep 1." in loaded.content and "description: Ship it" not in loaded.content
    assert "- scripts/check.sh" in loaded.content and ".hidden" not in loaded.content
    assert f"Folder: {folder.resolve()}" in loaded.content
    script = await box.call(call("read_skill_file", name="deploy", path="scripts/check.sh"), CTX)
    assert script.content == "echo ok\n"


async def test_a_file_outside_the_skill_or_an_unknown_skill_is_an_error(tmp_path):
    folder, box = skill_tree(tmp_path)
    (folder / "link").symlink_to(tmp_path / "outside.txt")
    for path in ("../../outside.txt", "link", str(tmp_path / "outside.txt")):
        result = await box.call(call("read_skill_file", name="deploy", path=path), CTX)
        assert result.is_error and "secret" not in result.content
        with pytest.raises(ValueError):
            box.effects(call("read_skill_file", name="deploy", path=path), CTX)
    unknown = await box.call(call("load_skill", name="nope"), CTX)
    assert unknown.is_error and "no skill `nope` (skills: deploy)" in unknown.content
    assert box.effects(call("load_skill", name="nope"), CTX) == ()


async def test_the_listing_of_a_skills_files_is_bounded(tmp_path, monkeypatch):
    monkeypatch.setattr(skills, "MAX_FILES", 5)
    folder = write_skill(tmp_path, "many", "description: Many files.")
    deep = folder / "a" / "b" / "c" / "d" / "e"
    deep.mkdir(parents=True)
    (deep / "too-deep.txt").write_text("x")
    assert skills._files(folder) == []
    for i in range(9):
        (folder / f"f{i}.txt").write_text("x")
    assert len(skills._files(folder)) == 5


def test_the_calls_are_declared_as_reads_of_the_skill(tmp_path):
    folder, box = skill_tree(tmp_path)
    real = folder.resolve()
    load = box.effects(call("load_skill", name="deploy"), CTX)
    assert load == (Read(real), Read(real / "SKILL.md"))
    read = box.effects(call("read_skill_file", name="deploy", path="scripts/check.sh"), CTX)
    assert read == (Read(real / "scripts" / "check.sh"),)


async def test_the_engine_allows_skill_reads_and_a_deny_rule_refuses_them(tmp_path):
    _, box = skill_tree(tmp_path)
    roots = box.catalog.roots()
    engine = Engine(approver=PolicyApprover("deny-all"), project=tmp_path)
    allowed = await Guarded(box, engine, zones_of(None, roots)).call(
        call("load_skill", name="deploy"), CTX
    )
    assert not allowed.is_error and "Step 1." in allowed.content
    unmanaged = await Guarded(box, engine, zones_of(None)).call(
        call("load_skill", name="deploy"), CTX
    )
    assert unmanaged.is_error and "outside the managed paths" in unmanaged.content
    book = Book.of(deny=["Read(./skills/deploy/scripts/**)"], project=tmp_path)
    strict = Engine(default_book=book, approver=PolicyApprover("allow-all"), project=tmp_path)
    guarded = Guarded(box, strict, zones_of(None, roots))
    denied = await guarded.call(
        call("read_skill_file", name="deploy", path="scripts/check.sh"), CTX
    )
    assert denied.is_error and "refused by the permission engine" in denied.content
    assert not (await guarded.call(call("load_skill", name="deploy"), CTX)).is_error


def test_a_custom_tool_may_not_be_called_load_skill():
    from massgen.runs.toolboxes import reserved_names

    assert {"load_skill", "read_skill_file"} <= reserved_names()


# ---------------------------------------------------------------- the config


def team_config(directory: Path, coordination: dict, base_url: str = "http://x/v1") -> Path:
    backend = {"type": "chatcompletion", "model": "m1", "base_url": base_url, "api_key": "k"}
    data = {
        "agents": [{"id": "a1", "backend": backend}, {"id": "a2", "backend": {**backend}}],
        "orchestrator": {"coordination": coordination},
    }
    file = directory / "team.yaml"
    file.write_text(yaml.safe_dump(data))
    return file


def test_a_skills_directory_that_is_a_file_is_a_config_error(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "skills.txt").write_text("oops")
    file = team_config(tmp_path, {"use_skills": True, "skills_directory": "skills.txt"})
    with pytest.raises(ConfigError) as error:
        load_config(file)
    assert error.value.path == "orchestrator.coordination.skills_directory"
    assert "is not a directory" in str(error.value)
    missing = team_config(tmp_path, {"use_skills": True, "skills_directory": "not-yet"})
    assert load_config(missing).orchestrator.coordination.skills_directory == "not-yet"


def test_an_unknown_bundled_skill_is_a_config_error_listing_those_there_are(tmp_path):
    file = team_config(tmp_path, {"use_skills": True, "massgen_skills": ["file_search", "serena"]})
    with pytest.raises(ConfigError) as error:
        load_config(file)
    assert error.value.path == "orchestrator.coordination.massgen_skills"
    assert "`serena`" in str(error.value) and "file-search, skill-creator" in str(error.value)


def test_the_predecessors_keys_load_including_orchestrator_skills_directory(tmp_path):
    raw = {
        "agents": [{"id": "a", "backend": {"type": "openai"}}],
        "orchestrator": {
            "skills_directory": ".agent/skills",
            "coordination": {"use_skills": True, "load_previous_session_skills": True},
        },
    }
    data, notes = translate(raw, "x.yaml")
    assert notes == []
    coordination = config_from_dict(data).orchestrator.coordination
    assert coordination.use_skills and coordination.load_previous_session_skills
    assert coordination.skills_directory == ".agent/skills"
    raw["orchestrator"]["coordination"]["skills_directory"] = "mine"
    assert translate(raw, "x.yaml")[0]["orchestrator"]["coordination"]["skills_directory"] == "mine"
    bare = {"orchestrator": {"skills_directory": "skills", "coordination": None}}
    assert translate(bare, "x.yaml")[0]["orchestrator"] == {
        "coordination": {"skills_directory": "skills"}
    }


# ---------------------------------------------------------------- a whole team


WORD = "marmalade-42"


def skilled_agent(request: dict) -> Reply:
    """Load the skill the system prompt lists, then answer with what it says."""
    offered = {t["function"]["name"] for t in request.get("tools") or []}
    system = request["messages"][0]["content"]
    results = [m["content"] for m in request["messages"] if m["role"] == "tool"]
    if "vote" in offered:
        return cooperative_agent(request)
    if "new_answer" in offered:
        assert "<name>secret-word</name>" in system and "load_skill" in offered
        if not results:
            return Reply(tool_calls=[("load_skill", {"name": "secret-word"})])
        said = results[-1].split("The word is ", 1)[-1].split(".", 1)[0]
        return Reply(tool_calls=[("new_answer", {"content": f"The word is {said}."})])
    user = request["messages"][-1]["content"]
    return Reply(text="Final. " + user.split("<SELECTED ANSWER", 1)[-1][:200])


def write_word_skill(project: Path) -> None:
    """The project's skill `secret-word`, which tells WORD."""
    write_skill(
        project / ".agent" / "skills",
        "secret-word",
        "name: secret-word\ndescription: The word to answer with.",
        f"When asked for the word: The word is {WORD}.",
    )


def test_a_team_loads_a_skill_and_the_answer_uses_it(in_tmp):
    write_word_skill(in_tmp)
    with FakeProvider(skilled_agent) as fake:
        file = team_config(in_tmp, {"use_skills": True}, fake.base_url)
        result = massgen.run("What is the word?", config=str(file), logs=False)
    assert result.status == "ok", result
    assert WORD in result.answer


def test_a_team_whose_rules_deny_the_skill_gets_a_refusal(in_tmp):
    write_word_skill(in_tmp)
    with FakeProvider(skilled_agent) as fake:
        file = team_config(in_tmp, {"use_skills": True}, fake.base_url)
        data = yaml.safe_load(file.read_text())
        data["permissions"] = {"rules": {"deny": ["Read(./.agent/skills/secret-word/**)"]}}
        file.write_text(yaml.safe_dump(data))
        result = massgen.run("What is the word?", config=str(file), logs=False)
    assert result.status == "ok", result
    assert WORD not in result.answer
    assert "refused by the permission engine" in result.answer

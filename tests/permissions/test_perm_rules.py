"""Rules in both spellings mean the same; a rule that can never match is a config error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from massgen.core.errors import ConfigError
from massgen.permissions import grants
from massgen.permissions.rules import RuleError, parse
from massgen.permissions.subjects import Subject
from massgen.runs.loading import load


def cmd(*argv: str) -> Subject:
    return Subject("command", " ".join(argv), argv=argv)


def path(kind, p: Path) -> Subject:
    return Subject(kind, str(p), path=p)


@pytest.mark.parametrize("text", ["Command(git push *)", "command(git push *)", "Bash(git push:*)"])
def test_command_rules_match_word_by_word(tmp_path, text):
    rule = parse(text, tmp_path)
    assert rule.matches(cmd("git", "push", "origin", "main"))
    assert rule.matches(cmd("git", "push"))
    assert not rule.matches(cmd("git", "pull"))
    assert not rule.matches(cmd("echo", "git", "push"))


def test_the_predecessors_glob_over_the_whole_command(tmp_path):
    rule = parse("command(git*)", tmp_path)
    assert rule.matches(cmd("git", "status")) and rule.matches(cmd("gitk"))
    assert not rule.matches(cmd("echo", "git"))


def test_a_quoted_command_rule_matches_the_words_not_the_quotes(tmp_path):
    rule = parse("""Command(python3 -c "print('hi')")""", tmp_path)
    assert rule.matches(cmd("python3", "-c", "print('hi')"))
    assert not rule.matches(cmd("python3", "-c", "print('bye')"))


def test_a_command_with_computed_words_matches_no_rule(tmp_path):
    rule = parse("Command(echo *)", tmp_path)
    assert not rule.matches(Subject("command", "echo $X", argv=("echo", "$X"), dynamic=True))


def test_claude_paths_use_gitignore_syntax(tmp_path):
    src = tmp_path / "src"
    rule = parse("Read(./src/**)", tmp_path)
    assert rule.matches(path("read", src / "a" / "b.py"))
    assert not rule.matches(path("read", tmp_path / "other" / "src" / "b.py"))
    assert not rule.matches(path("write", src / "a.py"))
    anywhere = parse("Read(*.env)", tmp_path)
    assert anywhere.matches(path("read", tmp_path / "deep" / "x.env"))
    absolute = parse("Write(//etc/hosts)", tmp_path)
    assert absolute.matches(path("write", Path("/etc/hosts")))
    assert absolute.matches(path("delete", Path("/etc/hosts")))
    home = parse("Read(~/notes/**)", tmp_path)
    assert home.matches(path("read", Path.home().resolve() / "notes" / "x"))


def test_the_predecessors_path_rules_are_fnmatch(tmp_path):
    rule = parse("write_file(out/*)", tmp_path)
    assert rule.matches(path("write", tmp_path / "out" / "deep" / "x"))  # `*` crosses `/`
    assert parse("read_file(/etc/*)", tmp_path).matches(path("read", Path("/etc/hosts")))


def test_fetch_and_mcp_rules(tmp_path):
    fetch = Subject("fetch", "example.com")
    assert parse("Fetch(domain:example.com)", tmp_path).matches(fetch)
    assert parse("read_url(https://example.com/x/*)", tmp_path).matches(fetch)
    assert not parse("Fetch(domain:evil.com)", tmp_path).matches(fetch)
    tool = Subject("mcp", "github/create_issue")
    for text in (
        "mcp__github__create_issue",
        "mcp__github__*",
        "mcp__github",
        "mcp(github/*)",
        "mcp(create_issue)",
    ):
        assert parse(text, tmp_path).matches(tool), text
    assert not parse("mcp__gitlab__*", tmp_path).matches(tool)


def test_bare_names_cover_their_kind(tmp_path):
    assert parse("Command", tmp_path).matches(cmd("x"))
    assert parse("*", tmp_path).matches(Subject("fetch", "x"))
    assert not parse("*", tmp_path).matches(Subject("opaque", "fork bomb"))


@pytest.mark.parametrize(
    "text",
    [
        "",
        "Read()",
        "Command(  )",
        "Fetch(example.com)",
        "Frobnicate(x)",
        "mcp__",
        "mcp____x",
        "Command(echo 'open)",
        "read_url()",
        "Read(a\x00b)",
        "*(x)",
    ],
)
def test_rules_that_can_never_match_are_errors(tmp_path, text):
    with pytest.raises(RuleError):
        parse(text, tmp_path)


def test_a_bad_rule_in_the_config_names_the_key_and_the_fix():
    backend = {"type": "chatcompletion", "model": "m", "base_url": "http://x", "api_key": "k"}
    config = {
        "agents": [
            {
                "id": "a",
                "backend": {**backend, "permissions": {"rules": {"deny": ["Fetch(x.com)"]}}},
            }
        ]
    }
    with pytest.raises(ConfigError) as caught:
        load(config)
    text = str(caught.value)
    assert "agents[0].backend.permissions.rules.deny" in text and "domain:" in text


def test_the_predecessors_block_loads_with_its_keys():
    backend = {"type": "chatcompletion", "model": "m", "base_url": "http://x", "api_key": "k"}
    block = {
        "enabled": True,
        "role": "researcher",
        "rules": {
            "allow": ["read_file(*)"],
            "ask": ["command(git push *)"],
            "deny": ["mcp(github/delete_*)"],
        },
        "automation_default": "deny-all",
        "approval_mode": "policy",
        "audit": True,
        "max_consecutive_auto": 5,
        "persist_approvals": False,
    }
    loaded = load({"agents": [{"id": "a", "backend": {**backend, "permissions": block}}]})
    got = loaded.config.agents[0].backend.permissions
    assert got is not None and got.role == "read-only" and got.max_consecutive_auto == 5


def test_settings_files_in_both_shapes(tmp_path):
    claude = tmp_path / "a.json"
    claude.write_text(
        json.dumps({"permissions": {"allow": ["Command(ls)"], "deny": ["Read(./x)"]}})
    )
    old = tmp_path / "b.json"
    old.write_text(json.dumps({"permissions": {"rules": {"ask": ["command(git *)"]}}}))
    assert grants.load(claude, tmp_path).allow == ["Command(ls)"]
    assert grants.load(old, tmp_path).ask == ["command(git *)"]
    bad = tmp_path / "c.json"
    bad.write_text(json.dumps({"permissions": {"allow": ["Read()"]}}))
    with pytest.raises(ConfigError) as caught:
        grants.load(bad, tmp_path)
    assert "permissions.allow[0]" in str(caught.value) and str(bad) in str(caught.value)


def test_grants_are_rules_for_exactly_what_was_approved(tmp_path):
    subjects = [cmd("git", "push", "origin"), Subject("opaque", "x"), Subject("fetch", "a.com"),
                Subject("mcp", "gh/issue"), path("write", tmp_path / "f")]  # fmt: skip
    texts = grants.grant_rules(subjects)
    assert texts == [
        "Command(git push origin)",
        "Fetch(domain:a.com)",
        "mcp__gh__issue",
        f"Write(/{tmp_path}/f)",
    ]
    for text, subject in zip(texts, [s for s in subjects if s.kind != "opaque"], strict=True):
        assert parse(text, tmp_path).matches(subject)
    target = tmp_path / ".massgen" / "settings.local.json"
    grants.store(target, texts[:1])
    grants.store(target, texts[:2])
    assert json.loads(target.read_text()) == {"permissions": {"allow": texts[:2]}}


def test_where_the_file_system_ignores_case_a_rule_cannot_be_dodged_by_case(tmp_path, monkeypatch):
    from massgen.permissions import rules as rules_module

    secrets = tmp_path / "Secrets" / "KEY.txt"
    for text in ("Read(./secrets/**)", "read_file(secrets/*)"):
        rule = parse(text, tmp_path)
        assert not rule.matches(path("read", secrets))
        monkeypatch.setattr(rules_module, "case_insensitive", lambda _: True)
        assert rule.matches(path("read", secrets))
        monkeypatch.undo()

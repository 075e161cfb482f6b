"""The shell splitter: every part of a chain, substitution and wrapper is its own command."""

from __future__ import annotations

import shlex

import pytest

from massgen.permissions.shell import Unparseable, parse


def words(text: str) -> list[tuple[str, ...]]:
    return [c.argv for c in parse(text).commands]


def test_chains_pipes_and_subshells_split_into_simple_commands():
    assert words("a 1; b 2 && c || d | e & f\ng") == [
        ("a", "1"),
        ("b", "2"),
        ("c",),
        ("d",),
        ("e",),
        ("f",),
        ("g",),
    ]
    assert words("(cd x && ls)") == [("cd", "x"), ("ls",)]


def test_substitutions_are_commands_of_their_own():
    assert ("whoami",) in words("echo $(whoami)")
    assert ("id",) in words("echo `id`")
    assert ("cat", "/etc/passwd") in words('echo "x $(cat /etc/passwd) y"')
    assert ("ls",) in words("diff <(ls) b")
    assert ("b",) in words("echo $(a $(b))")


def test_wrappers_are_unwrapped():
    assert ("rm", "-rf", "~") in words('sh -c "rm -rf ~"')
    assert ("rm", "-rf", "/") in words("bash -lc 'rm -rf /'")
    assert ("rm", "-rf", "/") in words("eval 'rm -rf /'")
    assert ("python", "-c", "x") in words("env -i X=1 python -c x")
    assert ("curl", "x") in words("nohup timeout 5 nice -n 3 curl x")
    assert ("cat",) in words("X=1 Y=2 cat")


def test_quotes_and_escapes_are_removed():
    assert words("""echo 'a b' "c d" e\\ f""") == [("echo", "a b", "c d", "e f")]


def test_redirect_targets_are_writes_and_fd_duplication_is_not():
    parsed = parse("cat a > out 2>&1 >> log; wc < in")
    assert parsed.writes == ["out", "log"]
    assert parsed.reads == ["in"]


def test_heredocs_are_read_and_their_substitutions_are_opaque():
    parsed = parse("cat <<EOF > x.py\nprint(1)\nEOF\nls")
    assert [c.argv for c in parsed.commands] == [("cat",), ("ls",)]
    assert parsed.writes == ["x.py"]
    assert parse("cat <<EOF\n$(rm x)\nEOF\n").opaque


@pytest.mark.parametrize(
    "text",
    [
        "$CMD x",
        "eval $X",
        "for i in 1; do x; done",
        ":(){ :|:& };:",
        "xargs rm",
        "find . -exec rm {} ;",
    ],
)
def test_what_cannot_be_known_is_opaque(text):
    assert parse(text).opaque


@pytest.mark.parametrize(
    "text", ["echo 'open", 'echo "open', "echo $(open", "echo `open", "cat <<EOF\nx"]
)
def test_unreadable_text_is_unparseable(text):
    with pytest.raises(Unparseable):
        parse(text)


def test_nesting_is_bounded():
    text = "x"
    for _ in range(10):
        text = f"sh -c {shlex.quote(text)}"
    with pytest.raises(Unparseable):
        parse(text)


def test_computed_arguments_are_told_from_quoted_dollars():
    (awk,) = parse("awk '{print $1}' data.txt").commands
    assert not awk.computed
    (cat,) = [c for c in parse("cat $(echo x)").commands if c.argv[0] == "cat"]
    assert cat.computed and parse("cat $X").commands[0].computed
    assert not parse("ls *.py").commands[0].computed
    assert parse("env cat $X").commands[-1].computed

"""Properties of the decision function: no input raises, and deny always wins."""

from __future__ import annotations

import asyncio
import contextlib
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from perm_helpers import Scripted

from massgen.core.effects import Delete, External, Net, Read, Run, Write
from massgen.permissions.approval import Choice
from massgen.permissions.engine import Book, Call, Engine
from massgen.permissions.risk import Zones
from massgen.permissions.shell import Unparseable, parse

ROOT = Path(tempfile.mkdtemp(prefix="perm-prop-")).resolve()
WS = ROOT / "ws"
WS.mkdir(exist_ok=True)
SHELL_ALPHABET = st.sampled_from(
    [*"abc/.~$()`'\"\\;&|<> \n*?[]{}=-#!", "rm", "-rf", "sh -c", "eval", "$(", "<<"]
)
texts = st.lists(SHELL_ALPHABET, max_size=30).map("".join)
names = st.text(min_size=0, max_size=20)
paths = st.one_of(
    names.map(lambda s: WS / s),
    names.map(lambda s: ROOT / s),
    st.sampled_from(["/", "/etc/passwd", "/dev/sda", str(WS), "~/.ssh", "$HOME/x"]).map(Path),
)
effects = st.one_of(
    paths.map(Read),
    paths.map(Write),
    paths.map(Delete),
    texts.map(lambda t: Run(("/bin/sh", "-c", t), WS)),
    st.lists(names, min_size=1, max_size=4).map(lambda a: Run(tuple(a), WS)),
    names.map(Net),
    st.tuples(names, names).map(lambda p: External(*p)),
)
rule_texts = st.sampled_from(
    [
        "Command",
        "Command(rm *)",
        "Command(*)",
        "Read",
        "Write(//**)",
        "Read(./**)",
        "*",
        "Fetch(domain:*)",
        "mcp__*",
        "command(*)",
        "write_file(*)",
        "read_file(*)",
    ]
)
quick = settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))


def decide(engine: Engine, effect_list):
    call = Call("a", "t", tuple(effect_list), Zones(workspace=WS), "coordination", "c", "{}")
    return asyncio.run(engine.decide(call))


@quick
@given(texts)
def test_the_splitter_raises_nothing_but_unparseable(text):
    with contextlib.suppress(Unparseable):
        parse(text)


@quick
@given(
    st.lists(effects, max_size=4), st.lists(rule_texts, max_size=3), st.sampled_from(list(Choice))
)
def test_no_input_raises_and_every_decision_is_recorded(effect_list, allow, choice):
    engine = Engine(default_book=Book.of(allow=allow, project=ROOT), approver=Scripted(choice))
    decision = decide(engine, effect_list)
    assert decision.operator in ("floor", "rule", "policy", "human", "error")
    assert engine.ledger.records[-1]["decision"] == ("allow" if decision.allowed else "deny")


@quick
@given(st.lists(effects, min_size=1, max_size=4), st.lists(rule_texts, max_size=3), rule_texts,
       st.sampled_from(list(Choice)))  # fmt: skip
def test_deny_always_wins(effect_list, allow, deny, choice):
    """Whatever else is allowed, and whatever the approver says, a deny rule matching any
    part of a call refuses it."""
    denied_book = Book.of(allow=[*allow, deny], deny=[deny], project=ROOT)
    engine = Engine(default_book=denied_book, approver=Scripted(choice, choice, choice))
    decision = decide(engine, effect_list)
    probe = Engine(
        default_book=Book.of(deny=[deny], project=ROOT), approver=Scripted(Choice.ALWAYS)
    )
    matched = decide(probe, effect_list)
    if matched.rule == deny and not matched.allowed:
        assert not decision.allowed


@quick
@given(st.lists(effects, min_size=1, max_size=4), st.sampled_from(list(Choice)))
def test_more_rules_never_turn_a_floor_deny_into_an_allow(effect_list, choice):
    plain = decide(Engine(approver=Scripted(choice)), effect_list)
    everything = Book.of(allow=["*", "Command(*)", "Write(//**)", "Read(//**)"], project=ROOT)
    wide = decide(Engine(default_book=everything, approver=Scripted(choice)), effect_list)
    if plain.operator == "floor":
        assert not wide.allowed and wide.operator == "floor"

"""The hardline floor refuses, whatever rules and approvers say."""

from __future__ import annotations

import pytest
from perm_helpers import Scripted, decide, engine, run

from massgen.core.effects import Write
from massgen.permissions.approval import Choice

FLOOR = [
    "rm -rf /",
    "rm -rf /*",
    "rm -fr ~",
    "rm -r -f $HOME",
    "rm --recursive --force /etc",
    "true && rm -rf / --no-preserve-root",
    "sh -c 'rm -rf ~'",
    "eval 'mkfs.ext4 /dev/sda1'",
    ":(){ :|:& };:",
    "f(){ f & f; }; f",  # any name, `&` alone (issue #26)
    "bomb() { bomb | bomb & }; bomb",
    "function g { g & }; g",
    "X='1' rm -rf ~",  # a quoted assignment before the command
    "dd if=/dev/zero of=/dev/sda bs=1M",
    "echo x > /dev/sda",
    "cat /dev/zero > /dev/nvme0n1",
    "mkfs -t ext4 /dev/sdb",
    "chmod -R 777 /",
    "chown -R me /",
    "shutdown -h now",
    "reboot",
    "env X=1 poweroff",
    "systemctl reboot",
    "mv /etc /tmp/x",
    "mv important /dev/null",
    "echo $(rm -rf /)",
]


@pytest.mark.parametrize("command", FLOOR)
async def test_the_floor_refuses_even_when_everything_is_allowed(tmp_path, command):
    approver = Scripted(Choice.ALWAYS)
    e = engine(tmp_path, allow=["Command", "Write(//**)", "*"], approver=approver)
    decision = await decide(e, tmp_path, run(tmp_path, command))
    assert not decision.allowed and decision.operator == "floor", decision
    assert approver.asked == []
    assert e.ledger.records[-1]["operator"] == "floor"


async def test_a_raw_disk_write_effect_is_refused(tmp_path):
    decision = await decide(engine(tmp_path, allow=["Write(//**)"]), tmp_path, Write("/dev/sda"))  # type: ignore[arg-type]
    assert not decision.allowed and decision.operator == "floor"


@pytest.mark.parametrize("command", ["rm -rf build", "rm -f x", "ls /", "chmod 644 a"])
async def test_ordinary_commands_are_not_the_floors_business(tmp_path, command):
    decision = await decide(engine(tmp_path, allow=["Command"]), tmp_path, run(tmp_path, command))
    assert decision.operator != "floor"

"""What the batch tests share: a fake team that does sums, and the files a batch reads."""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

from massgen.testing.fake_provider import FakeUsage, Reply, cooperative_agent

QUESTION = re.compile(r"Question (q\d+): what is (\d+) plus one\?")


def question(index: int) -> str:
    return f"Question q{index}: what is {index} plus one?"


def asked(body: dict) -> str | None:
    """The id of the question a request is about."""
    for message in body.get("messages") or []:
        found = QUESTION.search(str(message.get("content") or ""))
        if found:
            return found.group(1)
    return None


def summing_agent(request: dict) -> Reply:
    """A cooperative team member whose plain-text replies give the sum. Every call costs
    20 tokens. Model `m1` alone (a baseline call: the question and nothing else) is off by
    one, so the team beats it."""
    reply = cooperative_agent(request)
    usage = FakeUsage(10, 10)
    if reply.tool_calls or reply.text.startswith("{"):
        return Reply(tool_calls=reply.tool_calls, text=reply.text, usage=usage)
    messages = request.get("messages") or []
    number = 0
    for message in messages:
        found = QUESTION.search(str(message.get("content") or ""))
        if found:
            number = int(found.group(2)) + 1
    alone = len(messages) == 1
    if alone and request.get("model") == "m1":
        number += 1
    return Reply(text=f"Working it out. The answer is {number}.", usage=usage)


def write_tasks(path: Path, count: int) -> Path:
    with path.open("w", encoding="utf-8") as out:
        for index in range(count):
            row = {"id": f"q{index}", "question": question(index), "answer": f"#### {index + 1}"}
            out.write(json.dumps(row) + "\n")
    return path


def write_team(path: Path, base_url: str, agents: int = 2) -> Path:
    backend = {"type": "chatcompletion", "base_url": base_url}
    team = {
        "agents": [{"id": f"a{i}", "backend": {**backend, "model": f"m{i}"}} for i in range(agents)]
    }
    path.write_text(json.dumps(team), encoding="utf-8")
    return path


def rows(out: Path) -> list[dict]:
    lines = (out / "results.jsonl").read_text(encoding="utf-8").splitlines()
    found = []
    for line in lines:
        with contextlib.suppress(json.JSONDecodeError):  # a line cut by a kill
            found.append(json.loads(line))
    return found


def presentations(requests: list[dict]) -> Counter[str]:
    """Final presentations per question: the team's one call offered no tools."""
    return Counter(q for body in requests if not body.get("tools") and (q := asked(body)))


def batch_process(cwd: Path, *argv: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "massgen", "batch", *argv],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "HOME": str(cwd / "home")},
    )

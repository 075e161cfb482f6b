"""Where a team loses a right answer, stage by stage: `stages.jsonl`, the stage table in
`summary.json` and the printed report, and the verdicts against each baseline, from a
real batch on the fake provider whose team votes a wrong answer in."""

from __future__ import annotations

import json
import re

import pytest
from batch_support import QUESTION, write_tasks, write_team

from massgen.batch import summary
from massgen.batch.verdicts import mcnemar
from massgen.cli import main
from massgen.testing.fake_provider import FakeProvider, Reply

pytestmark = pytest.mark.usefixtures("in_tmp")

BLOCK = re.compile(r"<(agent\d+\.\d+)>\n(.*?)\n<end of \1>", re.S)


def misled_team(request: dict) -> Reply:
    """m0 and m1 answer right, m2 one too many; every voter picks m2's answer, and the
    presenter keeps the selected answer. Alone, each member answers as in the team."""
    text = "\n".join(str(m.get("content") or "") for m in request.get("messages") or [])
    number = int(QUESTION.search(text).group(2)) + 1
    wrong = f"The answer is {number + 1}."
    tools = {t["function"]["name"] for t in request.get("tools") or []}
    if "vote" in tools:
        label = next(label for label, body in BLOCK.findall(text) if body == wrong)
        return Reply(tool_calls=[("vote", {"agent_id": label, "reason": "it looks right"})])
    mine = wrong if request.get("model") == "m2" else f"The answer is {number}."
    if "new_answer" in tools:
        return Reply(tool_calls=[("new_answer", {"content": mine})])
    selected = re.search(r"<SELECTED ANSWER [^>]*>\n(.*?)\n<END OF SELECTED ANSWER>", text, re.S)
    return Reply(text=selected.group(1) if selected else mine)


def test_the_stage_table_shows_a_right_majority_lost_by_the_vote(tmp_path, capsys):
    tasks = write_tasks(tmp_path / "tasks.jsonl", 4)
    team = write_team(tmp_path / "team.json", "", agents=3)
    with FakeProvider(misled_team) as fake:
        team.write_text(
            team.read_text().replace('"base_url": ""', f'"base_url": "{fake.base_url}"')
        )
        out = tmp_path / "out"
        argv = ["batch", str(tasks), "--config", str(team), "--out", str(out)]
        assert main([*argv, "--baselines", "single"]) == 0

    records = [json.loads(line) for line in (out / "stages.jsonl").read_text().splitlines()]
    assert [r["id"] for r in records] == ["q0", "q1", "q2", "q3"]
    first = records[0]
    assert sorted(
        (c["agent"], c["first"], c["value"], c["score"]) for c in first["candidates"]
    ) == [
        ("a0", True, "1", 1.0),
        ("a1", True, "1", 1.0),
        ("a2", True, "2", 0.0),
    ]
    assert len(first["votes"]) == 3 and first["oracle"] and first["majority_first"]["score"] == 1.0
    assert (first["selected_score"], first["final_score"]) == (0.0, 0.0)

    stages = json.loads((out / "summary.json").read_text())["stages"]
    by_agent = {m["agent"]: m for m in stages["members"]}
    assert by_agent["a0"]["first_answer"]["accuracy"] == by_agent["a0"]["single"]["accuracy"] == 1
    assert by_agent["a2"]["first_answer"]["accuracy"] == 0
    assert stages["oracle"]["accuracy"] == stages["majority_first"]["accuracy"] == 1
    assert stages["selected"]["accuracy"] == stages["final"]["accuracy"] == 0
    assert stages["oracle_gap"] == {"count": 4, "share": 1.0, "ids": ["q0", "q1", "q2", "q3"]}

    printed = capsys.readouterr().out
    assert "majority of first answers" in printed
    assert "oracle gap: 4 of 4 questions (q0, q1, q2, q3)" in printed
    assert "verdict: the team did not beat single:a0: it scored below it" in printed

    # A batch recorded before stages.jsonl existed gets it from its logs.
    (out / "stages.jsonl").unlink()
    assert main(["batch", "report", str(out)]) == 0
    assert (out / "stages.jsonl").read_text().count("\n") == 4


def test_mcnemar_is_the_exact_two_sided_binomial_on_the_discordant_pairs():
    assert mcnemar(0, 0) == 1.0
    assert mcnemar(6, 0) == pytest.approx(2 / 64)
    assert mcnemar(3, 3) == 1.0
    assert mcnemar(1, 9) == pytest.approx(2 * 11 / 1024)


PLUS_ONE = '''\
import re

def plus_one(answer, question, workspace):
    """Checks the answer by the question alone: the last number is the sum."""
    wanted = int(re.search(r"what is (\\d+) plus one", question).group(1)) + 1
    numbers = re.findall(r"-?\\d+", answer)
    return bool(numbers) and int(numbers[-1]) == wanted, f"wanted {wanted}"
'''


def test_a_verifier_wins_back_what_the_vote_lost_and_the_stages_say_so(tmp_path, capsys):
    """The same misled team with a verifier: every voter still picks the wrong answer, and
    the checked right answer wins; the manifest records which verifier the batch used."""
    tasks = write_tasks(tmp_path / "tasks.jsonl", 2)
    team = write_team(tmp_path / "team.json", "", agents=3)
    (tmp_path / "qchecks.py").write_text(PLUS_ONE)
    with FakeProvider(misled_team) as fake:
        config = json.loads(
            team.read_text().replace('"base_url": ""', f'"base_url": "{fake.base_url}"')
        )
        config["verifier"] = {"function": "qchecks:plus_one"}
        team.write_text(json.dumps(config))
        out = tmp_path / "out"
        assert main(["batch", str(tasks), "--config", str(team), "--out", str(out)]) == 0

    records = [json.loads(line) for line in (out / "stages.jsonl").read_text().splitlines()]
    first = records[0]
    assert sorted((c["agent"], c["check"], c["score"]) for c in first["candidates"]) == [
        ("a0", "passed", 1.0),
        ("a1", "passed", 1.0),
        ("a2", "failed", 0.0),
    ]
    assert (first["selected_score"], first["final_score"]) == (1.0, 1.0)
    stages = json.loads((out / "summary.json").read_text())["stages"]
    assert stages["oracle_gap"]["count"] == 0
    assert stages["checked_passed"]["n"] == 4 and stages["checked_passed"]["accuracy"] == 1
    assert "checked: passed among candidates (right)" in capsys.readouterr().out
    manifest = json.loads((out / "manifest.json").read_text())
    assert "qchecks:plus_one" in json.dumps(manifest)


def test_a_baseline_stopped_early_is_judged_on_the_questions_it_answered():
    ids = [f"q{i}" for i in range(4)]
    rows = {(tid, "team"): {"status": "ok", "score": 1.0, "tokens": 30} for tid in ids[:2]}
    rows |= {(tid, "team"): {"status": "ok", "score": 0.0, "tokens": 30} for tid in ids[2:]}
    # Self-consistency finished only q2 and q3, where the team was wrong, and got q2 right.
    rows[("q2", "self-consistency")] = {"status": "ok", "score": 1.0, "tokens": 30}
    rows[("q3", "self-consistency")] = {"status": "ok", "score": 0.0, "tokens": 30}
    result = summary.summarise(rows, ids)
    (verdict,) = result["verdicts"]
    # The team's 50% over four questions is not the comparison: on the two shared, 0 vs 50%.
    assert verdict.startswith("the team did not beat self-consistency at equal tokens")
    assert "(0% vs 50%, 2 questions" in verdict

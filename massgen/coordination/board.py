"""The board: answers and votes as plain data, and the one rule that governs votes.

A vote records which answer version of every agent its voter had in view (`seen`).
It stands while no answer newer than what the voter saw exists. That single rule replaces
restart flags: publishing an answer silently retires every vote that did not see it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from massgen.coordination.labels import Labels


@dataclass(frozen=True, slots=True)
class Answer:
    agent: str
    version: int
    label: str
    content: str
    seq: int  # order of publication across the whole team, from 1


@dataclass(frozen=True, slots=True)
class Vote:
    voter: str
    target: str
    target_label: str
    reason: str
    seen: Mapping[str, int]  # agent id -> answer version in the voter's view (0 = none)


class Board:
    def __init__(self, agent_ids: list[str], labels: Labels) -> None:
        self.agent_ids = list(agent_ids)
        self.labels = labels
        self._answers: dict[str, list[Answer]] = {agent: [] for agent in agent_ids}
        self._votes: dict[str, Vote] = {}
        self._seq = 0

    # --- answers ----------------------------------------------------------------------

    def latest(self) -> dict[str, Answer]:
        """Each agent's newest answer, for agents that have one."""
        return {agent: answers[-1] for agent, answers in self._answers.items() if answers}

    def versions(self) -> dict[str, int]:
        """What an agent starting now would see: agent id -> latest version (0 = none)."""
        return {agent: len(answers) for agent, answers in self._answers.items()}

    def answer_count(self, agent: str) -> int:
        return len(self._answers[agent])

    @property
    def total_answers(self) -> int:
        return self._seq

    def all_answers(self) -> list[Answer]:
        every = [answer for answers in self._answers.values() for answer in answers]
        return sorted(every, key=lambda answer: answer.seq)

    def publish(self, agent: str, content: str) -> tuple[Answer, list[Vote]]:
        """Add a new answer; return it and the votes it retired."""
        self._seq += 1
        version = len(self._answers[agent]) + 1
        answer = Answer(agent, version, self.labels.label(agent, version), content, self._seq)
        self._answers[agent].append(answer)
        retired = [vote for vote in self._votes.values() if not self.stands(vote)]
        for vote in retired:
            del self._votes[vote.voter]
        return answer, retired

    # --- votes ------------------------------------------------------------------------

    def stands(self, vote: Vote) -> bool:
        return all(
            len(answers) <= vote.seen.get(agent, 0) for agent, answers in self._answers.items()
        )

    def cast(self, vote: Vote) -> None:
        """Record a vote. The caller checks `stands` first: a stale vote is never stored."""
        if not self.stands(vote):
            raise ValueError("a stale vote cannot be cast")
        self._votes[vote.voter] = vote

    def vote_of(self, agent: str) -> Vote | None:
        return self._votes.get(agent)

    def standing_votes(self) -> list[Vote]:
        return [vote for vote in self._votes.values() if self.stands(vote)]

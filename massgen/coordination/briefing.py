"""What a member is told for one run of its loop: the `RunSetup` that `agent.run_agent`
works from.

The system prompt (its identity and voting sensitivity, then planning mode, workspace,
checks, memory, its own notes and the aids' paragraphs), the user message (the question,
the answers in view in the member's own shuffled order, and, after a restart, the
previous attempt's feedback first), the labels it may vote for, and the run's bounds.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence

from massgen.coordination import prompts, python_blocks
from massgen.coordination.agent import Member, RunSetup, member_tools
from massgen.coordination.board import Answer
from massgen.coordination.restarts import feedback_block
from massgen.coordination.run_state import Orchestrated
from massgen.coordination.runaway import Guards
from massgen.coordination.tool_round import held_back


def brief(run: Orchestrated, member: Member, in_view: list[Answer], can_answer: bool) -> RunSetup:
    """`in_view`: the newest answer of every agent that has one; `can_answer`: it may
    still publish (else it may only vote)."""
    settings = run.settings
    single = len(run.members) == 1
    # Seeded by what it sees, not by how many runs it started: a run cancelled before
    # it asked anything must not change the order later (a replay's runs may differ).
    view = ",".join(sorted(a.label for a in in_view))
    seed = zlib.crc32(f"{run.state.seed}:{member.id}:{view}".encode())
    # The vote options follow the same shuffled order as the answers: models favour
    # whatever comes first, so neither list may give any answer a fixed head start.
    shown = prompts.order_for_viewer(in_view, member.id, seed)
    free = free_text(run, member)
    return RunSetup(
        system=_system(run, member, shown, can_answer, free),
        user=_user(run, member, shown, free),
        vote_labels=[] if single else [a.label for a in shown],
        can_answer=can_answer,
        max_invalid_retries=settings.max_invalid_action_retries,
        max_tool_iterations=settings.max_tool_iterations,
        tools=run.tool_bounds(),
        guards=Guards(
            max_reply_chars=settings.max_reply_chars,
            max_identical_tool_calls=settings.max_identical_tool_calls,
            max_repeated_lines=settings.max_repeated_lines,
        ),
        free_text=free,
        python_blocks=free and settings.run_python_blocks,
    )


def _system(
    run: Orchestrated, member: Member, shown: Sequence[Answer], can_answer: bool, free: bool
) -> str:
    system = prompts.system_prompt(
        member.system_message,
        sensitivity=member.voting_sensitivity or run.settings.voting_sensitivity,
        vote_only=not can_answer,
        single=len(run.members) == 1,
        free_text=free,
        answers_shown=bool(shown),
    )
    if plans_only(run, member):
        note = run.settings.coordination.planning_mode_instruction or prompts.PLANNING_NOTE
        system = f"{system}\n\n{note}"
    if member.workspace is not None:
        system = f"{system}\n\n{prompts.WORKSPACE_NOTE}"
    if run.checking is not None and shown:
        system = f"{system}\n\n{prompts.CHECKS_NOTE}"
    memory = _memory_note(run, member, shown)
    answered = run.state.board.answer_count(member.id) > 0
    aids = run.aids.notes(member, answered, shown) if run.aids is not None else ()
    return "\n\n".join([system, *memory, *member.notes, *aids])


def _user(run: Orchestrated, member: Member, shown: Sequence[Answer], free: bool) -> str:
    after_question = run.aids.user_parts(member) if run.aids is not None else ()
    user = prompts.user_message(
        run.state.question,
        shown,
        history=run.state.history,
        after_question=after_question,
        bare=free,
        checks=run.verdicts(),
    )
    if free and run.settings.run_python_blocks:
        user = python_blocks.with_note(user)
    if run.state.restarts:
        block = feedback_block(run.state.restarts[-1], workspace=member.workspace is not None)
        user = f"{block}\n\n{user}"
    return user


def free_text(run: Orchestrated, member: Member) -> bool:
    """It writes its turn as free text (`free_text.py`): a JSON-action model with no
    tools of its own (those still go through the JSON `tool` action)."""
    return run.settings.free_text_actions and member.structured_actions and not member_tools(member)


def plans_only(run: Orchestrated, member: Member) -> bool:
    """Planning mode holds back at least one of this member's tools."""
    bounds = run.tool_bounds()
    return any(held_back(spec, "coordination", bounds) for spec in member_tools(member))


def _memory_note(run: Orchestrated, member: Member, shown: Sequence[Answer]) -> tuple[str, ...]:
    if run.memories is None:
        return ()
    note = run.memories.note(member.id, [a.label for a in shown if a.agent != member.id])
    return (note,) if note else ()

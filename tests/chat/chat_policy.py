"""A fake team member for chat tests: its answer to a follow-up depends on the history.

"What is 6 times 7?" is answered "42". "Add 8 to that." only makes sense with the first
turn in view: the answer is "50" when the <CONVERSATION_HISTORY> block holds "42", and a
confused reply otherwise. "slow: ..." stalls the model named `slow_model` (for Ctrl-C
tests); everything else gets "echo: <question>".
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from massgen.testing.fake_provider import Fault, Reply, cooperative_agent

QUESTION = re.compile(r"<ORIGINAL MESSAGE>\n(.*?)\n<END OF ORIGINAL MESSAGE>", re.S)
HISTORY = re.compile(r"<CONVERSATION_HISTORY>\n(.*?)\n<END OF CONVERSATION_HISTORY>", re.S)
SELECTED = re.compile(r"<SELECTED ANSWER [^>]*>\n(.*?)\n<END OF SELECTED ANSWER>", re.S)


def answer_for(question: str, history: str) -> str:
    if "6 times 7" in question:
        return "6 times 7 is 42."
    if "add 8" in question.lower():
        return "42 + 8 = 50." if "42" in history else "Add 8 to what? I have no earlier number."
    if "both earlier" in question.lower():
        seen = [q for q in ("6 times 7", "Add 8") if q in history]
        return f"I remember {len(seen)} earlier question(s): {', '.join(seen) or 'none'}."
    return f"echo: {question}"


def chat_policy(request: dict, *, slow_model: str = "m-c", stall: float = 60.0) -> Reply:
    user = _user_text(request)
    selected = SELECTED.search(user)
    if selected:  # the final presentation: restate the selected answer
        return Reply(text=selected.group(1))
    question_match = QUESTION.search(user)
    question = question_match.group(1) if question_match else ""
    history_match = HISTORY.search(user)
    history = history_match.group(1) if history_match else ""
    if question.startswith("slow") and request.get("model") == slow_model:
        return Reply(fault=Fault(stall_seconds=stall))
    reply = cooperative_agent(request)
    tools = {name for name, _ in reply.tool_calls}
    if "new_answer" in tools:
        text = answer_for(question, history)
        return Reply(
            text=f"Working on: {question}\n",
            reasoning="Let me think about the question and the conversation so far. ",
            tool_calls=[("new_answer", {"content": text})],
        )
    return Reply(text="The current answer looks right.\n", tool_calls=reply.tool_calls)


def _user_text(request: dict) -> str:
    parts = [
        m.get("content") or "" for m in request.get("messages") or [] if m.get("role") == "user"
    ]
    return "\n".join(p for p in parts if isinstance(p, str))


def main() -> None:
    """Serve the policy until killed: `python chat_policy.py PORTFILE [latency] [tps]`."""
    import time

    from massgen.testing.fake_provider import FakeProvider

    latency = float(sys.argv[2]) if len(sys.argv) > 2 else 0.0
    tps = float(sys.argv[3]) if len(sys.argv) > 3 else None
    with FakeProvider(chat_policy, latency=latency, tokens_per_second=tps) as fake:
        Path(sys.argv[1]).write_text(fake.base_url)
        while True:
            time.sleep(3600)


if __name__ == "__main__":
    main()

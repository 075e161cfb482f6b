"""Every answer is shown as it is published, once: most models write it as a tool call's
argument, which never streams as text. Through the real openai SDK and the fake server."""

from __future__ import annotations

from shown import shown

import massgen
from massgen.core import events as ev
from massgen.testing.fake_provider import FakeProvider, Reply, cooperative_agent


def answer(model: str) -> str:
    return f"Paris is the capital, {model} finds.\nIt has been since 987."


def policy(request: dict) -> Reply:
    """m-a says a few words, then answers through the tool; m-b writes its answer as text
    and also passes it to the tool (some models do both)."""
    reply = cooperative_agent(request)
    names = [name for name, _ in reply.tool_calls]
    if names != ["new_answer"]:
        return reply
    model = request["model"]
    preamble = "Let me answer." if model == "m-a" else answer(model)
    return Reply(text=preamble, tool_calls=[("new_answer", {"content": answer(model)})])


async def test_a_tool_call_answer_is_shown_once_in_both_views():
    agents = [
        {"id": m, "backend": {"type": "chatcompletion", "base_url": "", "model": m}}
        for m in ("m-a", "m-b")
    ]
    with FakeProvider(policy) as fake:
        for agent in agents:
            agent["backend"]["base_url"] = fake.base_url
        config = {"agents": agents, "orchestrator": {"max_new_answers_per_agent": 1}}
        seen = [e async for e in massgen.stream("Capital of France?", config=config, logs=False)]

    assert sum(isinstance(e, ev.AnswerPublished) for e in seen) == 2
    printed, panels = shown(seen)
    for agent in ("m-a", "m-b"):
        assert printed.count(f"[{agent}] It has been since 987.") == 1, printed
        assert panels[agent].count("It has been since 987.") == 1, panels[agent]
    assert "[m-a] Let me answer.\n[m-a] Paris is the capital, m-a finds.\n" in printed

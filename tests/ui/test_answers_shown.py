"""Every answer is shown as it is published, once: most models write it as a tool call's
argument, which never streams as text. Through the real openai SDK and the fake server."""

from __future__ import annotations

import io

import massgen
from massgen.core import events as ev
from massgen.testing.fake_provider import FakeProvider, Reply, cooperative_agent
from massgen.ui.model import ViewModel
from massgen.ui.plain import PlainView


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
    out = io.StringIO()
    plain, model = PlainView(out), ViewModel()
    for event in seen:
        plain(event)
        model.apply(event)
    printed = out.getvalue()
    for agent in ("m-a", "m-b"):
        assert printed.count(f"[{agent}] It has been since 987.") == 1, printed
        panel = "".join(text for _, text in model.panes[agent].runs)
        assert panel.count("It has been since 987.") == 1, panel
    assert "[m-a] Let me answer.\n[m-a] Paris is the capital, m-a finds.\n" in printed

"""SmolLM2, which has no function calling, calls a tool through its JSON actions."""

from __future__ import annotations

from massgen.backends import json_actions, local
from massgen.config.schema import OrchestratorConfig
from massgen.coordination import actions
from massgen.coordination.agent import Member
from massgen.coordination.orchestrator import Orchestrator
from massgen.core import events as ev
from massgen.core.types import GenerationParams
from massgen.testing.tools import InProcessTools

SECRET = "The secret word is PINEAPPLE."


async def test_the_small_local_model_calls_a_tool_and_reads_its_result(model):
    async def secret_word() -> str:
        return SECRET

    tools = InProcessTools().add(
        "secret_word", secret_word, description="tells you the secret word", read_only=True
    )
    params = GenerationParams(temperature=0.0, seed=1, max_tokens=96)
    backend = local.LocalBackend(model, params=params)
    sent = []

    class Watched:  # the same backend, keeping each request to look at afterwards
        def stream(self, request):
            sent.append(request)
            return backend.stream(request)

        async def aclose(self) -> None:
            await backend.aclose()

    member = Member(id="solo", backend=Watched(), toolbox=tools, structured_actions=True)
    events: list = []
    settings = OrchestratorConfig(seed=1, max_tool_iterations=3)
    outcome = await Orchestrator([member], settings, deadline_seconds=300, emit=events.append).run(
        "What is the secret word? Use the secret_word tool to find out."
    )

    assert outcome.status == "ok", outcome.reason
    assert [(r.name, r.phase) for r in tools.ran][:1] == [("secret_word", "coordination")]
    finished = [e for e in events if isinstance(e, ev.ToolCallFinished)]
    assert finished and finished[0].ok and finished[0].result == SECRET
    # The JSON action's grammar offered the tool, and its result reached the model.
    assert sent[0].json_schema["anyOf"][0]["properties"]["name"] == {"const": "secret_word"}
    assert any(SECRET in m.content for m in sent[1].messages if m.role == "user")
    assert "PINEAPPLE" in outcome.answer


def test_the_grammar_holds_a_tool_call_to_the_tools_own_arguments():
    async def weather(city: str, days: int) -> str:
        return "sunny"

    tools = InProcessTools().add("weather", weather, description="the forecast")
    schema = actions.action_schema(["agent1.1"], can_answer=True, tools=tools.specs())
    assert json_actions.grammar(schema) is not None  # llama.cpp accepts the schema
    note = json_actions.json_reply_note(schema)
    assert (
        '{"action": "tool", "name": "weather", "arguments": {"city": <city>, "days": <days>}}'
    ) in note.splitlines()

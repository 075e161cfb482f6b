"""The agent's tool loop, on scripted backends with an in-process toolbox."""

from __future__ import annotations

import asyncio
import json

import pytest
from scripted import Cues, Gate, ScriptedBackend, answer, text, vote_for

from massgen.config.schema import OrchestratorConfig
from massgen.coordination.agent import Member
from massgen.coordination.briefing import plans_only
from massgen.coordination.orchestrator import Orchestrator
from massgen.core import events as ev
from massgen.core.types import Finish, TextChunk, ToolCall, Usage
from massgen.testing.tools import InProcessTools


def calls(*made: tuple[str, dict]) -> list:
    """One model turn that calls these tools (ids c1, c2, ... in order)."""
    items = [ToolCall(f"c{i}", name, json.dumps(args)) for i, (name, args) in enumerate(made, 1)]
    return [TextChunk("let me check. "), *items, Usage(50, 10), Finish("tool_calls")]


async def solo(backend, toolbox, deadline: float = 10, **settings) -> tuple:
    events: list = []
    member = Member(id="solo", backend=backend, toolbox=toolbox)
    config = OrchestratorConfig(seed=1, **settings)
    outcome = await Orchestrator(
        [member], config, deadline_seconds=deadline, emit=events.append
    ).run("q")
    return outcome, events


def tool_messages(request) -> dict[str, str]:
    return {m.tool_call_id: m.content for m in request.messages if m.role == "tool"}


async def echo(**kwargs) -> str:
    return json.dumps(kwargs, sort_keys=True)


def waits_forever(cancelled: asyncio.Event, entered: asyncio.Event | None = None):
    """A tool that sets `entered` when it starts, and returns only by being cancelled, which
    sets `cancelled`."""

    async def tool() -> str:
        if entered is not None:
            entered.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "never"

    return tool


async def test_the_calls_of_one_turn_run_concurrently_and_their_results_come_back():
    both_started = asyncio.Event()
    started: list[str] = []

    async def meet(name: str) -> str:
        started.append(name)
        if len(started) == 2:
            both_started.set()
        await asyncio.wait_for(both_started.wait(), 2)  # run one after the other: times out
        return f"{name} done"

    tools = InProcessTools().add("meet", meet, description="wait for the other call")
    backend = ScriptedBackend(
        calls(("meet", {"name": "a"}), ("meet", {"name": "b"})), answer("both met")
    )
    outcome, events = await solo(backend, tools)

    assert outcome.answer == "both met"
    assert tool_messages(backend.requests[1]) == {"c1": "a done", "c2": "b done"}
    # The assistant turn with its calls comes before their results.
    assistant = backend.requests[1].messages[2]
    assert assistant.role == "assistant" and [c.id for c in assistant.tool_calls] == ["c1", "c2"]
    finished = [e for e in events if isinstance(e, ev.ToolCallFinished)]
    assert [(e.call_id, e.ok) for e in sorted(finished, key=lambda e: e.call_id)] == [
        ("c1", True),
        ("c2", True),
    ]
    assert all(e.duration_s >= 0 for e in finished)
    assert sum(isinstance(e, ev.ToolCallStarted) for e in events) == 2


async def test_the_model_is_offered_the_workflow_tools_and_its_own():
    tools = InProcessTools().add("lookup", echo).add("new_answer", echo)  # a name it may not take
    backend = ScriptedBackend(answer("done"))
    await solo(backend, tools)
    assert backend.tool_names(0) == ["new_answer", "lookup"]
    assert backend.requests[0].tools[0].parameters["required"] == ["content"]


async def test_a_tool_that_raises_is_an_error_result_and_the_agent_goes_on():
    async def broken() -> str:
        raise RuntimeError("disk on fire")

    tools = InProcessTools().add("broken", broken)
    backend = ScriptedBackend(calls(("broken", {}), ("broken", {"extra": 1})), answer("fine"))
    outcome, events = await solo(backend, tools)

    assert outcome.status == "ok" and outcome.answer == "fine"
    results = tool_messages(backend.requests[1])
    assert results["c1"] == "Error: RuntimeError: disk on fire"
    assert results["c2"].startswith("Error: TypeError: ")  # wrong arguments, same path
    assert [e.ok for e in events if isinstance(e, ev.ToolCallFinished)] == [False, False]


async def test_a_hanging_tool_is_cancelled_at_its_timeout():
    cancelled = asyncio.Event()

    tools = InProcessTools().add("hang", waits_forever(cancelled))
    backend = ScriptedBackend(calls(("hang", {})), answer("gave up on it"))
    outcome, events = await solo(backend, tools, tool_timeout_seconds=0.05)

    assert outcome.answer == "gave up on it" and cancelled.is_set()
    assert tool_messages(backend.requests[1])["c1"] == "Error: `hang` timed out after 0.05s."
    (finished,) = [e for e in events if isinstance(e, ev.ToolCallFinished)]
    assert not finished.ok and finished.duration_s >= 0.05


async def test_a_big_result_is_cut_and_the_model_told_how_big_it_was():
    async def big() -> str:
        return "é" * 3000  # 6000 bytes of UTF-8

    tools = InProcessTools().add("big", big)
    backend = ScriptedBackend(calls(("big", {})), answer("read it"))
    _, events = await solo(backend, tools, max_tool_result_bytes=1001)

    result = tool_messages(backend.requests[1])["c1"]
    kept, note = result.split("\n\n")
    assert kept == "é" * 500  # cut at a character boundary, never mid-character
    assert note == "[truncated: the result was 6,000 bytes; only the first 1,001 are shown]"
    (finished,) = [e for e in events if isinstance(e, ev.ToolCallFinished)]
    assert finished.result == result


async def test_a_turn_that_also_calls_a_workflow_tool_runs_the_tools_first():
    tools = InProcessTools().add("lookup", echo)
    mixed = calls(("lookup", {"q": "x"}), ("new_answer", {"content": "too early"}))
    backend = ScriptedBackend(mixed, answer("after reading"))
    outcome, _ = await solo(backend, tools)

    assert outcome.answer == "after reading"
    assert [r.name for r in tools.ran] == ["lookup"]
    results = tool_messages(backend.requests[1])
    assert results["c1"] == '{"q": "x"}'
    assert results["c2"].startswith("Not accepted: you called other tools in the same turn")


async def test_an_agent_without_tools_is_told_so_as_before():
    backend = ScriptedBackend(calls(("search", {"q": "x"})), answer("ok"))
    member = Member(id="solo", backend=backend)
    await Orchestrator([member], OrchestratorConfig(seed=1)).run("q")
    assert tool_messages(backend.requests[1]) == {"c1": "Error: tool `search` is not available."}
    # Beside a workflow call, a call to a tool it does not have is ignored, as before.
    backend = ScriptedBackend(calls(("search", {}), ("new_answer", {"content": "direct"})))
    member = Member(id="solo", backend=backend)
    outcome = await Orchestrator([member], OrchestratorConfig(seed=1)).run("q")
    assert outcome.answer == "direct" and len(backend.requests) == 1


async def test_tool_rounds_are_bounded():
    tools = InProcessTools().add("lookup", echo)
    backend = ScriptedBackend(*[calls(("lookup", {"n": i})) for i in range(3)])
    outcome, events = await solo(backend, tools, max_tool_iterations=2)
    assert outcome.status == "failed"
    (failed,) = [e for e in events if isinstance(e, ev.AgentFailed)]
    assert failed.error == "no workflow action after 2 tool rounds"
    assert len(tools.ran) == 2


async def test_after_the_last_tool_round_only_the_workflow_tools_are_offered():
    tools = InProcessTools().add("lookup", echo)
    backend = ScriptedBackend(
        calls(("lookup", {"n": 1})), calls(("lookup", {"n": 2})), answer("found it")
    )
    outcome, events = await solo(backend, tools, max_tool_iterations=2)

    assert outcome.status == "ok" and outcome.answer == "found it"
    assert not [e for e in events if isinstance(e, ev.AgentFailed)]
    offered = [[t.name for t in request.tools] for request in backend.requests]
    assert offered[:2] == [["new_answer", "lookup"]] * 2
    assert offered[2] == ["new_answer"]  # the last call: answer (or vote), no more tools
    last = backend.requests[2].messages[-1]
    assert last.role == "user" and last.content.startswith("You have used all 2 tool rounds")
    assert len(tools.ran) == 2


async def test_a_json_action_model_loses_the_tool_action_after_the_last_round():
    tools = InProcessTools().add("lookup", echo)
    tool_turn = json_turn({"action": "tool", "name": "lookup", "arguments": {"n": 1}})
    backend = ScriptedBackend(tool_turn, json_turn({"action": "new_answer", "content": "done"}))
    member = Member(id="solo", backend=backend, toolbox=tools, structured_actions=True)
    config = OrchestratorConfig(seed=1, max_tool_iterations=1)
    outcome = await Orchestrator([member], config, deadline_seconds=10).run("q")

    assert outcome.answer == "done"
    first, second = (request.json_schema for request in backend.requests[:2])
    assert '"tool"' in json.dumps(first) and '"tool"' not in json.dumps(second)


@pytest.mark.parametrize(("limit", "peak"), [(2, 2), (1, 1), (10, 6)])
async def test_max_concurrent_tools_bounds_the_calls_in_flight(limit, peak):
    running, seen = 0, []

    async def work(n: int) -> str:
        nonlocal running
        running += 1
        seen.append(running)
        await asyncio.sleep(0.02)  # long enough for every call the gate lets in to enter
        running -= 1
        return f"done {n}"

    tools = InProcessTools().add("work", work)
    backend = ScriptedBackend(calls(*[("work", {"n": n}) for n in range(6)]), answer("six"))
    outcome, _ = await solo(backend, tools, max_concurrent_tools=limit)

    assert outcome.answer == "six" and len(tools.ran) == 6
    assert max(seen) == peak
    assert set(tool_messages(backend.requests[1]).values()) == {f"done {n}" for n in range(6)}


async def test_the_deadline_cancels_a_tool_in_flight_and_says_so():
    entered, cancelled = asyncio.Event(), asyncio.Event()

    tools = InProcessTools().add("slow", waits_forever(cancelled, entered))
    backend = ScriptedBackend(calls(("slow", {})))
    outcome, events = await solo(backend, tools, deadline=0.2)

    assert outcome.status == "timeout" and entered.is_set() and cancelled.is_set()
    (finished,) = [e for e in events if isinstance(e, ev.ToolCallFinished)]
    assert not finished.ok and "cancelled" in finished.result
    assert isinstance(events[-1], ev.RunFinished)


async def test_a_restart_cancels_the_tools_of_the_run_it_ends():
    cues = Cues()
    peer_answered = cues.after(ev.AnswerPublished, 2)
    cancelled = asyncio.Event()

    tools = InProcessTools().add("slow", waits_forever(cancelled))
    a = ScriptedBackend(answer("alpha"), calls(("slow", {})), vote_for("bravo v2"), text("A final"))
    b = ScriptedBackend(
        answer("bravo"),
        Gate(cues.after(ev.ToolCallStarted, 1), answer("bravo v2")),
        vote_for("bravo v2"),
        text("B final"),
    )
    members = [Member(id="a", backend=a, toolbox=tools), Member(id="b", backend=b)]
    config = OrchestratorConfig(seed=7)
    outcome = await Orchestrator(members, config, deadline_seconds=10, emit=cues).run("q")

    assert peer_answered.is_set() and cancelled.is_set()
    assert outcome.status == "ok"
    finished = cues.of(ev.ToolCallFinished)
    assert len(finished) == 1 and not finished[0].ok


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        ({}, (60, 65536, 10, False)),
        (
            {
                "tool_timeout_seconds": 5,
                "max_tool_result_bytes": 4096,
                "max_concurrent_tools": 2,
                "coordination": {"enable_planning_mode": True},
            },
            (5, 4096, 2, True),
        ),
    ],
)
def test_tool_bounds_come_from_the_orchestrator_config(settings, expected):
    config = OrchestratorConfig(**settings)
    member = Member(id="a", backend=ScriptedBackend())
    bounds = Orchestrator([member, member], config).tool_bounds()
    got = (bounds.timeout_seconds, bounds.max_result_bytes, bounds.max_concurrent)
    assert (*got, bounds.planning_mode) == expected


# --- planning mode ----------------------------------------------------------------------


def planning_tools() -> InProcessTools:
    async def send_email(to: str) -> str:
        return f"sent to {to}"

    async def lookup(name: str) -> str:
        return f"{name}@example.com"

    tools = InProcessTools().add("send_email", send_email, description="send an email")
    return tools.add("lookup", lookup, description="find an address", read_only=True)


async def test_in_planning_mode_no_coordinating_agent_runs_a_side_effect_and_the_presenter_does_once():
    tools = planning_tools()  # one toolbox shared by the team: it counts every real call
    cues = Cues()
    all_in = cues.after(ev.AnswerPublished, 3)

    def agent(name: str, presents: bool) -> ScriptedBackend:
        steps = [
            calls(("lookup", {"name": "ann"}), ("send_email", {"to": "ann@example.com"})),
            answer(f"{name}: plan: send_email to ann@example.com"),
            Gate(all_in, vote_for("a: plan")),
        ]
        if presents:
            steps += [calls(("send_email", {"to": "ann@example.com"})), text("Sent the email.")]
        return ScriptedBackend(*steps)

    backends = {"a": agent("a", True), "b": agent("b", False), "c": agent("c", False)}
    members = [Member(id=n, backend=b, toolbox=tools) for n, b in backends.items()]
    config = OrchestratorConfig(seed=7, coordination={"enable_planning_mode": True})
    outcome = await Orchestrator(members, config, deadline_seconds=10, emit=cues).run("Email Ann")

    assert outcome.winner == "a" and outcome.answer == "Sent the email."
    sent = tools.calls_of("send_email")
    assert [(r.agent, r.phase) for r in sent] == [("a", "presentation")]
    assert [r.phase for r in tools.calls_of("lookup")] == ["coordination"] * 3  # read-only runs
    held = [e for e in cues.of(ev.ToolCallFinished) if e.held]
    assert sorted(e.agent for e in held) == ["a", "b", "c"]
    # The events say which phase each call ran in.
    phases = [(e.name, e.phase, e.held) for e in cues.of(ev.ToolCallFinished) if e.agent == "a"]
    assert sorted(phases) == [
        ("lookup", "coordination", False),
        ("send_email", "coordination", True),
        ("send_email", "presentation", False),
    ]
    assert {e.phase for e in cues.of(ev.ToolCallStarted) if e.name == "lookup"} == {"coordination"}
    first_result = tool_messages(backends["b"].requests[1])
    assert first_result["c1"] == "ann@example.com"
    assert first_result["c2"].startswith("Not run: planning mode is on. `send_email`")
    # Told in the system prompt while coordinating; told tools are real when presenting.
    assert "PLANNING MODE" in backends["b"].requests[0].messages[0].content
    presentation = backends["a"].requests[-2]
    assert "now run for real" in presentation.messages[0].content
    assert [t.name for t in presentation.tools] == ["send_email", "lookup"]


async def test_planning_mode_leaves_read_only_tools_and_agents_without_tools_alone():
    tools = InProcessTools().add("lookup", echo, read_only=True)
    backend = ScriptedBackend(answer("x"))
    other = ScriptedBackend(answer("y"))
    members = [Member(id="a", backend=backend, toolbox=tools), Member(id="b", backend=other)]
    config = OrchestratorConfig(seed=1, coordination={"enable_planning_mode": True})
    orchestrator = Orchestrator(members, config)
    assert not plans_only(orchestrator, members[0]) and not plans_only(orchestrator, members[1])


# --- JSON actions -----------------------------------------------------------------------


def json_turn(data: dict) -> list:
    return [TextChunk(json.dumps(data)), Usage(40, 10), Finish()]


async def test_a_json_action_model_calls_a_tool_with_the_tool_action():
    tools = planning_tools()
    backend = ScriptedBackend(
        json_turn({"action": "tool", "name": "lookup", "arguments": {"name": "ann"}}),
        json_turn({"action": "new_answer", "content": "Ann is ann@example.com"}),
    )
    member = Member(id="solo", backend=backend, toolbox=tools, structured_actions=True)
    events: list = []
    outcome = await Orchestrator([member], OrchestratorConfig(seed=1), emit=events.append).run("q")

    assert outcome.answer == "Ann is ann@example.com"
    assert [(r.name, r.arguments) for r in tools.ran] == [("lookup", {"name": "ann"})]
    first = backend.requests[0]
    assert first.tools == ()  # no function specs: the schema and the prompt carry them
    # One option per tool, offered first, its arguments held to the tool's own schema.
    send, look, new = first.json_schema["anyOf"]
    assert [o["properties"]["name"] for o in (send, look)] == [
        {"const": "send_email"},
        {"const": "lookup"},
    ]
    assert look["properties"]["action"] == {"const": "tool"}
    assert look["properties"]["arguments"] == tools.specs()[1].parameters
    assert new["properties"]["action"] == {"const": "new_answer"}
    assert "- lookup(name: string): find an address" in first.messages[0].content
    # The result comes back as a user message: no tool call exists on the wire.
    *_, said, result = backend.requests[1].messages
    assert (said.role, result.role) == ("assistant", "user")
    assert result.content == (
        "Result of tool `lookup`:\nann@example.com\n\nReply with your next JSON action."
    )
    assert [e.name for e in events if isinstance(e, ev.ToolCallFinished)] == ["lookup"]


async def test_without_tools_the_json_tool_action_is_not_offered_or_accepted():
    backend = ScriptedBackend(
        json_turn({"action": "tool", "name": "lookup", "arguments": {}}),
        json_turn({"action": "new_answer", "content": "fine"}),
    )
    member = Member(id="solo", backend=backend, structured_actions=True)
    events: list = []
    settings = OrchestratorConfig(seed=1, free_text_actions=False)
    await Orchestrator([member], settings, emit=events.append).run("q")
    assert "anyOf" not in backend.requests[0].json_schema
    (rejected,) = [e for e in events if isinstance(e, ev.ActionRejected)]
    assert rejected.reason == "Unknown action 'tool'. Use `vote` or `new_answer`."

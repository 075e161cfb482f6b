"""The chat loop in-process, against the loopback fake provider (see chat_policy.py)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from io import StringIO
from pathlib import Path

from rich.console import Console

from massgen.api import load
from massgen.chat import Chat, StreamReader
from massgen.cli import main
from massgen.sessions import Session
from massgen.ui.plain import PlainView


def make_chat(team: Path, session: Session | None = None, out: StringIO | None = None) -> Chat:
    out = out or StringIO()
    console = Console(file=out, width=100, color_system=None)
    return Chat(
        load(str(team)),
        session or Session.new(),
        console=console,
        make_view=lambda: PlainView(out),
    )


def chat_lines(chat: Chat, lines: list[str]) -> str:
    out = chat.console.file
    reader = StreamReader(StringIO("".join(line + "\n" for line in lines)), echo=out)
    assert asyncio.run(chat.loop(reader)) == 0
    return out.getvalue()


def history_in_requests(fake, question: str) -> list[str]:
    """The <CONVERSATION_HISTORY> each agent received for `question`."""
    found = []
    for body in fake.requests:
        user = "\n".join(m["content"] for m in body["messages"] if m["role"] == "user")
        if f"<ORIGINAL MESSAGE>\n{question}\n" in user and "<CONVERSATION_HISTORY>" in user:
            found.append(user.split("<CONVERSATION_HISTORY>\n")[1].split("\n<END OF")[0])
    return found


def test_the_second_turn_sees_the_first_and_both_are_saved(team, fake):
    chat = make_chat(team)
    out = chat_lines(chat, ["What is 6 times 7?", "Add 8 to that.", "/quit"])
    assert "6 times 7 is 42." in out and "42 + 8 = 50." in out
    assert history_in_requests(fake, "Add 8 to that.")[0] == (
        "User: What is 6 times 7?\nAssistant: 6 times 7 is 42."
    )
    turns = chat.session.turns()
    assert [(t.number, t.question, t.answer, t.status) for t in turns] == [
        (1, "What is 6 times 7?", "6 times 7 is 42.", "ok"),
        (2, "Add 8 to that.", "42 + 8 = 50.", "ok"),
    ]
    assert sum(turns[1].tally.values()) == 3 and len(turns[1].votes) == 3
    assert turns[1].usage["careful"]["input_tokens"] > 0
    # One chat is one log folder, one turn_<n> per turn.
    assert Path(turns[1].log_dir) == Path(turns[0].log_dir).parent / "turn_2"
    assert (Path(turns[1].log_dir) / "coordination_table.txt").exists()
    assert out.rstrip().endswith(
        f"session {chat.session.id} saved · `massgen --continue` resumes it"
    )


def test_slash_commands_report_on_the_last_turn(team, fake):
    chat = make_chat(team)
    commands = ["/answers", "/help", "What is 6 times 7?"]
    commands += ["/answers", "/votes", "/cost", "/table", "/status", "/config", "/nope", "/exit"]
    out = chat_lines(chat, commands)
    blocks = out.split("massgen › ")
    assert "no turn yet in this chat" in blocks[1]
    assert "/quit, /exit, /q" in blocks[2] and "/clear, /reset" in blocks[2]
    answers, votes, cost, table, status, config, unknown = blocks[4:11]
    assert "6 times 7 is 42." in answers and "── agent" in answers
    assert votes.count(" → agent") == 3 and "winner: " in votes and "tally: agent" in votes
    assert "last turn:" in cost and "careful" in cost and "session: 1 turn(s)" in cost
    assert "careful" in table and "vote → agent" in table and "winner: " in table
    assert (
        f"session {chat.session.id} · 1 turn(s) saved" in status and "last turn: 1 · ok" in status
    )
    assert "careful" in config and "chatcompletion · m-a" in config
    assert "unknown command /nope; /help lists them" in unknown


def test_clear_starts_a_new_session_without_history(team, fake):
    chat = make_chat(team)
    first = chat.session
    out = chat_lines(chat, ["What is 6 times 7?", "/clear", "Add 8 to that.", "/q"])
    assert f"conversation cleared: new session {chat.session.id}; session {first.id} is kept" in out
    assert "Add 8 to what?" in out
    assert [t.question for t in first.turns()] == ["What is 6 times 7?"]
    assert [t.question for t in chat.session.turns()] == ["Add 8 to that."]


def test_a_resumed_chat_starts_with_the_saved_history(team, fake):
    session = Session.new()
    chat_lines(make_chat(team, session), ["What is 6 times 7?", "Add 8 to that."])
    again = make_chat(team, Session.open(session.id))
    out = chat_lines(again, ["What about both earlier questions?"])
    assert f"resumed session {session.id} with 2 earlier turn(s):" in out
    assert "  2. Add 8 to that. → 42 + 8 = 50." in out
    assert "I remember 2 earlier question(s): 6 times 7, Add 8." in out
    assert [t.number for t in again.session.turns()] == [1, 2, 3]


async def test_ctrl_c_cancels_only_the_turn_and_keeps_its_partial_answer(team, fake):
    chat = make_chat(team)
    turn = asyncio.create_task(chat.ask("slow: tell me everything"))  # m-c stalls
    for _ in range(400):
        if list(Path(".massgen").glob("massgen_logs/*/turn_1/agent_*/answer_1.txt")):
            break
        await asyncio.sleep(0.025)
    os.kill(os.getpid(), signal.SIGINT)  # what Ctrl-C sends
    saved = await asyncio.wait_for(turn, 10)
    assert saved.status == "interrupted" and saved.answer == "echo: slow: tell me everything"
    assert "turn 1 cancelled; kept the best answer so far" in chat.console.file.getvalue()
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # handler removed
    follow_up = await chat.ask("Add 8 to that.")
    assert follow_up.number == 2 and follow_up.status == "ok"
    assert history_in_requests(fake, "Add 8 to that.")[0].startswith(
        "User: slow: tell me everything\nAssistant: [partial answer: the turn was interrupted"
    )


def test_cli_continue_with_a_question_runs_one_saved_turn(team, fake, capsys):
    chat_lines(make_chat(team), ["What is 6 times 7?", "Add 8 to that."])
    argv = ["--config", str(team), "--no-display", "--continue", "What about both earlier?"]
    assert main(argv) == 0
    assert "I remember 2 earlier question(s)" in capsys.readouterr().out
    (info,) = (json.loads(next(Path(".massgen/sessions").glob("*/session.json")).read_text()),)
    assert info["turns"] == 3


def test_cli_without_a_question_chats_on_piped_input(team, fake, capsys, monkeypatch):
    monkeypatch.setattr("sys.stdin", StringIO("What is 6 times 7?\n/status\n"))
    assert main(["--config", str(team)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("massgen chat · 3 agent(s): careful, balanced, creative\n")
    assert "6 times 7 is 42." in out and "1 turn(s) saved" in out
    assert main(["--list-sessions"]) == 0
    listing = capsys.readouterr().out.splitlines()
    assert len(listing) == 2 and listing[1].endswith("1  What is 6 times 7?")


def test_cli_session_errors_are_one_line(team, capsys):
    assert main(["--config", str(team), "--session-id", "nope"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no session 'nope'" in err and "--list-sessions" in err
    assert main(["--config", str(team), "--continue"]) == 1
    assert "no session to continue" in capsys.readouterr().err
    assert main(["--list-sessions"]) == 0
    assert "no sessions yet" in capsys.readouterr().out


def test_cli_show_table_prints_the_coordination_table(team, fake, capsys):
    assert main(["--config", str(team), "--no-display", "--no-logs", "--show-table", "q"]) == 0
    out = capsys.readouterr().out
    table = out[out.index("final answer") :]
    assert "careful" in table and "vote → agent" in table and "winner: " in table


def test_cli_session_id_continues_that_session(team, fake, capsys):
    first, second = Session.new(), Session.new()
    chat_lines(make_chat(team, first), ["What is 6 times 7?"])
    chat_lines(make_chat(team, second), ["Something else"])
    argv = ["--config", str(team), "--no-display", "--session-id", first.id, "Add 8 to that."]
    assert main(argv) == 0
    assert "42 + 8 = 50." in capsys.readouterr().out
    assert [t.number for t in Session.open(first.id).turns()] == [1, 2]
    assert [t.number for t in Session.open(second.id).turns()] == [1]


# --- MCP servers live for the session ----------------------------------------------------

FAULT_SERVER = Path(__file__).parents[1] / "tools" / "fault_server.py"


def pid_caller(request: dict):
    """Ask the MCP server for its pid before anything else in each model call's context."""
    from chat_policy import chat_policy

    from massgen.testing.fake_provider import Reply

    offered = {t["function"]["name"] for t in request.get("tools") or []}
    used = any(m["role"] == "tool" for m in request["messages"])
    if "mcp__f__pid" in offered and not used:
        return Reply(tool_calls=[("mcp__f__pid", {})])
    return chat_policy(request)


def _alive(pid: int) -> bool:
    stat = Path(f"/proc/{pid}/stat")
    try:
        return not stat.read_text().rsplit(") ", 1)[1].startswith("Z")
    except (OSError, IndexError):
        return False


def test_a_chat_starts_each_mcp_server_once_and_closes_it_at_the_end(tmp_path):
    import sys
    import time

    import pytest
    import yaml

    from massgen.core import events as ev
    from massgen.testing.fake_provider import FakeProvider

    pytest.importorskip("mcp")
    server = {"command": sys.executable, "args": [str(FAULT_SERVER)], "trusted": True}
    pids: dict[str, list[tuple[int, str]]] = {}  # agent -> (turn, pid) per call

    class Watch(PlainView):
        turn = 0

        def __call__(self, event: ev.AnyEvent) -> None:
            if isinstance(event, ev.RunStarted):
                Watch.turn += 1
            if isinstance(event, ev.ToolCallFinished) and event.ok:
                pids.setdefault(event.agent, []).append((Watch.turn, event.result))
            super().__call__(event)

    with FakeProvider(pid_caller) as fake:
        agents = [
            {
                "id": name,
                "backend": {
                    "type": "chatcompletion",
                    "model": model,
                    "base_url": fake.base_url,
                    "mcp_servers": {"f": server},
                },
            }
            for name, model in (("careful", "m-a"), ("balanced", "m-b"), ("creative", "m-c"))
        ]
        path = tmp_path / "team.yaml"
        path.write_text(yaml.safe_dump({"agents": agents}))
        out = StringIO()
        chat = make_chat(path, out=out)
        chat.make_view = lambda: Watch(out)
        text = chat_lines(chat, ["What is 6 times 7?", "Add 8 to that.", "/quit"])

    assert "42 + 8 = 50." in text
    assert set(pids) == {"careful", "balanced", "creative"}
    for calls in pids.values():
        assert {turn for turn, _ in calls} == {1, 2}  # it called the server in both turns
        assert len({pid for _, pid in calls}) == 1  # one process for the whole session
    started = {int(pid) for calls in pids.values() for _, pid in calls}
    assert len(started) == 3  # one per agent, none per turn
    end = time.monotonic() + 5
    while any(_alive(pid) for pid in started) and time.monotonic() < end:
        time.sleep(0.05)
    assert not any(_alive(pid) for pid in started)  # closed when the chat ended: no orphan

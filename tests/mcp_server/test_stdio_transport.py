"""The stdio transport of `massgen mcp` (`mcp_server/stdio.py`): the official `mcp`
client over a real subprocess's pipes, and the SDK's own transport where stdio is a file."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from mcp.shared.exceptions import McpError
from mcp_fixture import INITIALIZE, server_env, session, write_team

from massgen.mcp_server.stdio import MAX_LINE_BYTES, request_id_of
from massgen.testing.fake_provider import FakeProvider, Fault, Reply, cooperative_agent

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def fake():
    with FakeProvider() as provider:
        yield provider


async def test_two_runs_at_once_each_get_every_progress_line_in_order_before_the_result(
    tmp_path: Path, fake
) -> None:
    write_team(tmp_path / "team.yaml", fake.base_url, n=6)
    seen: dict[str, list[tuple[float, str]]] = {"a": [], "b": []}

    def recorder(name: str):
        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            seen[name].append((progress, message or ""))

        return on_progress

    async with session(tmp_path, "--config", "team.yaml") as client:
        results = await asyncio.gather(
            *(
                client.call_tool(
                    "ask_team", {"question": f"q {name}"}, progress_callback=recorder(name)
                )
                for name in seen
            )
        )
    assert all(not result.isError for result in results)
    for lines in seen.values():
        # Steps 1..N with none lost or reordered; the run's last line came before the
        # result (the client drops progress that arrives after it).
        assert [step for step, _ in lines] == list(range(1, len(lines) + 1))
        assert lines[0][1].startswith("team started") and lines[-1][1] == "run finished: ok"
        assert sum(" answered (" in m for _, m in lines) >= 6
        assert sum(" voted for " in m for _, m in lines) == 6


async def test_a_message_over_the_line_limit_is_refused_and_the_session_goes_on(
    tmp_path: Path, fake
) -> None:
    write_team(tmp_path / "team.yaml", fake.base_url)
    huge = "x" * (MAX_LINE_BYTES + 1024)
    async with session(tmp_path, "--config", "team.yaml") as client:
        with pytest.raises(McpError, match=r"over the 4 MiB that massgen mcp reads") as refused:
            await client.call_tool("ask_team", {"question": huge})
        # The next line is read as usual: the session was not lost with the long one.
        assert {t.name for t in (await client.list_tools()).tools} >= {"ask_team"}
    assert refused.value.error.code == -32600
    assert "refused a message" in (tmp_path / "server_stderr.txt").read_text()
    assert "Traceback" not in (tmp_path / "server_stderr.txt").read_text()


def test_stdio_that_is_not_a_pipe_is_served_by_the_sdks_own_transport(tmp_path: Path) -> None:
    write_team(tmp_path / "team.yaml", "http://127.0.0.1:9/v1")
    (tmp_path / "in.jsonl").write_text(json.dumps(INITIALIZE) + "\n")
    with (tmp_path / "in.jsonl").open("rb") as stdin, (tmp_path / "out.jsonl").open("wb") as out:
        done = subprocess.run(
            [sys.executable, "-m", "massgen", "mcp", "--config", "team.yaml"],
            stdin=stdin,
            stdout=out,
            stderr=subprocess.PIPE,
            cwd=tmp_path,
            env=server_env(tmp_path),
            timeout=60,
        )
    assert done.returncode == 0, done.stderr
    reply = json.loads((tmp_path / "out.jsonl").read_text().splitlines()[0])
    assert reply["id"] == 0 and reply["result"]["serverInfo"]["name"] == "massgen"


def stalling_second_agent(request: dict) -> Reply:
    if request.get("model") == "m1":
        return Reply(fault=Fault(stall_seconds=60))
    return cooperative_agent(request)


def stopped_mid_run(folder: Path, stop: Callable[[subprocess.Popen[bytes]], None]) -> dict:
    """Start a run over raw pipes, `stop` the server once the first answer is in; the
    journal's last event (the server must have ended by itself within 15 s)."""
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "ask_team",
            "arguments": {"question": "q"},
            "_meta": {"progressToken": 1},
        },
    }
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    with FakeProvider(stalling_second_agent) as slow:
        write_team(folder / "team.yaml", slow.base_url, n=2)
        server = subprocess.Popen(
            [sys.executable, "-m", "massgen", "mcp", "--config", "team.yaml"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=(folder / "server_stderr.txt").open("wb"),
            cwd=folder,
            env=server_env(folder),
        )
        assert server.stdin and server.stdout
        for message in (INITIALIZE, initialized, call):
            server.stdin.write(json.dumps(message).encode() + b"\n")
        server.stdin.flush()
        while b" answered (" not in server.stdout.readline():
            pass
        stop(server)
        server.wait(15)
    journal = next(folder.glob(".massgen/massgen_logs/*/turn_1/events.jsonl"))
    return json.loads(journal.read_text().splitlines()[-1]) | {"rc": server.returncode}


def test_the_client_leaving_mid_run_ends_the_run_as_interrupted_and_the_server(
    tmp_path: Path,
) -> None:
    last = stopped_mid_run(tmp_path, lambda server: server.stdin.close())  # type: ignore[union-attr]
    assert last["type"] == "run_finished" and last["status"] == "interrupted"
    assert last["answer"].startswith("[m0 answer 1]")  # what was decided is kept
    assert last["rc"] == 0


def test_ctrl_c_mid_run_keeps_what_was_decided_and_exits_without_a_traceback(
    tmp_path: Path,
) -> None:
    last = stopped_mid_run(tmp_path, lambda server: server.send_signal(signal.SIGINT))
    assert last["type"] == "run_finished" and last["status"] == "interrupted"
    assert last["answer"].startswith("[m0 answer 1]")
    assert last["rc"] == 0
    assert "Traceback" not in (tmp_path / "server_stderr.txt").read_text()


@pytest.mark.parametrize(
    ("head", "tail", "found"),
    [
        (b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"x":"', b"", 7),
        (b'{ "method" : "tools/call" , "id" : "r-1", "params": {', b"", "r-1"),
        (b'{"method":"tools/call","params":{"x":"', b'xxx"}},"jsonrpc":"2.0","id":12}\n', 12),
        (b'{"method":"m","params":{"x":"', b'x \\"a\\"","y":1},"id" : "r\\"2" }', 'r"2'),
        (b'{"jsonrpc":"2.0","method":"notifications/x","params":{"id":3', b"", None),
        (b'{"jsonrpc":"2.0","params":{"id":3,"q":"xxxxx', b'xx","id":3}}\n', None),
        (b'{"method":"m","params":{"q":"', b'xx \\"id\\":4}"}}\n', None),  # in a string
        (b'{"jsonrpc":"2.0","id":true,"method":"m"}', b"", None),
        (b'{"jsonrpc":"2.', b"", None),
        (b"[1, 2", b"", None),
    ],
)
def test_the_id_of_an_over_long_request_is_read_from_its_ends(
    head: bytes, tail: bytes, found: int | str | None
) -> None:
    assert request_id_of(head, tail) == found

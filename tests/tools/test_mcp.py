"""McpToolbox through the seam, over real servers: the SDK-written `fault_server.py`
(stdio and streamable-http), the shipped example server, and `mcp-server-time`."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from process_checks import alive, gone

from massgen.config.schema import MassgenConfig
from massgen.core.errors import ConfigError
from massgen.core.toolbox import ToolContext, ToolResult
from massgen.core.types import ToolCall
from massgen.tools.mcp import open_team
from massgen.tools.mcp.breaker import Breaker
from massgen.tools.mcp.naming import MAX_LEN, exposed_names

pytest.importorskip("mcp")

SERVER = str(Path(__file__).with_name("fault_server.py"))
CTX = ToolContext("a")


def fault(*flags: str, **settings: Any) -> dict[str, Any]:
    return {"command": sys.executable, "args": [SERVER, *flags], **settings}


def config(servers: dict[str, Any], agents: tuple[str, ...] = ("a",), **backend: Any):
    return MassgenConfig.model_validate(
        {
            "agents": [
                {"id": a, "backend": {"type": "chatcompletion", "mcp_servers": servers, **backend}}
                for a in agents
            ]
        }
    )


async def call(box: Any, name: str, **arguments: Any) -> ToolResult:
    import json

    return await box.call(ToolCall("c1", name, json.dumps(arguments)), CTX)


# --- stdio, names, annotations ----------------------------------------------------------


async def test_stdio_server_tools_are_prefixed_and_callable(tmp_path):
    async with open_team(config({"f": fault()}), log_dir=tmp_path, warn=pytest.fail) as boxes:
        box = boxes["a"]
        names = {spec.name for spec in box.specs()}
        assert {"mcp__f__echo", "mcp__f__hang", "mcp__f__big"} <= names
        result = await call(box, "mcp__f__echo", text="hello")
        assert (result.content, result.is_error) == ("hello", False)
        error = await call(box, "mcp__f__fail")
        assert error.is_error and "it went wrong" in error.content
        assert (await call(box, "mcp__f__nope")).is_error
        bad = await box.call(ToolCall("c", "mcp__f__echo", "{oops"), CTX)
        assert bad.is_error and "not valid JSON" in bad.content
    assert (tmp_path / "mcp" / "a.f.stderr.log").exists()  # stderr to the log dir


async def test_annotations_are_kept_only_for_trusted_servers(tmp_path):
    example = {"command": "python", "args": ["-m", "massgen.tools.example_server"]}
    servers = {"plain": example, "sure": {**example, "trusted": True}}
    async with open_team(config(servers), log_dir=tmp_path, warn=pytest.fail) as boxes:
        specs = {spec.name: spec for spec in boxes["a"].specs()}
        assert specs["mcp__plain__add"].annotations.read_only is None
        assert specs["mcp__sure__add"].annotations.read_only is True
        assert (await call(boxes["a"], "mcp__sure__add", a=2, b=3)).content == "5"


async def test_the_child_gets_no_api_keys(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    servers = {"f": fault(env={"GIVEN": "1"})}
    async with open_team(config(servers), log_dir=tmp_path, warn=pytest.fail) as boxes:
        names = (await call(boxes["a"], "mcp__f__env_names")).content.split()
    assert "GIVEN" in names and "PATH" in names
    assert "OPENAI_API_KEY" not in names


def test_names_are_sanitised_bounded_and_unique():
    long = "t" * 80
    names = exposed_names([("my server", "a.b"), ("s", long), ("s", long + "2"), ("s", "x/y")])
    assert names[("my server", "a.b")] == "mcp__my_server__a_b"
    assert all(len(n) <= MAX_LEN for n in names.values())
    assert len(set(names.values())) == 4
    assert exposed_names([("s", "x/y"), ("s", "x_y")])[("s", "x_y")] != "mcp__s__x_y"


# --- streamable-http ------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def http_server(tmp_path):
    port = free_port()
    log = (tmp_path / "http.log").open("w")
    proc = subprocess.Popen([sys.executable, SERVER, "--http", str(port)], stderr=log, stdout=log)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                break
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}/mcp"
    proc.terminate()
    proc.wait(10)
    log.close()


async def test_streamable_http_server(tmp_path, http_server):
    servers = {"h": {"type": "streamable-http", "url": http_server, "headers": {"X-A": "1"}}}
    async with open_team(config(servers), log_dir=tmp_path, warn=pytest.fail) as boxes:
        assert (await call(boxes["a"], "mcp__h__echo", text="over http")).content == "over http"


# --- a published server ---------------------------------------------------------------


async def test_mcp_server_time_for_real(tmp_path):
    pytest.importorskip("mcp_server_time")
    servers = {"time": {"command": "python", "args": ["-m", "mcp_server_time"]}}
    async with open_team(config(servers), log_dir=tmp_path, warn=pytest.fail) as boxes:
        result = await call(boxes["a"], "mcp__time__get_current_time", timezone="Asia/Tokyo")
    assert not result.is_error and "Asia/Tokyo" in result.content


# --- filters ----------------------------------------------------------------------------


async def test_filters_take_bare_and_prefixed_names(tmp_path):
    servers = {"f": fault(allowed_tools=["echo", "mcp__f__pid", "big"], exclude_tools=["big"])}
    async with open_team(config(servers), log_dir=tmp_path, warn=pytest.fail) as boxes:
        assert {s.name for s in boxes["a"].specs()} == {"mcp__f__echo", "mcp__f__pid"}


async def test_backend_level_exclude_applies_to_every_server(tmp_path):
    cfg = config({"f": fault(), "g": fault()}, exclude_tools=["hang"])
    async with open_team(cfg, log_dir=tmp_path, warn=pytest.fail) as boxes:
        names = {s.name for s in boxes["a"].specs()}
    assert "mcp__f__echo" in names and not any(n.endswith("__hang") for n in names)


async def test_a_filter_matching_no_tool_names_the_tools_that_exist(tmp_path):
    cfg = config({"f": fault(allowed_tools=["ecko"])})
    with pytest.raises(ConfigError) as caught:
        async with open_team(cfg, log_dir=tmp_path, warn=pytest.fail, source="t.yaml"):
            pass
    text = str(caught.value)
    assert "agents[0].backend.mcp_servers[0].allowed_tools" in text
    assert "`ecko` matches no tool" in text and "echo" in text and "t.yaml" in text


# --- faults -----------------------------------------------------------------------------


async def test_a_hanging_tool_times_out(tmp_path):
    servers = {"f": fault(call_timeout_seconds=0.5)}
    async with open_team(config(servers), log_dir=tmp_path, warn=pytest.fail) as boxes:
        started = time.monotonic()
        result = await call(boxes["a"], "mcp__f__hang")
        assert result.is_error and "timed out after 0.5 s" in result.content
        assert time.monotonic() - started < 5
        assert (await call(boxes["a"], "mcp__f__echo", text="still")).content == "still"


async def test_a_crash_mid_call_reconnects(tmp_path):
    servers = {"f": fault(max_retries=1)}
    async with open_team(config(servers), log_dir=tmp_path, warn=pytest.fail) as boxes:
        box = boxes["a"]
        first = int((await call(box, "mcp__f__pid")).content)
        crashed = await call(box, "mcp__f__crash")
        assert crashed.is_error and "could not be reached after 2 tries" in crashed.content
        second = int((await call(box, "mcp__f__pid")).content)
        assert second != first and await gone(first, within=5.0)
    assert await gone(second, within=5.0)


async def test_a_crashing_server_opens_the_circuit(tmp_path):
    servers = {"f": fault(max_retries=0)}
    async with open_team(config(servers), log_dir=tmp_path, warn=pytest.fail) as boxes:
        for _ in range(3):
            await call(boxes["a"], "mcp__f__crash")
        result = await call(boxes["a"], "mcp__f__echo", text="x")
    assert result.is_error and "circuit open" in result.content


def test_the_breaker_opens_after_failures_and_half_opens_after_cooldown():
    now = [0.0]
    breaker = Breaker(threshold=2, cooldown=10, clock=lambda: now[0])
    breaker.failed()
    assert breaker.open_for() is None
    breaker.failed()
    assert breaker.open_for() == 10
    now[0] = 10.5
    assert breaker.open_for() is None  # one call may try again
    breaker.succeeded()
    assert breaker.failures == 0


async def test_five_megabytes_are_cut_to_the_bound(tmp_path):
    servers = {"f": fault(max_result_chars=10_000)}
    async with open_team(config(servers), log_dir=tmp_path, warn=pytest.fail) as boxes:
        result = await call(boxes["a"], "mcp__f__big")
    assert result.truncated and len(result.content) < 10_100
    assert "truncated to 10000 characters" in result.content


async def test_garbage_on_stdout_is_ignored(tmp_path):
    async with open_team(
        config({"f": fault("--garbage")}), log_dir=tmp_path, warn=pytest.fail
    ) as b:
        assert (await call(b["a"], "mcp__f__echo", text="ok")).content == "ok"


async def test_a_server_that_fails_to_start_is_reported_and_skipped(tmp_path):
    warnings: list[str] = []
    servers = {"bad": fault("--fail"), "good": fault(), "none": {"command": "no-such-cmd-xyz"}}
    async with open_team(config(servers), log_dir=tmp_path, warn=warnings.append) as boxes:
        names = {s.name for s in boxes["a"].specs()}
        assert "mcp__good__echo" in names and not any("__bad__" in n for n in names)
    text = "\n".join(warnings)
    assert "MCP server `bad`" in text and "fault_server.py --fail" in text
    assert "cannot start: no such database" in text  # its stderr's first lines
    assert "MCP server `none` (no-such-cmd-xyz) did not start" in text


async def test_a_server_that_never_answers_hits_the_connect_timeout(tmp_path):
    warnings: list[str] = []
    servers = {
        "slow": {
            "command": sys.executable,
            "args": ["-c", "import time; time.sleep(60)"],
            "connect_timeout_seconds": 0.5,
        }
    }
    started = time.monotonic()
    async with open_team(config(servers), log_dir=tmp_path, warn=warnings.append) as boxes:
        assert boxes["a"].specs() == ()
    assert time.monotonic() - started < 10
    assert "did not connect in time" in warnings[0]


async def test_list_changed_drops_the_cached_tools(tmp_path):
    async with open_team(config({"f": fault()}), log_dir=tmp_path, warn=pytest.fail) as boxes:
        box = boxes["a"]
        assert "mcp__f__extra" not in {s.name for s in box.specs()}
        await call(box, "mcp__f__grow")
        for _ in range(100):
            if "mcp__f__extra" in {s.name for s in box.specs()}:
                break
            await asyncio.sleep(0.05)
        assert (await call(box, "mcp__f__extra")).content == "extra!"


# --- isolation and lifetimes ------------------------------------------------------------


async def test_each_agent_has_its_own_session_unless_shared(tmp_path):
    own = config({"f": fault()}, agents=("a", "b"))
    async with open_team(own, log_dir=tmp_path, warn=pytest.fail) as boxes:
        pids = {(await call(boxes[a], "mcp__f__pid")).content for a in ("a", "b")}
    assert len(pids) == 2
    shared = config({"f": fault(shared=True)}, agents=("a", "b"))
    async with open_team(shared, log_dir=tmp_path, warn=pytest.fail) as boxes:
        pids = {(await call(boxes[a], "mcp__f__pid")).content for a in ("a", "b")}
    assert len(pids) == 1


async def test_no_server_outlives_its_block(tmp_path):
    async with open_team(
        config({"f": fault(), "g": fault()}), log_dir=tmp_path, warn=pytest.fail
    ) as b:
        pids = [int((await call(b["a"], f"mcp__{s}__pid")).content) for s in ("f", "g")]
        assert all(alive(pid) for pid in pids)
    assert all([await gone(pid, within=5.0) for pid in pids])


async def test_no_server_outlives_a_cancelled_run(tmp_path):
    pids: list[int] = []
    entered = asyncio.Event()

    async def run() -> None:
        async with open_team(config({"f": fault()}), log_dir=tmp_path, warn=pytest.fail) as b:
            pids.append(int((await call(b["a"], "mcp__f__pid")).content))
            entered.set()
            await call(b["a"], "mcp__f__hang")

    task = asyncio.create_task(run())
    await entered.wait()
    await asyncio.sleep(0.1)  # the hanging call is in flight
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await gone(pids[0], within=5.0)

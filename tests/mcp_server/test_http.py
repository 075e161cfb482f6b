"""`massgen mcp --http`: streamable HTTP behind `massgen serve`'s token and Host rules."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp_fixture import INITIALIZE, server_env, write_team

from massgen.testing.fake_provider import FakeProvider

pytestmark = pytest.mark.timeout(120)
TOKEN = "mcp-test-token-0123456789"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("mcp_http")
    port = free_port()
    with FakeProvider() as fake:
        write_team(folder / "team.yaml", fake.base_url)
        process = subprocess.Popen(
            [sys.executable, "-m", "massgen", "mcp", "--http", "--port", str(port),
             "--config", "team.yaml"],
            cwd=folder,
            env=server_env(folder, MASSGEN_MCP_TOKEN=TOKEN),
            stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        try:
            _wait_for(port, process)
            yield f"http://127.0.0.1:{port}/mcp"
        finally:
            process.terminate()
            process.wait(10)
            assert process.stderr is not None
            errors = process.stderr.read()
            # The SDK logs one when a client ends its session while its GET stream is open
            # (modelcontextprotocol/python-sdk); any other traceback is ours.
            assert errors.count("Traceback") == errors.count("Error in standalone SSE")


def _wait_for(port: int, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        assert process.poll() is None, "the server exited"
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.1)
    raise TimeoutError("massgen mcp --http did not listen")


def post(url: str, headers: dict[str, str]) -> tuple[int, str]:
    request = urllib.request.Request(
        url,
        data=json.dumps(INITIALIZE).encode(),
        headers={
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
            **headers,
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def test_without_the_token_or_with_a_wrong_one_nothing_is_answered(server: str) -> None:
    status, body = post(server, {})
    assert status == 401 and "bearer token" in body
    status, _ = post(server, {"authorization": "Bearer wrong-token-0123456789"})
    assert status == 401
    status, _ = post(server, {"authorization": f"Bearer {TOKEN}"})
    assert status == 200


def test_a_foreign_host_header_is_refused_even_with_the_token(server: str) -> None:
    # DNS rebinding: a page on evil.example resolved to 127.0.0.1 still says its name.
    status, body = post(server, {"authorization": f"Bearer {TOKEN}", "host": "evil.example"})
    assert status == 421 and "unknown host" in body


async def test_the_official_client_asks_the_team_over_http(server: str) -> None:
    seen: list[str] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append(message or "")

    headers = {"authorization": f"Bearer {TOKEN}"}
    async with (
        httpx.AsyncClient(headers=headers, timeout=60) as http,
        streamable_http_client(server, http_client=http) as (read, write, _),
        ClientSession(read, write) as client,
    ):
        await client.initialize()
        assert "ask_team" in {tool.name for tool in (await client.list_tools()).tools}
        result = await client.call_tool(
            "ask_team", {"question": "What is 2+2?"}, progress_callback=on_progress
        )
    assert not result.isError
    assert result.structuredContent and result.structuredContent["status"] == "ok"
    assert any(" voted for " in m for m in seen)
    assert Path(result.structuredContent["log_dir"]).is_dir()


def test_a_non_loopback_host_needs_a_long_token_of_the_users_choosing(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from massgen.mcp_server.cli import main

    monkeypatch.delenv("MASSGEN_MCP_TOKEN", raising=False)
    assert main(["--http", "--host", "0.0.0.0"]) != 0
    said = capsys.readouterr().err
    assert "--host 0.0.0.0 is reachable from other machines" in said
    assert "set MASSGEN_MCP_TOKEN" in said and "Traceback" not in said
    monkeypatch.setenv("MASSGEN_MCP_TOKEN", "short")
    assert main(["--http", "--host", "0.0.0.0"]) != 0
    assert "MASSGEN_MCP_TOKEN is too short" in capsys.readouterr().err
    assert main(["--http", "--port", "70000"]) != 0
    assert "--port must be between 0 and 65535" in capsys.readouterr().err

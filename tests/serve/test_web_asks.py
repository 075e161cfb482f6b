"""Permission asks of a page-started run, answered over HTTP and in a real browser, against
a real `massgen serve` subprocess on the fake provider."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from asks_team import COMMAND, commanding_agent, write_asks_team
from serve_fixture import TOKEN, Server, running_server

from massgen.testing.fake_provider import FakeProvider


@pytest.fixture(scope="module")
def asks_server(tmp_path_factory) -> Iterator[Server]:
    folder = tmp_path_factory.mktemp("asks")
    (folder / "home").mkdir()
    (folder / "teams").mkdir()
    with FakeProvider(commanding_agent) as fake:
        write_asks_team(folder / "teams" / "asks.yaml", fake.base_url)
        with running_server(folder, "--config", "teams/asks.yaml", "--teams-dir", "teams") as s:
            yield s


def post(server: Server, path: str, body: Any, headers: dict[str, str] | None = None):
    given = {"Content-Type": "application/json", "Authorization": f"Bearer {TOKEN}"}
    request = urllib.request.Request(
        server.url + path, json.dumps(body).encode(), headers if headers is not None else given
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read()), response.headers
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read()), error.headers


def stop_run(server: Server, run_id: str) -> dict[str, Any]:
    """DELETE /api/runs/ID with the token; its JSON reply."""
    request = urllib.request.Request(
        f"{server.url}/api/runs/{run_id}", method="DELETE",
        headers={"Authorization": f"Bearer {TOKEN}"},
    )  # fmt: skip
    with urllib.request.urlopen(request, timeout=10) as response:
        return dict(json.loads(response.read()))


def start_run(server: Server, question: str) -> str:
    status, body, _ = post(server, "/api/runs", {"question": question, "team": "asks"})
    assert status == 201, body
    return str(body["id"])


def messages(server: Server, run_id: str) -> Iterator[tuple[str, Any]]:
    """(name, data) of the run's SSE feed: "message" for events, "asks", "end"."""
    request = urllib.request.Request(
        f"{server.url}/api/runs/{run_id}/events", headers={"Authorization": f"Bearer {TOKEN}"}
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        name = "message"
        for raw in response:
            line = raw.decode().rstrip("\r\n")
            if line.startswith("event:"):
                name = line.removeprefix("event:").strip()
            elif line.startswith("data:"):
                yield name, json.loads(line.removeprefix("data:"))
                if name == "end":
                    return
                name = "message"


def first_ask(server: Server, run_id: str) -> dict[str, Any]:
    for name, data in messages(server, run_id):
        if name == "asks" and data["asks"]:
            return data["asks"][0]
    raise AssertionError("the run ended without an ask")


def ledger(server: Server, run_id: str) -> list[dict[str, Any]]:
    request = urllib.request.Request(
        f"{server.url}/api/runs/{run_id}/files/permissions.jsonl",
        headers={"Authorization": f"Bearer {TOKEN}"},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return [json.loads(line) for line in response.read().decode().splitlines()]


def made(server: Server, run_id: str) -> bool:
    """Whether the command ran: the file in the agent's workspace of that run."""
    stamp = run_id.rpartition(".")[0]
    return any(server.folder.glob(f".massgen/workspaces/{stamp}/*/made.txt"))


def wait_finished(server: Server, run_id: str) -> dict[str, Any]:
    finished = [d for n, d in messages(server, run_id) if d.get("type") == "run_finished"]
    assert finished, "the run did not finish"
    return finished[-1]


def test_an_ask_is_answered_once_by_id_with_the_token(asks_server):
    run_id = start_run(asks_server, "Make it.")
    ask = first_ask(asks_server, run_id)
    assert (ask["agent"], ask["tool"], ask["risk"]) == ("maker", "execute_command", "medium")
    assert ask["effects"][0].startswith(f"run: /bin/sh -c '{COMMAND}' (in ")
    assert ask["reason"] == "command risk medium"
    path = f"/api/runs/{run_id}/asks/{ask['id']}"

    assert post(asks_server, path, {"choice": "once"}, headers={})[0] == 401
    cookie = login_cookie(asks_server)  # the page's cookie is for GETs only
    assert post(asks_server, path, {"choice": "once"}, headers={"Cookie": cookie})[0] == 401
    assert post(asks_server, path, {"choice": "maybe"})[0] == 400
    assert post(asks_server, f"/api/runs/{run_id}/asks/guessed", {"choice": "once"})[0] == 404
    assert post(asks_server, f"/api/runs/nope/asks/{ask['id']}", {"choice": "once"})[0] == 404
    assert not made(asks_server, run_id)  # nothing ran while it waited

    assert post(asks_server, path, {"choice": "once"})[:2] == (
        200,
        {"id": ask["id"], "choice": "once"},
    )
    status, body, _ = post(asks_server, path, {"choice": "deny"})
    assert status == 409 and body["error"]["code"] == "already_answered"

    assert wait_finished(asks_server, run_id)["status"] == "ok"
    assert made(asks_server, run_id)
    records = [r for r in ledger(asks_server, run_id) if r["tool"] == "execute_command"]
    assert [(r["decision"], r["operator"], r["choice"]) for r in records] == [
        ("allow", "human", "once")
    ]


def test_a_finished_run_has_no_open_ask_and_its_feed_says_so(asks_server):
    run_id = start_run(asks_server, "Deny it.")
    ask = first_ask(asks_server, run_id)
    assert post(asks_server, f"/api/runs/{run_id}/asks/{ask['id']}", {"choice": "deny"})[0] == 200
    assert wait_finished(asks_server, run_id)["status"] == "ok"
    assert not made(asks_server, run_id)
    replay = [d for n, d in messages(asks_server, run_id) if n == "asks"]
    assert replay == [{"asks": []}]  # a page opened now shows no stale ask
    status, _, _ = post(asks_server, f"/api/runs/{run_id}/asks/{ask['id']}", {"choice": "once"})
    assert status == 409


def test_stopping_a_run_mid_ask_closes_the_ask_and_runs_nothing(asks_server):
    run_id = start_run(asks_server, "Stop it.")
    ask = first_ask(asks_server, run_id)
    assert stop_run(asks_server, run_id)["cancelled"] is True
    assert post(asks_server, f"/api/runs/{run_id}/asks/{ask['id']}", {"choice": "once"})[0] == 404
    assert not made(asks_server, run_id)
    records = [r for r in ledger(asks_server, run_id) if r["tool"] == "execute_command"]
    assert [(r["decision"], r["reason"]) for r in records] == [
        ("deny", "cancelled before a decision")
    ]


def test_the_ask_timeout_is_bounded(capsys):
    from massgen.serve.cli import main

    assert main(["--ask-timeout", "0"]) != 0
    assert "--ask-timeout must be between 1 and 3600 seconds" in capsys.readouterr().err


def test_api_runs_keep_the_headless_policy(asks_server):
    body = {"model": "asks", "messages": [{"role": "user", "content": "API: make it."}]}
    status, completion, _ = post(asks_server, "/v1/chat/completions", body)
    assert status == 200, completion
    status, runs = asks_server.get("/api/runs")
    run_id = next(r["id"] for r in runs["runs"] if r["question"] == "API: make it.")
    records = [r for r in ledger(asks_server, run_id) if r["tool"] == "execute_command"]
    assert [(r["decision"], r["operator"]) for r in records] == [("allow", "policy")]
    assert made(asks_server, run_id)  # risk-based: a medium-risk command in the workspace


def login_cookie(server: Server) -> str:
    status, _, headers = post(server, "/api/login", {})
    assert status == 200
    return headers["set-cookie"].split(";")[0]


# --- in a real browser ------------------------------------------------------------------


def start_from_the_page(page, server: Server) -> str:
    from playwright.sync_api import expect

    page.goto(f"{server.url}/?token={TOKEN}")
    expect(page.locator("#team option[value=asks]")).to_have_count(1)
    page.select_option("#team", "asks")
    page.fill("#question", "Make the file.")
    page.click("#ask-button")
    expect(page.locator("#run")).to_have_attribute("data-status", "running")
    return str(page.evaluate("decodeURIComponent(location.hash.slice(5))"))


@pytest.mark.parametrize(
    ("choice", "outcome", "shown"),
    [("once", "allow", "approved (once)"), ("deny", "deny", "a person said no")],
)
def test_the_page_shows_the_ask_survives_a_reload_and_the_answer_is_honoured(
    asks_server, page, choice, outcome, shown, tmp_path
):
    from playwright.sync_api import expect

    run_id = start_from_the_page(page, asks_server)
    box = page.locator('.agent[data-agent="maker"] .ask')
    expect(box).to_have_count(1)
    expect(box.locator(".ask-title")).to_contain_text("medium risk")
    expect(box.locator("dd").nth(0)).to_have_text("execute_command")
    expect(box.locator("dd").nth(1)).to_contain_text(f"run: /bin/sh -c '{COMMAND}'")
    expect(box.locator("dd").nth(2)).to_have_text("command risk medium")
    expect(box.locator("button")).to_have_text(
        ["allow once", "allow for this run", "always allow", "deny"]
    )
    expect(box.locator("button[data-choice=always]")).to_have_attribute(
        "title", "allow, and save an allow rule in .massgen/settings.local.json"
    )
    asked = box.get_attribute("data-ask")

    page.reload()  # mid-ask: the open ask is shown again
    expect(box).to_have_count(1)
    assert box.get_attribute("data-ask") == asked
    expect(page.locator('.agent[data-agent="maker"]')).to_have_class("agent asking")
    page.screenshot(path=str(tmp_path / f"ask-{choice}.png"), full_page=True)
    box.locator(f'button[data-choice="{choice}"]').click()

    expect(box).to_have_count(0)
    decision = page.locator(".perm[data-operator=human]")
    expect(decision).to_contain_text(shown)
    expect(page.locator("#run")).to_have_attribute("data-status", "ok", timeout=30_000)
    page.screenshot(path=str(tmp_path / f"decided-{choice}.png"), full_page=True)
    assert made(asks_server, run_id) is (outcome == "allow")
    records = [r for r in ledger(asks_server, run_id) if r["tool"] == "execute_command"]
    assert [(r["decision"], r["operator"], r["choice"]) for r in records] == [
        (outcome, "human", choice)
    ]

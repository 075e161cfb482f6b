"""The web page's API: past runs by validated id only, files only inside a run's own log
dir, the cookie accepted for GETs only."""

from __future__ import annotations

import json
import urllib.request

import openai
from serve_fixture import TOKEN

from massgen.serve.history import run_dir


def _status(server, path: str, method: str = "GET", headers: dict | None = None) -> int:
    request = urllib.request.Request(server.url + path, method=method, headers=headers or {})
    request.add_header("Authorization", f"Bearer {TOKEN}")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def _finished_run(server) -> str:
    client = openai.OpenAI(base_url=server.url + "/v1", api_key=TOKEN, max_retries=0)
    client.chat.completions.create(model="massgen", messages=[{"role": "user", "content": "q"}])
    status, body = server.get("/api/runs")
    assert status == 200
    return next(run["id"] for run in body["runs"] if not run["live"])


def test_a_past_run_lists_and_its_own_files_read_by_id(server):
    run_id = _finished_run(server)
    status, body = server.get(f"/api/runs/{run_id}/files/status.json")
    assert status == 200 and body["status"] == "ok"
    assert _status(server, f"/api/runs/{run_id}/files/final/answer.txt") == 200


def test_nothing_outside_a_run_dir_is_readable(server):
    run_id = _finished_run(server)
    (server.folder / "secret.txt").write_text("not yours")
    for path in (
        f"/api/runs/{run_id}/files/../../../secret.txt",
        f"/api/runs/{run_id}/files/%2e%2e/%2e%2e/%2e%2e/secret.txt",
        f"/api/runs/{run_id}/files//etc/passwd",
        "/api/runs/..%2f..%2fsecret.txt/files/x",
        "/api/runs/log_1/events",
        f"/api/runs/{run_id}/files/",
    ):
        assert _status(server, path) == 404, path


def test_run_ids_map_only_onto_turn_dirs_inside_the_log_root(tmp_path):
    turn = tmp_path / "log_20261201_112233_123456" / "turn_2"
    turn.mkdir(parents=True)
    assert run_dir("log_20261201_112233_123456.2", tmp_path) == turn.resolve()
    for bad in ("log_20261201_112233_123456.3", "../log_20261201_112233_123456.2", "x", ""):
        assert run_dir(bad, tmp_path) is None


def test_a_recorded_run_replays_the_events_it_wrote(server):
    run_id = _finished_run(server)
    request = urllib.request.Request(server.url + f"/api/runs/{run_id}/events")
    request.add_header("Authorization", f"Bearer {TOKEN}")
    with urllib.request.urlopen(request, timeout=10) as response:
        text = response.read().decode()
    events = [json.loads(line[5:]) for line in text.splitlines() if line.startswith("data:")]
    assert events[0]["type"] == "run_started" and events[-2]["type"] == "run_finished"
    assert events[-1] == {}  # the `end` event
    assert "id: 0" in text


def test_the_page_cookie_opens_gets_but_not_runs(server):
    request = urllib.request.Request(server.url + "/api/login", method="POST")
    request.add_header("Authorization", f"Bearer {TOKEN}")
    with urllib.request.urlopen(request, timeout=10) as response:
        cookie = response.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and TOKEN not in cookie
    jar = {"Cookie": cookie.split(";", 1)[0]}
    get = urllib.request.Request(server.url + "/api/runs", headers=jar)
    with urllib.request.urlopen(get, timeout=10) as response:
        assert response.status == 200
    post = urllib.request.Request(
        server.url + "/api/runs", method="POST", headers=jar, data=b'{"question": "q"}'
    )
    try:
        urllib.request.urlopen(post, timeout=10)
        raise AssertionError("a cookie alone started a run")
    except urllib.error.HTTPError as error:
        assert error.code == 401


def test_a_reconnect_resumes_after_the_last_event_id(server):
    run_id = _finished_run(server)
    request = urllib.request.Request(server.url + f"/api/runs/{run_id}/events")
    request.add_header("Authorization", f"Bearer {TOKEN}")
    request.add_header("Last-Event-ID", "5")
    with urllib.request.urlopen(request, timeout=10) as response:
        ids = [line for line in response.read().decode().splitlines() if line.startswith("id:")]
    assert ids[0].strip() == "id: 6"

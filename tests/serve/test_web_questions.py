"""An agent's question to the person (`coordination.broadcast: human`) in a page-started
run: answered, skipped, expired or refused as too long, over HTTP and in a real browser,
against a real `massgen serve` subprocess on the fake provider."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from questions_team import HEARD, QUESTION, asking_agent, tool_result, write_questions_team
from serve_fixture import TOKEN, Server, running_server
from test_web_asks import login_cookie, messages, post, stop_run, wait_finished

from massgen.testing.fake_provider import FakeProvider

MAX_CHARS = 4000


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Iterator[tuple[Server, FakeProvider]]:
    folder = tmp_path_factory.mktemp("questions")
    (folder / "home").mkdir()
    (folder / "teams").mkdir()
    with FakeProvider(asking_agent) as fake:
        write_questions_team(folder / "teams" / "questions.yaml", fake.base_url, timeout=120)
        write_questions_team(folder / "teams" / "hurry.yaml", fake.base_url, timeout=3)
        argv = ("--config", "teams/questions.yaml", "--teams-dir", "teams")
        with running_server(folder, *argv) as server:
            yield server, fake


def start_run(server: Server, question: str, team: str = "questions") -> str:
    status, body, _ = post(server, "/api/runs", {"question": question, "team": team})
    assert status == 201, body
    return str(body["id"])


def first_question(server: Server, run_id: str) -> dict[str, Any]:
    for name, data in messages(server, run_id):
        if name == "questions" and data["questions"]:
            return dict(data["questions"][0])
    raise AssertionError("the run ended without a question")


def closed(server: Server, run_id: str) -> list[dict[str, Any]]:
    shown = [d for n, d in messages(server, run_id) if n == "questions"]
    assert shown, "the feed sent no questions"
    return list(shown[-1]["closed"])


def told(fake: FakeProvider, words: str) -> bool:
    """Whether a model request after the question carried `words` as the user's answer
    in the tool's result."""
    results = [tool_result(m) or {} for body in fake.requests for m in body.get("messages") or []]
    return any(r["answer"] == words for result in results for r in result.get("responses", []))


def final_answer(server: Server, run_id: str) -> str:
    finished = wait_finished(server, run_id)
    assert finished["status"] == "ok", finished
    return str(finished["answer"])


def test_a_question_is_answered_once_by_id_with_the_token(served):
    server, fake = served
    run_id = start_run(server, "API: pick a colour.")
    question = first_question(server, run_id)
    assert (question["agent"], question["question"]) == ("asker", QUESTION)
    assert question["max_chars"] == MAX_CHARS
    path = f"/api/runs/{run_id}/questions/{question['id']}"
    answer = {"text": "Teal, from the API."}

    assert post(server, path, answer, headers={})[0] == 401
    wrong = {"Content-Type": "application/json", "Authorization": "Bearer not-the-token"}
    assert post(server, path, answer, headers=wrong)[0] == 401
    cookie = login_cookie(server)  # the page's cookie is for GETs only
    assert post(server, path, answer, headers={"Cookie": cookie})[0] == 401
    assert post(server, f"/api/runs/{run_id}/questions/guessed", answer)[0] == 404
    assert post(server, f"/api/runs/nope/questions/{question['id']}", answer)[0] == 404
    assert post(server, path, {"text": "  "})[0] == 400
    assert post(server, path, {"answer": "Teal"})[0] == 400
    status, body, _ = post(server, path, {"text": "x" * (MAX_CHARS + 1)})
    assert status == 413 and "at most 4,000" in body["error"]["message"]
    assert not told(fake, "Teal, from the API.")

    assert post(server, path, answer)[:2] == (200, {"id": question["id"], "skipped": False})
    status, body, _ = post(server, path, {"skip": True})
    assert status == 409 and body["error"]["code"] == "already_answered"

    assert f"{HEARD}Teal, from the API." in final_answer(server, run_id)
    assert told(fake, "Teal, from the API.")
    assert [q["outcome"] for q in closed(server, run_id)] == ["answered"]
    status, body, _ = post(server, path, answer)  # after the run: still the first answer
    assert status == 409 and "answered" in body["error"]["message"]


def test_an_api_run_of_the_team_has_no_person(served):
    server, _ = served
    body = {"model": "questions", "messages": [{"role": "user", "content": "API: no person."}]}
    status, completion, _ = post(server, "/v1/chat/completions", body)
    assert status == 200, completion
    assert "No person is available" in completion["choices"][0]["message"]["content"]


# --- in a real browser ------------------------------------------------------------------


def ask_from_the_page(page, server: Server, team: str = "questions"):
    """Start a run of `team` on the page; its agent's open question box."""
    from playwright.sync_api import expect

    page.goto(f"{server.url}/?token={TOKEN}")
    expect(page.locator(f"#team option[value={team}]")).to_have_count(1)
    page.select_option("#team", team)
    page.fill("#question", "Design the logo.")
    page.click("#ask-button")
    expect(page.locator("#run")).to_have_attribute("data-status", "running")
    box = page.locator('.agent[data-agent="asker"] .question')
    expect(box).to_have_count(1)
    expect(box.locator(".ask-title")).to_have_text("question from asker")
    expect(box.locator(".question-text")).to_have_text(QUESTION)  # as text, not as HTML
    assert page.locator(".agent img").count() == 0
    return box


def run_id_of(page) -> str:
    return str(page.evaluate("decodeURIComponent(location.hash.slice(5))"))


def test_the_person_answers_on_the_page_and_the_agent_hears_it(served, page, tmp_path):
    from playwright.sync_api import expect

    server, fake = served
    answer = 'Blue, <b>not</b> red & "soon"'
    box = ask_from_the_page(page, server)
    asked = box.get_attribute("data-question")
    page.reload()  # mid-question: it is shown again
    expect(box).to_have_count(1)
    assert box.get_attribute("data-question") == asked
    expect(page.locator('.agent[data-agent="asker"]')).to_have_class("agent asking")
    box.locator(".question-answer").fill(answer)
    expect(box.locator(".question-count")).to_have_text(f"{len(answer)} / {MAX_CHARS}")
    page.screenshot(path=str(tmp_path / "question.png"), full_page=True)
    box.locator(".question-send").click()

    expect(box).to_have_count(0)
    transcript = page.locator('.agent[data-agent="asker"] .said')
    expect(transcript.filter(has_text="asks the user:").locator(".words")).to_have_text(QUESTION)
    said = transcript.filter(has_text="the user answers:")
    expect(said.locator(".words")).to_have_text(answer)
    expect(page.locator("#run")).to_have_attribute("data-status", "ok", timeout=30_000)
    expect(page.locator("#final-answer")).to_contain_text(f"{HEARD}{answer}")
    assert page.locator(".said .words b, #final-answer b").count() == 0  # shown as text
    assert page.evaluate("window.pwned") is None
    assert told(fake, answer)
    page.screenshot(path=str(tmp_path / "answered.png"), full_page=True)


def test_a_skipped_question_is_no_answer_and_the_agent_decides(served, page):
    from playwright.sync_api import expect

    server, _ = served
    box = ask_from_the_page(page, server)
    box.locator(".question-skip").click()
    expect(box).to_have_count(0)
    card = page.locator('.agent[data-agent="asker"]')
    expect(card.locator(".said.closed[data-outcome=skipped]")).to_have_text(
        "question skipped: the agent decides itself"
    )
    expect(card.locator(".said.unanswered")).to_contain_text("the user did not answer")
    expect(page.locator("#run")).to_have_attribute("data-status", "ok", timeout=30_000)
    expect(page.locator("#final-answer")).to_contain_text(f"{HEARD}(no answer: the user did not")
    expect(card).not_to_have_class("agent asking")


def test_an_unanswered_question_expires_in_the_agents_time(served, page):
    from playwright.sync_api import expect

    server, _ = served
    box = ask_from_the_page(page, server, team="hurry")  # broadcast_timeout: 3
    asked = box.get_attribute("data-question")
    run_id = run_id_of(page)
    expect(box).to_have_count(0, timeout=15_000)
    card = page.locator('.agent[data-agent="asker"]')
    expect(card.locator(".said.closed[data-outcome=expired]")).to_contain_text("question expired")
    expect(card.locator(".said.unanswered")).to_contain_text("no answer within 3s")
    expect(page.locator("#run")).to_have_attribute("data-status", "ok", timeout=30_000)
    status, body, _ = post(server, f"/api/runs/{run_id}/questions/{asked}", {"text": "late"})
    assert status == 409 and "expired" in body["error"]["message"]


def test_an_answer_over_the_limit_is_refused_and_can_be_shortened(served, page):
    from playwright.sync_api import expect

    server, fake = served
    box = ask_from_the_page(page, server)
    box.locator(".question-answer").fill("y" * (MAX_CHARS + 1))
    count = box.locator(".question-count")
    expect(count).to_have_text(f"{MAX_CHARS + 1} / {MAX_CHARS}")
    expect(count).to_have_class("question-count over")
    box.locator(".question-send").click()
    expect(box.locator(".question-note")).to_have_text(
        "the answer is 4,001 characters; at most 4,000: shorten it"
    )
    expect(box.locator(".question-answer")).to_be_enabled()
    assert not told(fake, "y" * (MAX_CHARS + 1))
    box.locator(".question-answer").fill("Green, briefly.")
    box.locator(".question-send").click()
    expect(box).to_have_count(0)
    expect(page.locator("#run")).to_have_attribute("data-status", "ok", timeout=30_000)
    expect(page.locator("#final-answer")).to_contain_text(f"{HEARD}Green, briefly.")


def test_stopping_a_run_mid_question_ends_it(served):
    server, fake = served
    run_id = start_run(server, "API: stop while asking.")
    question = first_question(server, run_id)
    assert stop_run(server, run_id)["cancelled"] is True
    assert [(q["id"], q["outcome"]) for q in closed(server, run_id)] == [(question["id"], "ended")]
    path = f"/api/runs/{run_id}/questions/{question['id']}"
    status, body, _ = post(server, path, {"text": "Too late."})
    assert status == 409 and "the run ended" in body["error"]["message"]
    assert not told(fake, "Too late.")

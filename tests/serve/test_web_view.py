"""The web view in a real headless browser (Debian's chromium, driven by Playwright)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from serve_fixture import ROOT, TOKEN

CHROMIUM = Path("/usr/bin/chromium")
pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's /usr/bin/chromium")
sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect
# `MASSGEN_SERVE_SCREENSHOT=docs/serve.png` keeps the finished run's screenshot for the README.
SCREENSHOT_ENV = "MASSGEN_SERVE_SCREENSHOT"


def test_a_run_from_the_page_shows_every_agent_live_and_a_reload_loses_nothing(
    server, page, tmp_path
):
    page.goto(f"{server.url}/?token={TOKEN}")
    expect(page).not_to_have_url(re.compile("token="))  # kept in the tab, not in the URL
    expect(page.locator("#team option[value=paced]")).to_have_count(1)
    page.select_option("#team", "paced")
    page.fill("#question", "What is 2+2?")
    page.click("#ask-button")

    cards = page.locator(".agent")
    expect(cards).to_have_count(3)
    expect(page.locator(".agent .stream", has_text="Checking the arithmetic")).not_to_have_count(0)
    expect(page.locator(".answer").first).to_be_attached()
    assert page.locator("#run").get_attribute("data-status") == "running"
    before = int(page.locator("#run").get_attribute("data-events") or 0)
    labels = page.locator(".answer").evaluate_all("nodes => nodes.map(n => n.dataset.label)")

    page.reload()  # mid-run: the page replays the events so far, then follows
    expect(cards).to_have_count(3)
    for label in labels:
        expect(page.locator(f'.answer[data-label="{label}"]')).to_have_count(1)
    expect(page.locator("#run")).to_have_attribute("data-status", "ok", timeout=60_000)
    assert int(page.locator("#run").get_attribute("data-events") or 0) > before
    expect(page.locator(".answer")).to_have_count(3)
    expect(page.locator(".vote")).to_have_count(3)
    expect(page.locator(".tool.ok", has_text="write_file(")).to_have_count(3)
    expect(page.locator(".agent.winner")).to_have_count(1)
    expect(page.locator(".agent.winner .state")).to_have_text("winner")
    expect(page.locator("#final-answer h2")).to_have_text("The answer")
    expect(page.locator("#final-answer strong")).to_have_text("2 + 2 = 4")
    expect(page.locator("#final-answer li")).to_have_count(2)
    shot = Path(os.environ.get(SCREENSHOT_ENV) or tmp_path / "serve.png")
    page.screenshot(path=str(ROOT / shot if not shot.is_absolute() else shot), full_page=True)


def test_a_past_run_opens_from_the_list_the_same_way(server, page):
    page.goto(f"{server.url}/?token={TOKEN}")
    page.fill("#question", "What is 3+3?")
    page.click("#ask-button")  # the served team: instant
    expect(page.locator("#run")).to_have_attribute("data-status", "ok", timeout=30_000)
    run_id = page.evaluate("decodeURIComponent(location.hash.slice(5))")
    page.goto(f"{server.url}/")  # same tab: the token is still in sessionStorage
    page.locator(f'#runs li[data-run="{run_id}"]').click()
    expect(page.locator("#run")).to_have_attribute("data-status", "ok")
    expect(page.locator("#run-question")).to_have_text("What is 3+3?")
    expect(page.locator(".agent")).to_have_count(3)
    expect(page.locator("#final-answer strong")).to_have_text("2 + 2 = 4")


def test_the_page_asks_for_the_token_and_rejects_a_wrong_one(server, page):
    page.goto(f"{server.url}/")
    expect(page.locator("#login")).to_be_visible()
    page.fill("#token-input", "wrong")
    page.click("#login-form button")
    expect(page.locator("#login-error")).to_have_text(re.compile("not the server's"))
    page.fill("#token-input", TOKEN)
    page.click("#login-form button")
    expect(page.locator("#ask")).to_be_visible()
    expect(page.locator("#team option")).not_to_have_count(0)


def test_markdown_is_rendered_with_html_escaped_and_unsafe_links_dropped(server, page):
    page.goto(f"{server.url}/")
    html = page.evaluate(
        "renderMarkdown('# T\\n<img src=x onerror=alert(1)> **b** "
        "[bad](javascript:alert(1)) [good](https://example.org/?a=1&b=2)\\n\\n"
        "```\\n<script>x</script>\\n```')"
    )
    assert "<h1>T</h1>" in html and "<strong>b</strong>" in html
    assert "<img" not in html and "<script" not in html and "&lt;script&gt;" in html
    assert 'href="javascript' not in html
    assert '<a href="https://example.org/?a=1&amp;b=2"' in html

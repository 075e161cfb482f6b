"""Provider-hosted tools through each real SDK against its loopback fake: the request
switches the provider's own tool on, the stream's activity becomes `HostedActivity`
(query, sources, code, output), and the answer text carries its citations."""

import pytest
from backend_support import ask, collect, text_of

from massgen.backends.responses import ResponsesBackend
from massgen.core import types
from massgen.testing import Reply, Scripted
from massgen.testing.fake_openai_responses import FakeResponses
from massgen.testing.policy import FakeCode, FakeSearch

SEARCH = FakeSearch(
    "tallest building 2026",
    (("https://example.org/burj", "Burj Khalifa"), ("https://example.com/list", "Tall list")),
)
CODE = FakeCode("print(6 * 7)", "42\n")
ANSWER = "The Burj Khalifa is the tallest building."


def hosted(events: list[types.BackendEvent]) -> list[types.HostedActivity]:
    return [e for e in events if isinstance(e, types.HostedActivity)]


def sources_of(activity: types.HostedActivity) -> list[tuple[str, str]]:
    return [(s.url, s.title) for s in activity.sources]


# --- OpenAI Responses --------------------------------------------------------------------


@pytest.fixture
def responses(backends):
    return backends(ResponsesBackend, provider="openai", model="gpt-5", api_key="sk-test")


async def test_responses_sends_web_search_and_code_interpreter(responses):
    reply = Reply(text="ok")
    with FakeResponses(Scripted([reply])) as fake:
        request = ask(hosted=("web_search", "code_execution"))
        await collect(responses(fake).stream(request))
        body = fake.requests[0]
    assert {"type": "web_search"} in body["tools"]
    assert {"type": "code_interpreter", "container": {"type": "auto"}} in body["tools"]
    assert set(body["include"]) == {
        "web_search_call.action.sources",
        "code_interpreter_call.outputs",
    }


async def test_responses_without_hosted_tools_sends_none(responses):
    with FakeResponses(Scripted([Reply(text="ok")])) as fake:
        await collect(responses(fake).stream(ask()))
        body = fake.requests[0]
    assert "tools" not in body and "include" not in body


async def test_responses_search_streams_query_sources_and_cited_answer(responses):
    with FakeResponses(Scripted([Reply(text=ANSWER, hosted=[SEARCH, CODE])])) as fake:
        events = await collect(responses(fake).stream(ask(hosted=("web_search",))))
    search, code = hosted(events)
    assert (search.tool, search.query, search.ok) == ("web_search", SEARCH.query, True)
    assert [s.url for s in search.sources] == [url for url, _ in SEARCH.sources]
    assert (code.tool, code.code, code.output) == ("code_execution", CODE.code, CODE.output)
    text = text_of(events)
    assert text.startswith(ANSWER)
    assert "Sources:\n[1] Burj Khalifa <https://example.org/burj>\n[2] Tall list" in text

"""Provider-hosted tools through each real SDK against its loopback fake: the request
switches the provider's own tool on, the stream's activity becomes `HostedActivity`
(query, sources, code, output), and the answer text carries its citations."""

import pytest
from backend_support import ask, collect, text_of

from massgen.backends.anthropic_messages import CODE_EXECUTION_BETA, AnthropicBackend
from massgen.backends.gemini import GeminiBackend
from massgen.backends.grok import GrokBackend
from massgen.backends.responses import ResponsesBackend
from massgen.core import types
from massgen.testing import Reply, Scripted
from massgen.testing.fake_anthropic import FakeAnthropic
from massgen.testing.fake_gemini import FakeGemini
from massgen.testing.fake_openai_responses import FakeResponses
from massgen.testing.fake_xai import FakeXai
from massgen.testing.policy import FakeCode, FakeSearch

SEARCH = FakeSearch(
    "tallest building 2026",
    (("https://example.org/burj", "Burj Khalifa"), ("https://example.com/list", "Tall list")),
)
CODE = FakeCode("print(6 * 7)", "42\n")
ANSWER = "The Burj Khalifa is the tallest building."


def hosted(events: list[types.BackendEvent]) -> list[types.HostedActivity]:
    return [e for e in events if isinstance(e, types.HostedActivity)]


def assert_searched_and_ran(
    search: types.HostedActivity, code: types.HostedActivity, *, titles: bool = True
) -> None:
    """The stream's activity carries SEARCH's query and sources (their titles where the
    wire has them) and CODE's code and output."""
    assert (search.tool, search.query, search.ok) == ("web_search", SEARCH.query, True)
    assert [s.url for s in search.sources] == [url for url, _ in SEARCH.sources]
    if titles:
        assert [s.title for s in search.sources] == [title for _, title in SEARCH.sources]
    assert (code.tool, code.code, code.output, code.ok) == (
        "code_execution",
        CODE.code,
        CODE.output,
        True,
    )


def assert_cited(events: list[types.BackendEvent], starts: str = ANSWER) -> None:
    """The answer text, then the numbered list of SEARCH's sources."""
    text = text_of(events)
    assert text.startswith(starts)
    assert "Sources:\n[1] Burj Khalifa <https://example.org/burj>\n[2] Tall list" in text


async def sent(backend, fake_type, hosted: tuple[str, ...] = ()):
    """The fake `backend` talked to, after one request offering the `hosted` tools."""
    with fake_type(Scripted([Reply(text="ok")])) as fake:
        await collect(backend(fake).stream(ask(hosted=hosted)))
    return fake


async def searched(backend, fake_type) -> list[types.BackendEvent]:
    """What `backend` streams for a reply that searched (SEARCH), ran CODE and said ANSWER."""
    with fake_type(Scripted([Reply(text=ANSWER, hosted=[SEARCH, CODE])])) as fake:
        return await collect(backend(fake).stream(ask(hosted=("web_search",))))


# --- OpenAI Responses --------------------------------------------------------------------


@pytest.fixture
def responses(backends):
    return backends(ResponsesBackend, provider="openai", model="gpt-5", api_key="sk-test")


async def test_responses_sends_web_search_and_code_interpreter(responses):
    body = (await sent(responses, FakeResponses, ("web_search", "code_execution"))).requests[0]
    assert {"type": "web_search"} in body["tools"]
    assert {"type": "code_interpreter", "container": {"type": "auto"}} in body["tools"]
    assert set(body["include"]) == {
        "web_search_call.action.sources",
        "code_interpreter_call.outputs",
    }


async def test_responses_without_hosted_tools_sends_none(responses):
    body = (await sent(responses, FakeResponses)).requests[0]
    assert "tools" not in body and "include" not in body


async def test_responses_search_streams_query_sources_and_cited_answer(responses):
    events = await searched(responses, FakeResponses)
    search, code = hosted(events)
    assert_searched_and_ran(search, code, titles=False)  # Responses' sources have no titles
    assert_cited(events)


# --- Anthropic Messages ------------------------------------------------------------------


@pytest.fixture
def claude(backends):
    return backends(AnthropicBackend, provider="claude", model="claude-fake", api_key="k")


async def test_anthropic_sends_server_tools_and_code_execution_beta(claude):
    fake = await sent(claude, FakeAnthropic, ("web_search", "code_execution"))
    body, headers = fake.requests[0], fake.headers[0]
    assert {"type": "web_search_20250305", "name": "web_search", "max_uses": 5} in body["tools"]
    assert {"type": "code_execution_20250825", "name": "code_execution"} in body["tools"]
    assert headers["anthropic-beta"] == CODE_EXECUTION_BETA


async def test_anthropic_search_streams_query_sources_and_cited_answer(claude):
    events = await searched(claude, FakeAnthropic)
    search, code = hosted(events)
    assert_searched_and_ran(search, code)
    # The cited block ends with its markers; the message ends with the numbered list.
    assert_cited(events, starts=f"{ANSWER} [1][2]")


# --- Gemini ------------------------------------------------------------------------------


@pytest.fixture
def gemini(backends):
    return backends(GeminiBackend, provider="gemini", model="gemini-2.5-flash", api_key="k")


async def test_gemini_sends_google_search_and_code_execution(gemini):
    body = (await sent(gemini, FakeGemini, ("web_search", "code_execution"))).requests[0]
    tools = body["tools"]
    assert {"googleSearch": {}} in tools and {"codeExecution": {}} in tools


async def test_gemini_grounding_streams_queries_sources_and_cited_answer(gemini):
    events = await searched(gemini, FakeGemini)
    code, search = hosted(events)
    assert_searched_and_ran(search, code)
    assert_cited(events)


# --- xAI ---------------------------------------------------------------------------------


@pytest.fixture
def grok(backends):
    return backends(GrokBackend, provider="grok", model="grok-4", api_key="xai-test")


async def test_grok_sends_server_side_tools(grok):
    body = (await sent(grok, FakeXai, ("web_search", "x_search", "code_execution"))).requests[0]
    kinds = [next(iter(tool)) for tool in body["tools"]]
    assert kinds == ["web_search", "x_search", "code_execution"]


async def test_grok_search_streams_query_citations_and_cited_answer(grok):
    x_post = FakeSearch("xai news", (("https://x.com/xai/status/1", ""),), tool="x_search")
    reply = Reply(text=ANSWER, hosted=[x_post, CODE, SEARCH])
    with FakeXai(Scripted([reply])) as fake:
        events = await collect(grok(fake).stream(ask(hosted=("web_search", "x_search"))))
    x_search, code, search = hosted(events)
    assert (x_search.tool, x_search.query, x_search.sources) == ("x_search", "xai news", ())
    assert (code.tool, code.code, code.output) == ("code_execution", CODE.code, CODE.output)
    # xAI cites for the whole answer: the citations go with the last search.
    assert (search.tool, search.query) == ("web_search", SEARCH.query)
    assert [s.url for s in search.sources] == [
        "https://x.com/xai/status/1",
        "https://example.org/burj",
        "https://example.com/list",
    ]
    text = text_of(events)
    assert text.startswith(ANSWER)
    assert "Sources:\n[1] <https://x.com/xai/status/1>\n[2] <https://example.org/burj>" in text

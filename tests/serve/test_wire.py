"""Chat messages → the question and the history a team sees."""

import pytest

from massgen.coordination.prompts import Turn
from massgen.core import events as ev
from massgen.serve.wire import RequestError, parse_request, progress_line


def _parse(*messages, **extra):
    return parse_request({"model": "massgen", "messages": list(messages), **extra})


def test_the_last_user_message_is_the_question_and_pairs_before_it_are_history():
    req = _parse(
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "a?"},
        {"role": "user", "content": "and b?"},
        {"role": "assistant", "content": "A and B."},
        {"role": "user", "content": [{"type": "text", "text": "c?"}]},
        stream=True,
        stream_options={"include_usage": True},
    )
    assert req.question == "c?"
    assert req.history == (Turn("a?\n\nand b?", "A and B."),)
    assert req.stream and req.include_usage


@pytest.mark.parametrize(
    "messages",
    [
        [],
        [{"role": "assistant", "content": "hi"}],
        [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}],
        [{"role": "user", "content": "   "}],
        [{"content": "no role"}],
        [{"role": "user", "content": 3}],
    ],
)
def test_a_conversation_without_a_final_user_question_is_refused(messages):
    with pytest.raises(RequestError):
        _parse(*messages)


def test_a_missing_model_names_the_parameter():
    with pytest.raises(RequestError) as raised:
        parse_request({"messages": [{"role": "user", "content": "q"}]})
    assert raised.value.param == "model"


def test_a_running_calls_progress_is_a_reasoning_line():
    """What the web page and the live view show of a running tool, the
    `/v1/chat/completions` stream carries in `reasoning_content` too."""
    event = ev.ToolCallProgress(agent="a1", call_id="c1", name="fetch", message="2/3 pages")
    assert progress_line(event) == "[a1] … fetch: 2/3 pages\n"

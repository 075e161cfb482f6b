"""The loopback fake provider in its own process, driven over stdin/stdout.

Serving in a separate process keeps the server's work off the measured process (and its
GIL). `python -m bench.serve --latency 0.3 --words 0` prints the base URL, then answers
each `take` line with one JSON line describing the requests since the previous `take`;
it exits when stdin closes.

The policy is orchestrator-neutral: an agent answers until its own answer is in view,
then votes; the winner's presentation gets plain text. Answers are padded to a realistic
length so prompt growth is dominated by answers, as it is in real use.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import threading
import time
from typing import Any

from massgen.testing.fake_provider import FakeProvider, Reply, cooperative_agent, prompt_chars

ANSWER_CHARS = 1000  # a realistic answer is a few paragraphs
_FILLER = "The reasoning is checked step by step and the result is stated plainly. "


class Policy:
    """Wraps `cooperative_agent`; records (arrival, model, prompt characters) per request."""

    def __init__(self, words: int) -> None:
        self.words = words
        self._lock = threading.Lock()
        self._seen: list[tuple[float, str, int]] = []

    def __call__(self, request: dict[str, Any]) -> Reply:
        model = str(request.get("model") or "fake")
        with self._lock:
            self._seen.append((time.monotonic(), model, prompt_chars(request)))
        if not _own_answer_in_view(request, model):
            request = {**request, "tools": _without(request.get("tools") or [], "vote")}
        reply = cooperative_agent(request)
        return dataclasses.replace(
            reply, text=self._chatter() + reply.text, tool_calls=_padded(reply)
        )

    def take(self) -> list[tuple[float, str, int]]:
        with self._lock:
            seen, self._seen = self._seen, []
        return seen

    def _chatter(self) -> str:
        """`words` words of streamed text before the action, a line every 12 words."""
        return "".join("word\n" if i % 12 == 11 else "word " for i in range(self.words))


def answer_text(model: str) -> str:
    """The first answer this policy publishes for `model`: the unit of prompt growth."""
    return _pad(f"[{model} answer 1] A careful, complete answer written by {model}.")


def _own_answer_in_view(request: dict[str, Any], model: str) -> bool:
    tag = f"[{model} answer "
    return any(tag in json.dumps(m.get("content")) for m in request.get("messages") or [])


def _without(tools: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    return [t for t in tools if (t.get("function") or {}).get("name") != name]


def _padded(reply: Reply) -> list[tuple[str, Any]]:
    calls = []
    for name, arguments in reply.tool_calls:
        if name == "new_answer":
            arguments = {key: _pad(v) if isinstance(v, str) else v for key, v in arguments.items()}
        calls.append((name, arguments))
    return calls


def _pad(text: str) -> str:
    filler = _FILLER * (ANSWER_CHARS // len(_FILLER) + 1)
    return (text + " " + filler)[:ANSWER_CHARS]


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.serve")
    parser.add_argument("--latency", type=float, default=0.0)
    parser.add_argument("--words", type=int, default=0, help="streamed words before each action")
    args = parser.parse_args()
    policy = Policy(args.words)
    with FakeProvider(policy, latency=args.latency) as fake:
        print(fake.base_url, flush=True)
        for line in sys.stdin:
            if line.strip() == "take":
                print(json.dumps(policy.take()), flush=True)


if __name__ == "__main__":
    main()

"""Which backend serves a model, by its family name: `--model NAME` without `--backend`.

Only first-party families are recognised; anything else (a local model, an open-weights
model on some host) needs `--backend` or `--base-url`, because guessing would send the
request, and a key, to the wrong provider.
"""

from __future__ import annotations

import re

from massgen.core.errors import ConfigError

# (pattern on the bare model id, backend type). OpenAI's reasoning models are o1, o3, o4-mini...
_FAMILIES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^(gpt-|chatgpt-|codex-|o\d+($|-))"), "openai"),
    (re.compile(r"^claude-"), "claude"),
    (re.compile(r"^gemini-"), "gemini"),
    (re.compile(r"^grok-"), "grok"),
)


def family_of(model: str) -> str | None:
    """The backend type of `model`'s family (`gpt-5` → "openai"), or None if unknown.

    A `vendor/` prefix (OpenRouter style, `anthropic/claude-sonnet-4.5`) is ignored.
    """
    name = model.strip().lower().rsplit("/", 1)[-1]
    for pattern, backend in _FAMILIES:
        if pattern.search(name):
            return backend
    return None


def backend_for(model: str) -> str:
    """The backend type for `--model NAME` given alone.

    Raises:
        ConfigError: the family is not one we can tell apart; says what to pass instead.
    """
    if "/" not in model:
        backend = family_of(model)
        if backend is not None:
            return backend
    raise ConfigError(
        f"cannot tell which provider serves model {model!r}",
        fix="pass --backend TYPE (e.g. openai, claude, gemini, grok, groq, openrouter), "
        "or --base-url URL of an OpenAI-compatible server",
    )

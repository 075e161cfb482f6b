"""The predecessor's `orchestrator.dspy` block as question paraphrases.

There, DSPy rephrased the user's question `num_variants` times with a model of its own
(`dspy.backend`), one call per rephrasing at a temperature its strategy chose, each
checked by a second call; agent i read rephrasing i % N after the original. Here the same
is `orchestrator.coordination.question_paraphraser` (`coordination/aids/paraphrases.py`): one
call to the first agent's model writes them all, with no DSPy. So `dspy.backend` is taken
when it names the first agent's provider and model (its other settings give way to the
agent's) and refused otherwise; the DSPy machinery keys load with a note.
"""

from __future__ import annotations

from typing import Any, NoReturn

from massgen.config.predecessor.rules import Note
from massgen.core.errors import ConfigError

AT = "orchestrator.dspy"
TARGET = "orchestrator.coordination.question_paraphraser"
STRATEGIES = ("balanced", "diverse", "conservative", "adaptive")
MAX_VARIANTS = 10
READ_AS = (
    "before coordination one call to the first agent's model rephrases the question, and "
    "each agent reads its rephrasing after the original (no DSPy library)"
)
ONE_CALL = "one call writes every rephrasing"
# DSPy's machinery: what each key tuned, and why the run means the same without it.
NO_EFFECT = {
    "use_chain_of_thought": f"{ONE_CALL}; there is no separate reasoning step",
    "cache_enabled": "rephrasings are written once per turn (a resumed run reads them back)",
    "semantic_threshold": (
        "rephrasings are checked mechanically (distinct, close to the original's length), "
        "not by a second model call; every agent also reads the original"
    ),
    "validate_semantics": (
        "no second model call judges a rephrasing; every agent also reads the original"
    ),
    "temperature_range": f"{ONE_CALL}, at the first agent's own settings",
}
# Spelled differently there; the same provider here.
_TYPE_ALIASES = {"anthropic": "claude"}


def paraphraser(
    data: dict[str, Any], first_backend: dict[str, Any] | None, notes: list[Note], source: str
) -> None:
    """Replace `orchestrator.dspy` by `orchestrator.coordination.question_paraphraser`.

    Raises:
        ConfigError: a key or value with no meaning here, or a `dspy.backend` that is not
            the first agent's model.
    """
    orchestrator = data.get("orchestrator")
    if not isinstance(orchestrator, dict) or "dspy" not in orchestrator:
        return
    block = orchestrator.pop("dspy")
    if block is None or block is False:
        return
    if not isinstance(block, dict):
        _refuse(AT, "not a block", "Write `dspy: {enabled: true, num_variants: 3}`", source)
    if block.get("enabled") is not True:  # off by default there too
        return
    ours: dict[str, Any] = {"enabled": True}
    notes.append(Note(AT, READ_AS, said=f"is read as `{TARGET}`"))
    for key, value in block.items():
        path = f"{AT}.{key}"
        if key == "enabled":
            continue
        if key == "num_variants":
            ours["variants"] = _variants(value, path, source)
        elif key == "strategy":
            ours["strategy"] = _strategy(value, path, source)
        elif key == "backend":
            _backend(value, first_backend, path, notes, source)
        elif key in NO_EFFECT:
            if value not in (None, False):
                notes.append(Note(path, NO_EFFECT[key]))
        else:
            _refuse(path, "not a key of the predecessor's `dspy` block", "Remove it", source)
    if orchestrator.get("coordination") is None:
        orchestrator["coordination"] = {}
    coordination = orchestrator["coordination"]
    if isinstance(coordination, dict):
        coordination.setdefault("question_paraphraser", ours)


def _variants(value: Any, path: str, source: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_VARIANTS:
        _refuse(path, f"{value!r} is not a number of variants", f"Use 1 to {MAX_VARIANTS}", source)
    return value


def _strategy(value: Any, path: str, source: str) -> str:
    word = value.strip().lower() if isinstance(value, str) else ""
    if word in STRATEGIES:
        return word
    _refuse(path, f"{value!r} is not a strategy", f"Use one of {', '.join(STRATEGIES)}", source)


def _backend(
    value: Any, first: dict[str, Any] | None, path: str, notes: list[Note], source: str
) -> None:
    """Taken when it is the first agent's provider and model; refused otherwise."""
    if not isinstance(value, dict) or not value:
        return
    first = first or {}
    mismatch = [
        key
        for key in ("type", "model", "base_url")
        if value.get(key) is not None and _same(key, value[key]) != _same(key, first.get(key))
    ]
    if mismatch:
        named = ", ".join(f"{k} {value[k]!r}" for k in mismatch)
        _refuse(
            path,
            f"another model than the first agent's ({named}); the rephrasing call uses "
            "the first agent's model",
            "Remove the key, or list first the agent whose model should rephrase",
            source,
        )
    others = sorted(k for k in value if k not in ("type", "model", "base_url"))
    unused = f"`{'`, `'.join(others)}` {'is' if len(others) == 1 else 'are'} not used"
    why = "it is the first agent's model, which makes the call" + (
        f" with its own settings (this block's {unused})" if others else ""
    )
    notes.append(Note(path, why, said="is taken"))


def _same(key: str, value: Any) -> Any:
    """A value as compared: provider names case-blind and by alias, URLs without a
    trailing slash."""
    if not isinstance(value, str):
        return value
    if key == "type":
        word = value.strip().lower()
        return _TYPE_ALIASES.get(word, word)
    return value.strip().rstrip("/") if key == "base_url" else value.strip()


def _refuse(path: str, why: str, fix: str, source: str) -> NoReturn:
    raise ConfigError(why, file=source, path=path, fix=fix)

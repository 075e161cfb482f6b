"""The setup wizard (questionary): API keys, a use case, the team; then a first question.

Shown on the first interactive run with no config, and on `massgen --setup`. Nothing is
written until the last step, so Ctrl-C at any prompt leaves every existing file as it was.
Keys go to `~/.config/massgen/.env` (merged, mode 0600), the team to
`~/.config/massgen/config.yaml`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from massgen.backends.profiles import Profile
from massgen.runs import defaults
from massgen.runs.defaults import PROVIDERS
from massgen.setup import files

LOCAL = "local"
SERVER = "chatcompletion"
SERVER_URL = "http://localhost:8000/v1"
FIRST_RUN_MARK = "first_run_done"  # in ~/.config/massgen: the wizard was offered once


class Cancelled(Exception):
    """The user pressed Ctrl-C (or Ctrl-D); nothing was written."""


@dataclass(frozen=True, slots=True)
class UseCase:
    name: str
    title: str
    orchestrator: dict[str, Any]


USE_CASES: tuple[UseCase, ...] = (
    UseCase(
        "qa",
        "Questions and explanations: answers are refined, then voted on",
        {"voting_sensitivity": "balanced", "max_new_answers_per_agent": 2},
    ),
    UseCase(
        "quick",
        "Quick answers: one answer each, then a vote (fewest calls)",
        {"max_new_answers_per_agent": 1, "final_answer_strategy": "winner_reuse"},
    ),
    UseCase(
        "thorough",
        "Thorough analysis: stricter votes, more rounds, a combined final answer",
        {
            "voting_sensitivity": "strict",
            "answer_novelty_requirement": "balanced",
            "max_new_answers_per_agent": 3,
            "final_answer_strategy": "synthesize",
        },
    ),
)


@dataclass(frozen=True, slots=True)
class AgentChoice:
    """One agent: a backend type (a provider's, `local` or `chatcompletion`) and model."""

    type: str
    model: str
    base_url: str | None = None


@dataclass(frozen=True, slots=True)
class Saved:
    config_path: Path
    question: str | None = None


@dataclass(frozen=True, slots=True)
class Declined:
    """The user chose the default team for now."""


# --- the config it writes (pure) -----------------------------------------------------------

# The built-in model is weak; varied sampling makes its agents' answers differ.
_LOCAL_SAMPLING = ({"temperature": 0.2}, {"temperature": 0.6}, {"temperature": 0.9})


def build_config(use_case: UseCase, agents: Sequence[AgentChoice]) -> dict[str, Any]:
    """The config file's content for these choices."""
    ids: dict[str, int] = {}
    out = []
    for index, choice in enumerate(agents):
        stem = "server" if choice.type == SERVER else choice.type
        ids[stem] = ids.get(stem, 0) + 1
        agent_id = stem if ids[stem] == 1 else f"{stem}_{ids[stem]}"
        out.append({"id": agent_id, "backend": _backend(choice, index)})
    return {"agents": out, "orchestrator": dict(use_case.orchestrator)}


def _backend(choice: AgentChoice, index: int) -> dict[str, Any]:
    backend: dict[str, Any] = {"type": choice.type, "model": choice.model}
    if choice.base_url:
        backend["base_url"] = choice.base_url
    if choice.type == LOCAL:
        backend.update(_LOCAL_SAMPLING[index % len(_LOCAL_SAMPLING)])
        backend.update({"seed": index + 1, "max_tokens": 256})
    return backend


# --- the interactive flow ------------------------------------------------------------------


def run(
    env: Mapping[str, str],
    *,
    home: Path | None = None,
    first_run: bool = False,
    offer_question: bool = True,
) -> Saved | Declined:
    """Ask, then write the keys and the config.

    Raises:
        Cancelled: Ctrl-C or Ctrl-D at any prompt; no file was touched.
    """
    try:
        return _run(dict(env), home, first_run, offer_question)
    except (KeyboardInterrupt, EOFError):
        raise Cancelled from None


def _run(env: dict[str, str], home: Path | None, first_run: bool, offer: bool) -> Saved | Declined:
    _say("massgen setup: a team of models answers, reviews each other and votes.")
    _show_keys(env)
    if first_run and not _ask_to_set_up():
        mark_first_run(home)
        return Declined()
    keys = _ask_keys(env)
    env.update(keys)
    use_case = _ask_use_case()
    agents = _ask_team(env)
    config = build_config(use_case, agents)
    target = files.config_path(home)
    if not _confirm_save(config, target):
        raise Cancelled
    files.merge_env(files.env_path(home), keys)
    files.write_config(target, config, header=f"Written by `massgen --setup` ({use_case.name}).")
    mark_first_run(home)
    _say(f"Saved {target}" + (f" and keys in {files.env_path(home)}" if keys else "") + ".")
    question = _ask_first_question() if offer else None
    return Saved(target, question)


def needs_first_run(home: Path | None = None) -> bool:
    """Whether the wizard has never been offered here."""
    return not (files.config_dir(home) / FIRST_RUN_MARK).exists()


def mark_first_run(home: Path | None = None) -> None:
    mark = files.config_dir(home) / FIRST_RUN_MARK
    mark.parent.mkdir(parents=True, exist_ok=True)
    mark.touch()


def _say(text: str) -> None:
    print(text, flush=True)


def _show_keys(env: Mapping[str, str]) -> None:
    found = [f"{p.title} ({p.key_in(env)})" for p in defaults.providers_with_keys(env)]
    _say("API keys found: " + (", ".join(found) if found else "none"))


def _ask_to_set_up() -> bool:
    import questionary

    choice = questionary.select(
        "No configuration yet. Set up massgen now?",
        choices=[
            questionary.Choice("Set up now (API keys, the team)", value=True),
            questionary.Choice("Not now: use the default team (`massgen --setup` later)", False),
        ],
    ).unsafe_ask()
    return bool(choice)


def _ask_keys(env: Mapping[str, str]) -> dict[str, str]:
    import questionary

    choices = [
        questionary.Choice(
            f"{p.title} ({p.key_env[0]}{', found' if p.key_in(env) else ''})", value=p
        )
        for p in PROVIDERS
    ]
    chosen: list[Profile] = questionary.checkbox(
        "Enter API keys for (space to select, enter to go on):", choices=choices
    ).unsafe_ask()
    keys: dict[str, str] = {}
    for provider in chosen or []:
        name = provider.key_env[0]
        value = questionary.password(f"{name} (empty to skip):").unsafe_ask()
        if value and value.strip():
            keys[name] = value.strip()
    return keys


def _ask_use_case() -> UseCase:
    import questionary

    return questionary.select(
        "What will you use massgen for?",
        choices=[questionary.Choice(u.title, value=u) for u in USE_CASES],
    ).unsafe_ask()


def _ask_team(env: Mapping[str, str]) -> list[AgentChoice]:
    import questionary

    count = int(
        questionary.select(
            "How many agents?", choices=["1", "2", "3", "4", "5"], default="3"
        ).unsafe_ask()
    )
    options = _backend_options(env)
    keyed = sum(bool(o.models) for o in options)
    same = (
        count == 1
        or questionary.confirm(
            "Same provider and model for every agent?", default=keyed <= 1
        ).unsafe_ask()
    )
    if same:
        return [_ask_agent(options, "All agents", 0)] * count
    return [_ask_agent(options, f"Agent {i + 1}", i) for i in range(count)]


@dataclass(frozen=True, slots=True)
class _Option:
    type: str
    title: str
    models: tuple[str, ...] = ()


def _backend_options(env: Mapping[str, str]) -> list[_Option]:
    options = [_Option(p.name, p.title, p.models) for p in defaults.providers_with_keys(env)]
    if _local_available():
        options.append(_Option(LOCAL, "Built-in local model (no key, offline, small)"))
    options.append(_Option(SERVER, "An OpenAI-compatible server (vLLM, Ollama, ...)"))
    return options


def _local_available() -> bool:
    from massgen.backends import local
    from massgen.config.schema import BackendConfig

    return local.check(BackendConfig(type=LOCAL)) is None


def _ask_agent(options: list[_Option], who: str, index: int) -> AgentChoice:
    import questionary

    keyed = [o for o in options if o.models] or options  # spread agents over the keys
    choices = [questionary.Choice(o.title, value=o) for o in options]
    option = questionary.select(
        f"{who}: provider",
        choices=choices,
        # The Choice itself: questionary types `default` as a str, Choice or dict.
        default=choices[options.index(keyed[index % len(keyed)])],
    ).unsafe_ask()
    if option.type == LOCAL:
        return _ask_local_model(who)
    if option.type == SERVER:
        return _ask_server(who)
    return AgentChoice(option.type, _ask_model(who, option.models))


def _ask_model(who: str, models: tuple[str, ...]) -> str:
    import questionary

    other = "Another model (type its id)"
    model = questionary.select(f"{who}: model", choices=[*models, other]).unsafe_ask()
    if model != other:
        return model
    return _ask_text(f"{who}: model id")


def _ask_local_model(who: str) -> AgentChoice:
    import questionary

    from massgen.backends.local import DEFAULT_MODEL

    gguf = "A GGUF file (type its path)"
    model = questionary.select(
        f"{who}: local model", choices=[f"{DEFAULT_MODEL} (built-in)", gguf]
    ).unsafe_ask()
    if model != gguf:
        return AgentChoice(LOCAL, DEFAULT_MODEL)
    return AgentChoice(LOCAL, _ask_text(f"{who}: path of the .gguf file"))


def _ask_server(who: str) -> AgentChoice:
    import questionary

    url = questionary.text(f"{who}: server URL", default=SERVER_URL).unsafe_ask().strip()
    return AgentChoice(SERVER, _ask_text(f"{who}: model name on that server"), url or SERVER_URL)


def _ask_text(message: str) -> str:
    import questionary

    answer = questionary.text(message, validate=lambda text: bool(text.strip())).unsafe_ask()
    return answer.strip()


def _confirm_save(config: dict[str, Any], target: Path) -> bool:
    import questionary
    import yaml

    _say("\nThe team:\n" + yaml.safe_dump(config, sort_keys=False).rstrip())
    verb = "Replace" if target.exists() else "Save to"
    return bool(questionary.confirm(f"{verb} {target}?", default=True).unsafe_ask())


def _ask_first_question() -> str | None:
    import questionary

    question = questionary.text("Ask a first question now? (Enter to finish)").unsafe_ask()
    return question.strip() or None

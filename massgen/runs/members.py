"""From a validated config to team members: backend checks and construction.

Sits above `config` and `backends`, which do not know each other.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from massgen.backends import pricing, registry
from massgen.config.schema import AgentConfig, MassgenConfig
from massgen.core.errors import ConfigError
from massgen.core.types import Usage

if TYPE_CHECKING:  # building members needs coordination; checking a config does not
    from massgen.coordination.agent import Member


def check(config: MassgenConfig, *, source: str | None = None, single: bool = False) -> None:
    """Raise the first backend problem as a ConfigError naming file and key path."""
    for index, agent in enumerate(config.agents):
        problem = registry.check(agent.backend)
        if problem is not None:
            key, message, fix = problem
            path = f"{_agent_path(index, single)}.backend.{key}"
            raise ConfigError(message, file=source, path=path, fix=fix)
    coordination = config.orchestrator.coordination
    team = coordination.subagent_orchestrator
    children = team.agents if coordination.enable_subagents and team.enabled else ()
    for index, child in enumerate(children):  # the agents each subagent runs as
        problem = registry.check(child.backend)
        if problem is not None:
            key, message, fix = problem
            path = f"orchestrator.coordination.subagent_orchestrator.agents[{index}].backend.{key}"
            raise ConfigError(message, file=source, path=path, fix=fix)
    from massgen.tools.media import plan as media

    if media.wanted(config):
        media.check(config, source=source, single=single)


def build(
    config: MassgenConfig,
    *,
    source: str | None = None,
    single: bool = False,
    env: Mapping[str, str] | None = None,
) -> list[Member]:
    """Check every agent's backend once, then create one member per agent. Raises
    ConfigError (e.g. a missing API key)."""
    check(config, source=source, single=single)
    return [_member(agent, index, source, single, env) for index, agent in enumerate(config.agents)]


def _member(
    agent: AgentConfig,
    index: int,
    source: str | None,
    single: bool,
    env: Mapping[str, str] | None,
) -> Member:
    from massgen.coordination.agent import Member

    try:
        backend = registry.build(agent.backend, env=env)  # `check` passed it in `build`
    except ConfigError as error:
        path = f"{_agent_path(index, single)}.{error.path or 'backend'}"
        raise ConfigError(error.message, file=source, path=path, fix=error.fix) from None
    return Member(
        id=agent.id,
        backend=backend,
        params=agent.backend.generation_params(),
        system_message=agent.system_message,
        voting_sensitivity=agent.voting_sensitivity,
        price=_price(agent),
        hosted=agent.backend.hosted_tools(),
        # A model without function calling (profile.tools false) always answers in JSON.
        structured_actions=agent.backend.structured_actions
        or not registry.PROFILES[agent.backend.type].tools,
    )


def _price(agent: AgentConfig) -> pricing.Pricer | None:
    """Cost from the shipped price table, by backend type and model (None: not listed);
    nothing for a free profile (`Profile.free`)."""
    profile = registry.PROFILES[agent.backend.type]
    if profile.free:
        return _free
    model = agent.backend.model or profile.default_model
    return pricing.pricer(agent.backend.type, model) if model else None


def _free(usage: Usage) -> float:
    return 0.0


def _agent_path(index: int, single: bool) -> str:
    return "agent" if single else f"agents[{index}]"

"""An `Ask` applied to a team: a copy of its config that every agent runs with.

- The user's instructions (system and developer messages, `instructions`) and the JSON
  the answer must be are appended to each agent's system message under their own
  heading, apart from the question, so every call of every agent reads them: answers,
  votes, the final presentation.
- Sampling options (`temperature`, `seed`, ...) replace each agent's own; a team with an
  agent whose backend takes no such option refuses the request, naming the agent.
- Images: a team with an agent whose backend cannot send images refuses it likewise.

`max_tokens` and `stop` bound the final answer only (`serve/structured.py`): a cap on
every call would cut the agents' tool calls short.
"""

from __future__ import annotations

import dataclasses
import json

from massgen.backends.registry import PROFILES
from massgen.config.schema import AgentConfig
from massgen.runs.loading import LoadedConfig
from massgen.serve.options import Ask, OutputFormat, RequestError

INSTRUCTIONS_HEADING = "# Instructions from the person asking"
FORMAT_HEADING = "# The form of the answer"


def shape(loaded: LoadedConfig, ask: Ask) -> LoadedConfig:
    """`loaded` with `ask` applied to every agent; `loaded` itself when it asks nothing.

    Raises:
        RequestError: an agent cannot honour an option (its backend takes no such
            parameter, or reads no images), naming the agent.
    """
    extra = system_addition(ask)
    if not (extra or ask.sampling or ask.images):
        return loaded
    agents = [_agent(agent, ask, extra) for agent in loaded.config.agents]
    config = loaded.config.model_copy(update={"agents": agents})
    return dataclasses.replace(loaded, config=config)


def system_addition(ask: Ask) -> str:
    parts = []
    if ask.instructions:
        parts.append(
            f"{INSTRUCTIONS_HEADING}\n\nThe person who asked the question gave these "
            "instructions. Follow them in the answer you write (how you publish it and vote "
            f"stays as described above).\n\n{ask.instructions}"
        )
    if ask.output is not None:
        parts.append(f"{FORMAT_HEADING}\n\n{json_rule(ask.output)}")
    return "\n\n".join(parts)


def json_rule(output: OutputFormat) -> str:
    """What an agent is told when the answer must be JSON."""
    rule = (
        "Every answer you write, and the final answer, must be one JSON value and nothing "
        "else: no prose before or after it, no Markdown code fence."
    )
    if output.schema is None:
        return rule + " It must be a JSON object."
    schema = json.dumps(output.schema, ensure_ascii=False)
    return f"{rule} It must be valid for this JSON schema:\n\n{schema}"


def _agent(agent: AgentConfig, ask: Ask, extra: str) -> AgentConfig:
    wire = PROFILES[agent.backend.type].wire
    refused = sorted(set(ask.sampling).difference(wire.params))
    if refused:
        name = refused[0]
        raise RequestError(
            f"`{name}` cannot be passed to agent {agent.id!r}: its backend "
            f"({agent.backend.type}) takes no {name}; leave it out to use the team's settings",
            param=name,
        )
    if ask.images and "image" not in wire.media:
        raise RequestError(
            f"agent {agent.id!r} cannot read images (its backend {agent.backend.type} sends "
            "none): ask a team whose agents all read images, or send text only",
            param="messages",
        )
    update: dict[str, object] = {}
    if extra:
        own = (agent.system_message or "").strip()
        update["system_message"] = f"{own}\n\n{extra}" if own else extra
    if ask.sampling:
        update["backend"] = agent.backend.model_copy(update=dict(ask.sampling))
    return agent.model_copy(update=update)

"""What the three agent hosts share (`backends/agent_host.py`): a turn before the member's
equipment bound the host is refused, never run without the permission engine."""

from __future__ import annotations

import pytest

from massgen.backends import claude_code, codex, gemini_cli
from massgen.backends.profiles import NO_KEY
from massgen.config.schema import BackendConfig
from massgen.core.errors import BackendError
from massgen.core.types import Message, Request

HOSTS = [(claude_code, "Claude Code"), (codex, "Codex"), (gemini_cli, "Gemini CLI")]


@pytest.mark.parametrize(("module", "title"), HOSTS, ids=[t for _, t in HOSTS])
async def test_an_unbound_host_refuses_its_turn(module, title):
    wire = module.__name__.rsplit(".", 1)[1]
    host = module.create(BackendConfig(type=wire, model="m"), None, NO_KEY)
    assert (host.name, host.api_key) == (f"{wire}:m", None)  # no key: the CLI's own login
    with pytest.raises(BackendError) as raised:
        async for _ in host.stream(Request(messages=(Message("user", "hi"),))):
            pass
    assert raised.value.message.startswith(f"{title} member was not equipped")
    assert raised.value.provider == wire


def test_a_key_given_reaches_the_host():
    host = codex.create(BackendConfig(type="codex"), None, "sk-given")
    assert (host.name, host.api_key) == ("codex:default", "sk-given")

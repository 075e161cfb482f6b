"""What the agent hosts (`claude_code`, `codex`, `gemini_cli`) share as backends: the
config they keep, the `Binding` their equipment gives them, and the refusal to run a turn
without one. Each host adds its own `stream` and `effects` (`base.AgentHost`)."""

from __future__ import annotations

from typing import ClassVar, TypeVar

from massgen.backends.base import Binding
from massgen.backends.profiles import NO_KEY
from massgen.config.schema import BackendConfig
from massgen.core.errors import BackendError

Host = TypeVar("Host", bound="BoundHost")
# What every host's CLI keeps of massgen's environment (and LC_*): a shell's basics.
SHELL_ENV = frozenset(["PATH", "HOME", "USER", "LOGNAME", "LANG", "TERM", "TZ", "TMPDIR"])


def passed(name: str, extra: frozenset[str]) -> bool:
    """Whether a host's CLI keeps massgen's variable `name`: a shell's basics, the locale,
    and the host's own `extra`; every other variable (a secret among them) stays out."""
    return name in SHELL_ENV or name in extra or name.startswith("LC_")


class BoundHost:
    """A backend that runs a whole agent in the member's workspace once it is bound."""

    provider: ClassVar[str]  # the wire's type, e.g. "claude_code"
    title: ClassVar[str]  # how messages name it, e.g. "Claude Code"

    def __init__(self, cfg: BackendConfig, api_key: str | None) -> None:
        self.name = f"{self.provider}:{cfg.model or 'default'}"
        self.model = cfg.model
        self.base_url = cfg.base_url
        self.api_key = api_key
        self.turn_seconds = cfg.request_timeout_seconds
        self.cfg = cfg
        self._binding: Binding | None = None

    @classmethod
    def create(cls: type[Host], cfg: BackendConfig, api_key: str) -> Host:
        """The host for a wire's `create`: no key (`NO_KEY`) means the CLI's own login."""
        return cls(cfg, None if api_key == NO_KEY else api_key)

    def bind(self, binding: Binding) -> None:
        self._binding = binding

    async def aclose(self) -> None:
        return None

    def bound(self) -> Binding:
        """The member's binding; a turn before `bind` is an error, never an unguarded run."""
        if self._binding is None:
            raise BackendError(
                f"{self.title} member was not equipped with a workspace and the permission engine",
                provider=self.provider,
            )
        return self._binding

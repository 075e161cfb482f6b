"""Test doubles shipped with the package: used by the test suite and by `bench/`."""

from massgen.testing.fake_provider import (
    FakeProvider,
    FakeUsage,
    Fault,
    Reply,
    Scripted,
    cooperative_agent,
    prompt_chars,
)
from massgen.testing.policy import coding_agent, tool_first

__all__ = [
    "FakeProvider",
    "FakeUsage",
    "Fault",
    "Reply",
    "Scripted",
    "coding_agent",
    "cooperative_agent",
    "prompt_chars",
    "tool_first",
]

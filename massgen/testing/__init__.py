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

__all__ = [
    "FakeProvider",
    "FakeUsage",
    "Fault",
    "Reply",
    "Scripted",
    "cooperative_agent",
    "prompt_chars",
]

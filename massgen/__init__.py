"""massgen: a team of LLM agents answers in parallel, refines, votes, and the winner presents.

    import massgen
    result = massgen.run("What is the capital of France?", config="team.yaml")
    print(result.answer)

Heavy modules load on first use, so `import massgen` and `massgen --help` stay instant.
"""

from __future__ import annotations

from massgen.core.version import VERSION as __version__

TYPE_CHECKING = False  # not typing's: `import massgen` stays free of the typing module
if TYPE_CHECKING:
    from massgen.api import RunResult, arun, run, stream

__all__ = ["RunResult", "__version__", "arun", "run", "stream"]


def __getattr__(name: str) -> object:
    if name in {"arun", "run", "stream", "RunResult"}:
        from massgen import api

        return getattr(api, name)
    raise AttributeError(f"module 'massgen' has no attribute {name!r}")

"""`massgen --help` and `massgen --validate` stay light: no provider SDK, no terminal UI.

Each check runs the CLI in a fresh interpreter and lists what it imported; a timing would
be flaky, an import list is not. Whoever adds an eager import of a heavy package to a
module on these paths sees which one here.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
THREE_AGENTS = str(ROOT / "configs" / "three_agents.yaml")

# Provider SDKs, their HTTP stacks, and the terminal UI stack.
HEAVY = (
    "openai",
    "anthropic",
    "google.genai",
    "xai_sdk",
    "llama_cpp",
    "mcp",
    "httpx",
    "httpx2",
    "httpcore",
    "rich",
    "questionary",
    "prompt_toolkit",
    "textual",
)

_PROBE = """
import json, sys
{before}
from massgen.cli import main
try:
    main({argv!r})
except SystemExit:
    pass
print("\\n" + json.dumps(sorted(sys.modules)))
"""


def imported_by(argv: list[str], before: str = "") -> set[str]:
    """Modules loaded by `massgen.cli.main(argv)` in a fresh interpreter."""
    code = _PROBE.format(before=before, argv=argv)
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    return set(json.loads(done.stdout.splitlines()[-1]))


def heavy_in(modules: set[str]) -> list[str]:
    return sorted(
        name for name in HEAVY if name in modules or any(m.startswith(name + ".") for m in modules)
    )


@pytest.mark.parametrize(
    "argv", [["--help"], ["--validate", THREE_AGENTS]], ids=["help", "validate"]
)
def test_cli_paths_import_no_sdk_and_no_terminal_ui(argv: list[str]) -> None:
    assert heavy_in(imported_by(argv)) == []


def test_the_check_sees_an_eager_import() -> None:
    # The same probe, with a module on the path importing a provider SDK and the
    # terminal UI stack, must report them; otherwise the tests above prove nothing.
    modules = imported_by(["--help"], before="import massgen.backends.chat_completions, rich")
    assert {"openai", "rich"} <= set(heavy_in(modules))
    assert "massgen.cli" in modules


def test_validate_loads_no_team_machinery() -> None:
    # Checking a file needs the schema and the backend registry, not the event loop,
    # the orchestrator or the run API (about 45 ms of imports).
    modules = imported_by(["--validate", THREE_AGENTS])
    assert {"massgen.config.loader", "massgen.backends.registry"} <= modules
    assert not {"asyncio", "massgen.api", "massgen.coordination.orchestrator"} & modules

"""The user's tool files (`custom_tools:` entries): each imported once per process, and
its functions made into a `PythonToolbox` for the agent (`tools/python.py` says how a
function becomes a tool and how a call runs).

A file is imported under a private module name; one inside the predecessor's package
tree (`.../massgen/tool/<sub>/`) gets that package, so its relative imports reach the
compatibility names in `massgen.tool`. Every failure is a ConfigError naming the file,
the function and the key path.
"""

from __future__ import annotations

import hashlib
import importlib.util
import sys
from pathlib import Path
from typing import Any

from massgen.config.custom_tools import CustomTool
from massgen.config.schema import AgentConfig, MassgenConfig
from massgen.core.errors import ConfigError
from massgen.tools.python import (
    TIMEOUT_MARGIN_SECONDS,
    PythonTool,
    PythonToolbox,
    UnknownContext,
    tool_from_function,
)
from massgen.tools.python_context import agent_facts


def python_toolbox(
    config: MassgenConfig, agent: AgentConfig, at: str, reserved: frozenset[str]
) -> PythonToolbox | None:
    """`agent`'s function tools, importing each file once, or None when it has none.
    `reserved`: the names of massgen's own tools, which a function tool may not take.

    Raises:
        ConfigError: a file that does not import, or a name in it that is not a function,
            naming the file, the function and the key path (`at`.custom_tools[i]).
    """
    entries = agent.backend.custom_tools
    if not entries:
        return None
    tools: list[PythonTool] = []
    for index, entry in enumerate(entries):
        tools.extend(_entry_tools(entry, f"{at}.custom_tools[{index}]"))
    names = [tool.spec.name for tool in tools]
    twice = next((n for n in names if names.count(n) > 1), None)
    if twice is not None:
        raise ConfigError(f"two custom tools are named `{twice}`", path=at, fix="Rename one")
    taken = next((n for n in names if n in reserved), None)
    if taken is not None:
        raise ConfigError(
            f"custom tool `{taken}` has the name of one of massgen's own tools, which "
            "would hide it",
            path=f"{at}.custom_tools",
            fix="Rename the tool (`name:`); the function can keep its name",
        )
    timeout = max(config.orchestrator.tool_timeout_seconds - TIMEOUT_MARGIN_SECONDS, 0.5)
    return PythonToolbox(tools, timeout, agent_facts(config, agent))


def _entry_tools(entry: CustomTool, at: str) -> list[PythonTool]:
    assert entry.path is not None  # `config.custom_tools.resolve` made it absolute
    module = _import(Path(entry.path), at)
    out = []
    for name, function_name, description in entry.tools():
        function = getattr(module, function_name, None)
        if not callable(function):
            raise ConfigError(
                f"`{entry.path}` has no function `{function_name}`", path=f"{at}.function"
            )
        try:
            out.append(
                tool_from_function(
                    function, name, description, entry.preset_args, entry.default_params
                )
            )
        except UnknownContext as error:
            raise ConfigError(
                f"`{function_name}` in `{entry.path}`: {error}",
                path=f"{at}.function",
                fix=f"Remove it from the function's @context_params, or give `{function_name}` "
                "that value another way (a `preset_args` entry)",
            ) from None
        except (ValueError, TypeError) as error:
            raise ConfigError(
                f"`{function_name}` in `{entry.path}` cannot be a tool: {error}",
                path=f"{at}.function",
            ) from None
    return out


_MODULES: dict[Path, Any] = {}


def _import(file: Path, at: str) -> Any:
    """The module at `file`, imported once per process under a private name."""
    if file in _MODULES:
        return _MODULES[file]
    digest = hashlib.sha256(str(file).encode()).hexdigest()[:12]
    name = f"massgen_custom_tools.{file.stem}_{digest}"
    spec = importlib.util.spec_from_file_location(name, file)
    if spec is None or spec.loader is None:
        raise ConfigError(f"`{file}` cannot be imported", path=f"{at}.path")
    module = importlib.util.module_from_spec(spec)
    module.__package__ = _predecessor_package(file) or module.__package__
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as error:  # the user's module failed: say which and why
        sys.modules.pop(name, None)
        raise ConfigError(
            f"`{file}` does not import ({type(error).__name__}: {error})",
            path=f"{at}.path",
            fix="Fix the module, or remove the tool",
        ) from None
    _MODULES[file] = module
    return module


def _predecessor_package(file: Path) -> str | None:
    """`massgen.tool.<sub>` for a file in the predecessor's tool tree
    (`.../massgen/tool/<sub>/<file>.py`), so its relative imports (`from .._result import
    ExecutionResult`) reach the compatibility names in `massgen.tool`; else None."""
    parts = file.parts
    for at in range(len(parts) - 2, 0, -1):
        if parts[at - 1 : at + 1] == ("massgen", "tool"):
            inner = parts[at + 1 : -1]
            if all(part.isidentifier() for part in inner):
                return ".".join(("massgen", "tool", *inner))
            return None
    return None

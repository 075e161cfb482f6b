"""`custom_tools:` under an agent's `backend:`: the user's Python functions as tools.

The predecessor's shapes, all accepted:

    custom_tools:
      - name: add                      # or a list: [add, mul]
        path: tools/math.py            # relative to the config file, else to the cwd
        function: add                  # or a list, paired with `name`; default: `name`
        description: Add two numbers   # or a list; default: the docstring
        category: math                 # a label; no effect
        preset_args: {unit: cm}        # arguments fixed here, hidden from the model
        default_params: {digits: 2}    # defaults the model sees and may override

Loading checks, without running the file, that it exists, parses, defines each function
at its top level, and that the modules it imports at its top level can be found
(`resolve`); the file is imported when a run opens its tools
(`massgen/tools/python.py`). A `function` without a `path` is one of the predecessor's
built-in example tools, from `massgen/tool/_basic.py` (`two_num_tool`).
"""

from __future__ import annotations

import ast
import importlib.util
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from massgen.config.files import find_file
from massgen.core.errors import ConfigError

TOOL_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$")
# Where a `function` without a `path` is looked up: the predecessor's built-in examples.
BUILTINS = Path(__file__).parents[1] / "tool" / "_basic.py"


def _as_tuple(value: Any) -> Any:
    return (value,) if isinstance(value, str) else value


class CustomTool(BaseModel):
    """One entry: one file, one or more functions from it, each under its own tool name."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: tuple[str, ...] = ()
    path: str | None = None
    function: tuple[str, ...] = ()
    description: tuple[str, ...] = ()
    category: str | None = None
    preset_args: dict[str, Any] = Field(default_factory=dict)
    # Defaults for the function's parameters, shown to the model, which may override them.
    default_params: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _lists(cls, data: Any) -> Any:
        if isinstance(data, dict):
            data = {
                k: _as_tuple(v) if k in ("name", "function", "description") else v
                for k, v in data.items()
            }
        return data

    @model_validator(mode="after")
    def _paired(self) -> CustomTool:
        if not self.function and not self.name:
            raise ValueError("give the tool a `function:` (and a `name:`)")
        functions = self.function or self.name
        names = self.name or functions
        if len(names) != len(functions):
            raise ValueError(
                f"`name` lists {len(names)} tools and `function` {len(functions)}; "
                "pair them one to one"
            )
        if len(self.description) not in (0, 1, len(names)):
            raise ValueError("give one `description` per tool, or one for all, or none")
        bad = next((n for n in names if not TOOL_NAME.match(n)), None)
        if bad is not None:
            raise ValueError(f"tool name {bad!r} must be letters, digits, `_` or `-` (at most 64)")
        return self

    def tools(self) -> tuple[tuple[str, str, str | None], ...]:
        """(tool name, function name, description or None) for each tool of the entry."""
        functions = self.function or self.name
        names = self.name or functions
        described = self.description * len(names) if len(self.description) == 1 else None
        descriptions = described or self.description or (None,) * len(names)
        return tuple(zip(names, functions, descriptions, strict=True))


def resolve(tools: tuple[CustomTool, ...], source: str, at: str) -> tuple[CustomTool, ...]:
    """`tools` with each `path` made absolute (the config file's directory first, then the
    working directory), after checking that the file defines every function named.

    Raises:
        ConfigError: naming the file, the key path (`at`.custom_tools[i]) and the function.
    """
    return tuple(
        _resolve_one(tool, source, f"{at}.custom_tools[{i}]") for i, tool in enumerate(tools)
    )


def _resolve_one(tool: CustomTool, source: str, at: str) -> CustomTool:
    functions = tool.function or tool.name
    if tool.path is None:
        return _builtin(tool, functions, source, at)
    file = find_file(tool.path, source)
    if file is None:
        raise ConfigError(
            f"`{tool.path}` does not exist (looked beside the config and in the working directory)",
            file=source,
            path=f"{at}.path",
            fix="Correct the path",
        )
    tree = _parse(file, source, f"{at}.path")
    missing_module = _missing_import(tree)
    if missing_module is not None:
        raise ConfigError(
            f"`{file}` imports `{missing_module}`, which cannot be found"
            + (
                " (a module of the predecessor this version does not have)"
                if missing_module.startswith("massgen.")
                else ""
            ),
            file=source,
            path=f"{at}.path",
            fix="Install it, or remove the tool",
        )
    defined = _top_level_functions(tree)
    missing = next((f for f in functions if f not in defined), None)
    if missing is not None:
        raise ConfigError(
            f"`{file}` defines no function `{missing}`",
            file=source,
            path=f"{at}.function",
            fix=f"Functions defined there: {', '.join(sorted(defined)) or '(none)'}",
        )
    return tool.model_copy(update={"path": str(file)})


def _builtin(tool: CustomTool, functions: tuple[str, ...], source: str, at: str) -> CustomTool:
    defined = _top_level_functions(_parse(BUILTINS, source, at))
    missing = next((f for f in functions if f not in defined), None)
    if missing is not None:
        raise ConfigError(
            f"no `path` for `{missing}`, and it is not a built-in tool",
            file=source,
            path=at,
            fix=f"Name the Python file that defines it with `path:` (built-in: "
            f"{', '.join(sorted(defined))})",
        )
    return tool.model_copy(update={"path": str(BUILTINS)})


def _parse(file: Path, source: str, at: str) -> ast.Module:
    try:
        return ast.parse(file.read_text(encoding="utf-8"), filename=str(file))
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError) as error:
        raise ConfigError(
            f"`{file}` cannot be read as Python ({error})", file=source, path=at
        ) from None


def _missing_import(tree: ast.Module) -> str | None:
    """The first module the file imports at its top level that cannot be found (looked
    up, not imported: `find_spec` imports only the parent packages of a dotted name)."""
    for node in tree.body:
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        for name in names:
            try:
                found = importlib.util.find_spec(name)
            except (ImportError, ValueError):
                found = None
            if found is None:
                return name
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("massgen."):
            lacking = _lacking_names(node.module, [alias.name for alias in node.names])
            if lacking:
                return f"{node.module}.{lacking}"
    return None


def _lacking_names(module: str, names: list[str]) -> str | None:
    """A name imported from one of massgen's own modules that it does not define (a
    predecessor name); massgen's modules are safe to import."""
    try:
        loaded = importlib.import_module(module)
    except ImportError:
        return names[0]
    return next((n for n in names if n != "*" and not hasattr(loaded, n)), None)


def _top_level_functions(tree: ast.Module) -> set[str]:
    kinds = (ast.FunctionDef, ast.AsyncFunctionDef)
    names = {node.name for node in tree.body if isinstance(node, kinds)}
    # A name bound at the top level (`add = make_adder()`) may be a function too.
    for node in tree.body:
        if isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return names

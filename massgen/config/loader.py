"""Read a config file into a validated `MassgenConfig`, or raise exactly one `ConfigError`.

Steps: read → parse (YAML or JSON) → shape checks pydantic cannot word well (top level,
v1 keys, `agent`/`agents`, duplicate ids) → expand `${VAR}` (against `.env` files and the
environment, see `environment()`) →
validate → the most relevant problem as one line naming the key path (`problems.py`).

`${VAR}` may appear anywhere inside a string value. `${VAR:-default}` uses `default` when
VAR is unset or empty; `$${VAR}` is a literal `${VAR}`. An unset VAR with no default is
an error, never an empty string.
"""

from __future__ import annotations

import copy
import json
import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import yaml
from dotenv import dotenv_values
from pydantic import ValidationError

from massgen.config import custom_tools, predecessor, skills, uploads
from massgen.config.presets import find_default_config as find_default_config  # its home
from massgen.config.problems import SECRET_KEY, KeyPath, first_problem, kind_of
from massgen.config.schema import MassgenConfig
from massgen.core.errors import ConfigError

LEGACY_V1_KEYS = ("models", "num_agents", "max_rounds", "consensus_threshold", "voting_enabled")
LIST_EXAMPLES_FIX = "Check the path or use `massgen --list-examples`"

_VAR = re.compile(r"\$(\$)?\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_PURE_REF = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*\}")


# ---------------------------------------------------------------- public entry points


def load_config(path: str | Path, env: Mapping[str, str] | None = None) -> MassgenConfig:
    """Load and validate a .yaml/.yml/.json config file; `${VAR}`s resolve against `env`
    (default: `environment()`).

    Raises:
        ConfigError: one line naming the file, the key path and the fix.
    """
    return load_config_with_raw(path, env)[0]


def load_config_with_raw(
    path: str | Path, env: Mapping[str, str] | None = None
) -> tuple[MassgenConfig, dict[str, Any]]:
    """Like `load_config`, also returning the parsed file before `${VAR}` expansion.

    The raw dict holds references, not secrets, so it is the one to log (after `redact`).
    """
    file = Path(path).expanduser()
    raw = _parse(_read(file), file)
    return _build(raw, str(file), env), raw


def config_from_dict(
    data: dict[str, Any], source: str = "<config>", env: Mapping[str, str] | None = None
) -> MassgenConfig:
    """Validate an in-memory config (Python API) with the same errors as a file."""
    return _build(data, source, env)


def env_files(cwd: Path | None = None, home: Path | None = None) -> list[Path]:
    """The `.env` files that exist: `~/.config/massgen/.env`, then `./.env`."""
    home_env = (home or Path.home()) / ".config" / "massgen" / ".env"
    return [p for p in (home_env, (cwd or Path.cwd()) / ".env") if p.is_file()]


def environment(cwd: Path | None = None, home: Path | None = None) -> dict[str, str]:
    """The variables a config resolves against: the home `.env`, then `./.env`, then the
    real environment, each winning over the one before.

    Read, never written: os.environ stays as the process had it, so a library caller's
    environment is not changed by loading a config.
    """
    merged: dict[str, str] = {}
    for file in env_files(cwd, home):
        merged.update({k: v for k, v in dotenv_values(file).items() if v is not None})
    return {**merged, **os.environ}


def redact(raw: Any) -> Any:
    """A deep copy with secret-looking values (api_key, token, secret, password) as "***".

    A value that is only a `${VAR}` reference is kept: it names a secret, it isn't one.
    """
    if isinstance(raw, dict):
        return {k: _redact_item(k, v) for k, v in raw.items()}
    if isinstance(raw, list):
        return [redact(v) for v in raw]
    return copy.copy(raw)


def _redact_item(key: Any, value: Any) -> Any:
    if not (isinstance(key, str) and SECRET_KEY.search(key)):
        return redact(value)
    if value is None or (isinstance(value, str) and _PURE_REF.fullmatch(value)):
        return value
    return "***"


# ---------------------------------------------------------------- reading and parsing


def _read(file: Path) -> str:
    try:
        return file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError("no such file", file=str(file), fix=LIST_EXAMPLES_FIX) from None
    except IsADirectoryError:
        raise ConfigError("is a directory, not a config file", file=str(file)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read the file ({exc})", file=str(file)) from None


class _DuplicateKey(Exception):
    def __init__(self, key: str, line: int) -> None:
        super().__init__(key)
        self.key, self.line = key, line


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader that refuses duplicate keys, which YAML would resolve silently (last wins)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        seen: set[str] = set()
        for key_node, _ in node.value:
            if isinstance(key_node, yaml.ScalarNode) and key_node.tag != "tag:yaml.org,2002:merge":
                if key_node.value in seen:
                    raise _DuplicateKey(key_node.value, key_node.start_mark.line + 1)
                seen.add(key_node.value)
        return super().construct_mapping(node, deep=deep)


def _parse(text: str, file: Path) -> Any:
    suffix = file.suffix.lower()
    if suffix == ".json":
        return _parse_json(text, str(file))
    if suffix in (".yaml", ".yml"):
        return _parse_yaml(text, str(file))
    raise ConfigError(
        f"unsupported file type {suffix or '(none)'!r}",
        file=str(file),
        fix="Use a .yaml, .yml or .json file",
    )


def _parse_yaml(text: str, file: str) -> Any:
    try:
        return yaml.load(text, Loader=_StrictLoader)  # a SafeLoader: builds no objects
    except _DuplicateKey as dup:
        raise ConfigError(
            f"duplicate key `{dup.key}` at line {dup.line}", file=file, fix="Keep only one"
        ) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError(
            f"malformed YAML{where}: {problem}",
            file=file,
            fix="Check the indentation and quoting near that line",
        ) from None


def _parse_json(text: str, file: str) -> Any:
    def no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        keys = [k for k, _ in pairs]
        dup = next((k for k in keys if keys.count(k) > 1), None)
        if dup is not None:
            raise ConfigError(f"duplicate key `{dup}`", file=file, fix="Keep only one")
        return dict(pairs)

    try:
        return json.loads(text, object_pairs_hook=no_duplicates)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"malformed JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}", file=file
        ) from None


# ---------------------------------------------------------------- shape checks


def _build(raw: Any, source: str, env: Mapping[str, str] | None) -> MassgenConfig:
    _check_top_level(raw, source)
    raw, _ = predecessor.translate(raw, source)  # its keys mapped, dropped or refused
    _check_agent_keys(raw, source)
    unset: list[tuple[str, KeyPath]] = []
    data = _expand(raw, [], unset, environment() if env is None else env)
    try:
        config = MassgenConfig.model_validate(data)
        errors: list[Any] = []
    except ValidationError as exc:
        config, errors = None, exc.errors()
    problem = first_problem(errors, unset, single="agent" in raw, source=source, data=data)
    if problem is not None:
        raise problem
    assert config is not None
    _check_context_paths(config, source)
    _check_skills(config, source)
    config = _resolve_uploads(config, source, single="agent" in raw)
    return _resolve_custom_tools(config, source, single="agent" in raw)


def _resolve_uploads(config: MassgenConfig, source: str, single: bool) -> MassgenConfig:
    """The config with every local `upload_files` path absolute and checked (not read)."""
    return _each_backend(
        config, single, "upload_files", lambda v, at: uploads.resolve(v, source, at)
    )


def _resolve_custom_tools(config: MassgenConfig, source: str, single: bool) -> MassgenConfig:
    """The config with every `custom_tools` path absolute and checked (no code runs)."""
    return _each_backend(
        config, single, "custom_tools", lambda v, at: custom_tools.resolve(v, source, at)
    )


def _each_backend(
    config: MassgenConfig, single: bool, field: str, resolve: Callable[[Any, str], Any]
) -> MassgenConfig:
    """The config with each agent's backend `field` replaced by `resolve(value, key path
    of the backend)`; unchanged when no agent sets it."""
    if not any(getattr(agent.backend, field) for agent in config.agents):
        return config
    agents = []
    for index, agent in enumerate(config.agents):
        at = ("agent" if single else f"agents[{index}]") + ".backend"
        resolved = resolve(getattr(agent.backend, field), at)
        backend = agent.backend.model_copy(update={field: resolved})
        agents.append(agent.model_copy(update={"backend": backend}))
    return config.model_copy(update={"agents": agents})


def _check_context_paths(config: MassgenConfig, source: str) -> None:
    """Every context path exists, and someone has the file tools to read it."""
    entries = config.orchestrator.context_paths
    for index, entry in enumerate(entries):
        real = os.path.realpath(entry.path)
        if not os.path.exists(real):
            resolved = "" if real == entry.path else f" (resolved: {real})"
            raise ConfigError(
                f"context path `{entry.path}` does not exist{resolved}",
                file=source,
                path=f"orchestrator.context_paths[{index}].path",
                fix="Create it or correct the path; a relative path is taken from the "
                "directory massgen runs in",
            )
    if entries and not any(agent.backend.cwd for agent in config.agents):
        raise ConfigError(
            "context paths are read with the file tools, and no agent has them",
            file=source,
            path="orchestrator.context_paths",
            fix="Give the agents a workspace with `cwd:` in their `backend:`",
        )


def _check_skills(config: MassgenConfig, source: str) -> None:
    """With `use_skills`: the skills directory, where it exists, is a directory, and every
    name in `massgen_skills` is a bundled skill (`config/skills.py`)."""
    coordination = config.orchestrator.coordination
    if not coordination.use_skills:
        return
    at = "orchestrator.coordination"
    directory = Path(coordination.skills_directory).expanduser()
    if directory.exists() and not directory.is_dir():
        raise ConfigError(
            f"the skills directory `{directory}` is not a directory",
            file=source,
            path=f"{at}.skills_directory",
            fix="Name a directory holding one folder per skill (`<name>/SKILL.md`), "
            "relative to the directory massgen runs in",
        )
    known = skills.bundled_names()
    unknown = [
        n for n in coordination.massgen_skills if skills.canonical_bundled_name(n) not in known
    ]
    if unknown:
        raise ConfigError(
            f"no bundled skill is named {', '.join(f'`{n}`' for n in unknown)}",
            file=source,
            path=f"{at}.massgen_skills",
            fix=f"Use some of: {', '.join(known)}",
        )


def _check_top_level(raw: Any, source: str) -> None:
    if raw is None:
        raise ConfigError(
            "the file is empty", file=source, fix="Start from an example: `massgen --list-examples`"
        )
    if not isinstance(raw, dict):
        raise ConfigError(
            f"the top level must be a mapping (agents:, orchestrator:, ...), got {kind_of(raw)}",
            file=source,
        )
    legacy = next((k for k in LEGACY_V1_KEYS if k in raw), None)
    if legacy is not None:
        raise ConfigError(
            f"`{legacy}` is from the old v1 config format, which this version of massgen "
            "does not read",
            file=source,
            fix="Rewrite the file with `agents:` entries (see `massgen --list-examples`)",
        )


def _check_agent_keys(raw: dict[str, Any], source: str) -> None:
    both = "agent" in raw and "agents" in raw
    if both or isinstance(raw.get("agent"), list):
        raise ConfigError(
            "`agent:` and `agents:` are both set" if both else "`agent:` holds a list",
            file=source,
            path="agent",
            fix="Use `agent:` for one agent or `agents:` for a list, not both"
            if both
            else "Rename it to `agents:`, or give a single mapping",
        )
    if isinstance(raw.get("agents"), list):
        _check_unique_ids(raw["agents"], source)


def _check_unique_ids(agents: list[Any], source: str) -> None:
    first_use: dict[str, int] = {}
    for index, agent in enumerate(agents):
        agent_id = agent.get("id") if isinstance(agent, dict) else None
        if not isinstance(agent_id, str):
            continue
        if agent_id in first_use:
            raise ConfigError(
                f"agent id {agent_id!r} is already used by agents[{first_use[agent_id]}]",
                file=source,
                path=f"agents[{index}].id",
                fix="Give every agent a unique `id`",
            )
        first_use[agent_id] = index


# ---------------------------------------------------------------- ${VAR} expansion


Unset = list[tuple[str, KeyPath]]


def _expand(value: Any, at: KeyPath, unset: Unset, env: Mapping[str, str]) -> Any:
    """Copy of `value` with `${VAR}` replaced; unset names are appended to `unset`."""
    if isinstance(value, dict):
        return {k: _expand(v, [*at, k], unset, env) for k, v in value.items()}
    if isinstance(value, list):
        return [_expand(v, [*at, i], unset, env) for i, v in enumerate(value)]
    if isinstance(value, str) and "${" in value:
        return _VAR.sub(lambda m: _substitute(m, at, unset, env), value)
    return value


def _substitute(match: re.Match[str], at: KeyPath, unset: Unset, env: Mapping[str, str]) -> str:
    escaped, name, default = match.groups()
    if escaped:
        return match.group(0)[1:]
    value = env.get(name)
    if default is not None and not value:
        return default
    if value is None:
        unset.append((name, at))
        return match.group(0)
    return value

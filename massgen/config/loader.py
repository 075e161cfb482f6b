"""Read a config file into a validated `MassgenConfig`, or raise exactly one `ConfigError`.

Steps: read → parse (YAML or JSON) → shape checks pydantic cannot word well (top level,
v1 keys, `agent`/`agents`, duplicate ids) → load `.env` files → expand `${VAR}` →
validate → translate the most relevant problem into one line that names the key path
(`agents[1].backend.model`, or `agent.backend.model` when the file used `agent:`).

`${VAR}` may appear anywhere inside a string value. `${VAR:-default}` uses `default` when
VAR is unset or empty; `$${VAR}` is a literal `${VAR}`. An unset VAR with no default is
an error, never an empty string.
"""

from __future__ import annotations

import copy
import difflib
import json
import os
import re
from pathlib import Path
from typing import Any, get_args

import yaml
from dotenv import dotenv_values
from pydantic import BaseModel, ValidationError

from massgen.config.schema import NOT_YET_SUPPORTED, BackendConfig, MassgenConfig
from massgen.core.errors import ConfigError

LEGACY_V1_KEYS = ("models", "num_agents", "max_rounds", "consensus_threshold", "voting_enabled")
LIST_EXAMPLES_FIX = "Check the path or use `massgen --list-examples`"
ENV_FIX = "Set it in the environment or in .env (./.env or ~/.config/massgen/.env)"

_VAR = re.compile(r"\$(\$)?\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_PURE_REF = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*\}")
_SECRET_KEY = re.compile(
    r"api[_-]?key|(^|_)token$|secret|passw(or)?d|credential|authorization", re.I
)
KeyPath = list[str | int]


# ---------------------------------------------------------------- public entry points


def load_config(path: str | Path) -> MassgenConfig:
    """Load and validate a .yaml/.yml/.json config file.

    Raises:
        ConfigError: one line naming the file, the key path and the fix.
    """
    return load_config_with_raw(path)[0]


def load_config_with_raw(path: str | Path) -> tuple[MassgenConfig, dict[str, Any]]:
    """Like `load_config`, also returning the parsed file before `${VAR}` expansion.

    The raw dict holds references, not secrets, so it is the one to log (after `redact`).
    """
    file = Path(path).expanduser()
    raw = _parse(_read(file), file)
    return _build(raw, str(file)), raw


def config_from_dict(data: dict[str, Any], source: str = "<config>") -> MassgenConfig:
    """Validate an in-memory config (Python API) with the same errors as a file."""
    return _build(data, source)


def find_default_config(cwd: Path | None = None, home: Path | None = None) -> Path | None:
    """`.massgen/config.yaml` in cwd, else `~/.config/massgen/config.yaml`, else None."""
    candidates = (
        (cwd or Path.cwd()) / ".massgen" / "config.yaml",
        (home or Path.home()) / ".config" / "massgen" / "config.yaml",
    )
    return next((p for p in candidates if p.is_file()), None)


# Values this module put into os.environ; anything else there is the user's and wins.
_FROM_DOTENV: dict[str, str] = {}


def load_env_files(cwd: Path | None = None, home: Path | None = None) -> list[Path]:
    """Load `~/.config/massgen/.env`, then `./.env` (which wins) into os.environ.

    Real environment variables always win over both. Calling again is harmless; values
    that came from a .env file may be replaced by a later call's files. Returns the files read.
    """
    home_env = (home or Path.home()) / ".config" / "massgen" / ".env"
    files = [p for p in (home_env, (cwd or Path.cwd()) / ".env") if p.is_file()]
    merged: dict[str, str] = {}
    for file in files:
        merged.update({k: v for k, v in dotenv_values(file).items() if v is not None})
    for key, value in merged.items():
        if key in os.environ and _FROM_DOTENV.get(key) != os.environ[key]:
            continue
        os.environ[key] = value
        _FROM_DOTENV[key] = value
    return files


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
    if not (isinstance(key, str) and _SECRET_KEY.search(key)):
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


def _build(raw: Any, source: str) -> MassgenConfig:
    _check_top_level(raw, source)
    _check_agent_keys(raw, source)
    load_env_files()
    unset: list[tuple[str, KeyPath]] = []
    data = _expand(raw, [], unset)
    try:
        config = MassgenConfig.model_validate(data)
        errors: list[Any] = []
    except ValidationError as exc:
        config, errors = None, exc.errors()
    problem = _first_problem(errors, unset, single="agent" in raw, source=source)
    if problem is not None:
        raise problem
    assert config is not None
    return config


def _check_top_level(raw: Any, source: str) -> None:
    if raw is None:
        raise ConfigError(
            "the file is empty", file=source, fix="Start from an example: `massgen --list-examples`"
        )
    if not isinstance(raw, dict):
        raise ConfigError(
            f"the top level must be a mapping (agents:, orchestrator:, ...), got {_kind(raw)}",
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
    if "agent" in raw and "agents" in raw:
        raise ConfigError(
            "`agent:` and `agents:` are both set",
            file=source,
            path="agent",
            fix="Use `agent:` for one agent or `agents:` for a list, not both",
        )
    if isinstance(raw.get("agent"), list):
        raise ConfigError(
            "`agent:` holds a list",
            file=source,
            path="agent",
            fix="Rename it to `agents:`, or give a single mapping",
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


def _expand(value: Any, at: KeyPath, unset: list[tuple[str, KeyPath]]) -> Any:
    """Copy of `value` with `${VAR}` replaced; unset names are appended to `unset`."""
    if isinstance(value, dict):
        return {k: _expand(v, [*at, k], unset) for k, v in value.items()}
    if isinstance(value, list):
        return [_expand(v, [*at, i], unset) for i, v in enumerate(value)]
    if isinstance(value, str) and "${" in value:
        return _VAR.sub(lambda m: _substitute(m, at, unset), value)
    return value


def _substitute(match: re.Match[str], at: KeyPath, unset: list[tuple[str, KeyPath]]) -> str:
    escaped, name, default = match.groups()
    if escaped:
        return match.group(0)[1:]
    value = os.environ.get(name)
    if default is not None and not value:
        return default
    if value is None:
        unset.append((name, at))
        return match.group(0)
    return value


# ---------------------------------------------------------------- choosing one problem


def _first_problem(
    errors: list[Any], unset: list[tuple[str, KeyPath]], *, single: bool, source: str
) -> ConfigError | None:
    """The one error to show: unsupported key, unknown key, unset var, then the rest.

    An unknown key often causes a "missing" one (`bakend:`), and an unset var often causes
    a type error, so those are shown first: fixing them fixes the others.
    """
    extras = [e for e in errors if e["type"] == "extra_forbidden"]
    for error in extras:
        if _is_not_yet_supported(error["loc"]):
            return _unsupported(error["loc"], single, source)
    if extras:
        return _unknown_key(extras[0]["loc"], single, source)
    if unset:
        name, at = unset[0]
        return ConfigError(
            f"environment variable `{name}` is not set", file=source, path=_fmt(at), fix=ENV_FIX
        )
    if errors:
        return _translate(errors[0], single, source)
    return None


def _is_not_yet_supported(loc: tuple[Any, ...]) -> bool:
    model = _model_at(loc[:-1])
    return model is not None and loc[-1] in NOT_YET_SUPPORTED.get(model, ())


def _unsupported(loc: tuple[Any, ...], single: bool, source: str) -> ConfigError:
    return ConfigError(
        f"`{_loc_path(loc, single)}` is not supported by this version of massgen yet",
        file=source,
        fix="Remove it to run this config",
    )


def _unknown_key(loc: tuple[Any, ...], single: bool, source: str) -> ConfigError:
    model = _model_at(loc[:-1])
    valid = sorted(model.model_fields) if model else []
    if model is MassgenConfig:
        valid = sorted([*valid, "agent"])
    key = str(loc[-1])
    guess = _close_key(key, valid)
    fix = f"Did you mean `{guess}`?" if guess else "Valid keys here: " + ", ".join(valid) + "."
    if model is BackendConfig:
        # The predecessor forwarded unknown backend keys to the provider; we only forward
        # what is declared, so say where such a parameter belongs now.
        fix += " Provider-specific parameters go under `extra_body`"
    return ConfigError("unknown key", file=source, path=_loc_path(loc, single), fix=fix)


def _close_key(key: str, valid: list[str]) -> str | None:
    close = difflib.get_close_matches(key, valid, n=1, cutoff=0.6)
    if close:
        return close[0]
    # Renamed keys differ by a prefix (`agent_id` → `id`, `type` → `display_type`).
    return next((v for v in valid if v.endswith("_" + key) or key.endswith("_" + v)), None)


def _model_at(loc: tuple[Any, ...]) -> type[BaseModel] | None:
    """The schema model validating the mapping at `loc` (list indexes skipped)."""
    model: type[BaseModel] | None = MassgenConfig
    for part in loc:
        if isinstance(part, int):
            continue
        field = model.model_fields.get(part) if model else None
        if field is None:
            return None
        model = _model_in(field.annotation)
    return model


def _model_in(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return next(filter(None, (_model_in(arg) for arg in get_args(annotation))), None)


# ---------------------------------------------------------------- wording pydantic errors

_EXPECTED = {
    "string_type": "a string",
    "int_type": "an integer",
    "int_parsing": "an integer",
    "int_from_float": "a whole number",
    "float_type": "a number",
    "float_parsing": "a number",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "list_type": "a list",
    "dict_type": "a mapping",
    "model_type": "a mapping",
    "model_attributes_type": "a mapping",
}

_MISSING_FIX = {
    "agents": "Add `agents:` (a list) or `agent:` (one mapping)",
    "backend": "Add `backend:` with at least `type:` and `model:`",
    "id": "Give every agent a unique `id`",
    "type": "Set it to a backend type, e.g. `type: chatcompletion`",
}


def _translate(error: Any, single: bool, source: str) -> ConfigError:
    loc, kind = error["loc"], error["type"]
    path = _loc_path(loc, single) or None
    if kind == "missing":
        field = str(loc[-1])
        message = "no agents defined" if loc == ("agents",) else "required key is missing"
        return ConfigError(message, file=source, path=path, fix=_MISSING_FIX.get(field))
    if kind == "too_short" and loc == ("agents",):
        return ConfigError("needs at least one agent", file=source, path=path)
    return ConfigError(_wording(error), file=source, path=path)


def _wording(error: Any) -> str:
    kind, got = error["type"], _got(error)
    if kind in _EXPECTED:
        return f"must be {_EXPECTED[kind]}, got {got}"
    if kind == "string_too_short":
        return "must not be empty"
    if kind == "literal_error":
        return f"must be one of {error['ctx']['expected']}, got {got}"
    message = str(error["msg"]).removeprefix("Value error, ")
    if message.startswith("Input should be"):
        return "must be" + message.removeprefix("Input should be") + f", got {got}"
    return message


def _got(error: Any) -> str:
    value, loc = error.get("input"), error["loc"]
    if loc and isinstance(loc[-1], str) and _SECRET_KEY.search(loc[-1]):
        return _kind(value)
    if isinstance(value, dict | list) or value is None or isinstance(value, bool):
        return _kind(value)
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return f"a value of type {type(value).__name__}"


# ---------------------------------------------------------------- key paths


def _loc_path(loc: tuple[Any, ...], single: bool) -> str:
    parts = list(loc)
    # The schema turns `agent:` into `agents: [..]`; speak the file's language back.
    if single and parts[:2] == ["agents", 0]:
        parts = ["agent", *parts[2:]]
    return _fmt(parts)


def _fmt(parts: KeyPath) -> str:
    text = ""
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text

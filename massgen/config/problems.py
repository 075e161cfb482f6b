"""From pydantic's validation errors to the one `ConfigError` worth showing.

The line names the file, the key path (`agents[1].backend.model`, or `agent.backend.model`
when the file used `agent:`), what is wrong in words, and a fix: a did-you-mean for a
misspelled key, where a provider parameter belongs, how to set an unset variable.
Values of secret-looking keys are never echoed.
"""

from __future__ import annotations

import difflib
import re
from typing import Any, get_args

from pydantic import BaseModel

from massgen.config.backend_groups import FLAT_KEYS, flat_key
from massgen.config.schema import NOT_YET_SUPPORTED, BackendConfig, MassgenConfig
from massgen.core.errors import ConfigError

ENV_FIX = "Set it in the environment or in .env (./.env or ~/.config/massgen/.env)"
SECRET_KEY = re.compile(
    r"api[_-]?key|(^|_)token$|secret|passw(or)?d|credential|authorization", re.I
)
KeyPath = list[str | int]


# ---------------------------------------------------------------- choosing one problem


def first_problem(
    errors: list[Any],
    unset: list[tuple[str, KeyPath]],
    *,
    single: bool,
    source: str,
    data: Any = None,
) -> ConfigError | None:
    """The one error to show: unsupported key, unknown key, unset var, then the rest.

    An unknown key often causes a "missing" one (`bakend:`), and an unset var often causes
    a type error, so those are shown first: fixing them fixes the others. `data`, the
    mapping that was validated, lets a path name a flat key as the file wrote it.
    """
    if single and isinstance(data, dict):
        data = {**data, "agents": [data.get("agent")]}
    errors = [{**error, "loc": _as_written(tuple(error["loc"]), data)} for error in errors]
    extras = _outermost_first([e for e in errors if e["type"] == "extra_forbidden"])
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


def _outermost_first(extras: list[Any]) -> list[Any]:
    """Pydantic reports a nested model's extra keys (`orchestrator.coordination.x`) before
    its parent's (`orchestrator.y`); within each top-level section, show the parent's first."""
    section: dict[Any, int] = {}
    for error in extras:
        section.setdefault(error["loc"][0], len(section))
    return sorted(extras, key=lambda e: (section[e["loc"][0]], len(e["loc"])))


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
    guess = _close_key(key, [*valid, *(FLAT_KEYS if model is BackendConfig else ())])
    fix = f"Did you mean `{guess}`?" if guess else "Valid keys here: " + ", ".join(valid) + "."
    if model is BackendConfig:
        # The predecessor forwarded unknown backend keys to the provider; we only forward
        # what is declared, so say where such a parameter belongs now.
        fix += " Provider-specific parameters go under `extra_body`"
    return ConfigError("unknown key", file=source, path=_loc_path(loc, single), fix=fix)


def _as_written(loc: tuple[Any, ...], data: Any) -> tuple[Any, ...]:
    """`loc` with a backend group's field as the file wrote it: `command_line.sandbox` is
    `command_line_sandbox` where the file has that flat key (`config/backend_groups.py`)."""
    written: list[Any] = []
    node, index = data, 0
    while index < len(loc):
        part, after = loc[index], loc[index + 1] if index + 1 < len(loc) else None
        flat = flat_key(part, after) if isinstance(part, str) and isinstance(after, str) else None
        if flat is not None and isinstance(node, dict) and flat in node:
            written.append(flat)
            node, index = node[flat], index + 2
            continue
        written.append(part)
        node, index = _child(node, part), index + 1
    return tuple(written)


def _child(node: Any, part: Any) -> Any:
    if isinstance(node, dict):
        return node.get(part)
    if isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
        return node[part]
    return None


def _close_key(key: str, valid: list[str]) -> str | None:
    close = difflib.get_close_matches(key, valid, n=1, cutoff=0.6)
    if close:
        return close[0]
    # Renamed keys differ by a prefix (`agent_id` → `id`, `type` → `display_type`).
    return next((v for v in valid if v.endswith("_" + key) or key.endswith("_" + v)), None)


def _model_at(loc: tuple[Any, ...]) -> type[BaseModel] | None:
    """The schema model validating the mapping at `loc` (list indexes skipped)."""
    return _walk(loc)[0]


def _walk(loc: tuple[Any, ...]) -> tuple[type[BaseModel] | None, tuple[Any, ...]]:
    """The model validating the mapping at `loc`, and `loc` without the tags pydantic puts
    in it for a tagged union (`mcp_servers[0].stdio.command` is `mcp_servers[0].command`
    in the file)."""
    model: type[BaseModel] | None = MassgenConfig
    choices: list[type[BaseModel]] = []
    kept: list[Any] = []
    for part in loc:
        if isinstance(part, int) or model is None:
            kept.append(part)
            continue
        field = model.model_fields.get(part)
        tagged = next((c for c in choices if _tag_of(c) == part), None)
        if field is None and tagged is not None:
            model = tagged  # the tag names which member of the union validated it
            continue
        kept.append(part)
        choices = _models_in(field.annotation) if field is not None else []
        model = choices[0] if choices else None
    return model, tuple(kept)


def _tag_of(model: type[BaseModel]) -> Any:
    field = model.model_fields.get("type")
    return field.default if field is not None else None


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [model for arg in get_args(annotation) for model in _models_in(arg)]


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
    "tuple_type": "a list",  # a YAML list becomes a tuple in a frozen config
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
    if loc and isinstance(loc[-1], str) and SECRET_KEY.search(loc[-1]):
        return kind_of(value)
    if isinstance(value, dict | list) or value is None or isinstance(value, bool):
        return kind_of(value)
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def kind_of(value: Any) -> str:
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
    parts = list(_walk(loc)[1])
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

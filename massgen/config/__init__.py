"""Typed config: the schema, the file loader and the packaged examples.

The names below load on first use (PEP 562): importing a light module of this package
(`presets`, `peek`) must not import pydantic, so the terminal app can open first.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: see massgen/__init__.py
if TYPE_CHECKING:
    from massgen.config.loader import (
        config_from_dict,
        env_files,
        environment,
        load_config,
        load_config_with_raw,
        redact,
    )
    from massgen.config.presets import (
        example_text,
        find_default_config,
        list_examples,
        resolve_config_arg,
    )
    from massgen.config.schema import (
        AgentConfig,
        BackendConfig,
        MassgenConfig,
        OrchestratorConfig,
        TimeoutSettings,
        UIConfig,
    )

_HOMES = {
    "massgen.config.loader": (
        "config_from_dict",
        "env_files",
        "environment",
        "load_config",
        "load_config_with_raw",
        "redact",
    ),
    "massgen.config.presets": (
        "example_text",
        "find_default_config",
        "list_examples",
        "resolve_config_arg",
    ),
    "massgen.config.schema": (
        "AgentConfig",
        "BackendConfig",
        "MassgenConfig",
        "OrchestratorConfig",
        "TimeoutSettings",
        "UIConfig",
    ),
}
_HOME_OF = {name: module for module, names in _HOMES.items() for name in names}

__all__ = [
    "AgentConfig",
    "BackendConfig",
    "MassgenConfig",
    "OrchestratorConfig",
    "TimeoutSettings",
    "UIConfig",
    "config_from_dict",
    "env_files",
    "environment",
    "example_text",
    "find_default_config",
    "list_examples",
    "load_config",
    "load_config_with_raw",
    "redact",
    "resolve_config_arg",
]


def __getattr__(name: str) -> object:
    module = _HOME_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'massgen.config' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)

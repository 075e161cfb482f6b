"""Typed config: the schema, the file loader and the packaged examples."""

from massgen.config.loader import (
    config_from_dict,
    env_files,
    environment,
    find_default_config,
    load_config,
    load_config_with_raw,
    redact,
)
from massgen.config.presets import example_text, list_examples, resolve_config_arg
from massgen.config.schema import (
    AgentConfig,
    BackendConfig,
    MassgenConfig,
    OrchestratorConfig,
    TimeoutSettings,
    UIConfig,
)

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

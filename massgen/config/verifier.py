"""`verifier:`: how every candidate answer is checked when it is published
(`massgen/verifiers/`, `coordination/checks.py`).

    verifier:
      command: "python -m pytest -q"     # run in the command sandbox, the answer on stdin,
                                         # in a read-only copy of the answer's workspace
    verifier:
      function: "mychecks:verify"        # f(answer, question, workspace) -> bool | (bool, str)
      timeout_seconds: 30
      max_output_chars: 2000

The built-in `massgen.verifiers:python_examples` runs the question's `>>>` examples
against the answer's last ```python block.
"""

from __future__ import annotations

import re

from pydantic import Field, field_validator, model_validator

from massgen.config.strict import Strict
from massgen.core.checks import DEFAULT_OUTPUT_CHARS

# `package.module:function` (the module may also be a file beside the config, `checks`).
_FUNCTION = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")
EXAMPLE_FUNCTION = "massgen.verifiers:python_examples"


class VerifierConfig(Strict):
    command: str | None = Field(default=None, min_length=1)
    function: str | None = Field(default=None, min_length=1)
    # One check's wall-clock bound; past it the check is `unchecked` (timed out).
    timeout_seconds: float = Field(default=30, gt=0, le=3600)
    # What a check's output keeps, for the voters' prompts, the views and the log.
    max_output_chars: int = Field(default=DEFAULT_OUTPUT_CHARS, ge=100, le=100_000)

    @field_validator("function")
    @classmethod
    def _module_and_function(cls, value: str | None) -> str | None:
        if value is not None and not _FUNCTION.match(value.strip()):
            raise ValueError(
                f"must be `module:function`, got {value!r}; for example "
                f"`{EXAMPLE_FUNCTION}`, or `mychecks:verify` for a function `verify` in "
                "mychecks.py beside the config"
            )
        return value.strip() if value is not None else None

    @model_validator(mode="after")
    def _exactly_one(self) -> VerifierConfig:
        if (self.command is None) == (self.function is None):
            raise ValueError(
                "set exactly one of `command` (a shell command that gets the answer on "
                "stdin) or `function` (`module:function`)"
            )
        return self

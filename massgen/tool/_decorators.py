"""The predecessor's `context_params` decorator, so a tool written for it loads unchanged.

    @context_params("prompt", "agent_id")
    async def plan(topic: str, prompt: list[dict], agent_id: str) -> str: ...

The named parameters are hidden from the model's schema and filled at each call from the
run (`massgen/tools/python_context.py` lists the names massgen fills and what each holds);
a name it cannot fill is refused when the tool loads.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

CONTEXT_ATTRIBUTE = "__context_params__"
_F = TypeVar("_F", bound=Callable[..., Any])


def context_params(*param_names: str) -> Callable[[_F], _F]:
    """Mark `param_names` as filled from the run, not by the model."""

    def mark(function: _F) -> _F:
        setattr(function, CONTEXT_ATTRIBUTE, set(param_names))  # a set, as the predecessor's
        return function

    return mark

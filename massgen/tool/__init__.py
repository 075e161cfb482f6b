"""Compatibility: the names a custom tool written for the predecessor imports
(`from massgen.tool._result import ExecutionResult, TextContent`, `from massgen.tool
import context_params`), so such a tool file loads unchanged as a `custom_tools:` entry.
New tools can return a plain string. massgen's own tool code lives in `massgen.tools`.
"""

from massgen.tool._decorators import context_params
from massgen.tool._result import (
    AudioContent,
    ContentBlock,
    ExecutionResult,
    ImageContent,
    TextContent,
)

__all__ = [
    "AudioContent",
    "ContentBlock",
    "ExecutionResult",
    "ImageContent",
    "TextContent",
    "context_params",
]

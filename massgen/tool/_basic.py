"""The predecessor's built-in example tools: a `custom_tools:` entry that names one of
these functions without a `path` gets it from here (the predecessor looked its built-ins
up by name the same way)."""

from massgen.tool._result import ExecutionResult, TextContent


async def two_num_tool(x: int, y: int) -> ExecutionResult:
    """Add two numbers together.

    Args:
        x: First number
        y: Second number
    """
    return ExecutionResult(output_blocks=[TextContent(data=f"The sum of {x} and {y} is {x + y}")])

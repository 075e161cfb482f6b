"""An MCP tool result as the text the model reads, bounded in size.

Text parts are kept; images, audio and resources are named, not inlined (the model is
told what was left out). Nothing beyond `limit` characters is ever joined together, so a
server that answers megabytes costs at most the limit here.
"""

from __future__ import annotations

import json
from typing import Any

from mcp import types


def result_text(result: types.CallToolResult, limit: int) -> tuple[str, bool]:
    """(text, truncated)."""
    parts: list[str] = []
    size, truncated = 0, False
    for piece in _pieces(result):
        room = limit - size
        if len(piece) > room:
            parts.append(piece[:room])
            truncated = True
            break
        parts.append(piece)
        size += len(piece) + 1
    text = "\n".join(parts)
    if truncated:
        text += f"\n[output truncated to {limit} characters]"
    return text, truncated


def _pieces(result: types.CallToolResult) -> list[str]:
    pieces = [_describe(part) for part in result.content]
    if not pieces and result.structuredContent is not None:
        pieces.append(json.dumps(result.structuredContent, ensure_ascii=False))
    return pieces


def _describe(part: Any) -> str:
    match part:
        case types.TextContent(text=text):
            return text
        case types.ImageContent(mimeType=mime):
            return f"[image omitted ({mime}): this tool's images are not shown to the model]"
        case types.AudioContent(mimeType=mime):
            return f"[audio omitted ({mime})]"
        case types.ResourceLink(uri=uri):
            return f"[resource link omitted: {uri}]"
        case types.EmbeddedResource(resource=resource):
            return f"[embedded resource omitted: {resource.uri}]"
    return f"[{type(part).__name__} omitted]"

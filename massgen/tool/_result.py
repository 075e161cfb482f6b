"""What a predecessor-style custom tool returns; `tools/python.result_text` shows the model
the `data` of each output block, one per line. A generator tool yields several; those with
`is_log=True` are progress: shown live to the person watching, never to the model."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any


@dataclass
class ContentBlock:
    block_type: str
    data: str


@dataclass
class TextContent(ContentBlock):
    block_type: str = field(default="text", kw_only=True)
    data: str = ""


@dataclass
class ImageContent(ContentBlock):
    block_type: str = field(default="image", kw_only=True)
    data: str = ""  # base64


@dataclass
class AudioContent(ContentBlock):
    block_type: str = field(default="audio", kw_only=True)
    data: str = ""  # base64


@dataclass
class ExecutionResult:
    output_blocks: list[Any]
    meta_info: dict[str, Any] | None = None
    is_streaming: bool = False
    is_final: bool = True
    is_log: bool = False
    was_interrupted: bool = False
    result_id: str = field(default_factory=lambda: uuid.uuid4().hex)

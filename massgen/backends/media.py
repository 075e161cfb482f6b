"""Each wire's content part for an `Attachment` (media on a user message).

Only the kinds a wire lists in `Wire.media` reach it (`registry.check` refuses the rest at
load), so a kind a builder does not know is a bug, not user input.
"""

from __future__ import annotations

import base64
from typing import Any

from massgen.core.types import Attachment

# Chat Completions' `input_audio.format` for each audio MIME type we send.
_AUDIO_FORMATS = {"audio/wav": "wav", "audio/mpeg": "mp3"}


def encoded(attachment: Attachment) -> str:
    return base64.b64encode(attachment.data).decode("ascii")


def data_url(attachment: Attachment) -> str:
    return f"data:{attachment.mime_type};base64,{encoded(attachment)}"


def chat_part(attachment: Attachment) -> dict[str, Any]:
    """Chat Completions: an `image_url` part (a data URL) or an `input_audio` part."""
    if attachment.kind == "image":
        return {"type": "image_url", "image_url": {"url": data_url(attachment)}}
    if attachment.kind == "audio":
        audio = {"data": encoded(attachment), "format": _AUDIO_FORMATS[attachment.mime_type]}
        return {"type": "input_audio", "input_audio": audio}
    raise ValueError(f"Chat Completions sends no {attachment.kind}")


def responses_part(attachment: Attachment) -> dict[str, Any]:
    """Responses: an `input_image` part (a data URL)."""
    if attachment.kind != "image":
        raise ValueError(f"Responses sends no {attachment.kind}")
    return {"type": "input_image", "image_url": data_url(attachment), "detail": "auto"}


def anthropic_block(attachment: Attachment) -> dict[str, Any]:
    """Anthropic Messages: an `image` block with a base64 source."""
    if attachment.kind != "image":
        raise ValueError(f"Anthropic sends no {attachment.kind}")
    source = {"type": "base64", "media_type": attachment.mime_type, "data": encoded(attachment)}
    return {"type": "image", "source": source}

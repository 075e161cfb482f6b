"""Media content parts as each provider's API takes them, checked and decoded by the fakes.

Each function reads one request body, checks every media part against the shape the
provider documents (a malformed one raises `BadPart`, which the fake answers with a 400 as
the provider would) and returns the media it carries, in order:

- Chat Completions: `{"type": "image_url", "image_url": {"url": "data:<mime>;base64,..."}}`
  and `{"type": "input_audio", "input_audio": {"data": "<base64>", "format": "wav"|"mp3"}}`;
- Responses: `{"type": "input_image", "image_url": "data:...", "detail": "auto"|"low"|"high"}`;
- Anthropic: `{"type": "image", "source": {"type": "base64", "media_type", "data"}}`;
- Gemini: a part `{"inlineData": {"mimeType", "data": "<base64>"}}` (or snake_case);
- xAI (gRPC, as JSON): `content: [{"image_url": {"image_url": "data:...", "detail"}}]`.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass, field
from typing import Any

Json = dict[str, Any]

_DATA_URL = re.compile(r"^data:(?P<mime>[\w.+-]+/[\w.+-]+);base64,(?P<data>.*)$", re.DOTALL)
_ANTHROPIC_IMAGES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})


class BadPart(ValueError):
    """A content part the provider would refuse."""


@dataclass(frozen=True, slots=True)
class SeenMedia:
    """One media part a fake received: its kind, MIME type, decoded bytes and role."""

    kind: str
    mime_type: str
    data: bytes = field(repr=False)
    role: str = "user"


def _decode(text: Any, where: str) -> bytes:
    if not isinstance(text, str) or not text:
        raise BadPart(f"{where}: base64 data missing")
    try:
        return base64.b64decode(text, validate=True)
    except binascii.Error as error:
        raise BadPart(f"{where}: invalid base64 ({error})") from None


def _data_url(url: Any, where: str) -> tuple[str, bytes]:
    match = _DATA_URL.match(url) if isinstance(url, str) else None
    if match is None:
        raise BadPart(f"{where}: expected a data:<mime>;base64,<data> URL")
    return match["mime"], _decode(match["data"], where)


def _user_only(role: Any, where: str) -> None:
    if role != "user":
        raise BadPart(f"{where}: media is only allowed in user messages (got role {role!r})")


def chat_media(body: Json) -> list[SeenMedia]:
    seen = []
    for m, message in enumerate(body.get("messages") or []):
        content = message.get("content")
        if not isinstance(content, list):
            continue
        for p, part in enumerate(content):
            where = f"messages[{m}].content[{p}]"
            kind = part.get("type") if isinstance(part, dict) else None
            if kind == "text":
                if not isinstance(part.get("text"), str):
                    raise BadPart(f"{where}.text must be a string")
            elif kind == "image_url":
                _user_only(message.get("role"), where)
                image = part.get("image_url")
                if not isinstance(image, dict):
                    raise BadPart(f"{where}.image_url must be an object with `url`")
                mime, data = _data_url(image.get("url"), f"{where}.image_url.url")
                seen.append(SeenMedia("image", mime, data))
            elif kind == "input_audio":
                _user_only(message.get("role"), where)
                audio = part.get("input_audio") or {}
                if audio.get("format") not in ("wav", "mp3"):
                    raise BadPart(f"{where}.input_audio.format must be 'wav' or 'mp3'")
                mime = "audio/wav" if audio["format"] == "wav" else "audio/mpeg"
                seen.append(SeenMedia("audio", mime, _decode(audio.get("data"), where)))
            else:
                raise BadPart(f"{where}: unknown content part type {kind!r}")
    return seen


def responses_media(body: Json) -> list[SeenMedia]:
    items = body.get("input")
    seen = []
    for i, item in enumerate(items if isinstance(items, list) else []):
        content = item.get("content") if isinstance(item, dict) else None
        if not isinstance(content, list):
            continue
        for p, part in enumerate(content):
            where = f"input[{i}].content[{p}]"
            kind = part.get("type") if isinstance(part, dict) else None
            if kind in ("input_text", "output_text"):
                if not isinstance(part.get("text"), str):
                    raise BadPart(f"{where}.text must be a string")
            elif kind == "input_image":
                _user_only(item.get("role"), where)
                if part.get("detail") not in ("low", "high", "auto"):
                    raise BadPart(f"{where}.detail must be 'low', 'high' or 'auto'")
                mime, data = _data_url(part.get("image_url"), f"{where}.image_url")
                seen.append(SeenMedia("image", mime, data))
            elif kind not in ("refusal",):
                raise BadPart(f"{where}: unknown content part type {kind!r}")
    return seen


def anthropic_media(body: Json) -> list[SeenMedia]:
    seen = []
    for m, message in enumerate(body.get("messages") or []):
        content = message.get("content")
        for b, block in enumerate(content if isinstance(content, list) else []):
            if not isinstance(block, dict) or block.get("type") != "image":
                continue
            where = f"messages[{m}].content[{b}]"
            _user_only(message.get("role"), where)
            source = block.get("source") or {}
            if source.get("type") != "base64":
                raise BadPart(f"{where}.source.type must be 'base64'")
            if source.get("media_type") not in _ANTHROPIC_IMAGES:
                raise BadPart(
                    f"{where}.source.media_type must be one of {sorted(_ANTHROPIC_IMAGES)}"
                )
            data = _decode(source.get("data"), f"{where}.source.data")
            seen.append(SeenMedia("image", source["media_type"], data))
    return seen


def gemini_media(body: Json) -> list[SeenMedia]:
    seen = []
    for c, content in enumerate(body.get("contents") or []):
        for p, part in enumerate(content.get("parts") or []):
            blob = part.get("inlineData") or part.get("inline_data")
            if blob is None:
                continue
            where = f"contents[{c}].parts[{p}].inlineData"
            _user_only(content.get("role"), where)
            mime = blob.get("mimeType") or blob.get("mime_type")
            if not isinstance(mime, str) or "/" not in mime:
                raise BadPart(f"{where}.mimeType missing")
            kind = mime.split("/")[0]
            seen.append(SeenMedia(kind, mime, _decode(blob.get("data"), f"{where}.data")))
    return seen


_XAI_DETAIL = ("DETAIL_AUTO", "DETAIL_LOW", "DETAIL_HIGH")


def xai_media(body: Json) -> list[SeenMedia]:
    seen = []
    for m, message in enumerate(body.get("messages") or []):
        for c, content in enumerate(message.get("content") or []):
            image = content.get("image_url")
            if image is None:
                continue
            where = f"messages[{m}].content[{c}].image_url"
            if message.get("role") != "ROLE_USER":
                raise BadPart(f"{where}: images are only allowed in user messages")
            if image.get("detail") not in _XAI_DETAIL:
                raise BadPart(f"{where}.detail must be one of {', '.join(_XAI_DETAIL)}")
            mime, data = _data_url(image.get("image_url"), f"{where}.image_url")
            if mime not in ("image/png", "image/jpeg"):
                raise BadPart(f"{where}: xAI reads png and jpeg, not {mime}")
            seen.append(SeenMedia("image", mime, data))
    return seen

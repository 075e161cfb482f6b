"""Media calls through the official `openai` SDK: `images.generate` (base64 images),
`audio.speech` (streamed), Chat Completions with an `image_url` part (vision), and
`audio.transcriptions`. One client per call, closed after it."""

from __future__ import annotations

import base64
import contextlib
import os
from collections.abc import AsyncGenerator, AsyncIterator
from typing import TYPE_CHECKING, Any

from massgen.tools.media.plan import Provider

if TYPE_CHECKING:
    from openai import AsyncOpenAI

MAX_RETRIES = 2


class MediaFailed(Exception):
    """A media call that could not be made or did not succeed; the message is the model's."""


def api_key(provider: Provider) -> str:
    """The config's key, else the first of `key_env` that is set; a provider that names no
    key variable (a local server) gets a placeholder, as the SDK refuses none."""
    if provider.api_key:
        return provider.api_key
    found = next((os.environ[n] for n in provider.key_env if os.environ.get(n)), None)
    if found is not None:
        return found
    if not provider.key_env:
        return "EMPTY"
    raise MediaFailed(f"no API key for {provider.title}: set {provider.key_env[0]}")


@contextlib.asynccontextmanager
async def client(provider: Provider) -> AsyncIterator[AsyncOpenAI]:
    from openai import AsyncOpenAI, OpenAIError

    sdk = AsyncOpenAI(
        api_key=api_key(provider), base_url=provider.base_url, max_retries=MAX_RETRIES
    )
    try:
        yield sdk
    except OpenAIError as error:  # the SDK's message, without our traceback
        raise MediaFailed(f"{provider.title} ({provider.model}): {error}") from None
    finally:
        await sdk.close()


async def image(provider: Provider, prompt: str, size: str | None, limit: int) -> bytes:
    options: dict[str, Any] = {"size": size} if size else {}
    if provider.model.startswith("dall-e"):
        options["response_format"] = "b64_json"  # gpt-image models always return base64
    async with client(provider) as sdk:
        result = await sdk.images.generate(model=provider.model, prompt=prompt, n=1, **options)
    encoded = result.data[0].b64_json if result.data else None
    if not encoded:
        raise MediaFailed(f"{provider.model} returned no image")
    if len(encoded) * 3 // 4 > limit:  # refused before decoding
        raise MediaFailed(f"the image is larger than max_media_bytes ({limit})")
    return base64.b64decode(encoded)


async def speech(
    provider: Provider, text: str, voice: str, instructions: str | None
) -> AsyncGenerator[bytes]:
    options: dict[str, Any] = {"instructions": instructions} if instructions else {}
    async with (
        client(provider) as sdk,
        sdk.audio.speech.with_streaming_response.create(
            model=provider.model, voice=voice, input=text, response_format="mp3", **options
        ) as response,
    ):
        async for chunk in response.iter_bytes():
            yield chunk


async def describe(provider: Provider, data: bytes, mime: str, prompt: str) -> str:
    """An image, as an `image_url` part with a data URL, and the prompt, to a vision model."""
    url = f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"
    content: list[Any] = [
        {"type": "text", "text": prompt},
        {"type": "image_url", "image_url": {"url": url}},
    ]
    message: Any = {"role": "user", "content": content}
    async with client(provider) as sdk:
        reply = await sdk.chat.completions.create(model=provider.model, messages=[message])
    text = reply.choices[0].message.content if reply.choices else None
    if not text:
        raise MediaFailed(f"{provider.model} returned no text")
    return text


async def transcribe(provider: Provider, name: str, data: bytes) -> str:
    async with client(provider) as sdk:
        result = await sdk.audio.transcriptions.create(model=provider.model, file=(name, data))
    return result.text or "(no speech)"

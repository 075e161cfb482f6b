"""Media calls through the official `google-genai` SDK (the Gemini Developer API):
images from Gemini's image models (`generate_content`, image parts back), videos from
Veo (`generate_videos`, a long-running operation polled until done, then the file
downloaded), and understanding of an image, audio or video sent inline with a prompt."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from massgen.tools.media_openai import MediaFailed, api_key
from massgen.tools.media_plan import Provider

if TYPE_CHECKING:
    from google.genai.client import AsyncClient

POLL_SECONDS = 5.0
ATTEMPTS = 2


@contextlib.asynccontextmanager
async def client(provider: Provider) -> AsyncIterator[AsyncClient]:
    from google import genai
    from google.genai import errors
    from google.genai import types as gt

    # base_url None: the SDK's default (or GOOGLE_GEMINI_BASE_URL).
    retries = gt.HttpRetryOptions(attempts=ATTEMPTS)
    options = gt.HttpOptions(base_url=provider.base_url, retry_options=retries)
    sdk = genai.Client(api_key=api_key(provider), vertexai=False, http_options=options).aio
    try:
        yield sdk
    except errors.APIError as error:  # the SDK's message, without our traceback
        raise MediaFailed(f"{provider.title} ({provider.model}): {error}") from None
    finally:
        await sdk.aclose()


async def image(provider: Provider, prompt: str, limit: int) -> bytes:
    from google.genai import types as gt

    config = gt.GenerateContentConfig(response_modalities=["IMAGE"])
    async with client(provider) as sdk:
        reply = await sdk.models.generate_content(
            model=provider.model, contents=prompt, config=config
        )
    for part in reply.parts or ():
        if part.inline_data is not None and part.inline_data.data:
            return _bounded(part.inline_data.data, limit)
    raise MediaFailed(f"{provider.model} returned no image ({reply.text or 'no text'})")


async def video(
    provider: Provider, prompt: str, options: dict[str, Any], limit: int, timeout: float
) -> bytes:
    """Polls at most until `timeout`; the call's own bound cancels it there too."""
    from google.genai import types as gt

    config = gt.GenerateVideosConfig(number_of_videos=1, **options)
    async with client(provider) as sdk:
        operation = await sdk.models.generate_videos(
            model=provider.model, prompt=prompt, config=config
        )
        for _ in range(max(1, int(timeout / POLL_SECONDS))):
            if operation.done:
                break
            await asyncio.sleep(POLL_SECONDS)
            operation = await sdk.operations.get(operation)
        if not operation.done:
            raise MediaFailed(f"the video was not ready within {timeout:g}s")
        if operation.error:
            raise MediaFailed(f"the video was not made: {operation.error.get('message')}")
        made = operation.response.generated_videos if operation.response else None
        clip = made[0].video if made else None
        if clip is None:
            raise MediaFailed(f"{provider.model} returned no video (filtered?)")
        data = clip.video_bytes or await sdk.files.download(file=clip)
    return _bounded(data, limit)


async def describe(provider: Provider, data: bytes, mime: str, prompt: str) -> str:
    """The file inline (`inline_data`), then the prompt, to a Gemini model."""
    from google.genai import types as gt

    contents: Any = [gt.Part.from_bytes(data=data, mime_type=mime), prompt]
    async with client(provider) as sdk:
        reply = await sdk.models.generate_content(model=provider.model, contents=contents)
    if not reply.text:
        raise MediaFailed(f"{provider.model} returned no text")
    return reply.text


def _bounded(data: bytes, limit: int) -> bytes:
    if len(data) > limit:
        raise MediaFailed(f"the file is larger than max_media_bytes ({limit})")
    return data

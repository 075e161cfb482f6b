"""Media calls through the official `google-genai` SDK (the Gemini Developer API): images
from Gemini's image models (`generate_content`, image parts back), and understanding of
an image, audio or video sent inline with a prompt. (The SDK's `generate_videos`, Veo, is
for Vertex AI only; massgen does not configure Vertex, so it makes no videos.)"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from massgen.tools.media.openai_calls import MediaFailed, api_key
from massgen.tools.media.plan import Provider

if TYPE_CHECKING:
    from google.genai.client import AsyncClient

ATTEMPTS = 2


@contextlib.asynccontextmanager
async def client(provider: Provider) -> AsyncIterator[AsyncClient]:
    import httpx2  # the transport google-genai itself depends on
    from google import genai
    from google.genai import errors
    from google.genai import types as gt

    from massgen.backends import tls

    key = api_key(provider)
    transport = httpx2.AsyncClient(verify=tls.context(), timeout=None)  # the tool's bound
    # base_url None: the SDK's default (or GOOGLE_GEMINI_BASE_URL).
    options = gt.HttpOptions(
        base_url=provider.base_url,
        retry_options=gt.HttpRetryOptions(attempts=ATTEMPTS),
        httpx_async_client=transport,
    )
    sdk = genai.Client(api_key=key, vertexai=False, http_options=options).aio
    try:
        yield sdk
    except errors.APIError as error:  # the SDK's message, without our traceback
        raise MediaFailed(f"{provider.title} ({provider.model}): {error}") from None
    finally:
        await sdk.aclose()
        await transport.aclose()


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

"""OpenAI file search's provider side: files uploaded into one vector store, and removed.

    store = await open_store(client, [Upload("report.pdf", path)], name="massgen-run-a")
    ... requests carry {"type": "file_search", "vector_store_ids": [store.id]} ...
    await close_store(client, store)

`client` is an `openai.AsyncOpenAI` (or `AsyncAzureOpenAI`); this module imports no SDK.
Files go up with `files.create(purpose="assistants")`, join the store in one file batch,
and the batch is polled until it is processed, within `Limits.index_seconds`. A store
that failed part way is removed before the error goes up, so nothing is left behind.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from massgen.log import logger

# A store left behind (the process killed before cleanup) expires after a day unused;
# storage is billed by the day.
_EXPIRY = {"anchor": "last_active_at", "days": 1}
# Polling a batch: the first wait, how it grows, the longest one.
_FIRST_POLL, _POLL_GROWTH, _LONGEST_POLL = 0.2, 1.5, 2.0


@dataclass(frozen=True, slots=True)
class Upload:
    """A file to send: the name the provider keeps (and cites), and where its bytes are."""

    name: str
    path: Path


@dataclass(frozen=True, slots=True)
class FileStore:
    """A vector store and the files uploaded into it, for `close_store`."""

    id: str
    file_ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Limits:
    index_seconds: float = 300.0  # uploaded files processed into the store within this
    cleanup_seconds: float = 30.0  # the whole of `close_store`


class IndexingFailed(Exception):
    """The provider did not process the files into the store (failed, or past the deadline)."""


async def open_store(
    client: Any, uploads: Sequence[Upload], *, name: str, limits: Limits = Limits()
) -> FileStore:
    """Upload `uploads` into a new vector store named `name`, processed and ready.

    Raises:
        IndexingFailed: a file was not processed, or processing took too long.
        The SDK's errors, as they come (the caller maps them).
    """
    file_ids: list[str] = []
    store_id: str | None = None
    try:
        for upload in uploads:
            with upload.path.open("rb") as handle:
                sent = await client.files.create(file=(upload.name, handle), purpose="assistants")
            file_ids.append(sent.id)
        store = await client.vector_stores.create(name=name, expires_after=_EXPIRY)
        store_id = store.id
        await _index(client, store_id, file_ids, limits.index_seconds)
    except BaseException:
        partial = FileStore(store_id or "", tuple(file_ids))
        await asyncio.shield(close_store(client, partial, limits))
        raise
    return FileStore(store_id, tuple(file_ids))


async def _index(client: Any, store_id: str, file_ids: list[str], seconds: float) -> None:
    batch = await client.vector_stores.file_batches.create(store_id, file_ids=file_ids)
    wait = _FIRST_POLL
    try:
        async with asyncio.timeout(seconds):
            while batch.status == "in_progress":
                await asyncio.sleep(wait)
                wait = min(wait * _POLL_GROWTH, _LONGEST_POLL)
                batch = await client.vector_stores.file_batches.retrieve(
                    batch.id, vector_store_id=store_id
                )
    except TimeoutError:
        raise IndexingFailed(f"the files were not processed within {seconds:g} s") from None
    counts = batch.file_counts
    if batch.status != "completed" or counts.failed or counts.cancelled:
        raise IndexingFailed(
            f"processing the files ended {batch.status}: {counts.completed} of "
            f"{counts.total} processed, {counts.failed} failed"
        )


async def close_store(client: Any, store: FileStore, limits: Limits = Limits()) -> list[str]:
    """Delete the store and its files, best effort, within `limits.cleanup_seconds`.
    Returns the ids left on the provider (it keeps them until someone deletes them)."""
    names = [store.id] * bool(store.id) + list(store.file_ids)
    if not names:
        return []
    deletions = [client.files.delete(file_id) for file_id in store.file_ids]
    if store.id:
        deletions.insert(0, client.vector_stores.delete(store.id))
    try:
        async with asyncio.timeout(limits.cleanup_seconds):
            results = await asyncio.gather(*deletions, return_exceptions=True)
    except TimeoutError:
        logger.warning(f"file search cleanup timed out; left on the provider: {names}")
        return names
    left = [name for name, result in zip(names, results, strict=True) if _failed(result)]
    for name, result in zip(names, results, strict=True):
        if _failed(result):
            logger.warning(f"file search cleanup: could not delete {name}: {result}")
    return left


def _failed(result: object) -> bool:
    return isinstance(result, BaseException) or getattr(result, "deleted", True) is False

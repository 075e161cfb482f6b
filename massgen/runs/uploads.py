"""`upload_files`: each agent's documents on its provider for the length of one run.

    async with open_uploads(config, members, engine=engine, name="run-1") as members:
        ...  # every request of those members carries `file_search` over their store

For each agent with `upload_files`, all agents at once: the permission engine decides a
read of each local file, URLs are downloaded (bounded), the files go into one vector
store on the agent's provider (`backends/file_search.py`, the backend's `FileSearchHost`), and
the member gets the hosted `file_search` over that store, in coordination and the final
presentation alike. When the block ends, Ctrl-C included, the stores and their files are
deleted (bounded); any left behind are named in a warning.

The permission engine sees each file as a `Read`, with the file as a managed path for
that one decision (the config names it, as a context path is named): deny rules and the
secrets rule refuse it, and the audit ledger records it. The connection to the provider
is no effect of its own: it is the backend's endpoint, which every request of this agent
reaches with the conversation already, and the engine governs what the agents' tool
calls reach, not where the configured model lives. A URL is downloaded because the
config says so, as a hosted tool runs because its key says so.

Media entries (`image_path`, `audio_path`, `video_path`) are no file search: they are
read here too, first, and ride on the members' user messages (`runs/media.py`).
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import sys
import tempfile
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from massgen.backends.base import FileSearchHost
from massgen.backends.file_search import FileStore, IndexingFailed, Limits, Upload
from massgen.config.schema import AgentConfig, MassgenConfig
from massgen.config.uploads import MAX_FILE_BYTES, UploadFile, documents
from massgen.core.errors import BackendError, ConfigError

if TYPE_CHECKING:
    from massgen.coordination.agent import Member
    from massgen.permissions.engine import Engine

# A URL's download: the whole of it, and the redirects followed.
DOWNLOAD_SECONDS = 120.0
MAX_REDIRECTS = 5
LIMITS = Limits()
_NAME = re.compile(r"[^A-Za-z0-9._-]+")


def warn_stderr(message: str) -> None:
    print(f"massgen: warning: {message}", file=sys.stderr)


@contextlib.asynccontextmanager
async def open_uploads(
    config: MassgenConfig,
    members: Sequence[Member],
    *,
    engine: Engine | None,
    name: str,
    source: str | None = None,
    single: bool = False,
    limits: Limits = LIMITS,
    warn: Callable[[str], None] = warn_stderr,
) -> AsyncIterator[list[Member]]:
    """`members`, those whose agent has `upload_files` given `file_search` over their
    uploaded files; the uploads are deleted when the block ends.

    Raises:
        ConfigError: a file the engine refuses, a URL that cannot be fetched, or an upload
            the provider refuses or does not process in time (naming the key path).
    """
    from massgen.runs.media import attach_media  # media entries ride on the user message

    members = await attach_media(config, members, engine=engine, source=source, single=single)
    if not any(documents(agent.backend.upload_files) for agent in config.agents):
        yield list(members)
        return
    positions = {agent.id: index for index, agent in enumerate(config.agents)}
    async with contextlib.AsyncExitStack() as stack:
        stores: dict[str, FileStore] = {}

        async def upload(member: Member, index: int) -> None:
            agent = config.agents[index]
            at = ("agent" if single else f"agents[{index}]") + ".backend.upload_files"
            store = await _upload(
                member, agent, engine, f"{name}-{agent.id}", limits, _Where(source, at)
            )
            stack.push_async_callback(_close, member, store, limits, warn)  # no await between
            stores[member.id] = store

        try:
            async with asyncio.TaskGroup() as group:  # agents upload at once
                for member in members:
                    if documents(config.agents[positions[member.id]].backend.upload_files):
                        group.create_task(upload(member, positions[member.id]))
        except* ConfigError as failed:
            raise failed.exceptions[0] from None
        yield [_searching(m, stores[m.id]) if m.id in stores else m for m in members]


def _searching(member: Member, store: FileStore) -> Member:
    """`member` with the hosted `file_search` over `store` in every request."""
    return replace(
        member, hosted=(*member.hosted, "file_search"), file_stores=(*member.file_stores, store.id)
    )


class _Where:
    """Where an upload's errors point: the config file and `upload_files`' key path."""

    def __init__(self, source: str | None, at: str) -> None:
        self.source, self.at = source, at

    def error(self, message: str, index: int | None = None, fix: str | None = None) -> ConfigError:
        path = self.at if index is None else f"{self.at}[{index}].file_path"
        return ConfigError(message, file=self.source, path=path, fix=fix)


async def _upload(
    member: Member,
    agent: AgentConfig,
    engine: Engine | None,
    name: str,
    limits: Limits,
    where: _Where,
) -> FileStore:
    backend = member.backend
    if not isinstance(backend, FileSearchHost):  # `registry.check` lets no other through
        raise where.error(f"backend {backend.name} cannot upload files for file search")
    files = documents(agent.backend.upload_files)  # with their indexes in upload_files
    own = agent.backend.permissions
    if own is not None and not own.enabled:  # this agent's block turns the engine off
        engine = None
    for index, upload in files:
        if not upload.is_url:
            await _permit(engine, agent.id, index, Path(upload.file_path), where)
    with tempfile.TemporaryDirectory(prefix="massgen-upload-") as scratch:
        sends = [await _local(f, i, Path(scratch), where) for i, f in files]
        try:
            return await backend.open_file_store(sends, name=_NAME.sub("-", name), limits=limits)
        except (BackendError, IndexingFailed, OSError) as error:  # OSError: a file went away
            raise where.error(
                f"uploading the files to {backend.name} failed ({error})",
                fix="Check the files and the API key, or remove upload_files",
            ) from None


async def _permit(engine: Engine | None, agent: str, index: int, path: Path, where: _Where) -> None:
    """The engine's decision on reading `path` to send it; a refusal is a ConfigError."""
    from massgen.runs.media import permit_read

    refused = await permit_read(engine, agent, f"upload_files[{index}]", path)
    if refused is not None:
        raise where.error(
            f"the permission engine refused to upload `{path}`: {refused}",
            index,
            fix="Remove the entry, or change the rule that refuses it",
        )


async def _local(upload: UploadFile, index: int, scratch: Path, where: _Where) -> Upload:
    """The file to send for `upload`: its own path, or a URL downloaded into `scratch`."""
    if not upload.is_url:
        return Upload(upload.name, Path(upload.file_path))
    into = scratch / f"{index}-{upload.name}"
    try:
        await download(upload.file_path, into)
    except (OSError, ValueError) as error:
        raise where.error(
            f"cannot download `{upload.file_path}` ({error})",
            index,
            fix="Check the URL, or download the file and give its path",
        ) from None
    return Upload(upload.name, into)


async def download(url: str, into: Path, *, limit: int = MAX_FILE_BYTES) -> None:
    """`url` into the file `into`, at most `limit` bytes.

    Raises:
        OSError: the server could not be reached, answered an error, or too slowly.
        ValueError: the file is larger than `limit`.
    """
    import httpx2  # the openai SDK's HTTP client

    from massgen.backends import tls

    client = httpx2.AsyncClient(
        verify=tls.context(), follow_redirects=True, max_redirects=MAX_REDIRECTS, timeout=30.0
    )
    try:
        async with client, asyncio.timeout(DOWNLOAD_SECONDS), client.stream("GET", url) as got:
            if got.status_code >= 400:
                raise OSError(f"HTTP {got.status_code}")
            await _save(got, into, limit)
    except TimeoutError:
        raise OSError(f"not downloaded within {DOWNLOAD_SECONDS:g} s") from None
    except httpx2.HTTPError as error:  # connect, protocol, read, too many redirects
        raise OSError(f"{type(error).__name__}: {error}") from None


async def _save(response: Any, into: Path, limit: int) -> None:
    size = 0
    with into.open("wb") as out:
        async for chunk in response.aiter_bytes():
            size += len(chunk)
            if size > limit:
                raise ValueError(f"larger than {limit // 2**20} MB")
            out.write(chunk)


async def _close(
    member: Member, store: FileStore, limits: Limits, warn: Callable[[str], None]
) -> None:
    backend = member.backend
    assert isinstance(backend, FileSearchHost)
    left = await backend.close_file_store(store, limits)
    if left:
        warn(
            f"agent {member.id}: could not delete {', '.join(left)} from {backend.name}; "
            "delete them in the provider's dashboard"
        )

"""`upload_files` media entries: images, audio and video each agent's model reads.

    members = await attach_media(config, members, engine=engine)

For each agent whose `upload_files` has `image_path`, `audio_path` or `video_path`
entries, at run start: the permission engine decides a read of each local file (as for
file search, `runs/uploads.py`), URLs are downloaded, each file is read (at most
`MAX_MEDIA_BYTES`) and the member carries them as `Attachment`s on the task's user message
of every request it makes, in coordination, evaluation and the final presentation alike.
Each wire sends them as its provider's own content part; `registry.check` has refused, at
load, a kind the wire cannot send.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from massgen.config.schema import AgentConfig, MassgenConfig
from massgen.config.uploads import MAX_MEDIA_BYTES, MediaFile, media
from massgen.core.errors import ConfigError
from massgen.core.types import Attachment

if TYPE_CHECKING:
    from massgen.coordination.agent import Member
    from massgen.permissions.engine import Engine


async def attach_media(
    config: MassgenConfig,
    members: Sequence[Member],
    *,
    engine: Engine | None,
    source: str | None = None,
    single: bool = False,
) -> list[Member]:
    """`members`, each whose agent has media entries carrying them as attachments.

    Raises:
        ConfigError: a file the engine refuses, one that cannot be read or downloaded, or
            one larger than `MAX_MEDIA_BYTES`, naming the entry's key path.
    """
    positions = {agent.id: index for index, agent in enumerate(config.agents)}
    out: list[Member] = []
    for member in members:
        index = positions.get(member.id)
        agent = config.agents[index] if index is not None else None
        if agent is None or not media(agent.backend.upload_files):
            out.append(member)
            continue
        at = ("agent" if single else f"agents[{index}]") + ".backend.upload_files"
        attachments = await _read_all(agent, engine, source, at)
        out.append(replace(member, attachments=(*member.attachments, *attachments)))
    return out


async def _read_all(
    agent: AgentConfig, engine: Engine | None, source: str | None, at: str
) -> list[Attachment]:
    own = agent.backend.permissions
    if own is not None and not own.enabled:  # this agent's block turns the engine off
        engine = None
    attachments = []
    for index, entry in media(agent.backend.upload_files):
        where = f"{at}[{index}].{entry.key}"
        try:
            data = await _bytes(entry, engine, agent.id, index)
        except (OSError, ValueError, PermissionError) as error:
            raise ConfigError(
                f"cannot attach `{entry.path}` ({error})",
                file=source,
                path=where,
                fix="Check the file (or URL) and the permission rules, or remove the entry",
            ) from None
        attachments.append(Attachment(entry.kind, entry.mime_type, data, entry.name))
    return attachments


async def _bytes(entry: MediaFile, engine: Engine | None, agent: str, index: int) -> bytes:
    """The file's bytes, at most `MAX_MEDIA_BYTES`: downloaded for a URL, else read once
    the engine allows it.

    Raises:
        PermissionError: the engine refused the read.
        OSError, ValueError: it could not be read or downloaded, or is too large.
    """
    if entry.is_url:
        from massgen.runs.uploads import download  # the same bounded downloader as file search

        with tempfile.TemporaryDirectory(prefix="massgen-media-") as scratch:
            into = Path(scratch) / "download"
            await download(entry.path, into, limit=MAX_MEDIA_BYTES)
            return await asyncio.to_thread(_read_bounded, into)
    path = Path(entry.path)
    refused = await permit_read(engine, agent, f"upload_files[{index}]", path)
    if refused is not None:
        raise PermissionError(f"the permission engine refused to read it: {refused}")
    return await asyncio.to_thread(_read_bounded, path)


def _read_bounded(path: Path) -> bytes:
    with path.open("rb") as file:
        data = file.read(MAX_MEDIA_BYTES + 1)
    if len(data) > MAX_MEDIA_BYTES:
        raise ValueError(f"larger than {MAX_MEDIA_BYTES // 2**20} MB")
    return data


async def permit_read(engine: Engine | None, agent: str, call_id: str, path: Path) -> str | None:
    """Why the engine refuses reading `path` to send it to the agent's provider, or None
    when it allows it. The file is a managed path for this one decision (the config names
    it, as a context path is named); deny rules and the secrets rule still refuse it."""
    if engine is None:  # the config turned the engine off (said loudly when it was built)
        return None
    from massgen.core.effects import Read
    from massgen.permissions.engine import Call
    from massgen.permissions.risk import Zones

    call = Call(
        agent=agent,
        tool="upload_files",
        effects=(Read(path),),
        zones=Zones(readable=(path.resolve(),)),
        call_id=call_id,
        arguments=str(path),
    )
    decision = await engine.decide(call)
    return None if decision.allowed else decision.reason

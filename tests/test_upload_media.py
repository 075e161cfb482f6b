"""`upload_files` media entries (`image_path`, `audio_path`, `video_path`) end to end: read
at run start through the permission engine and sent, through each provider's real SDK to
its loopback fake, as that provider's own content part on the task's user message of every
request. Kinds a provider cannot take, missing or oversized files, and files the engine
refuses are one-line config errors naming the entry's key path."""

from __future__ import annotations

import base64
import os
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml
from local_site import serving

import massgen
from massgen.api import TeamRun, load
from massgen.config.uploads import MAX_MEDIA_BYTES
from massgen.core.errors import ConfigError
from massgen.testing import fake_gemini, fake_xai
from massgen.testing.fake_anthropic import FakeAnthropic
from massgen.testing.fake_gemini import FakeGemini
from massgen.testing.fake_openai_responses import FakeResponses
from massgen.testing.fake_provider import FakeProvider
from massgen.testing.fake_xai import FakeXai
from massgen.testing.media import BadPart, SeenMedia, chat_media
from massgen.testing.policy import Reply, cooperative_agent

QUESTION = "Please summarize the content in this image."
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00fake-png" * 10
WAV = b"RIFF\x24\x00\x00\x00WAVEfmt " + b"\x00" * 20
MP4 = b"\x00\x00\x00\x18ftypmp42" + b"\x00" * 16
B64 = base64.b64encode(PNG).decode()

# Backend type -> (model, fake server, the policy its requests suit).
PROVIDERS: dict[str, tuple[str, Any, Callable[[dict], Reply]]] = {
    "openai": ("gpt-5-nano", FakeResponses, cooperative_agent),
    "claude": ("claude-sonnet-4-6", FakeAnthropic, cooperative_agent),
    "gemini": ("gemini-2.5-flash", FakeGemini, fake_gemini.cooperative_agent),
    "openrouter": ("google/gemini-2.5-flash", FakeProvider, cooperative_agent),
    "grok": ("grok-4", FakeXai, fake_xai.cooperative_agent),
}


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "chart.png").write_bytes(PNG)
    (tmp_path / "call.wav").write_bytes(WAV)
    (tmp_path / "demo.mp4").write_bytes(MP4)
    return tmp_path


def spec(kind: str, fake: Any) -> dict[str, Any]:
    return {"type": kind, "model": PROVIDERS[kind][0], "base_url": fake.base_url, "api_key": "k"}


@contextmanager
def team(kinds: tuple[str, ...], entries: list[dict[str, str]]) -> Iterator[tuple[dict, dict]]:
    """One agent per backend type, each on its own fake, each with `entries`."""
    with ExitStack() as stack:
        fakes = {k: stack.enter_context(PROVIDERS[k][1](PROVIDERS[k][2])) for k in kinds}
        agents = [
            {"id": k, "backend": {**spec(k, fake), "upload_files": entries}}
            for k, fake in fakes.items()
        ]
        yield {"agents": agents, "orchestrator": {"seed": 3}}, fakes


def first_user(kind: str, body: dict) -> Any:
    """The task's user message (or Gemini content) as the provider received it."""
    if kind == "openai":
        return next(i for i in body["input"] if i.get("role") == "user")
    if kind == "gemini":
        return next(c for c in body["contents"] if c.get("role") == "user")
    if kind == "grok":
        return next(m for m in body["messages"] if m["role"] == "ROLE_USER")
    return next(m for m in body["messages"] if m["role"] == "user")


# --- a team whose every request carries the image ----------------------------------------


async def test_every_request_of_a_mixed_team_carries_the_image_in_its_providers_shape(workdir):
    with team(tuple(PROVIDERS), [{"image_path": "chart.png"}]) as (config, fakes):
        result = await massgen.arun(QUESTION, config, logs=False)
        assert result.ok, result
        for kind, fake in fakes.items():
            assert len(fake.requests) >= 2, kind  # coordination and more
            for seen in fake.media:  # every request, the final presentation included
                assert seen == [SeenMedia("image", "image/png", PNG)], kind
        shapes = {kind: first_user(kind, fake.requests[0]) for kind, fake in fakes.items()}

    text = shapes["openrouter"]["content"][0]
    assert text["type"] == "text" and QUESTION in text["text"]
    assert shapes["openrouter"]["content"][1:] == [
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{B64}"}}
    ]
    openai = shapes["openai"]["content"]
    assert openai[0]["type"] == "input_text" and QUESTION in openai[0]["text"]
    assert openai[1:] == [
        {"type": "input_image", "image_url": f"data:image/png;base64,{B64}", "detail": "auto"}
    ]
    claude = shapes["claude"]["content"]
    assert claude[0]["type"] == "text" and QUESTION in claude[0]["text"]
    assert claude[1] == {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": B64},
    }
    gemini = shapes["gemini"]["parts"]
    assert QUESTION in gemini[0]["text"]
    blob = gemini[1].get("inlineData") or gemini[1]["inline_data"]
    assert (blob.get("mimeType") or blob["mime_type"]) == "image/png" and blob["data"] == B64
    grok = shapes["grok"]["content"]
    assert QUESTION in grok[0]["text"]
    assert grok[1:] == [
        {"image_url": {"image_url": f"data:image/png;base64,{B64}", "detail": "DETAIL_AUTO"}}
    ]


async def test_chat_completions_sends_audio_as_input_audio(workdir):
    entries = [{"image_path": "chart.png"}, {"audio_path": "call.wav"}]
    with team(("openrouter",), entries) as (config, fakes):
        assert (await massgen.arun(QUESTION, config, logs=False)).ok
        body = fakes["openrouter"].requests[0]
    parts = first_user("openrouter", body)["content"]
    assert [p["type"] for p in parts] == ["text", "image_url", "input_audio"]
    assert parts[2] == {
        "type": "input_audio",
        "input_audio": {"data": base64.b64encode(WAV).decode(), "format": "wav"},
    }


async def test_gemini_takes_image_audio_and_video_inline(workdir):
    entries = [{"image_path": "chart.png"}, {"audio_path": "call.wav"}, {"video_path": "demo.mp4"}]
    with team(("gemini",), entries) as (config, fakes):
        assert (await massgen.arun(QUESTION, config, logs=False)).ok
        seen = fakes["gemini"].media[0]
    assert seen == [
        SeenMedia("image", "image/png", PNG),
        SeenMedia("audio", "audio/wav", WAV),
        SeenMedia("video", "video/mp4", MP4),
    ]


async def test_an_agent_without_media_sends_plain_text(workdir):
    with team(("openrouter",), []) as (config, fakes):
        assert (await massgen.arun(QUESTION, config, logs=False)).ok
        body = fakes["openrouter"].requests[0]
    assert isinstance(first_user("openrouter", body)["content"], str)


async def test_the_permission_engine_decides_each_read_and_records_it(workdir):
    with team(("openrouter",), [{"image_path": "chart.png"}]) as (config, _):
        assert (await massgen.arun(QUESTION, config)).ok
    ledger = next(workdir.glob(".massgen/massgen_logs/*/turn_1/permissions.jsonl"), None)
    assert ledger is not None
    text = ledger.read_text()
    assert "upload_files" in text and str(workdir / "chart.png") in text


async def test_an_image_a_deny_rule_covers_is_never_sent(workdir):
    (workdir / "secrets").mkdir()
    (workdir / "secrets" / "scan.png").write_bytes(PNG)
    with team(("openrouter",), [{"image_path": "secrets/scan.png"}]) as (config, fakes):
        config["permissions"] = {"rules": {"deny": ["Read(./secrets/**)"]}}
        with pytest.raises(ConfigError) as raised:
            await massgen.arun(QUESTION, config, logs=False)
        assert fakes["openrouter"].requests == []
    assert raised.value.path == "agents[0].backend.upload_files[0].image_path"
    assert "refused" in raised.value.message and "Read(./secrets/**)" in raised.value.message


async def test_a_file_grown_past_the_bound_since_loading_is_not_sent(workdir):
    with team(("openrouter",), [{"image_path": "chart.png"}]) as (config, fakes):
        loaded = load(config)
        with (workdir / "chart.png").open("r+b") as file:
            file.truncate(MAX_MEDIA_BYTES + 1)  # sparse: no disk used
        with pytest.raises(ConfigError) as raised:
            await TeamRun(loaded, QUESTION, logs=False).execute()
        assert fakes["openrouter"].requests == []
    assert raised.value.path == "agents[0].backend.upload_files[0].image_path"
    assert "larger than 64 MB" in raised.value.message


async def test_a_media_url_is_downloaded_and_sent(workdir, tmp_path_factory):
    site = tmp_path_factory.mktemp("site")
    (site / "alloy.wav").write_bytes(WAV)
    with (
        serving(site) as origin,
        team(("openrouter",), [{"audio_path": f"{origin}/alloy.wav"}]) as (
            config,
            fakes,
        ),
    ):
        assert (await massgen.arun(QUESTION, config, logs=False)).ok
        assert fakes["openrouter"].media[0] == [SeenMedia("audio", "audio/wav", WAV)]


async def test_a_media_url_that_cannot_be_fetched_is_a_config_error(workdir, tmp_path_factory):
    site = tmp_path_factory.mktemp("empty")
    with (
        serving(site) as origin,
        team(("openrouter",), [{"image_path": f"{origin}/gone.png"}]) as (config, _),
        pytest.raises(ConfigError) as raised,
    ):
        await massgen.arun(QUESTION, config, logs=False)
    assert raised.value.path == "agents[0].backend.upload_files[0].image_path"
    assert "HTTP 404" in raised.value.message


# --- refused at load -------------------------------------------------------------------


def write(tmp_path: Path, backend: dict[str, Any]) -> Path:
    path = tmp_path / "team.yaml"
    path.write_text(yaml.safe_dump({"agents": [{"id": "a", "backend": backend}]}))
    return path


CHAT = {"type": "chatcompletion", "model": "m", "base_url": "http://x.example/v1"}


@pytest.mark.parametrize(
    ("backend", "entry", "words"),
    [
        (
            {"type": "openai", "model": "gpt-5-nano"},
            {"audio_path": "call.wav"},
            "cannot send audio",
        ),
        ({"type": "claude"}, {"video_path": "demo.mp4"}, "use a backend type that takes video"),
        (CHAT, {"video_path": "demo.mp4"}, "takes audio, image"),
        ({"type": "grok", "model": "grok-4"}, {"audio_path": "call.wav"}, "(takes image)"),
    ],
)
def test_a_kind_the_provider_cannot_take_is_refused_naming_who_takes_it(
    workdir, backend, entry, words
):
    with pytest.raises(ConfigError) as raised:
        load(str(write(workdir, {**backend, "upload_files": [entry]})))
    key = next(iter(entry))
    assert raised.value.path == f"agents[0].backend.upload_files[0].{key}"
    assert words in str(raised.value)
    assert "gemini" in str(raised.value)  # Gemini takes every kind


def test_grok_refuses_an_image_type_xai_does_not_read(workdir):
    (workdir / "anim.gif").write_bytes(b"GIF89a")
    backend = {"type": "grok", "model": "grok-4", "upload_files": [{"image_path": "anim.gif"}]}
    with pytest.raises(ConfigError) as raised:
        load(str(write(workdir, backend)))
    assert raised.value.path == "agents[0].backend.upload_files[0].image_path"
    assert "reads only png and jpeg" in str(raised.value)


def test_the_local_backend_refuses_media_clearly(workdir):
    (workdir / "m.gguf").write_bytes(b"GGUF")
    backend = {"type": "local", "model": str(workdir / "m.gguf")}
    with pytest.raises(ConfigError) as raised:
        load(str(write(workdir, {**backend, "upload_files": [{"image_path": "chart.png"}]})))
    assert raised.value.path == "agents[0].backend.upload_files[0].image_path"
    assert "'local' cannot send image to its model (takes no media)" in str(raised.value)


@pytest.mark.parametrize(
    ("entry", "path", "words"),
    [
        ({"image_path": "missing.png"}, "upload_files[0].image_path", "does not exist"),
        ({"image_path": "call.wav"}, "upload_files[0].image_path", "not an image type"),
        ({"audio_path": "song.flac"}, "upload_files[0].audio_path", "Use one of .mp3, .wav"),
        ({"image_path": "a.png", "video_path": "b.mp4"}, "upload_files[0]", "one of image_path"),
        ({"image_path": "chart.png", "detail": "high"}, "upload_files[0]", "detail"),
    ],
)
def test_a_bad_media_entry_is_a_config_error_naming_its_key_path(workdir, entry, path, words):
    with pytest.raises(ConfigError) as raised:
        load(str(write(workdir, {"type": "gemini", "upload_files": [entry]})))
    assert (raised.value.path or "").startswith(f"agents[0].backend.{path}"), raised.value
    assert words in str(raised.value)


def test_a_file_over_the_bound_is_refused_at_load(workdir):
    with (workdir / "huge.mp4").open("wb") as file:
        file.truncate(MAX_MEDIA_BYTES + 1)  # sparse
    with pytest.raises(ConfigError) as raised:
        load(str(write(workdir, {"type": "gemini", "upload_files": [{"video_path": "huge.mp4"}]})))
    assert raised.value.path == "agents[0].backend.upload_files[0].video_path"
    assert "at most 64 MB" in str(raised.value)


def test_an_image_past_claudes_bound_is_refused_at_load_and_one_within_loads(workdir):
    """Anthropic takes an image of at most 5 MB of base64 (about 3.75 MB of file); the
    other providers' bounds are above massgen's own 64 MB or not documented."""
    for name, size in (("big.png", 4 * 2**20), ("fits.png", 3 * 2**20)):
        with (workdir / name).open("wb") as file:
            file.truncate(size)  # sparse
    with pytest.raises(ConfigError) as raised:
        load(str(write(workdir, {"type": "claude", "upload_files": [{"image_path": "big.png"}]})))
    assert raised.value.path == "agents[0].backend.upload_files[0].image_path"
    assert "big.png is 4.0 MB" in str(raised.value) and "at most 5 MB" in str(raised.value)
    load(str(write(workdir, {"type": "claude", "upload_files": [{"image_path": "fits.png"}]})))
    load(str(write(workdir, {"type": "gemini", "upload_files": [{"image_path": "big.png"}]})))


def test_media_entries_do_not_switch_on_file_search(workdir):
    config = load(
        str(write(workdir, {"type": "claude", "upload_files": [{"image_path": "chart.png"}]}))
    )
    backend = config.config.agents[0].backend
    assert backend.hosted_keys() == ()
    assert os.path.isabs(backend.upload_files[0].path)


def test_the_predecessor_image_understanding_config_validates(workdir):
    path = workdir / "img.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "agent": {
                    "id": "response_agent",
                    "backend": {
                        "type": "openai",
                        "model": "gpt-5-nano",
                        "upload_files": [{"image_path": "chart.png"}],
                    },
                    "system_message": "You are a helpful assistant",
                }
            }
        )
    )
    loaded = load(str(path))
    assert loaded.config.agents[0].backend.upload_files[0].kind == "image"


# --- the fakes check the shape ---------------------------------------------------------


@pytest.mark.parametrize(
    "part",
    [
        {"type": "image_url", "image_url": "data:image/png;base64,AAAA"},  # not an object
        {"type": "image_url", "image_url": {"url": "data:image/png,raw"}},  # not base64
        {"type": "input_audio", "input_audio": {"data": "AAAA", "format": "flac"}},
        {"type": "image", "source": {}},  # Anthropic's shape on the wrong wire
    ],
)
def test_the_chat_fake_refuses_parts_the_api_would(part):
    body = {"messages": [{"role": "user", "content": [{"type": "text", "text": "x"}, part]}]}
    with pytest.raises(BadPart):
        chat_media(body)


async def test_the_local_backend_refuses_a_request_with_media_before_generating():
    from types import SimpleNamespace

    from massgen.backends.local import LocalBackend
    from massgen.core.errors import BadRequest
    from massgen.core.types import Attachment, Message, Request

    backend = LocalBackend(SimpleNamespace(name="tiny"))  # type: ignore[arg-type]
    image = Attachment("image", "image/png", PNG, "chart.png")
    request = Request((Message("user", QUESTION, attachments=(image,)),))
    with pytest.raises(BadRequest, match="reads text only"):
        await anext(backend.stream(request))

"""Media tools (`tools/media/`): the real openai SDK against loopback fakes of the
images, speech and transcription endpoints (`testing/fake_openai_media.py`) and of Chat
Completions (`FakeProvider`, for vision)."""

from __future__ import annotations

import asyncio
import base64
import json
import os
from typing import Any

import pytest

from massgen.api import TeamRun
from massgen.config import config_from_dict
from massgen.config.schema import MassgenConfig
from massgen.core.effects import Read, Write
from massgen.core.errors import ConfigError
from massgen.core.toolbox import ToolContext
from massgen.core.types import ToolCall
from massgen.runs.loading import load
from massgen.runs.members import check
from massgen.testing import FakeProvider, Reply, cooperative_agent
from massgen.testing.fake_gemini_media import FakeGeminiMedia
from massgen.testing.fake_openai_media import FakeOpenAIMedia
from massgen.tools.media.plan import plan
from massgen.tools.media.toolbox import MediaToolbox

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4


def call(name: str, **arguments: Any) -> ToolCall:
    return ToolCall(id="c1", name=name, arguments=json.dumps(arguments))


def toolbox(raw: dict[str, Any], timeout: float = 10) -> MediaToolbox:
    config = config_from_dict(raw)
    return MediaToolbox(plan(config, config.agents[0], "agents[0]"), timeout)


def openai_agent(base_url: str, **backend: Any) -> dict[str, Any]:
    """One agent on OpenAI's own API (at `base_url`), with a workspace."""
    keys = {"type": "openai", "base_url": base_url, "api_key": "k", "cwd": "ws", **backend}
    return {"agents": [{"id": "a", "backend": keys}]}


# ---------------------------------------------------------------- a team generates


def illustrator(request: dict[str, Any]) -> Reply:
    """Generate an image before answering; then cooperate."""
    offered = {t["function"]["name"] for t in request.get("tools") or []}
    results = [m["content"] for m in request["messages"] if m["role"] == "tool"]
    if "new_answer" in offered and not results:
        return Reply(
            tool_calls=[("generate_media", {"prompt": "A red fox", "filename": "fox.png"})]
        )
    return cooperative_agent(request)


def media_team(base_url: str, **orchestrator: Any) -> dict[str, Any]:
    backend = {"type": "chatcompletion", "base_url": base_url, "api_key": "k"}
    agents = [
        {
            "id": i,
            "backend": {**backend, "model": i, "cwd": f"ws{n}", "enable_image_generation": True},
        }
        for n, i in enumerate(("alice", "bob"))
    ]
    settings = {"image_generation_backend": "openai", "max_new_answers_per_agent": 1}
    return {"agents": agents, "orchestrator": {**settings, **orchestrator}}


async def test_a_team_agent_generates_an_image_and_it_is_in_its_workspace(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with FakeOpenAIMedia(image=PNG) as images, FakeProvider(illustrator) as fake:
        monkeypatch.setenv("OPENAI_BASE_URL", images.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        result = await TeamRun(load(media_team(fake.base_url)), "Draw a fox.").execute()
        requests, calls = fake.requests, images.calls

    assert result.ok, result.reason
    (run,) = (tmp_path / ".massgen" / "workspaces").iterdir()
    for workspace in ("ws0", "ws1"):
        assert (run / workspace / "fox.png").read_bytes() == PNG
    assert (result.log_dir / "final" / "workspace" / "fox.png").read_bytes() == PNG
    assert [c.path for c in calls] == ["/v1/images/generations"] * 2
    assert calls[0].body["prompt"] == "A red fox" and calls[0].body["model"] == "gpt-image-1"
    results = [m["content"] for r in requests for m in r["messages"] if m["role"] == "tool"]
    assert any("Saved the image as `fox.png`" in text for text in results)
    offered = next(
        t
        for r in requests
        for t in r.get("tools") or []
        if t["function"]["name"] == "generate_media"
    )
    assert offered["function"]["parameters"]["properties"]["mode"]["enum"] == ["image"]


async def test_a_read_only_agent_is_denied_and_the_provider_never_called(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with FakeOpenAIMedia(image=PNG) as images, FakeProvider(illustrator) as fake:
        monkeypatch.setenv("OPENAI_BASE_URL", images.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        raw = {**media_team(fake.base_url), "permissions": {"role": "read-only"}}
        result = await TeamRun(load(raw), "Draw a fox.").execute()
        requests, calls = fake.requests, images.calls

    assert result.ok, result.reason
    assert calls == []
    assert not list((tmp_path / ".massgen" / "workspaces").rglob("fox.png"))
    results = [m["content"] for r in requests for m in r["messages"] if m["role"] == "tool"]
    assert results and all(
        "denied" in text.lower() or "not allowed" in text.lower() for text in results
    ), results


# ---------------------------------------------------------------- generation, one call


async def test_speech_is_streamed_into_the_workspace(tmp_path):
    speech = b"ID3" + bytes(100_000)
    with FakeOpenAIMedia(speech=speech) as fake:
        box = toolbox(openai_agent(fake.base_url, enable_audio_generation=True))
        arguments = {"prompt": "Hello there.", "mode": "audio", "instructions": "warmly"}
        ctx = ToolContext(agent="a", workspace=tmp_path)
        effects = box.effects(call("generate_media", **arguments), ctx)
        result = await box.call(call("generate_media", **arguments), ctx)
        (sent,) = fake.calls

    assert not result.is_error, result.content
    (written,) = tmp_path.glob("*.mp3")
    assert effects == (Write(written),)
    assert written.read_bytes() == speech
    assert sent.path == "/v1/audio/speech"
    assert sent.body == {
        "model": "gpt-4o-mini-tts",
        "input": "Hello there.",
        "voice": "alloy",
        "response_format": "mp3",
        "instructions": "warmly",
    }


async def test_a_file_past_the_size_bound_is_refused_and_nothing_is_left(tmp_path):
    with FakeOpenAIMedia(image=bytes(4096), speech=bytes(300_000)) as fake:
        raw = openai_agent(
            fake.base_url, enable_image_generation=True, enable_audio_generation=True
        )
        raw["orchestrator"] = {"max_media_bytes": 2048}
        box = toolbox(raw)
        ctx = ToolContext(agent="a", workspace=tmp_path)
        image = await box.call(call("generate_media", prompt="big", filename="big.png"), ctx)
        audio = await box.call(
            call("generate_media", prompt="long", mode="audio", filename="a.mp3"), ctx
        )

    for result in (image, audio):
        assert result.is_error and "max_media_bytes (2048)" in result.content
    assert list(tmp_path.iterdir()) == []  # no file, no partial file


async def test_a_path_outside_the_workspace_is_refused_even_without_the_engine(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    with FakeOpenAIMedia() as fake:
        box = toolbox(openai_agent(fake.base_url, enable_image_generation=True))
        ctx = ToolContext(agent="a", workspace=workspace)
        result = await box.call(call("generate_media", prompt="p", filename="../out.png"), ctx)
        assert fake.calls == []
    assert result.is_error and "inside your workspace" in result.content
    assert not (tmp_path / "out.png").exists()


async def test_a_provider_error_is_a_tool_error(tmp_path):
    with FakeOpenAIMedia(status=400, error="Your prompt was rejected") as fake:
        box = toolbox(openai_agent(fake.base_url, enable_image_generation=True))
        ctx = ToolContext(agent="a", workspace=tmp_path)
        result = await box.call(call("generate_media", prompt="p", filename="x.png"), ctx)
    assert result.is_error and "Your prompt was rejected" in result.content
    assert not (tmp_path / "x.png").exists()


# ---------------------------------------------------------------- understanding


def describer(request: dict[str, Any]) -> Reply:
    return Reply(text="A small red square.")


async def test_understanding_an_image_sends_it_as_an_image_url_part(tmp_path):
    (tmp_path / "shot.png").write_bytes(PNG)
    with FakeProvider(describer) as fake:
        backend = {"type": "chatcompletion", "base_url": fake.base_url, "api_key": "k"}
        raw = {"agents": [{"id": "a", "backend": {**backend, "model": "vision-1", "cwd": "ws"}}]}
        raw["orchestrator"] = {"enable_multimodal_tools": True}
        box = toolbox(raw)
        ctx = ToolContext(agent="a", workspace=tmp_path)
        arguments = {"file_path": "shot.png", "prompt": "What colour is it?"}
        assert box.effects(call("read_media", **arguments), ctx) == (Read(tmp_path / "shot.png"),)
        result = await box.call(call("read_media", **arguments), ctx)
        (sent,) = fake.requests

    assert result.content == "A small red square."
    assert {s.name for s in box.specs()} == {"read_media"}  # chatcompletion generates nothing
    assert sent["model"] == "vision-1"
    (message,) = sent["messages"]
    assert message["content"] == [
        {"type": "text", "text": "What colour is it?"},
        {
            "type": "image_url",
            "image_url": {"url": "data:image/png;base64," + base64.b64encode(PNG).decode()},
        },
    ]


async def test_audio_is_transcribed_and_a_large_file_never_sent(tmp_path):
    (tmp_path / "talk.mp3").write_bytes(b"ID3 some audio")
    (tmp_path / "long.wav").write_bytes(bytes(5000))
    with FakeOpenAIMedia(transcript="It was a dark and stormy night.") as fake:
        raw = openai_agent(fake.base_url, media_tools=["understand_audio"])
        raw["orchestrator"] = {"max_media_bytes": 4096}
        box = toolbox(raw)
        ctx = ToolContext(agent="a", workspace=tmp_path)
        result = await box.call(call("understand_audio", audio_path="talk.mp3"), ctx)
        too_big = await box.call(call("understand_audio", audio_path="long.wav"), ctx)
        (sent,) = fake.calls

    assert result.content == "It was a dark and stormy night."
    assert sent.path == "/v1/audio/transcriptions"
    assert sent.body == {"model": "gpt-4o-transcribe", "file": b"ID3 some audio"}
    assert too_big.is_error and "above max_media_bytes" in too_big.content


def gemini_agent(base_url: str, **backend: Any) -> dict[str, Any]:
    keys = {"type": "gemini", "model": "gemini-2.5-pro", "base_url": base_url, "api_key": "k"}
    return {"agents": [{"id": "a", "backend": {**keys, "cwd": "ws", **backend}}]}


async def test_a_gemini_agent_watches_a_video_and_hears_audio_with_its_own_model(tmp_path):
    (tmp_path / "clip.mp4").write_bytes(b"\x00\x00\x00\x18ftypmp42 frames")
    (tmp_path / "talk.mp3").write_bytes(b"ID3 words")
    with FakeGeminiMedia(text="A cat chases a laser dot.") as fake:
        box = toolbox(gemini_agent(fake.base_url, enable_multimodal_tools=True))
        ctx = ToolContext(agent="a", workspace=tmp_path)
        watched = await box.call(
            call("read_media", file_path="clip.mp4", prompt="What happens?"), ctx
        )
        heard = await box.call(call("read_media", file_path="talk.mp3"), ctx)
        video, audio = fake.calls

    assert watched.content == heard.content == "A cat chases a laser dot."
    assert video.path.endswith("/models/gemini-2.5-pro:generateContent")
    (content,) = video.body["contents"]
    assert content["parts"] == [
        {
            "inlineData": {
                "data": base64.b64encode(b"\x00\x00\x00\x18ftypmp42 frames").decode(),
                "mime_type": "video/mp4",
            }
        },
        {"text": "What happens?"},
    ]
    (content,) = audio.body["contents"]
    assert content["parts"][0]["inlineData"]["mime_type"] == "audio/mpeg"
    assert "Transcribe" in content["parts"][1]["text"]


async def test_video_of_another_agent_goes_to_gemini_with_the_key_from_the_environment(
    tmp_path, monkeypatch
):
    (tmp_path / "clip.mp4").write_bytes(b"frames")
    raw = {
        "agents": [
            {
                "id": "a",
                "backend": {"type": "claude", "cwd": "ws", "media_tools": ["understand_video"]},
            }
        ]
    }
    box = toolbox(raw)
    ctx = ToolContext(agent="a", workspace=tmp_path)
    for name in ("GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    keyless = await box.call(call("understand_video", video_path="clip.mp4"), ctx)
    assert keyless.is_error and "set GEMINI_API_KEY" in keyless.content
    with FakeGeminiMedia(text="Frames.") as fake:
        monkeypatch.setenv("GEMINI_API_KEY", "gk")
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", fake.base_url)
        result = await box.call(call("understand_video", video_path="clip.mp4"), ctx)
        (sent,) = fake.calls
    assert result.content == "Frames."
    assert sent.path.endswith("/models/gemini-2.5-flash:generateContent")


async def test_a_gemini_agent_generates_an_image_with_gemini(tmp_path):
    with FakeGeminiMedia(image=PNG) as fake:
        box = toolbox(gemini_agent(fake.base_url, enable_image_generation=True))
        ctx = ToolContext(agent="a", workspace=tmp_path)
        result = await box.call(call("generate_media", prompt="A fox", filename="art/fox.png"), ctx)
        (sent,) = fake.calls
    assert not result.is_error, result.content
    assert (tmp_path / "art" / "fox.png").read_bytes() == PNG
    assert sent.path.endswith("/models/gemini-2.5-flash-image:generateContent")
    assert sent.body["generationConfig"] == {"responseModalities": ["IMAGE"]}


# ---------------------------------------------------------------- config


def refusal(raw: dict[str, Any]) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        check(config_from_dict(raw))
    return caught.value


def claude(**backend: Any) -> dict[str, Any]:
    return {"agents": [{"id": "a", "backend": {"type": "claude", "cwd": "ws", **backend}}]}


def test_a_provider_without_the_api_is_a_config_error_naming_the_key():
    error = refusal(claude(enable_image_generation=True))
    assert error.path == "agents[0].backend.enable_image_generation"
    assert "'claude' has no image generation API" in error.message
    assert "image_generation_backend to google or openai" in (error.fix or "")

    named = refusal(
        {
            **claude(enable_audio_generation=True),
            "orchestrator": {"audio_generation_backend": "elevenlabs"},
        }
    )
    assert named.path == "orchestrator.audio_generation_backend"
    assert "'elevenlabs' has no client here" in named.message

    unknown = refusal(
        {
            **claude(),
            "orchestrator": {"enable_multimodal_tools": True, "image_generation_backend": "opnai"},
        }
    )
    assert unknown.path == "orchestrator.image_generation_backend"

    video = refusal(openai_agent("http://127.0.0.1:9/v1", enable_video_generation=True))
    assert video.path == "agents[0].backend.enable_video_generation"
    assert "'openai' has no video generation" in video.message
    assert "no provider makes videos here" in (video.fix or "") and "Sora" in (video.fix or "")

    nowhere = refusal(
        {"agents": [{"id": "a", "backend": {"type": "openai", "enable_image_generation": True}}]}
    )
    assert nowhere.path == "agents[0].backend.cwd"


def test_multimodal_tools_offer_what_is_served_and_leave_out_the_rest():
    raw = {
        **claude(),
        "orchestrator": {
            "enable_multimodal_tools": True,
            "image_generation_backend": "openai",
            "video_generation_backend": "openai",  # Sora is shut down: left out
        },
    }
    config = config_from_dict(raw)
    check(config)
    media = plan(config, config.agents[0], "agents[0]")
    assert list(media.generate) == ["image"] and media.read_media
    assert media.vision.api == "openai" and not media.vision.name  # OpenAI's, not claude's
    box = MediaToolbox(media, 10)
    assert {s.name for s in box.specs()} == {"generate_media", "read_media"}


def test_the_predecessors_media_files_in_custom_tools_are_the_built_in_tools(tmp_path):
    tools = [
        {
            "name": ["understand_image"],
            "path": "massgen/tool/_multimodal_tools/understand_image.py",
            "function": ["understand_image"],
        },
        {
            "name": ["generate_media"],
            "path": "massgen/tool/_multimodal_tools/generation/generate_media.py",
            "function": ["generate_media"],
        },
    ]
    config: MassgenConfig = config_from_dict(
        openai_agent("http://127.0.0.1:9/v1", enable_image_generation=True, custom_tools=tools)
    )
    backend = config.agents[0].backend
    assert backend.custom_tools == () and backend.media.tools == ("understand_image",)
    box = MediaToolbox(plan(config, config.agents[0], "agents[0]"), 10)
    assert {s.name for s in box.specs()} == {"generate_media", "understand_image"}

    alone = openai_agent("http://127.0.0.1:9/v1", custom_tools=tools[1:])
    with pytest.raises(ConfigError, match="enable_image_generation: true"):
        config_from_dict(alone)


def test_file_generation_has_no_effect_and_says_why():
    from massgen.config.predecessor import translate

    raw = {"agents": [{"id": "a", "backend": {"type": "openai", "enable_file_generation": True}}]}
    data, notes = translate(raw, "c.yaml")
    assert "enable_file_generation" not in data["agents"][0]["backend"]
    assert [n.path for n in notes] == ["agents[0].backend.enable_file_generation"]
    assert "file tools" in notes[0].why


def test_a_config_without_media_keys_imports_no_media_module():
    import subprocess
    import sys

    code = (
        "import sys; from massgen.config import config_from_dict; from massgen.runs.toolboxes import joined, media;"
        "c = config_from_dict({'agents': [{'id': 'a', 'backend': {'type': 'openai'}}]});"
        "assert media(c) == {};"
        "heavy = ('massgen.tools.media.toolbox', 'massgen.tools.media.openai_calls', 'massgen.tools.media.gemini_calls');"
        "print(sorted(m for m in sys.modules if m in heavy or m.startswith(('openai', 'google.genai'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


async def test_the_mode_defaults_to_the_one_offered(tmp_path):
    with FakeOpenAIMedia(speech=b"ID3 hi") as fake:
        box = toolbox(openai_agent(fake.base_url, enable_audio_generation=True))
        (spec,) = box.specs()
        assert spec.parameters["properties"]["mode"]["enum"] == ["audio"]
        ctx = ToolContext(agent="a", workspace=tmp_path)
        result = await box.call(call("generate_media", prompt="Hi.", filename="hi.mp3"), ctx)
    assert not result.is_error, result.content
    assert (tmp_path / "hi.mp3").read_bytes() == b"ID3 hi"


async def test_a_planted_link_does_not_lead_a_saved_file_out_and_a_fifo_is_not_waited_on(
    tmp_path,
):
    workspace, outside = tmp_path / "ws", tmp_path / "outside.txt"
    workspace.mkdir()
    outside.write_text("untouched\n")
    (workspace / ".fox.png.partial").symlink_to(outside)  # the temp name massgen used
    (workspace / "shot.png").symlink_to(outside)
    os.mkfifo(workspace / "pipe.png")
    with FakeOpenAIMedia(image=PNG) as fake:
        box = toolbox(openai_agent(fake.base_url, enable_image_generation=True))
        ctx = ToolContext(agent="a", workspace=workspace)
        saved = await box.call(call("generate_media", prompt="A fox", filename="fox.png"), ctx)
    with FakeProvider(describer) as fake:
        backend = {"type": "chatcompletion", "base_url": fake.base_url, "api_key": "k"}
        raw = {"agents": [{"id": "a", "backend": {**backend, "model": "vision-1", "cwd": "ws"}}]}
        raw["orchestrator"] = {"enable_multimodal_tools": True}
        reader = toolbox(raw)
        piped = await asyncio.wait_for(
            reader.call(call("read_media", file_path="pipe.png"), ctx), 10
        )
    assert not saved.is_error, saved.content
    assert (workspace / "fox.png").read_bytes() == PNG
    assert outside.read_text() == "untouched\n"
    assert piped.is_error and "not a regular file" in piped.content

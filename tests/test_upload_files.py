"""`upload_files` end to end: a team on the OpenAI Responses fake (the real openai SDK)
uploads each agent's documents once for the run, every request searches that agent's
store, the searches show in the live view, the answers keep their file citations, and
the stores and files are deleted when the run ends. Bad entries, providers without file
search, and files the permission engine refuses are one-line config errors."""

from __future__ import annotations

import dataclasses
from contextlib import ExitStack, contextmanager
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
import yaml
from local_site import serving
from rich.console import Console

import massgen
from massgen import cli
from massgen.api import TeamRun, load
from massgen.core import events as ev
from massgen.core.errors import ConfigError
from massgen.testing.fake_openai_responses import FakeResponses
from massgen.testing.policy import FakeFileSearch, Reply, cooperative_agent
from massgen.ui.live import render_live
from massgen.ui.model import ViewModel

QUESTION = "By how much did revenue grow in Q3?"
REPORT = "# Q3\nRevenue grew 12% over the quarter.\n"


def searching(request: dict) -> Reply:
    """Cooperates, searching the uploaded report before each answer and the final one."""
    reply = cooperative_agent(request)
    if any(name == "vote" for name, _ in reply.tool_calls):
        return reply
    return dataclasses.replace(reply, file_searches=[FakeFileSearch("Q3 revenue", ["report.md"])])


def backend(fake: FakeResponses, files: list[str], **more: Any) -> dict[str, Any]:
    spec = {"type": "openai", "model": "gpt-5-mini", "base_url": fake.base_url, "api_key": "k"}
    return {**spec, "upload_files": [{"file_path": f} for f in files], **more}


@contextmanager
def team(agents: int = 2, files: tuple[str, ...] = ("report.md",), **fake_options: Any):
    """A team of `agents` on their own Responses fakes, each uploading `files`."""
    with ExitStack() as stack:
        fakes = [
            stack.enter_context(FakeResponses(searching, **fake_options)) for _ in range(agents)
        ]
        members = [{"id": f"a{i}", "backend": backend(f, list(files))} for i, f in enumerate(fakes)]
        # The fakes answer alike; agreement would end the run before the votes these tests read.
        yield {"agents": members, "orchestrator": {"seed": 7, "agreement": "none"}}, fakes


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "report.md").write_text(REPORT)
    return tmp_path


def screen(model: ViewModel, width: int = 200, height: int = 50) -> str:
    console = Console(file=StringIO(), width=width, height=height, color_system=None)
    console.print(render_live(model, width=width, height=height, elapsed=3))
    return "\n".join(line.rstrip() for line in console.file.getvalue().splitlines())


async def test_a_team_searches_its_uploaded_files_and_cites_them(workdir):
    with team() as (config, fakes):
        events = [event async for event in massgen.stream(QUESTION, config)]
    assert isinstance(events[-1], ev.RunFinished)
    finished = events[-1].outcome
    assert finished.status == "ok", finished.reason

    for fake in fakes:
        api = fake.files
        [store] = [t for t in fake.requests[0]["tools"] if t["type"] == "file_search"]
        store_id = store["vector_store_ids"][0]
        # Uploaded once for the whole run, though the agent made several requests.
        assert [c for c in api.calls if c.startswith("POST")] == [
            "POST /files",
            "POST /vector_stores",
            f"POST /vector_stores/{store_id}/file_batches",
        ]
        assert len(fake.requests) >= 2
        for request in fake.requests:  # coordination and the final presentation alike
            assert store in request["tools"]
        # Deleted when the run ended: nothing is left on the provider.
        assert api.stores == {} and api.files == {}
        assert sorted(api.deleted) == ["file-fake0000", store_id]

    used = [e for e in events if isinstance(e, ev.HostedToolUsed)]
    assert {e.agent for e in used} == {"a0", "a1"}
    assert all(e.activity.tool == "file_search" for e in used)
    assert all(e.activity.query == "Q3 revenue" for e in used)
    assert all([s.title for s in e.activity.sources] == ["report.md"] for e in used)
    winner_file = next(e.activity.sources[0].url for e in used if e.agent == finished.winner)
    assert f"Sources:\n[1] report.md <{winner_file}>" in finished.answer
    for answer in (e for e in events if isinstance(e, ev.AnswerPublished)):
        assert "Sources:\n[1] report.md <file-fake" in answer.content

    model = ViewModel()
    for event in events:
        if isinstance(event, ev.CoordinationFinished):
            break
        model.apply(event)
    shown = screen(model)
    assert "⌕ file search (hosted): Q3 revenue · 1 source" in shown
    assert "[1] report.md <file-fake" in shown


async def test_the_permission_engine_decides_each_file_and_records_it(workdir):
    with team(agents=1) as (config, _):
        result = await massgen.arun(QUESTION, config)
    assert result.ok
    ledger = next(workdir.glob(".massgen/massgen_logs/*/turn_1/permissions.jsonl"), None)
    assert ledger is not None, list(workdir.glob(".massgen/massgen_logs/*/turn_1/*"))
    text = ledger.read_text()
    assert "upload_files" in text and str(workdir / "report.md") in text


async def test_a_file_a_deny_rule_covers_is_not_uploaded(workdir):
    (workdir / "secrets").mkdir()
    (workdir / "secrets" / "plan.md").write_text("the plan")
    with team(agents=1, files=("secrets/plan.md",)) as (config, fakes):
        config["permissions"] = {"rules": {"deny": ["Read(./secrets/**)"]}}
        with pytest.raises(ConfigError) as raised:
            await massgen.arun(QUESTION, config, logs=False)
        assert fakes[0].files.calls == [] and fakes[0].requests == []
    error = raised.value
    assert error.path == "agents[0].backend.upload_files[0].file_path"
    assert "refused to upload" in error.message and "plan.md" in error.message
    assert "Read(./secrets/**)" in error.message


async def test_a_file_among_credentials_is_never_uploaded(workdir, monkeypatch):
    monkeypatch.setenv("HOME", str(workdir))
    (workdir / ".aws").mkdir()
    (workdir / ".aws" / "notes.txt").write_text("aws_secret_access_key = ...")
    with team(agents=1, files=(str(workdir / ".aws" / "notes.txt"),)) as (config, fakes):
        with pytest.raises(ConfigError) as raised:
            await massgen.arun(QUESTION, config, logs=False)
        assert fakes[0].files.uploads == []
    assert "directory of credentials" in raised.value.message


async def test_a_failed_upload_stops_the_run_and_removes_what_was_uploaded(workdir):
    with team() as (config, fakes):
        fakes[1].files.fail_files = ["report.md"]
        with pytest.raises(ConfigError) as raised:
            await massgen.arun(QUESTION, config, logs=False)
        assert all(f.requests == [] for f in fakes)  # no agent ran
        for fake in fakes:
            assert fake.files.stores == {} and fake.files.files == {}
    assert raised.value.path == "agents[1].backend.upload_files"
    assert "1 failed" in raised.value.message


async def test_a_file_gone_since_loading_is_a_config_error(workdir):
    with team(agents=1) as (config, fakes):
        loaded = load(config)
        (workdir / "report.md").unlink()
        with pytest.raises(ConfigError) as raised:
            await TeamRun(loaded, QUESTION, logs=False).execute()
        assert fakes[0].requests == [] and fakes[0].files.stores == {}
    assert raised.value.path == "agents[0].backend.upload_files"
    assert "report.md" in raised.value.message


async def test_a_run_cut_short_still_deletes_its_uploads(workdir):
    with team(agents=1, latency=30) as (config, fakes):
        stream = massgen.stream(QUESTION, config, logs=False)
        first = await anext(stream)  # the run has started: the files are up
        assert isinstance(first, ev.RunStarted)
        decided = await anext(stream)  # the engine's decision on the upload, right after
        assert isinstance(decided, ev.PermissionDecided) and decided.tool == "upload_files"
        assert fakes[0].files.stores != {}
        await stream.aclose()  # cancels the run mid-request
        assert fakes[0].files.stores == {} and fakes[0].files.files == {}


# --- URLs ------------------------------------------------------------------------------


async def test_a_url_is_downloaded_and_uploaded(workdir, tmp_path_factory):
    site = tmp_path_factory.mktemp("site")
    (site / "paper.pdf").write_bytes(b"%PDF-1.4 fake paper")
    with serving(site) as origin, team(agents=1, files=(f"{origin}/paper.pdf",)) as (config, fakes):
        result = await massgen.arun(QUESTION, config, logs=False)
    assert result.ok
    assert fakes[0].files.uploads == [("paper.pdf", b"%PDF-1.4 fake paper")]


async def test_a_url_that_cannot_be_fetched_is_a_config_error(workdir, tmp_path_factory):
    site = tmp_path_factory.mktemp("empty")
    with (
        serving(site) as origin,
        team(agents=1, files=(f"{origin}/gone.pdf",)) as (config, _),
        pytest.raises(ConfigError) as raised,
    ):
        await massgen.arun(QUESTION, config, logs=False)
    assert raised.value.path == "agents[0].backend.upload_files[0].file_path"
    assert "cannot download" in raised.value.message and "HTTP 404" in raised.value.message


# --- refused at load -------------------------------------------------------------------


def write(tmp_path: Path, backend: dict[str, Any]) -> Path:
    path = tmp_path / "team.yaml"
    path.write_text(yaml.safe_dump({"agents": [{"id": "a", "backend": backend}]}))
    return path


OPENAI = {"type": "openai", "model": "gpt-5-mini"}


def test_a_relative_path_is_taken_beside_the_config(tmp_path, monkeypatch):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.pdf").write_bytes(b"%PDF")
    config = tmp_path / "configs"
    config.mkdir()
    (config / "b.txt").write_text("b")
    path = config / "team.yaml"
    monkeypatch.chdir(tmp_path)  # `docs/a.pdf` is found in the working directory
    files = [{"file_path": "b.txt"}, {"file_path": "docs/a.pdf"}]
    path.write_text(
        yaml.safe_dump({"agent": {"id": "a", "backend": {**OPENAI, "upload_files": files}}})
    )
    uploads = load(str(path)).config.agents[0].backend.upload_files
    assert [u.file_path for u in uploads] == [
        str(config / "b.txt"),
        str(tmp_path / "docs" / "a.pdf"),
    ]


@pytest.mark.parametrize(
    ("entry", "path", "words"),
    [
        ({"file_path": "missing.pdf"}, "upload_files[0].file_path", "`missing.pdf` does not exist"),
        ({"file_path": "photo.jpg"}, "upload_files[0].file_path", "does not read .jpg"),
        (
            {"file_path": "https://x.example/data"},
            "upload_files[0].file_path",
            "without an extension",
        ),
        ({"video_path": "a.mp4"}, "upload_files[0].video_path", "`a.mp4` does not exist"),
        ({"path": "a.pdf"}, "upload_files[0]", "path"),
    ],
)
def test_a_bad_entry_is_a_config_error_naming_its_key_path(tmp_path, entry, path, words):
    (tmp_path / "photo.jpg").write_bytes(b"jpg")
    with pytest.raises(ConfigError) as raised:
        load(str(write(tmp_path, {**OPENAI, "upload_files": [entry]})))
    assert (raised.value.path or "").startswith(f"agents[0].backend.{path}"), raised.value
    assert words in str(raised.value)


def test_too_many_files_are_refused(tmp_path):
    files = [{"file_path": f"f{i}.txt"} for i in range(21)]
    with pytest.raises(ConfigError) as raised:
        load(str(write(tmp_path, {**OPENAI, "upload_files": files})))
    assert "upload_files" in (raised.value.path or "") and "20" in str(raised.value)


@pytest.mark.parametrize(
    ("backend", "offers"),
    [
        (
            {"type": "claude"},
            "offers enable_web_search, enable_code_interpreter, enable_code_execution",
        ),
        (
            {"type": "chatcompletion", "model": "m", "base_url": "http://x.example/v1"},
            "offers no hosted tools",
        ),
    ],
)
def test_a_provider_without_file_search_is_refused_naming_what_it_offers(tmp_path, backend, offers):
    (tmp_path / "report.md").write_text(REPORT)
    files = [{"file_path": "report.md"}]
    with pytest.raises(ConfigError) as raised:
        load(str(write(tmp_path, {**backend, "upload_files": files})))
    error = raised.value
    assert error.path == "agents[0].backend.upload_files"
    assert "has no provider-hosted file search" in error.message
    fix = error.fix or ""
    assert offers in fix and "context_paths" in fix
    hosts = fix.split("the backend types that host file search are ", 1)[1].split(", or ")[0]
    assert {"azure_openai", "openai"} <= set(hosts.split(", "))


def test_validate_accepts_a_file_search_config(tmp_path, capsys):
    (tmp_path / "report.md").write_text(REPORT)
    path = write(tmp_path, {**OPENAI, "upload_files": [{"file_path": "report.md"}]})
    assert cli.main(["--validate", str(path)]) == 0, capsys.readouterr().err


def test_the_readme_example_validates(tmp_path, monkeypatch):
    readme = (Path(__file__).parents[1] / "README.md").read_text()
    section = readme.split("### Documents for file search", 1)[1]
    snippet = section.split("```yaml\n", 1)[1].split("```", 1)[0]
    monkeypatch.chdir(tmp_path)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "q3-report.pdf").write_bytes(b"%PDF")
    uploads = load(yaml.safe_load(snippet)).config.agents[0].backend.upload_files
    assert [u.name for u in uploads] == ["q3-report.pdf", "paper.pdf"]
    assert uploads[0].file_path == str(tmp_path / "docs" / "q3-report.pdf")

"""OpenAI Responses file search through the real openai SDK against the loopback fake:
the files go up as multipart uploads into one vector store, the batch is polled until it
is processed, requests name the store in a `file_search` tool, the stream's
`file_search_call` becomes `HostedActivity`, the answer ends with the files it cites, and
the store and files are deleted."""

import pytest
from backend_support import ask, collect, text_of

from massgen.backends.file_search import IndexingFailed, Limits, Upload
from massgen.backends.responses import ResponsesBackend
from massgen.core import errors, types
from massgen.testing import Reply, Scripted
from massgen.testing.fake_openai_responses import FakeResponses
from massgen.testing.policy import FakeFileSearch

ANSWER = "The report says revenue grew 12%."
FAST = Limits(index_seconds=5, cleanup_seconds=5)


@pytest.fixture
def responses(backends):
    return backends(ResponsesBackend, provider="openai", model="gpt-5", api_key="sk-test")


@pytest.fixture
def report(tmp_path):
    path = tmp_path / "report.md"
    path.write_text("# Q3\nRevenue grew 12% over the quarter.\n")
    return path


async def test_files_are_uploaded_into_a_processed_store(responses, report, tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("plain notes")
    with FakeResponses(index_polls=3) as fake:
        backend = responses(fake)
        uploads = [Upload("report.md", report), Upload("notes.txt", notes)]
        store = await backend.open_file_store(uploads, name="massgen-run-a", limits=FAST)
        api = fake.files
        assert api.stores[store.id]["name"] == "massgen-run-a"
        # Left behind by a killed process, it would expire after a day unused.
        assert api.stores[store.id]["expires_after"] == {"anchor": "last_active_at", "days": 1}
        assert sorted(f.object["filename"] for f in api.files.values()) == [
            "notes.txt",
            "report.md",
        ]
        assert api.files[store.file_ids[0]].content == report.read_bytes()
        assert api.attached[store.id] == list(store.file_ids)  # processed: in the store
        batch_polls = [c for c in api.calls if c.startswith("GET /vector_stores/")]
        assert len(batch_polls) == 3  # polled until it completed, no further
        assert [c.split(" ")[0] for c in api.calls].count("POST") == 4  # 2 files, store, batch


async def test_requests_search_the_store_and_the_answer_cites_the_file(responses, report):
    reply = Reply(text=ANSWER, file_searches=[FakeFileSearch("Q3 revenue", ["report.md"])])
    with FakeResponses(Scripted([reply])) as fake:
        backend = responses(fake)
        store = await backend.open_file_store([Upload("report.md", report)], name="s", limits=FAST)
        events = await collect(
            backend.stream(ask(hosted=("file_search",), file_stores=(store.id,)))
        )
        body = fake.requests[0]
    assert {"type": "file_search", "vector_store_ids": [store.id]} in body["tools"]
    assert body["include"] == ["file_search_call.results"]
    [activity] = [e for e in events if isinstance(e, types.HostedActivity)]
    assert activity.tool == "file_search" and activity.query == "Q3 revenue" and activity.ok
    [file_id] = store.file_ids
    assert activity.sources == (types.Source(file_id, "report.md"),)
    assert text_of(events) == f"{ANSWER}\n\nSources:\n[1] report.md <{file_id}>\n"


async def test_without_stores_no_file_search_tool_is_sent(responses):
    with FakeResponses(Scripted([Reply(text="ok")])) as fake:
        await collect(responses(fake).stream(ask(hosted=("file_search",))))
        body = fake.requests[0]
    assert "tools" not in body and "include" not in body


async def test_closing_deletes_the_store_and_its_files(responses, report):
    with FakeResponses() as fake:
        backend = responses(fake)
        store = await backend.open_file_store([Upload("report.md", report)], name="s", limits=FAST)
        assert await backend.close_file_store(store, FAST) == []
        assert fake.files.stores == {} and fake.files.files == {}
        assert set(fake.files.deleted) == {store.id, *store.file_ids}
        # What is already gone cannot be deleted again: named, not raised.
        assert await backend.close_file_store(store, FAST) == [store.id, *store.file_ids]


async def test_a_file_that_fails_processing_is_an_error_and_nothing_is_left(responses, report):
    with FakeResponses(fail_files=["report.md"]) as fake:
        backend = responses(fake)
        with pytest.raises(IndexingFailed, match="0 of 1 processed, 1 failed"):
            await backend.open_file_store([Upload("report.md", report)], name="s", limits=FAST)
        assert fake.files.stores == {} and fake.files.files == {}


async def test_processing_past_the_deadline_is_an_error_and_nothing_is_left(responses, report):
    with FakeResponses(index_polls=10_000) as fake:
        backend = responses(fake)
        limits = Limits(index_seconds=0.5, cleanup_seconds=5)
        with pytest.raises(IndexingFailed, match=r"not processed within 0\.5 s"):
            await backend.open_file_store([Upload("report.md", report)], name="s", limits=limits)
        assert fake.files.stores == {} and fake.files.files == {}


async def test_an_upload_the_provider_refuses_is_a_backend_error(responses, report, tmp_path):
    first = tmp_path / "first.txt"
    first.write_text("one")
    with FakeResponses() as fake:
        backend = responses(fake)
        # The second upload is refused: the first file must not stay behind.
        fake.files.refuse_uploads, fake.files.accept_uploads = "File type not supported", 1
        uploads = [Upload("first.txt", first), Upload("report.md", report)]
        with pytest.raises(errors.BadRequest, match="File type not supported"):
            await backend.open_file_store(uploads, name="s", limits=FAST)
        assert fake.files.files == {} and fake.files.stores == {}


async def test_azure_uploads_through_its_own_paths(backends, report):
    azure = backends(ResponsesBackend, provider="azure_openai", model="dep", api_key="k")
    with FakeResponses() as fake:
        backend = azure(fake, base_url=fake.azure_endpoint, azure_api_version="2025-04-01-preview")
        store = await backend.open_file_store([Upload("report.md", report)], name="s", limits=FAST)
        assert fake.files.attached[store.id] == list(store.file_ids)
        assert await backend.close_file_store(store, FAST) == []

"""A loopback fake of the OpenAI Responses API (`POST /v1/responses`), Azure's included.

Streams the real event sequence (`response.created` … `response.output_text.delta` …
`response.completed`, each as `event: TYPE` + `data: {...}`), so the real openai SDK runs
against it unpatched. Replies come from the same policies as `FakeProvider`:

    with FakeResponses(Scripted([Reply(text="hi", reasoning="think")])) as fake:
        backend = ResponsesBackend(Endpoint("test", "gpt-5", "k", fake.base_url))

Reasoning is sent as a reasoning summary; `finish_reason="length"` ends with
`response.incomplete`; `finish_reason=None` ends the stream before `response.completed`.
An in-stream error (`http_fake.stream_error`) is sent as `response.failed`.

It also serves the file API that file search needs (`fake_openai_files.FileApi`):
`POST /files` (multipart), `POST /vector_stores`, `POST /vector_stores/{id}/file_batches`,
`GET` of a batch (in progress for `index_polls` polls), `DELETE` of stores and files. A
reply's `file_searches` become `file_search_call` items and `file_citation` annotations,
found only in the stores the request's `file_search` tool names.
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Iterator, Sequence
from typing import Any, Unpack

from massgen.testing.fake_openai_files import FileApi, FileApiHandler
from massgen.testing.http_fake import (
    HttpFake,
    Json,
    Pacing,
    Wire,
    fault_message,
    finish_of,
    pieces,
    sse,
    usage_of,
    words,
)
from massgen.testing.media import SeenMedia, responses_media
from massgen.testing.policy import (
    FakeCode,
    FakeFileSearch,
    FakeSearch,
    FakeUsage,
    Fault,
    Policy,
    Reply,
)


class ResponsesWire(Wire):
    path = "/responses"
    malformed = b'event: response.output_text.delta\ndata: {"type": "response.output_text.d\n\n'
    # `done` stays empty: the Responses API sends no [DONE].

    def __init__(self, files: FileApi | None = None) -> None:
        self.files = files or FileApi()

    def media(self, body: Json) -> list[SeenMedia]:
        return responses_media(body)

    def view(self, body: Json) -> Json:
        messages: list[Json] = []
        if body.get("instructions"):
            messages.append({"role": "system", "content": body["instructions"]})
        items = body.get("input") or []
        if isinstance(items, str):
            items = [{"role": "user", "content": items}]
        for item in items:
            messages.append(_view_item(item))
        view: Json = {"model": body.get("model"), "messages": messages}
        tools = [t for t in body.get("tools") or [] if t.get("type") == "function"]
        if tools:
            view["tools"] = [
                {"type": "function", "function": {"name": t["name"], "parameters": t["parameters"]}}
                for t in tools
            ]
        fmt = (body.get("text") or {}).get("format") or {}
        if fmt.get("type") == "json_schema":
            view["response_format"] = {"type": "json_schema", "json_schema": fmt}
        return view

    def frames(self, body: Json, view: Json, reply: Reply) -> list[bytes]:
        return list(_Frames(body, view, reply, self.files).all())

    def stream_error(self, fault: Fault) -> bytes:
        message, code = fault_message(fault)
        response = {**_response("failed", "fake", []), "error": {"code": code, "message": message}}
        return sse("response.failed", {"type": "response.failed", "response": response})

    def complete(self, body: Json, view: Json, reply: Reply) -> Json:
        frames = _Frames(body, view, reply, self.files)
        list(frames.all())
        return frames.final


class FakeResponses(HttpFake):
    """A Responses API server; `base_url` for `openai.AsyncOpenAI(base_url=...)`.
    `files` is its file API's state (uploads, vector stores, what was deleted)."""

    wire: ResponsesWire
    base_path = "/v1"

    def __init__(
        self,
        policy: Policy | None = None,
        *,
        index_polls: int = 1,
        fail_files: Sequence[str] = (),
        **pacing: Unpack[Pacing],
    ) -> None:
        super().__init__(policy, **pacing)
        self.files = FileApi(index_polls=index_polls, fail_files=fail_files)
        self.wire = ResponsesWire(self.files)
        self.handler = FileApiHandler

    @property
    def azure_endpoint(self) -> str:
        """For `openai.AsyncAzureOpenAI(azure_endpoint=...)`: it adds `/openai/...` itself."""
        return self.origin


def _view_item(item: Json) -> Json:
    kind = item.get("type", "message")
    if kind == "function_call":
        call = {"name": item["name"], "arguments": item.get("arguments", "")}
        return {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": item["call_id"], "type": "function", "function": call}],
        }
    if kind == "function_call_output":
        return {"role": "tool", "tool_call_id": item["call_id"], "content": item["output"]}
    content = item.get("content")
    if isinstance(content, list):
        content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return {"role": item.get("role", "user"), "content": content or ""}


def _response(status: str, model: str, output: list[Json], usage: Json | None = None) -> Json:
    return {
        "id": "resp_fake",
        "object": "response",
        "created_at": int(time.time()),
        "status": status,
        "model": model,
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": usage,
        "error": None,
        "incomplete_details": None,
    }


class _Frames:
    """The event sequence of one streamed response."""

    def __init__(self, body: Json, view: Json, reply: Reply, files: FileApi) -> None:
        self.model = str(body.get("model") or "fake")
        self.view, self.reply = view, reply
        self.files = files
        searched = [t for t in body.get("tools") or [] if t.get("type") == "file_search"]
        self.stores = [s for t in searched for s in t.get("vector_store_ids") or []]
        self.with_results = "file_search_call.results" in (body.get("include") or [])
        self.found: list[Json] = []  # the files this reply's file searches found
        self.seq = itertools.count()
        self.output: list[Json] = []
        self.final: Json = {}

    def event(self, kind: str, **data: Any) -> bytes:
        return sse(kind, {"type": kind, "sequence_number": next(self.seq), **data})

    def all(self) -> Iterator[bytes]:
        yield self.event("response.created", response=_response("in_progress", self.model, []))
        yield self.event("response.in_progress", response=_response("in_progress", self.model, []))
        if self.reply.reasoning:
            yield from self.reasoning(len(self.output))
        for index, use in enumerate(self.reply.hosted):
            if isinstance(use, FakeSearch):
                yield from self.web_search(len(self.output), index, use)
            else:
                yield from self.code_interpreter(len(self.output), index, use)
        if self.stores:  # the model can search files only when the request names stores
            for index, search in enumerate(self.reply.file_searches):
                yield from self.file_search(len(self.output), index, search)
        if self.reply.text:
            yield from self.message(len(self.output))
        for index, (name, arguments) in enumerate(self.reply.tool_calls):
            yield from self.function_call(len(self.output), index, name, json.dumps(arguments))
        yield from self.ending()

    def reasoning(self, at: int) -> Iterator[bytes]:
        item = {"type": "reasoning", "id": f"rs_fake_{at}", "summary": []}
        yield self.event("response.output_item.added", output_index=at, item=item)
        part = {"type": "summary_text", "text": ""}
        ids = {"item_id": item["id"], "output_index": at, "summary_index": 0}
        yield self.event("response.reasoning_summary_part.added", **ids, part=part)
        for word in words(self.reply.reasoning):
            yield self.event("response.reasoning_summary_text.delta", **ids, delta=word)
        text = self.reply.reasoning
        yield self.event("response.reasoning_summary_text.done", **ids, text=text)
        yield self.event("response.reasoning_summary_part.done", **ids, part={**part, "text": text})
        done = {**item, "summary": [{"type": "summary_text", "text": text}]}
        yield self.finish_item(at, done)

    def message(self, at: int) -> Iterator[bytes]:
        item = {
            "type": "message",
            "id": f"msg_fake_{at}",
            "role": "assistant",
            "status": "in_progress",
            "content": [],
        }
        yield self.event("response.output_item.added", output_index=at, item=item)
        ids = {"item_id": item["id"], "output_index": at, "content_index": 0}
        part = {"type": "output_text", "text": "", "annotations": []}
        yield self.event("response.content_part.added", **ids, part=part)
        for word in words(self.reply.text):
            yield self.event("response.output_text.delta", **ids, delta=word, logprobs=[])
        text = self.reply.text
        # Every source of the reply's searches cites the whole text.
        cited = [s for use in self.reply.hosted if isinstance(use, FakeSearch) for s in use.sources]
        annotations = [_url_citation(url, title, len(text)) for url, title in cited]
        annotations += [_file_citation(found, len(text)) for found in self.found]
        for n, annotation in enumerate(annotations):
            yield self.event(
                "response.output_text.annotation.added",
                **ids,
                annotation_index=n,
                annotation=annotation,
            )
        yield self.event("response.output_text.done", **ids, text=text, logprobs=[])
        done: Json = {**part, "text": text, "annotations": annotations}
        yield self.event("response.content_part.done", **ids, part=done)
        yield self.finish_item(at, {**item, "status": "completed", "content": [done]})

    def web_search(self, at: int, index: int, search: FakeSearch) -> Iterator[bytes]:
        item: Json = {"type": "web_search_call", "id": f"ws_fake_{index}", "status": "in_progress"}
        item["action"] = {"type": "search", "query": search.query}
        yield self.event("response.output_item.added", output_index=at, item=item)
        ids = {"item_id": item["id"], "output_index": at}
        for phase in ("in_progress", "searching", "completed"):
            yield self.event(f"response.web_search_call.{phase}", **ids)
        sources = [{"type": "url", "url": url} for url, _ in search.sources]
        action = {**item["action"], "sources": sources}
        yield self.finish_item(at, {**item, "status": "completed", "action": action})

    def file_search(self, at: int, index: int, search: FakeFileSearch) -> Iterator[bytes]:
        item: Json = {
            "type": "file_search_call",
            "id": f"fs_fake_{index}",
            "status": "in_progress",
            "queries": [search.query],
            "results": None,
        }
        yield self.event("response.output_item.added", output_index=at, item=item)
        ids = {"item_id": item["id"], "output_index": at}
        for phase in ("in_progress", "searching", "completed"):
            yield self.event(f"response.file_search_call.{phase}", **ids)
        found = self.files.search(self.stores, search.files)
        self.found += found
        results = [{**hit, "score": 0.9, "attributes": {}} for hit in found]
        done = {**item, "status": "completed", "results": results if self.with_results else None}
        yield self.finish_item(at, done)

    def code_interpreter(self, at: int, index: int, run: FakeCode) -> Iterator[bytes]:
        item: Json = {
            "type": "code_interpreter_call",
            "id": f"ci_fake_{index}",
            "status": "in_progress",
            "code": "",
            "container_id": "cntr_fake",
            "outputs": None,
        }
        yield self.event("response.output_item.added", output_index=at, item=item)
        ids = {"item_id": item["id"], "output_index": at}
        yield self.event("response.code_interpreter_call.in_progress", **ids)
        for piece in pieces(run.code):
            yield self.event("response.code_interpreter_call_code.delta", **ids, delta=piece)
        yield self.event("response.code_interpreter_call_code.done", **ids, code=run.code)
        yield self.event("response.code_interpreter_call.interpreting", **ids)
        yield self.event("response.code_interpreter_call.completed", **ids)
        outputs = [{"type": "logs", "logs": run.output}]
        done = {**item, "status": "completed", "code": run.code, "outputs": outputs}
        yield self.finish_item(at, done)

    def function_call(self, at: int, index: int, name: str, arguments: str) -> Iterator[bytes]:
        item = {
            "type": "function_call",
            "id": f"fc_fake_{index}",
            "call_id": f"call_fake_{index}",
            "name": name,
            "arguments": "",
            "status": "in_progress",
        }
        yield self.event("response.output_item.added", output_index=at, item=item)
        ids = {"item_id": item["id"], "output_index": at}
        for piece in pieces(arguments):
            yield self.event("response.function_call_arguments.delta", **ids, delta=piece)
        yield self.event("response.function_call_arguments.done", **ids, arguments=arguments)
        yield self.finish_item(at, {**item, "arguments": arguments, "status": "completed"})

    def finish_item(self, at: int, item: Json) -> bytes:
        self.output.append(item)
        return self.event("response.output_item.done", output_index=at, item=item)

    def ending(self) -> Iterator[bytes]:
        finish = finish_of(self.reply)
        usage = usage_of(self.view, self.reply)
        wire_usage = _usage(usage) if usage is not None else None
        if finish is None:
            return
        if finish == "length":
            response = _response("incomplete", self.model, self.output, wire_usage)
            response["incomplete_details"] = {"reason": "max_output_tokens"}
            self.final = response
            yield self.event("response.incomplete", response=response)
            return
        self.final = _response("completed", self.model, self.output, wire_usage)
        yield self.event("response.completed", response=self.final)


def _url_citation(url: str, title: str, end: int) -> Json:
    return {"type": "url_citation", "start_index": 0, "end_index": end, "url": url, "title": title}


def _file_citation(found: Json, end: int) -> Json:
    return {
        "type": "file_citation",
        "file_id": found["file_id"],
        "filename": found["filename"],
        "index": end,
    }


def _usage(usage: FakeUsage) -> Json:
    return {
        "input_tokens": usage.prompt_tokens,
        "input_tokens_details": {"cached_tokens": usage.cached_tokens},
        "output_tokens": usage.completion_tokens,
        "output_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
        "total_tokens": usage.prompt_tokens + usage.completion_tokens,
    }

"""The OpenAI file API behind the Responses fake: files, vector stores, file batches.

The routes and bodies file search uses, as the real API has them (the `openai` SDK runs
against them unpatched), under `/v1` or Azure's `/openai`:

    POST   /files                                 multipart: `file`, `purpose`
    GET    /files/{id}        DELETE /files/{id}
    POST   /vector_stores                         {"name": ...}
    GET    /vector_stores/{id}   DELETE /vector_stores/{id}
    POST   /vector_stores/{id}/file_batches       {"file_ids": [...]}
    GET    /vector_stores/{id}/file_batches/{batch}

A batch stays `in_progress` for `index_polls` GETs, then completes; a file named in
`fail_files` fails processing. `calls` lists every request as "METHOD /path" (without
the prefix), `uploads` every file received (name, bytes), `deleted` the ids deleted.
"""

from __future__ import annotations

import email.parser
import email.policy
import itertools
import json
import re
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from massgen.testing.http_fake import _Handler

Json = dict[str, Any]
_ROUTE = re.compile(
    r"/(?P<kind>files|vector_stores)(?:/(?P<id>[^/]+))?(?:/file_batches(?:/(?P<batch>[^/]+))?)?/?$"
)
_BATCHES = re.compile(r"/vector_stores/[^/]+/file_batches")


@dataclass
class _File:
    object: Json
    content: bytes


@dataclass
class _Batch:
    object: Json
    polls: int = 0


@dataclass
class FileApi:
    """The file API's state; thread-safe (the fake serves each request in a thread)."""

    index_polls: int = 1
    fail_files: Sequence[str] = ()
    # POST /files answered with this error message (HTTP 400), after `accept_uploads`.
    refuse_uploads: str | None = None
    accept_uploads: int = 0
    files: dict[str, _File] = field(default_factory=dict)
    stores: dict[str, Json] = field(default_factory=dict)
    attached: dict[str, list[str]] = field(default_factory=dict)  # store id -> file ids
    batches: dict[str, _Batch] = field(default_factory=dict)
    calls: list[str] = field(default_factory=list)
    uploads: list[tuple[str, bytes]] = field(default_factory=list)  # (name, bytes) received
    deleted: list[str] = field(default_factory=list)
    _ids: Any = field(default_factory=itertools.count)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def search(self, stores: Sequence[str], names: Sequence[str]) -> list[Json]:
        """The files named `names` in `stores` (processed ones only), with a text excerpt."""
        with self._lock:
            ids = [f for store in stores for f in self.attached.get(store, [])]
            found = [self.files[f] for f in dict.fromkeys(ids) if f in self.files]
        return [
            {
                "file_id": f.object["id"],
                "filename": f.object["filename"],
                "text": f.content[:200].decode("utf-8", "replace"),
            }
            for f in found
            if f.object["filename"] in names
        ]

    def handle(
        self, method: str, path: str, content_type: str, body: bytes
    ) -> tuple[int, Json] | None:
        """Status and JSON answer for a file API request; None: not a file API path."""
        route = _ROUTE.search(urlsplit(path).path)
        if route is None:
            return None
        kind, ident, batch = route["kind"], route["id"], route["batch"]
        short = route.group(0)
        with self._lock:
            self.calls.append(f"{method} {short}")
            if kind == "files":
                return self._files(method, ident, content_type, body)
            if _BATCHES.search(short):
                return self._batches(method, ident, batch, body)
            return self._stores(method, ident, body)

    def _next(self, prefix: str) -> str:
        return f"{prefix}{next(self._ids):04d}"

    def _files(self, method: str, ident: str | None, ctype: str, body: bytes) -> tuple[int, Json]:
        if method == "POST" and ident is None:
            if self.refuse_uploads is not None and len(self.files) >= self.accept_uploads:
                return _error(400, self.refuse_uploads)
            fields = _multipart(ctype, body)
            if "file" not in fields or fields.get("purpose", (None, b""))[1] != b"assistants":
                return _error(400, "'file' and purpose 'assistants' are required")
            name, content = fields["file"]
            file = _file_object(self._next("file-fake"), name or "upload", content)
            self.files[file["id"]] = _File(file, content)
            self.uploads.append((file["filename"], content))
            return 200, file
        if ident not in self.files:
            return _error(404, f"No such File object: {ident}")
        if method == "DELETE":
            del self.files[ident]
            self.deleted.append(ident)
            return 200, {"id": ident, "object": "file", "deleted": True}
        return 200, self.files[ident].object

    def _stores(self, method: str, ident: str | None, body: bytes) -> tuple[int, Json]:
        if method == "POST" and ident is None:
            asked = json.loads(body or b"{}")
            store = _store_object(self._next("vs_fake"), str(asked.get("name")))
            store["expires_after"] = asked.get("expires_after")
            self.stores[store["id"]] = store
            self.attached[store["id"]] = []
            return 200, store
        if ident not in self.stores:
            return _error(404, f"No vector store found with id '{ident}'.")
        if method == "DELETE":
            del self.stores[ident]
            self.attached.pop(ident, None)
            self.deleted.append(ident)
            return 200, {"id": ident, "object": "vector_store.deleted", "deleted": True}
        return 200, self.stores[ident]

    def _batches(
        self, method: str, store: str | None, ident: str | None, body: bytes
    ) -> tuple[int, Json]:
        if store not in self.stores:
            return _error(404, f"No vector store found with id '{store}'.")
        if method == "POST" and ident is None:
            file_ids = list(json.loads(body or b"{}").get("file_ids") or [])
            unknown = [f for f in file_ids if f not in self.files]
            if unknown:
                return _error(404, f"No such File object: {unknown[0]}")
            batch = _Batch(_batch_object(self._next("vsfb_fake"), store, file_ids))
            self.batches[batch.object["id"]] = batch
            self._progress(batch, file_ids)
            return 200, _public(batch.object)
        if ident not in self.batches:
            return _error(404, f"No file batch found with id '{ident}'.")
        found = self.batches[ident]
        found.polls += 1
        self._progress(found, found.object["file_ids"])
        return 200, _public(found.object)

    def _progress(self, batch: _Batch, file_ids: list[str]) -> None:
        """Completes the batch once it has been polled `index_polls` times."""
        if batch.polls < self.index_polls:
            return
        store = batch.object["vector_store_id"]
        failed = [f for f in file_ids if self.files[f].object["filename"] in self.fail_files]
        done = [f for f in file_ids if f not in failed]
        self.attached[store] += done
        counts = {"in_progress": 0, "completed": len(done), "failed": len(failed)}
        batch.object["file_counts"] = {**counts, "cancelled": 0, "total": len(file_ids)}
        batch.object["status"] = "completed"


def _public(batch: Json) -> Json:
    return {k: v for k, v in batch.items() if k != "file_ids"}


def _error(status: int, message: str) -> tuple[int, Json]:
    body = {"message": message, "type": "invalid_request_error", "param": None, "code": None}
    return status, {"error": body}


def _multipart(content_type: str, body: bytes) -> dict[str, tuple[str | None, bytes]]:
    """The parts of a multipart/form-data body: field name -> (file name, bytes)."""
    head = f"Content-Type: {content_type}\r\n\r\n".encode()
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(head + body)
    parts: dict[str, tuple[str | None, bytes]] = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        payload = part.get_payload(decode=True)
        if isinstance(name, str) and isinstance(payload, bytes):
            parts[name] = (part.get_filename(), payload)
    return parts


def _file_object(ident: str, name: str, content: bytes) -> Json:
    return {
        "id": ident,
        "object": "file",
        "bytes": len(content),
        "created_at": int(time.time()),
        "filename": name,
        "purpose": "assistants",
        "status": "processed",
        "expires_at": None,
        "status_details": None,
    }


def _store_object(ident: str, name: str) -> Json:
    now = int(time.time())
    return {
        "id": ident,
        "object": "vector_store",
        "created_at": now,
        "name": name,
        "usage_bytes": 0,
        "file_counts": {"in_progress": 0, "completed": 0, "failed": 0, "cancelled": 0, "total": 0},
        "status": "completed",
        "last_active_at": now,
        "metadata": {},
        "expires_after": None,
        "expires_at": None,
    }


def _batch_object(ident: str, store: str, file_ids: list[str]) -> Json:
    counts = {"in_progress": len(file_ids), "completed": 0, "failed": 0, "cancelled": 0}
    return {
        "id": ident,
        "object": "vector_store.files_batch",
        "created_at": int(time.time()),
        "vector_store_id": store,
        "status": "in_progress",
        "file_counts": {**counts, "total": len(file_ids)},
        "file_ids": file_ids,  # ours, to finish the batch; not sent
    }


class FileApiHandler(_Handler):
    """The Responses fake's handler: the file API's routes first, then generation."""

    def _file_api(self) -> bool:
        files: FileApi | None = getattr(self.fake, "files", None)
        if files is None:
            return False
        length = int(self.headers.get("content-length", 0))
        if not _ROUTE.search(urlsplit(self.path).path):
            return False
        body = self.rfile.read(length) if length else b""
        answer = files.handle(self.command, self.path, self.headers.get("content-type", ""), body)
        assert answer is not None
        self._json(*answer)
        return True

    def do_POST(self) -> None:
        if not self._file_api():
            super().do_POST()

    def do_GET(self) -> None:
        if not self._file_api():
            super().do_GET()

    def do_DELETE(self) -> None:
        if not self._file_api():
            self._json(404, {"error": {"message": f"no route {self.path}"}})

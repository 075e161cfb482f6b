"""Stored responses: `GET` and `DELETE /v1/responses/{id}`, and what `previous_response_id`
continues.

As OpenAI's API does, a response is stored unless its request said `store: false`; a
streamed one from its `response.created` on (`in_progress` until it ends; `cancelled` if
the client went away). Kept in memory until the server stops, bounded: the
`MAX_STORED` most recently used responses and at most `MAX_STORED_CHARS` of their
text; the least recently used go first. A stored response holds its conversation, so
`previous_response_id` can continue it.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from massgen.coordination.prompts import Turn
from massgen.serve import wire

Json = dict[str, Any]
MAX_STORED = 1000  # responses kept
MAX_STORED_CHARS = 64 * 1024 * 1024  # their bodies and conversations together, about


@dataclass(frozen=True, slots=True)
class Kept:
    body: Json  # the response object, as GET returns it
    turns: tuple[Turn, ...] | None  # its whole conversation; None while it runs
    chars: int


class Responses:
    """The stored responses by id, least recently used out first."""

    def __init__(self, limit: int = MAX_STORED, max_chars: int = MAX_STORED_CHARS) -> None:
        self.limit, self.max_chars = limit, max_chars
        self._kept: OrderedDict[str, Kept] = OrderedDict()
        self._chars = 0

    def get(self, response_id: str) -> Kept | None:
        kept = self._kept.get(response_id)
        if kept is not None:
            self._kept.move_to_end(response_id)
        return kept

    def keep(self, body: Json, turns: tuple[Turn, ...] | None = None) -> None:
        """Store (or replace) the response `body["id"]`."""
        chars = len(json.dumps(body, ensure_ascii=False)) + sum(
            len(t.question) + len(t.answer) for t in turns or ()
        )
        self.delete(body["id"])
        self._kept[body["id"]] = Kept(body, turns, chars)
        self._chars += chars
        while len(self._kept) > self.limit or (self._chars > self.max_chars and self._kept):
            _, dropped = self._kept.popitem(last=False)
            self._chars -= dropped.chars

    def delete(self, response_id: str) -> bool:
        dropped = self._kept.pop(response_id, None)
        if dropped is not None:
            self._chars -= dropped.chars
        return dropped is not None


async def answer(request: Request, stored: Responses) -> Response:
    """`GET /v1/responses/{id}`: the stored response; `DELETE`: forget it."""
    response_id = request.path_params["response_id"]
    if request.method == "DELETE":
        if stored.delete(response_id):
            return JSONResponse({"id": response_id, "object": "response", "deleted": True})
        return not_found(response_id)
    if request.query_params.get("stream", "false").lower() not in ("false", "0"):
        body = wire.error_body(
            "streaming a stored response again is not supported: GET it without `stream`",
            "invalid_request_error",
            "unsupported_parameter",
            "stream",
        )
        return JSONResponse(body, status_code=400)
    kept = stored.get(response_id)
    return JSONResponse(kept.body) if kept is not None else not_found(response_id)


def not_found(response_id: str) -> Response:
    message = (
        f"Response with id {response_id!r} not found: this server keeps the newest "
        f"{MAX_STORED} responses made with `store` true (the default), until it restarts"
    )
    body = wire.error_body(message, "invalid_request_error", "response_not_found", "response_id")
    return JSONResponse(body, status_code=404)

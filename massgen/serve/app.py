"""The ASGI app: the OpenAI-compatible routes, the web page's API, and the page itself.

Every request must name this server in its `Host` header (`serve/hosts.py`: DNS
rebinding). Every route but `/health` and the static page (which holds no data) needs the bearer
token; the page's GETs may use the cookie it gets from `POST /api/login` instead. Answering
a permission ask or an agent's question is a POST, so it needs the token itself (the page
keeps it in the tab).
"""

from __future__ import annotations

import contextlib
import json
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from sse_starlette import EventSourceResponse
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Route

from massgen.core import events as ev
from massgen.core.errors import ConfigError
from massgen.permissions.approval import Choice
from massgen.serve import history, responses, shaping, stored, wire
from massgen.serve.approvals import ANSWER_SECONDS, AlreadyAnswered, UnknownAsk
from massgen.serve.auth import COOKIE, Token, bearer
from massgen.serve.completions import (
    answer_once,
    answer_stream,
    reasoning_of,
    wait_answer,
)
from massgen.serve.hosts import HostCheck, allowed_names
from massgen.serve.questions import AnswerTooLong, QuestionClosed, UnknownQuestion
from massgen.serve.runs import Busy, LiveRun, OpenAsks, Questions, Runs
from massgen.serve.teams import Teams, UnknownTeam, load_runnable, runnable

STATIC = Path(__file__).parent / "static"
PAGE_FILES = {
    "app.js": "text/javascript",
    "markdown.js": "text/javascript",
    "style.css": "text/css",
}
MAX_BODY_BYTES = 8 * 1024 * 1024
STOP_GRACE_S = 3.0  # at shutdown: how long streams get to send their last frame
PAGE_HEADERS = {
    # The page runs only its own files; `no-referrer` keeps a `/?token=` out of Referer.
    "content-security-policy": "default-src 'none'; script-src 'self'; style-src 'self'; "
    "img-src 'self' data:; connect-src 'self'; base-uri 'none'; frame-ancestors 'none'",
    "referrer-policy": "no-referrer",
    "x-content-type-options": "nosniff",
    "cache-control": "no-store",
}
Handler = Callable[[Request], Awaitable[Response]]


@dataclass(frozen=True, slots=True)
class Settings:
    teams: Teams
    token: Token
    max_concurrent: int = 4
    cors_origin: str | None = None
    ask_timeout_s: float = ANSWER_SECONDS  # a permission ask on the page, then a deny
    host: str = "127.0.0.1"  # bound to; with `allowed_hosts`, the `Host` names answered
    allowed_hosts: tuple[str, ...] = ()


def build_app(settings: Settings) -> Starlette:
    runs = Runs(settings.max_concurrent, settings.ask_timeout_s)
    routes = _Routes(settings, runs)

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        # When the server stops, sse-starlette sets `stopping`; cancelling the runs then
        # lets every stream end with its error object within the grace period.
        routes.stopping = anyio.Event()
        async with anyio.create_task_group() as group:
            group.start_soon(_cancel_on, routes.stopping, runs)
            yield
            routes.stopping.set()
        await runs.close()

    names = allowed_names(settings.host, settings.allowed_hosts)
    middleware = [Middleware(HostCheck, names=names)]  # first: before any route, `/` too
    if settings.cors_origin:
        middleware.append(
            Middleware(
                CORSMiddleware,
                allow_origins=[settings.cors_origin],
                allow_methods=["GET", "POST", "DELETE"],
                allow_headers=["authorization", "content-type", "last-event-id"],
            )
        )
    handlers = {404: _not_found, 405: _not_allowed}
    app = Starlette(
        routes=routes.table(),
        middleware=middleware,
        lifespan=lifespan,
        exception_handlers=handlers,  # type: ignore[arg-type]
    )
    app.state.runs = runs
    return app


def _error(
    status: int, message: str, kind: str, code: str | None = None, **headers: str
) -> Response:
    return JSONResponse(wire.error_body(message, kind, code), status_code=status, headers=headers)


async def _not_found(request: Request, exc: HTTPException) -> Response:
    """Every unknown route answers in OpenAI's error shape, so an SDK shows why."""
    message = f"no route {request.method} {request.url.path} on massgen serve"
    if request.url.path.startswith("/v1/"):
        message += " (it serves /v1/chat/completions, /v1/responses and /v1/models)"
    return _error(404, message, "invalid_request_error", "unknown_route")


async def _not_allowed(request: Request, exc: HTTPException) -> Response:
    allow = (exc.headers or {}).get("Allow", "")
    message = f"{request.method} is not allowed on {request.url.path}" + (
        f"; use {allow}" if allow else ""
    )
    headers = {"allow": allow} if allow else {}
    return _error(405, message, "invalid_request_error", "method_not_allowed", **headers)


# What starting a run can refuse, each an OpenAI-shaped error (`_refused`).
REFUSALS = (wire.RequestError, UnknownTeam, ConfigError, Busy)


def _refused(error: Exception) -> Response:
    if isinstance(error, UnknownTeam):
        return _error(404, str(error), "invalid_request_error", "model_not_found")
    if isinstance(error, ConfigError):
        return _error(400, error.render(), "invalid_request_error", "team_config")
    if isinstance(error, Busy):
        retry = {"retry-after": str(error.retry_after)}
        return _error(429, str(error), "rate_limit_error", "busy", **retry)
    assert isinstance(error, wire.RequestError)
    return _bad_request(error)


def _bad_request(error: wire.RequestError) -> Response:
    body = wire.error_body(error.message, "invalid_request_error", error.code, error.param)
    return JSONResponse(body, status_code=error.status)


# A person's answer to an ask or a question that cannot be taken: its status and code.
_NOT_TAKEN: dict[type[Exception], tuple[int, str]] = {
    AnswerTooLong: (413, "answer_too_long"),
    UnknownAsk: (404, "not_found"),
    UnknownQuestion: (404, "not_found"),
    AlreadyAnswered: (409, "already_answered"),
    QuestionClosed: (409, "already_answered"),
}
NOT_TAKEN = tuple(_NOT_TAKEN)


def _not_taken(error: Exception) -> Response:
    status, code = next(v for kind, v in _NOT_TAKEN.items() if isinstance(error, kind))
    return _error(status, str(error), "invalid_request_error", code)


async def _cancel_on(stopping: anyio.Event, runs: Runs) -> None:
    await stopping.wait()
    await runs.close()


class _Routes:
    def __init__(self, settings: Settings, runs: Runs) -> None:
        self.settings, self.runs, self.teams = settings, runs, settings.teams
        self.stopping: anyio.Event | None = None  # set by the lifespan
        self.store = stored.Responses()  # GET /v1/responses/{id}, `previous_response_id`

    def _sse(self, events: AsyncIterator[dict[str, str]]) -> EventSourceResponse:
        # `sep="\n"`: frames end with a blank line, as OpenAI's (not `\r\n\r\n`).
        return EventSourceResponse(
            events,
            ping=15,
            sep="\n",
            shutdown_event=self.stopping,
            shutdown_grace_period=STOP_GRACE_S,
        )

    def table(self) -> list[Route]:
        guard = self._guarded
        return [
            Route("/health", self.health),
            Route("/", self.page),
            Route("/static/{name}", self.static),
            Route("/v1/models", guard(self.models)),
            Route("/v1/models/{name:path}", guard(self.model)),
            Route("/v1/chat/completions", guard(self.chat), methods=["POST"]),
            Route("/v1/responses", guard(self.respond), methods=["POST"]),
            Route(
                "/v1/responses/{response_id}",
                guard(self.stored_response),
                methods=["GET", "DELETE"],
            ),
            Route("/api/login", guard(self.login), methods=["POST"]),
            Route("/api/runs", guard(self.list_runs)),
            Route("/api/runs", guard(self.start_run), methods=["POST"]),
            Route("/api/runs/{run_id}", guard(self.cancel_run), methods=["DELETE"]),
            Route("/api/runs/{run_id}/events", guard(self.run_events)),
            Route("/api/runs/{run_id}/asks/{ask_id}", guard(self.answer_ask), methods=["POST"]),
            Route(
                "/api/runs/{run_id}/questions/{question_id}",
                guard(self.answer_question),
                methods=["POST"],
            ),
            Route("/api/runs/{run_id}/files/{name:path}", guard(self.run_file)),
        ]

    # --- the token ---------------------------------------------------------------------

    def _guarded(self, handler: Handler) -> Handler:
        async def checked(request: Request) -> Response:
            if not self._authorized(request):
                return _error(
                    401,
                    "missing or wrong bearer token (Authorization: Bearer $MASSGEN_SERVE_TOKEN)",
                    "invalid_request_error",
                    "invalid_api_key",
                    **{"www-authenticate": "Bearer"},
                )
            return await handler(request)

        return checked

    def _authorized(self, request: Request) -> bool:
        token = self.settings.token
        given = bearer(request.headers.get("authorization", ""))
        if given:
            return token.matches(given)
        cookie = request.cookies.get(COOKIE, "")
        return request.method == "GET" and bool(cookie) and token.cookie_matches(cookie)

    async def login(self, request: Request) -> Response:
        """The page proved the token with its header: a cookie for its EventSource GETs."""
        response = JSONResponse({"ok": True})
        response.set_cookie(
            COOKIE, self.settings.token.cookie_value, httponly=True, samesite="strict", path="/"
        )
        return response

    # --- plain routes ------------------------------------------------------------------

    async def health(self, request: Request) -> Response:
        return JSONResponse({"ok": True})

    async def page(self, request: Request) -> Response:
        return FileResponse(STATIC / "index.html", media_type="text/html", headers=PAGE_HEADERS)

    async def static(self, request: Request) -> Response:
        name = request.path_params["name"]
        if name not in PAGE_FILES:  # a fixed list: no path from the caller is opened
            return _error(404, f"no file {name!r}", "invalid_request_error", "not_found")
        return FileResponse(STATIC / name, media_type=PAGE_FILES[name], headers=PAGE_HEADERS)

    async def models(self, request: Request) -> Response:
        """The teams that can run here (`teams.runnable`): a key or model missing
        here leaves a team out."""
        data = [_model_entry(t.name, t.description) for t in runnable(self.teams)]
        return JSONResponse({"object": "list", "data": data})

    async def model(self, request: Request) -> Response:
        name = request.path_params["name"]
        try:
            loaded = load_runnable(self.teams, name)
        except (UnknownTeam, ConfigError) as error:
            return _refused(error)
        return JSONResponse(_model_entry(name, loaded.source or ""))

    # --- /v1/chat/completions ----------------------------------------------------------

    async def chat(self, request: Request) -> Response:
        try:
            req = wire.parse_request(await _json_body(request))
            loaded = shaping.shape(load_runnable(self.teams, req.model), req.ask)
            run = await self.runs.start(
                req.model, loaded, req.question, req.history, attachments=req.ask.images
            )
        except REFUSALS as error:
            return _refused(error)
        completion_id = f"chatcmpl-{secrets.token_hex(12)}"
        if req.stream:
            return self._sse(answer_stream(run, req, completion_id))
        return await answer_once(request, run, req, completion_id)

    # --- /v1/responses -----------------------------------------------------------------

    async def respond(self, request: Request) -> Response:
        try:
            req = responses.parse(await _json_body(request), self.store)
            loaded = shaping.shape(load_runnable(self.teams, req.model), req.ask)
            run = await self.runs.start(
                req.model, loaded, req.question, req.history, attachments=req.ask.images
            )
        except REFUSALS as error:
            return _refused(error)
        reply = responses.Reply(req)
        if req.stream:
            return self._sse(responses.stream(run, reply, self.store))
        answer = await wait_answer(request, run, req.ask)
        if isinstance(answer, Response):
            return answer
        return JSONResponse(reply.finished(answer, reasoning_of(run), self.store))

    async def stored_response(self, request: Request) -> Response:
        return await stored.answer(request, self.store)

    # --- the web page's API ------------------------------------------------------------

    async def list_runs(self, request: Request) -> Response:
        live = [_live_summary(run) for run in self.runs.listed()]
        seen = {entry["id"] for entry in live}
        past = [r.to_dict() for r in history.past_runs() if r.id not in seen]
        return JSONResponse({"runs": live + past})

    async def start_run(self, request: Request) -> Response:
        try:
            body = await _json_body(request)
            if not isinstance(body, dict):
                raise wire.RequestError("the request body must be a JSON object")
            question, team = body.get("question"), body.get("team") or "massgen"
            if not isinstance(question, str) or not question.strip() or not isinstance(team, str):
                raise wire.RequestError("`question` must be text and `team` a team name")
            loaded = self.teams.load(team)
            run = await self.runs.start(team, loaded, question, person=True)
        except REFUSALS as error:
            return _refused(error)
        return JSONResponse({"id": run.id}, status_code=201)

    async def cancel_run(self, request: Request) -> Response:
        run = self.runs.get(request.path_params["run_id"])
        if run is None:
            return _error(404, "no live run with that id", "invalid_request_error", "not_found")
        await run.cancel()
        return JSONResponse({"id": run.id, "cancelled": True})

    async def answer_ask(self, request: Request) -> Response:
        """A person's choice on an open permission ask of a page-started run."""
        run = self.runs.get(request.path_params["run_id"])
        try:
            body = await _json_body(request)
            given = body.get("choice") if isinstance(body, dict) else None
            if given not in tuple(Choice):
                raise wire.RequestError("`choice` must be one of: once, session, always, deny")
            if run is None or run.approver is None:
                raise UnknownAsk("no open ask with that id")
            run.approver.answer(request.path_params["ask_id"], Choice(given))
        except wire.RequestError as error:
            return _bad_request(error)
        except NOT_TAKEN as error:
            return _not_taken(error)
        return JSONResponse({"id": request.path_params["ask_id"], "choice": given})

    async def answer_question(self, request: Request) -> Response:
        """A person's words, or a skip, for an agent's open question (`ask_others`)."""
        run = self.runs.get(request.path_params["run_id"])
        question_id = request.path_params["question_id"]
        try:
            text = _answer_of(await _json_body(request))
            if run is None or run.approver is None:
                raise UnknownQuestion("no question with that id")
            run.approver.questions.answer(question_id, text)
        except wire.RequestError as error:
            return _bad_request(error)
        except NOT_TAKEN as error:
            return _not_taken(error)
        return JSONResponse({"id": question_id, "skipped": text is None})

    async def run_events(self, request: Request) -> Response:
        """The run's events (as `--stream-events` prints them), `id:` = index: a page
        that reconnects (Last-Event-ID) or reloads (`?from=0`) replays, then follows."""
        run_id = request.path_params["run_id"]
        start = _start_index(request)
        run = self.runs.get(run_id)
        if run is not None:
            return self._sse(_live_events(run, start))
        recorded = history.recorded_events(run_id)
        if recorded is None:
            return _error(404, "no run with that id", "invalid_request_error", "not_found")
        return self._sse(_past_events(recorded, start))

    async def run_file(self, request: Request) -> Response:
        path = history.run_file(request.path_params["run_id"], request.path_params["name"])
        if path is None:
            return _error(404, "no such file in that run", "invalid_request_error", "not_found")
        return FileResponse(path, media_type="text/plain; charset=utf-8", headers=PAGE_HEADERS)


async def _json_body(request: Request) -> Any:
    size = int(request.headers.get("content-length") or 0)
    if size > MAX_BODY_BYTES:
        raise wire.RequestError("the request body is too large", status=413)
    body = await request.body()
    if len(body) > MAX_BODY_BYTES:
        raise wire.RequestError("the request body is too large", status=413)
    try:
        return json.loads(body)
    except ValueError:
        raise wire.RequestError("the request body is not valid JSON") from None


def _model_entry(name: str, description: str) -> dict[str, Any]:
    return {
        "id": name,
        "object": "model",
        "created": 0,
        "owned_by": "massgen",
        "description": description,
    }


def _answer_of(body: Any) -> str | None:
    """`{"text": "..."}`: the answer; `{"skip": true}`: None. Raises RequestError."""
    if isinstance(body, dict) and body.get("skip") is True and "text" not in body:
        return None
    text = body.get("text") if isinstance(body, dict) else None
    if not isinstance(text, str) or not text.strip():
        raise wire.RequestError('send {"text": "your answer"}, or {"skip": true} to skip')
    return text.strip()


def _start_index(request: Request) -> int:
    last = request.headers.get("last-event-id", "")
    if last.isdigit():
        return int(last) + 1
    given = request.query_params.get("from", "0")
    return int(given) if given.isdigit() else 0


def _live_summary(run: LiveRun) -> dict[str, Any]:
    ended = next((e for e in reversed(run.events) if isinstance(e, ev.RunFinished)), None)
    finished = ended.outcome if ended else None
    return {
        "id": run.id,
        "question": run.question,
        "team": run.team,
        "started": None,
        "status": finished.status if finished else ("interrupted" if run.done else "running"),
        "winner": finished.winner if finished else None,
        "live": not run.done,
    }


def _event_json(event: ev.AnyEvent) -> str:
    return json.dumps(event.to_dict(), ensure_ascii=False, default=str)


async def _live_events(run: LiveRun, start: int) -> AsyncIterator[dict[str, str]]:
    """Events with their index as `id:`; the open asks as an `asks` message and the open
    (and recently closed) questions as a `questions` message, without one (a reconnect
    resumes from the last event, and is sent both again)."""
    async for item in run.feed(start):
        if isinstance(item, OpenAsks):
            asks = [ask.to_dict() for ask in item.asks]
            yield {"event": "asks", "data": json.dumps({"asks": asks}, ensure_ascii=False)}
            continue
        if isinstance(item, Questions):
            yield {"event": "questions", "data": _questions_json(item)}
            continue
        index, event = item
        yield {"id": str(index), "data": _event_json(event)}
    yield {"event": "end", "data": "{}"}


def _questions_json(questions: Questions) -> str:
    shown = {
        "questions": [q.to_dict() for q in questions.open],
        "closed": [q.to_dict() for q in questions.closed],
    }
    return json.dumps(shown, ensure_ascii=False)


async def _past_events(events: list[dict[str, Any]], start: int) -> AsyncIterator[dict[str, str]]:
    for index, event in enumerate(events[start:], start):
        yield {"id": str(index), "data": json.dumps(event, ensure_ascii=False)}
    yield {"event": "end", "data": "{}"}

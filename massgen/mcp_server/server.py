"""The MCP server: `ask_team`, `list_teams` and `review`, over `asking.Asker`.

Each tool returns structured content (its output schema is the pydantic model below) and
a short text summary for clients that show text only. A refusal or a failed run is a
tool error whose text says why, never a traceback.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

from mcp import types
from mcp.server.fastmcp import Context, FastMCP
from mcp.server.fastmcp.exceptions import ToolError
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import CallToolResult, TextContent
from pydantic import BaseModel, Field

from massgen.api import RunResult
from massgen.backends.pricing import format_cost
from massgen.core.errors import ConfigError
from massgen.mcp_server.asking import Asker, Refused, Report
from massgen.mcp_server.teams import runnable
from massgen.serve.teams import UnknownTeam

INSTRUCTIONS = (
    "massgen asks a team of LLM agents (several models): each answers on its own, they read "
    "each other's answers, vote, and the winner presents. Use ask_team for a second (and "
    "third) opinion on a hard question, a design choice or a bug; review for several models "
    "reviewing files or a diff. A run takes from seconds to minutes and costs model calls."
)
MAX_DIFF_CHARS = 200_000

Direct = Callable[[types.JSONRPCMessage], bool]  # writes a message now, if it can


class Vote(BaseModel):
    voter: str
    voted_for: str
    reason: str


class TeamAnswer(BaseModel):
    answer: str = Field(description="the team's final answer")
    status: str = Field(description="ok, degraded, timeout, interrupted, budget or failed")
    winner: str | None = Field(description="the agent whose answer won")
    votes: list[Vote]
    agreement: str | None = Field(description="how the independent first answers agreed")
    worth: str = Field(description="agreement, tokens, and tokens against one model call")
    tokens: int
    cost_usd: float | None = Field(description="estimated; None when no model has a price")
    log_dir: str | None = Field(description="the run's logs and journal")


class Team(BaseModel):
    name: str
    description: str
    agents: list[str]


class Teams(BaseModel):
    teams: list[Team]


def build(asker: Asker, direct: Direct | None = None) -> FastMCP:
    """The server; with `direct` (stdio's `Out.send_now`), progress is written through it
    at once instead of through the SDK's session."""
    # The SDK's own Host check is off: over HTTP, `http.guarded` applies `massgen serve`'s.
    security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    server = FastMCP(
        "massgen", instructions=INSTRUCTIONS, log_level="WARNING", transport_security=security
    )
    _add_ask_team(server, asker, direct)
    _add_review(server, asker, direct)
    _add_list_teams(server, asker)
    return server


def _add_ask_team(server: FastMCP, asker: Asker, direct: Direct | None) -> None:
    @server.tool(title="Ask the team")
    async def ask_team(
        question: Annotated[str, Field(description="the question or task, self-contained")],
        ctx: Context,
        team: Annotated[str | None, Field(description="a name from list_teams")] = None,
        context: Annotated[
            list[str] | None,
            Field(description="files or directories the team may read (never write)"),
        ] = None,
        max_cost: Annotated[
            float | None, Field(description="USD for this run; the server caps it")
        ] = None,
    ) -> Annotated[CallToolResult, TeamAnswer]:
        """Ask a team of LLM agents: they answer in parallel, refine, vote, and the winner
        presents. Returns the final answer, the winner, the votes, how the first answers
        agreed, tokens, cost and the log directory. Progress arrives as notifications."""
        return await _asked(asker, ctx, direct, question, team, context or [], max_cost)


def _add_review(server: FastMCP, asker: Asker, direct: Direct | None) -> None:
    @server.tool(title="Several models review files or a diff")
    async def review(
        ctx: Context,
        files: Annotated[list[str] | None, Field(description="files to review")] = None,
        diff: Annotated[str | None, Field(description="a unified diff to review")] = None,
        focus: Annotated[str, Field(description="what to look for")] = "",
        team: Annotated[str | None, Field(description="a name from list_teams")] = None,
        max_cost: Annotated[float | None, Field(description="USD for this run")] = None,
    ) -> Annotated[CallToolResult, TeamAnswer]:
        """Several models review files (read-only) or a diff and agree on the findings that
        matter, most important first."""
        if not files and not diff:
            raise ToolError("give files to review, a diff, or both")
        if diff and len(diff) > MAX_DIFF_CHARS:
            raise ToolError(f"the diff is over {MAX_DIFF_CHARS:,} characters")
        question = review_question(files or [], diff or "", focus)
        return await _asked(asker, ctx, direct, question, team, files or [], max_cost)


def _add_list_teams(server: FastMCP, asker: Asker) -> None:
    @server.tool(title="Teams that can run here")
    def list_teams() -> Teams:
        """The teams ask_team can use on this machine (their API keys are set, their local
        models installed). `massgen` is the server's own team."""
        listed = runnable(asker.teams)
        return Teams(teams=[Team(name=t.name, description=t.description, agents=list(t.agents))
                            for t in listed])  # fmt: skip


def review_question(files: list[str], diff: str, focus: str) -> str:
    parts = ["Review the following for correctness bugs, security problems, and risky or "
             "unclear code. List concrete findings, most important first, each with where "
             "it is and a fix; say plainly if you find nothing that matters."]  # fmt: skip
    if focus:
        parts.append(f"Focus: {focus}")
    if files:
        parts.append("Files (read-only context): " + ", ".join(files))
    if diff:
        parts.append(f"The diff:\n```diff\n{diff}\n```")
    return "\n\n".join(parts)


async def _asked(
    asker: Asker,
    ctx: Context,
    direct: Direct | None,
    question: str,
    team: str | None,
    context: list[str],
    max_cost: float | None,
) -> CallToolResult:
    try:
        loaded, question = asker.prepare(question, team, context, max_cost)
    except (Refused, UnknownTeam) as error:
        raise ToolError(str(error)) from None
    except ConfigError as error:
        raise ToolError(error.render()) from None
    try:
        result = await asker.ask(loaded, question, _reporter(ctx, direct))
    except Refused as error:
        raise ToolError(str(error)) from None
    except ConfigError as error:
        raise ToolError(error.render()) from None
    return _answer(result)


def _reporter(ctx: Context, direct: Direct | None) -> Report:
    """Sends each progress line as the next step of this call's progress."""
    meta = ctx.request_context.meta
    token = meta.progressToken if meta else None
    step = 0

    async def report(line: str) -> None:
        nonlocal step
        step += 1
        if token is None:
            return
        if direct is None or not direct(_progress(token, step, line)):
            await ctx.report_progress(step, message=line)

    return report


def _progress(token: types.ProgressToken, step: int, line: str) -> types.JSONRPCMessage:
    """The notification the SDK's `send_progress_notification` would send."""
    params = types.ProgressNotificationParams(progressToken=token, progress=step, message=line)
    note = types.ProgressNotification(params=params)
    fields = note.model_dump(by_alias=True, mode="json", exclude_none=True)
    return types.JSONRPCMessage(types.JSONRPCNotification(jsonrpc="2.0", **fields))


def _answer(result: RunResult) -> CallToolResult:
    answer = TeamAnswer(
        answer=result.answer,
        status=str(result.status),
        winner=result.winner,
        votes=[
            Vote(voter=v.voter, voted_for=v.target_label, reason=v.reason) for v in result.votes
        ],
        agreement=result.agreement.describe() if result.agreement else None,
        worth=result.worth(),
        tokens=result.total_usage.total_tokens,
        cost_usd=result.total_cost_usd,
        log_dir=str(result.log_dir) if result.log_dir else None,
    )
    summary = (
        f"{result.answer}\n\n---\nstatus: {answer.status}; winner: {answer.winner or '-'}; "
        f"{answer.worth}; cost: {format_cost(answer.cost_usd)}"
        + (f"; logs: {answer.log_dir}" if answer.log_dir else "")
    )
    return CallToolResult(
        content=[TextContent(type="text", text=summary)],
        structuredContent=answer.model_dump(mode="json"),
        isError=not result.ok and not result.answer,
    )

"""The permission engine's wrapper hands a call's context on unchanged: a guarded tool's
progress lines still reach the person watching, after the approval."""

from __future__ import annotations

from perm_helpers import Scripted, engine

from massgen.coordination.tool_round import ToolBounds, run_round
from massgen.core import events as ev
from massgen.core import tool_progress as progress
from massgen.core.toolbox import ToolContext
from massgen.core.types import ToolCall
from massgen.permissions.approval import Choice
from massgen.permissions.guarded import Guarded
from massgen.permissions.risk import Zones
from massgen.tool import ExecutionResult, TextContent
from massgen.tools.python import PythonToolbox, tool_from_function


async def test_a_guarded_generator_tool_still_reports_progress(tmp_path, monkeypatch):
    monkeypatch.setattr(progress, "MIN_INTERVAL_S", 0.0)

    async def crawl(pages: int):
        for page in range(pages):
            yield ExecutionResult(output_blocks=[TextContent(data=f"page {page}")], is_log=True)
        yield f"crawled {pages}"

    box = PythonToolbox([tool_from_function(crawl, "crawl")], 5)
    approver = Scripted(Choice.ONCE)
    guarded = Guarded(box, engine(tmp_path, approver=approver), lambda _: Zones())
    events: list[ev.AnyEvent] = []
    call = ToolCall("c1", "crawl", '{"pages": 3}')
    (result,) = await run_round(guarded, [call], ToolContext("a"), ToolBounds(), events.append)
    assert result.content == "crawled 3"
    assert len(approver.asked) == 1
    lines = [e.message for e in events if isinstance(e, ev.ToolCallProgress)]
    assert lines == ["page 0", "page 1", "page 2"]

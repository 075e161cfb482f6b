"""The app's approver: permission asks and agents' questions as dialogs over the app.

    approver = AppApprover(app)
    TeamRun(loaded, question, sinks=[view], approver=approver)

Today's rules (`ui/approval.py`), in a dialog: one ask at a time (an `asyncio.Lock`), the
pointer starts on "deny" so a stray Enter never allows, Escape denies, no answer within
`timeout_seconds` denies, Ctrl-C at the dialog denies and then stops the run. The app
behind the dialog keeps drawing: other agents' streams go on while one agent waits.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from massgen.permissions.approval import ApprovalRequest, Choice, Operator
from massgen.permissions.describe import visible
from massgen.ui.approval import ANSWER_SECONDS, CHOICES, request_rows
from massgen.ui.model import display_name

if TYPE_CHECKING:
    from massgen.ui.tui.app import TeamApp

T = TypeVar("T")

DIALOG_CSS = """
Dialog { align: center middle; }
Dialog > Vertical {
    width: 90; max-width: 100%; height: auto; max-height: 90%;
    border: thick $warning; background: $surface; padding: 0 1;
}
Dialog OptionList { height: auto; max-height: 8; }
"""


class Dialog(ModalScreen[Any]):
    """A question over the app; `decline()` answers it with its safe answer."""

    DEFAULT_CSS = DIALOG_CSS
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "decline", "deny")]
    safe: Any = None

    def decline(self) -> None:
        self.dismiss(self.safe)

    def action_decline(self) -> None:
        self.decline()


class ApprovalDialog(Dialog):
    """Allow this call? once / for this session / always / deny, the pointer on deny."""

    safe = Choice.DENY

    def __init__(self, request: ApprovalRequest, agent_name: str) -> None:
        super().__init__()
        self.request, self.agent_name = request, agent_name

    def compose(self) -> ComposeResult:
        rows = request_rows(self.request, self.agent_name)
        with Vertical():
            yield Static(Text("permission asked", style="bold yellow"))
            yield Static(rows)
            yield Static(Text("Allow this call? (↑/↓ then Enter; Esc denies)", style="dim"))
            options = [Option(title, id=choice.value) for title, choice in CHOICES]
            yield OptionList(*options, id="choices")

    def on_mount(self) -> None:
        choices = self.query_one(OptionList)
        choices.highlighted = len(CHOICES) - 1  # deny
        choices.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(Choice(event.option.id or Choice.DENY))


class QuestionDialog(Dialog):
    """An agent's question to the person (`coordination.broadcast: human`)."""

    safe = None

    def __init__(self, agent_name: str, question: str) -> None:
        super().__init__()
        self.agent_name, self.question = agent_name, question

    def compose(self) -> ComposeResult:
        lines = [visible(line, 4000) for line in self.question.splitlines()[:80]]
        with Vertical():
            title = f"question from {visible(self.agent_name, 120)}"
            yield Static(Text(title, style="bold cyan"))
            yield Static(Text("\n".join(lines)))
            yield Static(Text("Enter sends; an empty line or Esc skips", style="dim"))
            yield Input(id="answer")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value if event.value.strip() else None)


class AppApprover:
    """Answers the permission engine's asks (and agents' questions) in the app."""

    operator: Operator = "human"

    def __init__(self, app: TeamApp, *, timeout_seconds: float = ANSWER_SECONDS) -> None:
        self.app = app
        self.timeout = timeout_seconds
        self._lock = asyncio.Lock()

    async def ask(self, request: ApprovalRequest) -> Choice:
        dialog = ApprovalDialog(request, self._agent_name(request.agent))
        answer = await self._show(dialog, self.timeout, "denied")
        return answer if isinstance(answer, Choice) else Choice.DENY

    async def answer_question(
        self, agent: str, question: str, timeout_seconds: float
    ) -> str | None:
        """None: skipped (empty, Esc), no answer in time, or Ctrl-C (which stops the run)."""
        dialog = QuestionDialog(self._agent_name(agent), question)
        answer = await self._show(dialog, min(timeout_seconds, self.timeout), "skipped")
        return answer if isinstance(answer, str) else None

    async def _show(self, dialog: Dialog, timeout: float, missed: str) -> Any:
        async with self._lock:
            future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

            def answered(value: Any) -> None:
                if not future.done():
                    future.set_result(value)

            # The engine asks from the run's tasks: the app is touched only in its own.
            app = self.app
            try:
                async with asyncio.timeout(timeout):
                    await app.ready.wait()
                    if not app.call_later(lambda: app.push_screen(dialog, answered)):
                        return dialog.safe  # the app has closed
                    return await future
            except TimeoutError:
                note = f"No answer within {timeout:g}s: {missed}."
                app.call_later(app.notify, note, severity="warning")
                return dialog.safe
            finally:
                # Unanswered (a timeout or a cancelled run cancels the future itself).
                if not future.done() or future.cancelled():
                    app.call_later(_close, dialog)

    def _agent_name(self, agent: str) -> str:
        # display_name adds an agent it has not seen to the model: only ask about known ones.
        if agent in self.app.model.state.agents:
            return display_name(self.app.model, agent)
        return agent


def _close(dialog: Dialog) -> None:
    """Take down a dialog nobody answered (timed out, or its run was cancelled)."""
    if dialog.is_current:
        dialog.decline()

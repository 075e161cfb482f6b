"""The live view's approver: pause the panels, ask in the terminal, draw the panels again.

    approver = terminal_approver(view)   # None unless `view` is a LiveView on a terminal
    TeamRun(loaded, question, sinks=[view], approver=approver)

One prompt at a time: asks from several agents wait their turn (an `asyncio.Lock`), each
with the whole terminal. The pointer starts on "deny", so a stray Enter never allows, and
keys typed before the prompt appeared are dropped. No answer within `timeout_seconds` is a
deny; Ctrl-C at the prompt is a deny and then interrupts the run as any Ctrl-C does.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from massgen.permissions.approval import ApprovalRequest, Choice, Operator
from massgen.permissions.describe import effects_text, visible
from massgen.ui.model import display_name

if TYPE_CHECKING:  # the app imports this module's CHOICES, not the live view
    from massgen.ui.live import LiveView

ANSWER_SECONDS = 300.0  # the predecessor's handshake waits as long
CHOICES: tuple[tuple[str, Choice], ...] = (
    ("allow once", Choice.ONCE),
    ("allow for this session", Choice.SESSION),
    ("always allow (saved in .massgen/settings.local.json)", Choice.ALWAYS),
    ("deny", Choice.DENY),
)
RISK_STYLES = {"low": "green", "medium": "yellow", "high": "bold red"}


def terminal_approver(view: object) -> TerminalApprover | None:
    """An approver for `view` when a person can answer it: a live view, stdin and stdout
    both terminals. Otherwise None, and the engine's headless policy answers."""
    from massgen.ui.live import LiveView

    if not isinstance(view, LiveView):
        return None
    try:
        interactive = sys.stdin.isatty() and sys.stdout.isatty()
    except (AttributeError, ValueError):  # a replaced or closed stream
        interactive = False
    return TerminalApprover(view) if interactive else None


# A SIGINT from outside stays the run's (cli, chat), not the prompt's. An error that
# another task leaves on the loop (an SDK client closed late) is logged as usual, not
# shown by prompt_toolkit's handler, which would pause the prompt behind "Press ENTER to
# continue..." and take the person's Enter for that.
_PROMPT_RUN: dict[str, Any] = {"handle_sigint": False, "set_exception_handler": False}


class TerminalApprover:
    """Answers the permission engine's asks with a questionary prompt under the live view."""

    operator: Operator = "human"

    def __init__(
        self,
        view: LiveView,
        *,
        timeout_seconds: float = ANSWER_SECONDS,
        on_interrupt: Callable[[], None] | None = None,
    ) -> None:
        """`on_interrupt`: what Ctrl-C at the prompt does after denying; by default it
        raises SIGINT, so the run's own Ctrl-C handling proceeds (tests pass their own)."""
        self.view = view
        self.timeout = timeout_seconds
        self._on_interrupt = on_interrupt or _interrupt_run
        self._lock = asyncio.Lock()

    async def ask(self, request: ApprovalRequest) -> Choice:
        async with self._lock:
            self.view.pause()
            try:
                self._show(request)
                return await self._answer()
            finally:
                self.view.resume()

    async def answer_question(
        self, agent: str, question: str, timeout_seconds: float
    ) -> str | None:
        """An agent's `ask_others` question (`coordination.broadcast: human`), answered in
        words at the same prompt, one at a time. None: skipped (an empty line), no answer
        within the time, or Ctrl-C (which then interrupts the run, as at an approval)."""
        async with self._lock:
            self.view.pause()
            try:
                title = f"question from {visible(self._agent_name(agent), 120)}"
                # Line by line, each escaped: a model's text must not move the cursor.
                lines = [Text(visible(line, 4000)) for line in question.splitlines()[:80]]
                self.view.console.print(Rule(title, style="cyan", align="left"), *lines)
                return await self._text_answer(min(timeout_seconds, self.timeout))
            finally:
                self.view.resume()

    async def _text_answer(self, timeout: float) -> str | None:
        import questionary

        prompt = questionary.text("Your answer:", instruction="(Enter sends; an empty line skips)")
        _drop_typed_ahead()
        try:
            async with asyncio.timeout(timeout):
                answer = await prompt.application.run_async(**_PROMPT_RUN)
        except KeyboardInterrupt:
            self._say("skipped (Ctrl-C); stopping the run")
            self._on_interrupt()
            return None
        except TimeoutError:
            self._say(f"no answer within {timeout:g}s: skipped")
            return None
        return answer if isinstance(answer, str) and answer.strip() else None

    def _show(self, request: ApprovalRequest) -> None:
        rows = request_rows(request, self._agent_name(request.agent))
        self.view.console.print(Rule("permission asked", style="yellow", align="left"), rows)

    def _agent_name(self, agent: str) -> str:
        # display_name adds an agent it has not seen to the model: only ask about known ones.
        if agent in self.view.model.state.agents:
            return display_name(self.view.model, agent)
        return agent

    async def _answer(self) -> Choice:
        import questionary

        question = questionary.select(
            "Allow this call?",
            choices=[questionary.Choice(title, value=choice) for title, choice in CHOICES],
            default=Choice.DENY,  # the value: a stray Enter denies
            instruction="(↑/↓ then Enter; Ctrl-C denies and stops the run)",
        )
        _drop_typed_ahead()
        try:
            async with asyncio.timeout(self.timeout):
                answer = await question.application.run_async(**_PROMPT_RUN)
        except KeyboardInterrupt:  # Ctrl-C is a key at the prompt (raw mode), not a signal
            self._say("denied (Ctrl-C); stopping the run")
            self._on_interrupt()
            return Choice.DENY
        except TimeoutError:
            self._say(f"no answer within {self.timeout:g}s: denied")
            return Choice.DENY
        return answer if isinstance(answer, Choice) else Choice.DENY

    def _say(self, text: str) -> None:
        self.view.console.print(Text(text, style="yellow"))


def _drop_typed_ahead() -> None:
    """Keys pressed while the panels were drawing are not an answer to this prompt."""
    with contextlib.suppress(ImportError, OSError, ValueError, AttributeError):
        if sys.stdin.isatty():
            import termios

            termios.tcflush(sys.stdin.fileno(), termios.TCIFLUSH)


def _interrupt_run() -> None:
    """Send ourselves the SIGINT that Ctrl-C would have sent outside the prompt: the CLI's
    `asyncio.run` cancels the run, a chat cancels the turn. Sent on the loop's next turn:
    the deny goes back to the engine, which records it without yielding, so the ledger has
    it before the cancellation lands. Not later than that: a timer (the old 50 ms) let a
    fast run finish first, and the late SIGINT then hit the process outside the run."""
    asyncio.get_running_loop().call_soon(signal.raise_signal, signal.SIGINT)


def request_rows(request: ApprovalRequest, agent_name: str) -> Table:
    """A permission ask as the terminal and the app show it: who, which tool, what it
    would do, how risky, why; every value the agent chose is made visible and bounded."""
    rows = Table.grid(padding=(0, 2))
    rows.add_column(style="bold", no_wrap=True)
    rows.add_column()
    rows.add_row("agent", Text(visible(agent_name, 120)))
    rows.add_row("tool", Text(visible(request.tool, 120)))
    for number, line in enumerate(effects_text(request)):
        rows.add_row("effect" if number == 0 else "", Text(line))
    rows.add_row("risk", Text(request.risk, style=RISK_STYLES.get(request.risk, "bold red")))
    rows.add_row("reason", Text(visible(request.reason)))
    if request.phase == "presentation":
        rows.add_row("phase", Text("final presentation"))
    return rows

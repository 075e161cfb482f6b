"""The app as a view: a sink for the run's events that also runs the turn under the app.

    view = TuiView(models={"careful": "gpt-5"})
    turn = TeamRun(loaded, question, sinks=[view], approver=view.approver)
    result = interrupts.run_interruptible(view.drive(turn.execute()))

`drive` opens the app, runs the turn beside it and, once the turn is over, keeps the final
answer on screen until the user quits; then it prints the same result block as the live
view to the normal screen, so the answer stays in the scrollback. Ctrl-C keeps today's
meaning (`runs/interrupts.py`): the app's first Ctrl-C cancels the turn, which ends with
what was decided, and `drive` raises `KeyboardInterrupt` after the user has read it, as
`run_interruptible` does; a second exits at once, the terminal given back first.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from massgen.core import events as ev
from massgen.runs import interrupts
from massgen.ui.model import ViewModel
from massgen.ui.tui import AppFailed
from massgen.ui.tui.app import TeamApp
from massgen.ui.tui.approval import AppApprover
from massgen.ui.tui.terminal import saved_terminal

T = TypeVar("T")

# The app's streams scroll: keep more of each than a fixed panel does (bounded still).
TAIL_CHARS = 200_000


class TuiView:
    def __init__(
        self, *, models: dict[str, str] | None = None, question: str = "", preparing: str = ""
    ) -> None:
        """`preparing`: the status bar's word until the run starts ("loading the team")."""
        self.model = ViewModel(tail_chars=TAIL_CHARS)
        self.app = TeamApp(self.model, models, question=question)
        self.app.preparing = preparing
        self.approver = AppApprover(self.app)
        self.printed = False
        self.after_app: list[str] = []  # lines for stderr once the app has closed

    def set_models(self, models: dict[str, str]) -> None:
        """Each agent's model, once the config has loaded (under the app, in a thread)."""
        self.app.models = models
        self.app.changed = True

    def __call__(self, event: ev.AnyEvent) -> None:
        self.model.apply(event)
        self.app.note(event)

    async def drive(
        self,
        main: Coroutine[Any, Any, T],
        *,
        warm: Callable[[], object] | None = None,
        **options: Any,
    ) -> T:
        """Run `main` (the team's turn) under the app; its result once the user quits.
        `main` starts once the app's first frame is drawn, after `warm` (imports the turn
        would make as it starts, run in a thread so the app keeps answering keys).
        `options` go to `App.run_async` (a test runs it headless, with a pilot).

        Raises:
            KeyboardInterrupt: the user stopped the run (Ctrl-C), after reading the rest.
            AppFailed: the app crashed; the run was stopped if it was still going.
        """
        restore = None if options.get("headless") else saved_terminal()
        if restore is not None:  # a second signal exits at once: the terminal first
            interrupts.before_exit.append(restore)
        app_task = asyncio.create_task(self.app.run_async(**options))
        turn = asyncio.create_task(run_turn(self.app, after_first_frame(self.app, main, warm)))
        try:
            await asyncio.wait({app_task, turn}, return_when=asyncio.FIRST_COMPLETED)
            if app_task.done() and not turn.done():
                # The app closed under a running turn: a second Ctrl-C, Ctrl-Q or a crash.
                forget(restore)  # the app has given the terminal back
                if self.app.hard_exit:
                    interrupts.exit_now()
                self.app.interrupts += 1
                if self.app.stop_run is not None:
                    self.app.stop_run()
            try:
                result = await turn
            except Stopped:
                await app_task  # what was kept stays on screen until the user quits
                self._check_app(stopped=True)
                raise KeyboardInterrupt from None
            await app_task  # the final answer stays until the user quits
            self._check_app(stopped=False)
            return result
        finally:
            await settle(turn)
            if not app_task.done():
                self.app.exit()
            await settle(app_task)
            forget(restore)
            for line in self.after_app:
                print(line, file=sys.stderr)
            self.after_app.clear()
            self.print_result()

    def _check_app(self, *, stopped: bool) -> None:
        if self.app.return_code:
            raise AppFailed(self.app.failure, stopped=stopped)

    def print_result(self) -> None:
        """The live view's result block on the normal screen, once."""
        if self.printed or self.model.state.finished is None:
            return
        self.printed = True
        from rich.console import Console

        from massgen.ui.live import result_block

        Console(file=sys.stdout).print(result_block(self.model, self.app.elapsed))

    def close(self) -> None:
        """The CLI's end of a view: `drive` has printed the answer already."""
        self.print_result()


class Stopped(Exception):
    """The user stopped the turn from the app (not a KeyboardInterrupt: raised in a task,
    that one would stop the event loop itself)."""


async def run_turn(app: TeamApp, main: Coroutine[Any, Any, T]) -> T:
    """`main` with the app's first Ctrl-C wired to cancel it; `Stopped` when that is how
    it ended (the turn's own RunFinished has said what was kept)."""
    turn = asyncio.ensure_future(main)
    app.stop_run = turn.cancel
    try:
        return await turn
    except asyncio.CancelledError:
        task = asyncio.current_task()
        if app.interrupts and task is not None and not task.cancelling():
            raise Stopped from None
        raise
    finally:
        app.stop_run = None
        app.run_over()


async def after_first_frame(
    app: TeamApp, main: Coroutine[Any, Any, T], warm: Callable[[], object] | None
) -> T:
    """`main`, once the app has drawn its first frame (the turn's start would delay it:
    its imports and its first events run in the app's loop) and `warm` has run."""
    try:
        await app.drawn.wait()
        if warm is not None:
            await asyncio.to_thread(warm)
    except BaseException:
        main.close()  # never started: no "never awaited" warning
        raise
    return await main


def forget(restore: Callable[[], None] | None) -> None:
    if restore in interrupts.before_exit:
        interrupts.before_exit.remove(restore)


async def settle(task: asyncio.Task[Any]) -> None:
    """Let a task finish what it is doing; its outcome is reported elsewhere."""
    if not task.done():
        task.cancel()
    with contextlib.suppress(BaseException):
        await task

"""Test-only: the real LiveView on a scripted run, asking the TerminalApprover N times.

    python approval_driver.py FOLDER ROUNDS [--hold]

Round i marks its agent's panel "before-ask-i", asks (the request's reason names the
round), appends the Choice to FOLDER/choices.txt, then marks "resumed-i" and waits for
FOLDER/go_<i> before the next round, so the test can see the panels drawn again. With
--hold, round i asks only once FOLDER/ask_<i> exists (the test types ahead first). After the
last round it waits for FOLDER/stop. Ctrl-C at a prompt denies and then interrupts the
run, as in the CLI: the driver appends "interrupted" and exits 130.
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

from run_events import coordination

from massgen.core import events as ev
from massgen.core.effects import Run, Write
from massgen.permissions.approval import ApprovalRequest
from massgen.ui.approval import TerminalApprover
from massgen.ui.live import LiveView

WAIT_SECONDS = 60.0  # for the test's go/stop files: a driver left alone still ends


def request(round_: int) -> ApprovalRequest:
    return ApprovalRequest(
        agent="careful",
        tool="execute_command",
        arguments='{"command": "git push origin"}',
        effects=(Run(("git", "push", "origin"), Path("/work/space")), Write(Path("/etc/hosts"))),
        risk="high",
        reason=f"round {round_}: commands not known to be safe are asked",
    )


async def wait_for_file(path: Path) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while not path.exists() and time.monotonic() < deadline:
        await asyncio.sleep(0.02)


def record(folder: Path, line: str) -> None:
    with (folder / "choices.txt").open("a") as file:
        file.write(line + "\n")


async def main(folder: Path, rounds: int, hold: bool) -> None:
    view = LiveView()
    for event in coordination():
        view(event)
    approver = TerminalApprover(view)
    try:
        for round_ in range(1, rounds + 1):
            view(ev.TextDelta(agent="careful", text=f"\nbefore-ask-{round_}", at=10))
            await asyncio.sleep(0.2)  # a frame or two with the panels
            if hold:
                await wait_for_file(folder / f"ask_{round_}")
            choice = await approver.ask(request(round_))
            record(folder, str(choice))
            view(ev.TextDelta(agent="careful", text=f"\nresumed-{round_}", at=10))
            await wait_for_file(folder / f"go_{round_}")
        await wait_for_file(folder / "stop")
    finally:
        view.close()


if __name__ == "__main__":
    where = Path(sys.argv[1])
    try:
        asyncio.run(main(where, int(sys.argv[2]), "--hold" in sys.argv[3:]))
    except KeyboardInterrupt:
        record(where, "interrupted")
        sys.exit(130)

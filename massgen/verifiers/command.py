"""`verifier.command`: a shell command that checks an answer; exit 0 is a pass.

It runs as `/bin/sh -c <command>` in the command sandbox (`sandboxed.py`), with the
answer on stdin, in a read-only copy of the answer's workspace when the team has
workspaces (else in an empty scratch directory). The answer and the question are also
files: `$MASSGEN_ANSWER_FILE`, `$MASSGEN_QUESTION_FILE`.

Exit 0: passed. Exit 1-125: failed. Everything else is `unchecked`, never a pass: a
timeout, exit 126/127 (the shell could not find or run the command), a signal (exit
above 128: the command crashed or hit its memory bound), no sandbox on this machine.
"""

from __future__ import annotations

from pathlib import Path

from massgen.core.checks import Check, Verdict, bounded, unchecked
from massgen.verifiers.sandboxed import run_confined

SHELL = "/bin/sh"
_NOT_RUN = {126: "the command could not be run (exit 126)", 127: "command not found (exit 127)"}


class CommandVerifier:
    def __init__(self, command: str, timeout_seconds: float, max_output_chars: int) -> None:
        self.command = command
        self.timeout_seconds = timeout_seconds
        self.max_output_chars = max_output_chars

    async def check(self, answer: str, question: str, workspace: Path | None) -> Check:
        files = {"answer.txt": answer, "question.txt": question}
        ended = await run_confined(
            (SHELL, "-c", self.command),
            timeout_seconds=self.timeout_seconds,
            stdin=answer.encode("utf-8"),
            files=files,
            cwd=workspace,
            file_vars={
                "MASSGEN_ANSWER_FILE": "answer.txt",
                "MASSGEN_QUESTION_FILE": "question.txt",
            },
        )
        if isinstance(ended, str):
            return unchecked(ended)
        excerpt = bounded(ended.output, self.max_output_chars)
        code = ended.exit_code
        if ended.timed_out:
            note = f"timed out after {self.timeout_seconds:g}s"
            return Check(Verdict.UNCHECKED, note, excerpt, ended.duration_s)
        if code in _NOT_RUN:
            return Check(Verdict.UNCHECKED, _NOT_RUN[code], excerpt, ended.duration_s)
        if code < 0 or code > 128:  # the sandbox's wrappers report a signal as 128 + N
            note = f"the command was ended by signal {-code if code < 0 else code - 128}"
            return Check(Verdict.UNCHECKED, note, excerpt, ended.duration_s)
        verdict = Verdict.PASSED if code == 0 else Verdict.FAILED
        return Check(verdict, f"exit {code}", excerpt, ended.duration_s)

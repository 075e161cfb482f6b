"""The interactive terminal app (Textual): `massgen` on a terminal, `--display tui`.

`view.TuiView` is the sink and runs the team turn under the app; `app.TeamApp` lays it out;
`widgets` draw from `ui.model.ViewModel` (the one fold of the events); `approval` asks
permission in a dialog. Textual is imported only by these modules, which the CLI imports
only when the app opens.
"""


class AppFailed(Exception):
    """The app ended on an error of its own (its traceback is printed as it closes).
    `stopped`: the run was still going and was stopped, keeping what was decided."""

    def __init__(self, error: BaseException | None, *, stopped: bool) -> None:
        what = f"{type(error).__name__}: {error}" if error is not None else "an error"
        super().__init__(what)
        self.stopped = stopped

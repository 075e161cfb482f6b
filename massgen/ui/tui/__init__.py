"""The interactive terminal app (Textual): `massgen` on a terminal, `--display tui`.

`view.TuiView` is the sink and runs the team turn under the app; `app.TeamApp` lays it out;
`widgets` draw from `ui.model.ViewModel` (the one fold of the events); `approval` asks
permission in a dialog. Textual is imported only by these modules, which the CLI imports
only when the app opens.
"""

"""`python crashing_app.py ARGS`: `massgen ARGS` whose app crashes on its first answer,
as a bug in a widget would: the tests check what the terminal and the user are left with."""

import sys

from massgen.cli import main
from massgen.ui.tui import widgets


def crash(self, model):
    if any(model.state.agent(agent).answers for agent in model.agents):
        raise RuntimeError("a widget's bug")


widgets.AnswerBoard.show = crash
raise SystemExit(main(sys.argv[1:]))

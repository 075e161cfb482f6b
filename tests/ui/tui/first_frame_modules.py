"""`python first_frame_modules.py OUT ARGS`: `massgen ARGS`, which at the app's first frame
(Textual's Ready) writes the names of the modules loaded by then to OUT (JSON) and exits:
the tests check what the first frame waited for."""

import json
import os
import sys
from pathlib import Path

from massgen.cli import main
from massgen.ui.tui.app import TeamApp

OUT = Path(sys.argv.pop(1))


def on_ready(self):
    OUT.write_text(json.dumps(sorted(sys.modules)))
    os._exit(0)


TeamApp.on_ready = on_ready
raise SystemExit(main(sys.argv[1:]))

"""Checks of a candidate answer (`verifier:` in the config): a command in the sandbox
(`command.py`), a Python function (`function.py`), and the built-in `python_examples`
for code tasks (`examples.py`). `team.py` puts one together for a run: it gives each check the answer's
workspace snapshot and bounds it."""

from massgen.verifiers.examples import python_examples

__all__ = ["python_examples"]

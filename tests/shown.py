"""What the views show for a run's events: the plain view's text and each live panel's."""

from __future__ import annotations

import io
from collections.abc import Iterable

from massgen.core import events as ev
from massgen.ui.model import ViewModel
from massgen.ui.plain import PlainView


def shown(events: Iterable[ev.AnyEvent]) -> tuple[str, dict[str, str]]:
    """(printed by the plain view, {agent: the text in its live panel})."""
    out = io.StringIO()
    plain, model = PlainView(out), ViewModel()
    for event in events:
        plain(event)
        model.apply(event)
    panels = {agent: "".join(text for _, text in pane.runs) for agent, pane in model.panes.items()}
    return out.getvalue(), panels


def printed(events: Iterable[ev.AnyEvent]) -> str:
    """What the plain view prints for `events`."""
    out = io.StringIO()
    view = PlainView(out)
    for event in events:
        view(event)
    return out.getvalue()

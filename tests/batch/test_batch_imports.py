"""`massgen batch --help` stays light: no provider SDK, no terminal UI, no Ray."""

from __future__ import annotations

from test_startup_imports import heavy_in, imported_by


def test_batch_help_imports_nothing_heavy():
    modules = imported_by(["batch", "--help"])
    assert heavy_in(modules) == []
    assert "ray" not in modules and "matplotlib" not in modules

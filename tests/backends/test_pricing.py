"""The shipped price table, cost arithmetic, and `--model NAME` → backend by family."""

import pytest

from massgen.backends import models, pricing
from massgen.backends.pricing import Price
from massgen.core.errors import ConfigError
from massgen.core.types import Usage


@pytest.mark.parametrize(
    ("provider", "model", "price"),
    [
        ("openai", "gpt-5-mini", Price(0.25, 2.0, 0.025)),
        ("openai", "gpt-4o-2024-08-06", Price(2.5, 10.0, 1.25)),  # a dated snapshot
        ("azure_openai", "gpt-4.1", Price(2.0, 8.0, 0.5)),  # same list price
        ("claude", "claude-sonnet-4-5-20250929", Price(3.0, 15.0, 0.3)),
        ("claude", "claude-3-5-haiku-latest", Price(0.8, 4.0, 0.08)),
        ("gemini", "gemini-2.5-flash", Price(0.3, 2.5, 0.03)),
        ("grok", "grok-4-0709", Price(3.0, 15.0, 0.75)),
        ("groq", "llama-3.3-70b-versatile", Price(0.59, 0.79)),
        ("together", "meta-llama/Llama-3.3-70B-Instruct-Turbo", Price(0.88, 0.88)),
        ("zai", "glm-4.5", Price(0.6, 2.2, 0.11)),
        # First-party models served elsewhere cost their vendor's list price.
        ("openrouter", "anthropic/claude-sonnet-4.5", Price(3.0, 15.0, 0.3)),
        ("chatcompletion", "gpt-4o-mini", Price(0.15, 0.6, 0.075)),
    ],
)
def test_prices_come_from_the_shipped_table(provider, model, price):
    assert pricing.price_for(provider, model) == price


@pytest.mark.parametrize(
    ("provider", "model"),
    [
        ("vllm", "Qwen/Qwen3-4B"),  # a local model has no list price
        ("openai", "gpt-9-ultra"),
        ("openai", "gpt-5.4"),  # not "gpt-5": a newer model is not priced like an older one
        ("groq", "some-new-model"),
    ],
)
def test_unknown_models_have_no_price(provider, model):
    assert pricing.price_for(provider, model) is None
    assert pricing.pricer(provider, model) is None


def test_cost_bills_cached_input_at_the_cached_rate():
    usage = Usage(input_tokens=1_000_000, output_tokens=100_000, cached_input_tokens=800_000)
    # 200k fresh input at $2.50, 800k cached at $1.25, 100k output at $10
    assert Price(2.5, 10.0, 1.25).cost(usage) == pytest.approx(0.5 + 1.0 + 1.0)


def test_without_a_cache_discount_cached_input_costs_the_input_price():
    usage = Usage(input_tokens=1_000_000, output_tokens=0, cached_input_tokens=500_000)
    assert Price(0.59, 0.79).cost(usage) == pytest.approx(0.59)


def test_format_cost():
    assert pricing.format_cost(None) == "n/a"
    assert pricing.format_cost(0.001234) == "$0.0012"
    assert pricing.format_cost(12.5) == "$12.50"


@pytest.mark.parametrize(
    ("model", "backend"),
    [
        ("gpt-5", "openai"),
        ("gpt-4o-mini", "openai"),
        ("o3", "openai"),
        ("o4-mini", "openai"),
        ("claude-opus-4-6", "claude"),
        ("gemini-2.5-pro", "gemini"),
        ("grok-4", "grok"),
    ],
)
def test_model_families_pick_their_backend(model, backend):
    assert models.backend_for(model) == backend


@pytest.mark.parametrize("model", ["llama3", "Qwen/Qwen3-4B", "openai/gpt-oss-20b", "olmo-2"])
def test_other_models_need_backend_or_base_url(model):
    with pytest.raises(ConfigError) as raised:
        models.backend_for(model)
    assert "--backend" in raised.value.render() and "--base-url" in raised.value.render()

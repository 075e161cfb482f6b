"""The retry helper on its own: plain async generators, a recording sleep."""

import email.utils

import pytest

from massgen.backends.retry import RetryPolicy, parse_retry_after, retrying
from massgen.core.errors import AuthFailed, ProviderUnavailable, RateLimited


def attempts(*outcomes):
    """An attempt factory: each outcome is a list of items, or an error to raise."""
    queue = list(outcomes)

    async def attempt():
        outcome = queue.pop(0)
        if isinstance(outcome, Exception):
            raise outcome
        for item in outcome:
            if isinstance(item, Exception):
                raise item
            yield item

    return attempt


async def run(attempt, policy, sleep, **kwargs):
    return [
        item async for item in retrying(attempt, policy, sleep=sleep, rand=lambda: 1.0, **kwargs)
    ]


def test_full_jitter_grows_exponentially_up_to_the_cap():
    policy = RetryPolicy(base_delay=1, max_delay=5)
    error = ProviderUnavailable("down")
    assert [policy.delay(n, error, lambda: 1.0) for n in range(5)] == [1, 2, 4, 5, 5]
    assert policy.delay(2, error, lambda: 0.25) == 1  # a quarter of 4 s


def test_retry_after_wins_and_is_capped():
    policy = RetryPolicy(max_retry_after=60)
    assert policy.delay(0, RateLimited("slow", retry_after=7), lambda: 0.0) == 7
    assert policy.delay(0, RateLimited("slow", retry_after=900), lambda: 0.0) == 60
    assert policy.delay(0, RateLimited("slow"), lambda: 0.5) == 0.5


async def test_retries_until_success_and_reports_each_retry(sleep):
    reported = []
    attempt = attempts(ProviderUnavailable("a"), RateLimited("b", retry_after=3), ["ok"])
    items = await run(
        attempt, RetryPolicy(max_retries=2), sleep, on_retry=lambda *a: reported.append(a)
    )
    assert items == ["ok"]
    assert sleep.delays == [1.0, 3]
    assert [(n, wait) for n, _, wait in reported] == [(1, 1.0), (2, 3)]


async def test_gives_up_after_max_retries(sleep):
    attempt = attempts(*[ProviderUnavailable("down")] * 3)
    with pytest.raises(ProviderUnavailable):
        await run(attempt, RetryPolicy(max_retries=2), sleep)
    assert len(sleep.delays) == 2


async def test_non_retryable_errors_raise_at_once(sleep):
    with pytest.raises(AuthFailed):
        await run(attempts(AuthFailed("bad key"), ["ok"]), RetryPolicy(), sleep)
    assert sleep.delays == []


async def test_no_retry_once_an_item_was_yielded(sleep):
    attempt = attempts(["first", ProviderUnavailable("dropped")], ["first", "second"])
    with pytest.raises(ProviderUnavailable):
        await run(attempt, RetryPolicy(max_retries=3), sleep)
    assert sleep.delays == []


@pytest.mark.parametrize(
    ("header", "seconds"),
    [("12", 12.0), ("0.5", 0.5), ("-3", 0.0), ("soon", None), ("", None), (None, None)],
)
def test_parse_retry_after_seconds(header, seconds):
    assert parse_retry_after(header) == seconds


def test_parse_retry_after_http_date():
    now = 1_700_000_000.0
    header = email.utils.formatdate(now + 30, usegmt=True)
    assert parse_retry_after(header, now=now) == pytest.approx(30)

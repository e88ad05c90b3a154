"""The token bucket behind the per-session rate limits (clock injected, no sleeping)."""

from __future__ import annotations

import random

import pytest

from core.base.limits import TokenBucket


def test_a_burst_then_one_token_per_refill_period():
    b = TokenBucket(burst=3, refill_s=10.0, now=100.0)
    assert [b.take(100.0) for _ in range(4)] == [True, True, True, False]
    assert b.retry_after(100.0) == pytest.approx(10.0)
    assert not b.take(109.9)  # 0.99 of a token
    assert b.take(110.0)  # one token 10 s after the bucket emptied
    assert not b.take(110.0)


def test_an_idle_bucket_refills_to_its_burst_and_no_further():
    b = TokenBucket(burst=2, refill_s=5.0, now=0.0)
    assert b.take(0.0) and b.take(0.0)
    assert [b.take(1000.0), b.take(1000.0), b.take(1000.0)] == [True, True, False]


def test_time_going_backwards_gives_no_tokens():
    b = TokenBucket(burst=1, refill_s=5.0, now=50.0)
    assert b.take(50.0)
    assert not b.take(10.0)
    assert b.retry_after(10.0) == pytest.approx(5.0)


def test_never_more_than_burst_plus_elapsed_over_refill_tokens():
    """Property: over any sequence of attempts, granted ≤ burst + elapsed / refill_s."""
    rng = random.Random(5)
    for _ in range(200):
        burst, refill = rng.randint(1, 6), rng.uniform(0.5, 20.0)
        b, now, granted = TokenBucket(burst=burst, refill_s=refill, now=0.0), 0.0, 0
        for _ in range(rng.randint(1, 60)):
            now += rng.expovariate(1.0)
            granted += b.take(now)
        assert granted <= burst + now / refill + 1e-9


@pytest.mark.parametrize(("burst", "refill"), [(0, 1.0), (1, 0.0), (2, -1.0)])
def test_bad_settings_are_refused(burst, refill):
    with pytest.raises(ValueError, match="burst must be"):
        TokenBucket(burst=burst, refill_s=refill)

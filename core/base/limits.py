"""A token bucket: how often a session may start an expensive action (launch, judge, export).

Pure and clock-injected (``now`` in seconds), so it is tested without sleeping; the page glue
keeps one bucket per (session, action) in ``st.session_state`` (:mod:`core.ui.hosting`).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class TokenBucket:
    """``burst`` tokens at most, one more every ``refill_s`` seconds; each action takes one.

    >>> b = TokenBucket(burst=2, refill_s=10.0, now=0.0)
    >>> [b.take(0.0), b.take(1.0), b.take(2.0)]
    [True, True, False]
    >>> round(b.retry_after(2.0), 1)  # the first token comes back 10 s after the bucket was full
    8.0
    >>> b.take(12.0)
    True
    """

    burst: int
    refill_s: float
    now: float = 0.0
    tokens: float = field(init=False)
    stamp: float = field(init=False)

    def __post_init__(self) -> None:
        if self.burst < 1 or self.refill_s <= 0:
            raise ValueError(f"burst must be ≥ 1 and refill_s > 0, got {self.burst} and {self.refill_s}")
        self.tokens, self.stamp = float(self.burst), self.now

    def _refill(self, now: float) -> None:
        if now > self.stamp:
            self.tokens = min(float(self.burst), self.tokens + (now - self.stamp) / self.refill_s)
            self.stamp = now

    def take(self, now: float) -> bool:
        """Take a token at time ``now``; False (nothing taken) when the bucket is empty."""
        self._refill(now)
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return True
        return False

    def retry_after(self, now: float) -> float:
        """Seconds until a token is available (0 when one is)."""
        self._refill(now)
        return max(0.0, (1.0 - self.tokens) * self.refill_s)

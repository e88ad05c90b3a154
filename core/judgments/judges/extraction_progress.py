"""The judge's extraction log (SPEC §2.4) kept up to date as judgments arrive.

Counting once at the start and then per new judgment keeps each update in proportion to the new
work (it was a pass over every matched review after each chunk: quadratic at Yelp scale).
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Protocol

import polars as pl

from core.judgments.judges.base import now_iso


class JudgingPlanLike(Protocol):
    """What the log needs of a :class:`core.judgments.judges.runner.JudgingPlan` (a frozen dataclass)."""

    @property
    def dataset(self) -> str: ...
    @property
    def task(self) -> str: ...
    @property
    def judge_id(self) -> str: ...
    @property
    def prompt_version(self) -> str: ...
    @property
    def restaurants(self) -> pl.DataFrame: ...
    @property
    def matched_keys(self) -> frozenset[tuple[str, int]]: ...


class ExtractionProgress:
    """The extraction log's figures, kept up to date as judgments arrive.

    A restaurant is complete when every one of its keyword-matched reviews has a stored judgment
    (restaurants without a match are complete); ``reviews_extracted`` counts stored judgments of
    matched reviews. Counting once at the start and then per new judgment keeps each update in
    proportion to the new work.
    """

    def __init__(self, plan: JudgingPlanLike, done: set[tuple[str, int]]) -> None:
        self.plan = plan
        self.open = Counter(key[0] for key in plan.matched_keys if key not in done)
        self.extracted = len(plan.matched_keys) - sum(self.open.values())
        self.names: list[tuple[str, str | None]] = plan.restaurants.select("business_id", "name").rows()

    def add(self, key: tuple[str, int]) -> None:
        """Count ``key``'s first finished judgment (the caller passes each key once)."""
        if key in self.plan.matched_keys:
            self.open[key[0]] -= 1
            self.extracted += 1

    def payload(self, *, started: str) -> dict[str, Any]:
        """The xnot ``extraction_log.json`` payload (SPEC §2.4) for the judge's current state."""
        plan = self.plan
        completed = [name or bid for bid, name in self.names if self.open.get(bid, 0) == 0]
        return {
            "task_id": plan.task,
            "dataset": plan.dataset,
            "judge": plan.judge_id,
            "extraction_prompt_version": plan.prompt_version,
            "started": started,
            "completed_restaurants": completed,
            "progress": {
                "restaurants_processed": len(completed),
                "restaurants_total": len(self.names),
                "reviews_extracted": self.extracted,
            },
            "last_updated": now_iso(),
        }

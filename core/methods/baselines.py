"""Baselines without any LLM: ``keyword`` (score = keyword hits) and ``random`` (seeded).

``keyword``: risk_score = the number of the K reviews containing any task keyword (plain
lower-case substring, SPEC §2.2); the verdict steps one level up the policy's scale per 10 % of
reviews matching (0-10 % lowest, 10-20 % next, ...). ``random``: risk_score uniform in [0, 1) and
the verdict read off the scale at that height, from a generator seeded by (seed, business_id), so
a sample's answer does not depend on which other samples run.
"""

from __future__ import annotations

import random
from typing import Any

from core.methods.base import MethodContext, RestaurantInput
from core.methods.contract import has_keyword

KEYWORD_STEP = 0.10


def _fields(verdict: str, score: float, note: str) -> dict[str, Any]:
    parsed = {"verdict": verdict, "risk_score": score, "evidences": [],
              "justification": {"triggered_rule": note, "direct_evidence": [],
                                "scoring_trace": {"total_score": score, "breakdown": []}, "reasoning": note}}
    return {"verdict": verdict, "risk_score": score, "parsed": parsed, "response": note, "prompt_tokens": 0,
            "completion_tokens": 0, "cost_usd": 0.0, "latency_ms": 0.0, "llm_calls": 0, "cached_calls": 0}


async def keyword_answer(ctx: MethodContext, restaurant: RestaurantInput) -> dict[str, Any]:
    keywords = ctx.task.keywords
    hits = sum(1 for r in restaurant.reviews if has_keyword(r, keywords, task_keywords=keywords))
    rate = hits / len(restaurant.reviews) if restaurant.reviews else 0.0
    level = min(len(ctx.scale) - 1, int(rate / KEYWORD_STEP))
    note = f"keyword baseline: {hits} of {len(restaurant.reviews)} reviews contain a {ctx.task.task_id} keyword"
    return _fields(ctx.scale[level], float(hits), note)


async def random_answer(ctx: MethodContext, restaurant: RestaurantInput) -> dict[str, Any]:
    rng = random.Random(f"{ctx.seed}:{restaurant.business_id}")  # noqa: S311 - a baseline, not security
    score = rng.random()
    verdict = ctx.scale[min(len(ctx.scale) - 1, int(score * len(ctx.scale)))]
    return _fields(verdict, round(score, 6), f"random baseline (seed {ctx.seed})")

"""Judging status of a dataset/task and the paid run's pre-flight (the run itself: :mod:`core.judgments.judges.job`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from core.base.memo import stamped
from core.base.progress import Progress, no_progress
from core.base.settings import openai_configured, openai_settings
from core.ground_truth.views.loaders import data_stamp
from core.llm import cost_usd
from core.tasks import get_task
from core.workspace import Workspace


def offline_judge_kind(spec: Any) -> str:
    """The offline judge of a task (:func:`core.judgments.judges.job.offline_judge_kind`)."""
    # deferred: heavy optional import (every judge kind, ~150 ms), only needed when the GT page names or runs one
    from core.judgments.judges import job

    return job.offline_judge_kind(spec)


def run_index_and_judge(ws: Workspace, dataset: str, task: str, *, use_openai: bool = False,
                        progress: Progress | None = None, stop: Callable[[], bool] | None = None) -> dict[str, Any]:
    """Build the keyword index if needed, then judge (:func:`core.judgments.judges.job.run_index_and_judge`)."""
    # deferred: heavy optional import (every judge kind, ~150 ms), only needed when a judging run starts
    from core.judgments.judges import job

    return job.run_index_and_judge(ws, dataset, task, use_openai=use_openai, progress=progress, stop=stop)


@dataclass(frozen=True)
class JudgingStatus:
    """How far a dataset/task is from ground truth.

    ``matched`` is None when the keyword index is missing or stale; ``judged`` and
    ``parse_errors`` are the GT judge's (None when there is no GT judge yet).
    """

    dataset: str
    task: str
    reviews: int
    reviews_with_text: int
    index_current: bool
    matched: int | None
    restaurants_with_match: int | None
    judges: list[dict[str, Any]] = field(default_factory=list)
    gt_judge: str | None = None
    judged: int | None = None
    parse_errors: int | None = None
    unjudged: int | None = None
    openai: bool = False
    openai_model: str | None = None

    @property
    def ready(self) -> bool:
        """True when there are judgments ground truth can be computed from."""
        return bool(self.judges)

    @property
    def runnable(self) -> bool:
        """True when the run button can do something (reviews with text to index and judge)."""
        return self.reviews_with_text > 0


def _review_counts(ws: Workspace, dataset: str) -> tuple[int, int]:
    # deferred: core.datasets pulls in pandas (~500 ms), only needed when _review_counts() runs
    from core.datasets import scan_reviews

    def count() -> list[int]:
        counts = scan_reviews(ws, dataset).select(pl.len().alias("n"), pl.col("text").is_not_null().sum().alias("t"))
        return [int(v) for v in counts.collect().row(0)]

    n, with_text = stamped(ws.dataset_dir(dataset) / "reviews.parquet", "counts", count)  # a scan of 2 M texts: kept
    return int(n), int(with_text)


def _unjudged(ws: Workspace, dataset: str, task: str, judge: str | None) -> int | None:
    # deferred: core.judgments and core.tasks.keyword_index pull in pandas (~500 ms), only needed when _unjudged() runs
    from core.judgments import judged_keys
    from core.judgments.store import judgment_path
    from core.tasks.keyword_index import matched_reviews

    def count() -> int:
        matched = matched_reviews(ws, dataset, task)
        keys = set(zip(matched["business_id"].to_list(), matched["idx"].to_list(), strict=True))
        done = judged_keys(ws, dataset, task, judge) if judge else set()
        return len(keys - done)

    if not judge:
        return count()
    # kept beside a large log while everything a GT reads (the index's stats too) is unchanged
    return int(stamped(judgment_path(ws, dataset, task, judge), "unjudged", count,
                       context=repr(data_stamp(ws, dataset, task))))


def judging_status(ws: Workspace, dataset: str, task: str) -> JudgingStatus:
    """Reviews, keyword matches, judges (n, parse errors), the GT judge and what is left to judge."""
    # deferred: core.judgments and core.tasks.keyword_index pull in pandas (~500 ms), only needed when judging_status() runs
    from core.judgments import get_gt_judge, list_judges
    from core.tasks.keyword_index import index_stats, kw_column

    reviews, with_text = _review_counts(ws, dataset)
    stats = index_stats(ws, dataset)
    current = bool(stats and stats.get("current") and task in stats.get("tasks", {}))
    task_stats = stats["tasks"][task] if current and stats else {}
    judges = list_judges(ws, dataset, task)
    gt = get_gt_judge(ws, dataset, task)
    mine = next((j for j in judges if j["judge"] == gt), None)
    unjudged = _unjudged(ws, dataset, task, gt) if current and kw_column(task) else None
    settings = openai_settings()
    return JudgingStatus(
        dataset=dataset, task=task, reviews=reviews, reviews_with_text=with_text, index_current=current,
        matched=task_stats.get("matches") if current else None,
        restaurants_with_match=task_stats.get("restaurants_with_match") if current else None,
        judges=judges, gt_judge=gt, judged=mine["n"] if mine else None,
        parse_errors=mine["n_parse_errors"] if mine else None, unjudged=unjudged,
        openai=openai_configured(), openai_model=settings.get("model"),
    )


CHARS_PER_TOKEN = 4  # a rough, deliberately generous rule of thumb for English text
COMPLETION_TOKENS_PER_REVIEW = 120  # a judgment's JSON answer (fields and a short excerpt)


def openai_preflight(ws: Workspace, dataset: str, task: str, *, progress: Progress | None = None) -> dict[str, Any]:
    """What judging the not-yet-judged reviews with the configured OpenAI-compatible model would
    send and cost, before anything is sent: reviews, estimated tokens and USD (None when the
    model has no known price). Builds the keyword index first when it is missing (local, free).

    Raises:
        WorkbenchError: dataset missing or changed, or no model/key configured.
    """
    # deferred: core.judgments.judges and core.tasks.keyword_index pull in pandas (~500 ms), only needed when openai_preflight() runs
    from core.judgments.judges import make_judge, plan_judging
    from core.tasks.keyword_index import build_index, index_stats

    spec = get_task(task, ws)
    stats = index_stats(ws, dataset)
    if not (stats and stats.get("current") and task in stats.get("tasks", {})):
        build_index(ws, dataset, progress=progress or no_progress)
    judge: Any = make_judge("openai", spec)  # an OpenAIJudge: it has messages() and model
    plan = plan_judging(ws, dataset, spec.task_id, judge, resume=True)
    chars = sum(len(str(m["content"])) for row in plan.rows for m in judge.messages(row))
    prompt_tokens = -(-chars // CHARS_PER_TOKEN)
    completion_tokens = COMPLETION_TOKENS_PER_REVIEW * len(plan.rows)
    return {"model": judge.model, "to_judge": len(plan.rows), "already_judged": plan.already_judged,
            "prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
            "cost_usd": cost_usd(judge.model, prompt_tokens, completion_tokens)}

"""Counts of one K's GT frame, made once when the frame is made (and kept beside the judge's log with
it), from which the Ground truth page draws its distribution table and chart and its coverage warning
without scanning the frame of every K (issue 27: 0.2-0.3 s each at 150,000 restaurants × 4 K).

Each function gives what its frame-wide twin gives: :func:`distribution_table_of` is
:func:`~core.ground_truth.views.grid.distribution_table`, :func:`distribution_by_k_of` is
:func:`~core.ground_truth.compute.distribution_by_k`, :func:`short_counts_of` is
:func:`~core.ground_truth.coverage.short_counts` and :func:`verdict_order_of` is
:func:`~core.ground_truth.views.grid.verdict_order` (tests/core/test_gt_counts.py compares them).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from core.ground_truth import VERDICTS
from core.ground_truth.coverage import SHORT
from core.ground_truth.views.grid import k_order

KCounts = dict[str, Any]  # {"rows": n, "short": n or None (no short_of_k column), "verdicts": {verdict: n}}


def k_counts(part: pl.DataFrame) -> KCounts:
    """The counts of one K's frame: its rows, the rows short of K, the rows of each verdict (JSON-able).

    >>> k_counts(pl.DataFrame({"k": [25, 25, 25], "verdict": ["Low Risk", "High Risk", "Low Risk"],
    ...                        "short_of_k": [False, True, False]}))
    {'rows': 3, 'short': 1, 'verdicts': {'High Risk': 1, 'Low Risk': 2}}
    """
    present = part["verdict"].drop_nulls().value_counts(name="n")
    verdicts = dict(zip(present["verdict"].to_list(), present["n"].to_list(), strict=True))
    short = int(part[SHORT].sum()) if SHORT in part.columns else None
    return {"rows": part.height, "short": short, "verdicts": {v: int(verdicts[v]) for v in sorted(verdicts)}}


def verdict_order_of(counts: Mapping[int | None, KCounts], scale: Sequence[str] | None = None) -> list[str]:
    """``verdict_order`` of the frame whose K have these ``counts``."""
    known = list(scale or VERDICTS)
    present = set().union(*(c["verdicts"] for c in counts.values())) if counts else set()
    return [*known, *sorted(present - set(known))]


def _per_k(counts: Mapping[int | None, KCounts], verdicts: Sequence[str]) -> list[tuple[int | None, list[int]]]:
    # a K without rows has no row in the frame-wide twins (a group_by over the frame's K)
    return [(k, [int(counts[k]["verdicts"].get(v, 0)) for v in verdicts]) for k in k_order(list(counts))
            if counts[k]["rows"]]


def distribution_table_of(counts: Mapping[int | None, KCounts], scale: Sequence[str] | None = None) -> pl.DataFrame:
    """``distribution_table`` of the frame whose K have these ``counts``."""
    verdicts = verdict_order_of(counts, scale)
    rows = _per_k(counts, verdicts)
    data: dict[str, Any] = {"K": [("all" if k is None else str(k)) for k, _ in rows]}
    data.update({v: [n[i] for _, n in rows] for i, v in enumerate(verdicts)})
    data["total"] = [sum(n) for _, n in rows]
    return pl.DataFrame(data, schema={"K": pl.String, **dict.fromkeys(verdicts, pl.Int64), "total": pl.Int64})


def distribution_by_k_of(counts: Mapping[int | None, KCounts], verdicts: Sequence[str] | None = None) -> pl.DataFrame:
    """``distribution_by_k`` of the frame whose K (Int64) have these ``counts``."""
    scale = tuple(verdicts or VERDICTS)
    names = [v.split()[0] for v in scale] if scale == VERDICTS else list(scale)
    rows = _per_k(counts, scale)
    data: dict[str, Any] = {"k": [k for k, _ in rows]}
    data.update({name: [n[i] for _, n in rows] for i, name in enumerate(names)})
    data["total"] = [sum(n) for _, n in rows]
    return pl.DataFrame(data, schema={"k": pl.Int64, **dict.fromkeys(names, pl.Int64), "total": pl.Int64})


def short_counts_of(counts: Mapping[int | None, KCounts]) -> dict[int | None, int]:
    """``short_counts`` of the frame made of these K in this order."""
    if not counts or any(c["short"] is None for c in counts.values()) or not sum(c["rows"] for c in counts.values()):
        return {}
    return {k: int(c["short"]) for k, c in counts.items() if c["rows"]}

"""The counts made with each K's GT frame (core.ground_truth.views.counts) give what the frame-wide
computations give: the distribution table and chart data, the verdict order, the coverage counts; on
the demo and on dev-ADDM's 100 real restaurants judged by heuristic-v2, and on edge frames (issue 27)."""

from __future__ import annotations

import polars as pl
import pytest

from core.ground_truth import distribution_by_k
from core.ground_truth import views as gt_views
from core.ground_truth.coverage import short_counts, with_review_counts
from core.ground_truth.views import counts as kc
from core.ground_truth.views.paging import k_slices
from tests.core.test_gt_paging import KS, _frames, addm, demo  # noqa: F401 (fixtures)

ALL_RISK = ("Low Risk", "High Risk", "Critical Risk")


def _counted(frame: pl.DataFrame, ks: list[int | None]) -> dict[int | None, kc.KCounts]:
    """Each K's counts made from its own rows, as core.ui.gt_frames makes them from each K's frame."""
    parts = k_slices(frame, ks)
    assert parts is not None
    return {k: kc.k_counts(part) for k, part in zip(ks, parts, strict=True)}


def _assert_same(frame: pl.DataFrame, counts: dict[int | None, kc.KCounts], scale) -> None:
    assert kc.distribution_table_of(counts, scale).equals(gt_views.distribution_table(frame, scale))
    verdicts = gt_views.verdict_order(frame, scale)
    assert kc.verdict_order_of(counts, scale) == verdicts
    assert kc.distribution_by_k_of(counts, verdicts).equals(distribution_by_k(frame, verdicts))
    assert kc.distribution_by_k_of(counts).equals(distribution_by_k(frame))
    got, want = kc.short_counts_of(counts), short_counts(frame)
    assert got == want and list(got) == list(want)


@pytest.mark.parametrize("where", ["demo", "addm"])
def test_counts_of_each_k_equal_the_full_frame_computations(where, request):
    ws, dataset = request.getfixturevalue(where)
    ks = gt_views.k_order(KS)
    for frame in _frames(ws, dataset):  # one per definition of DEFINITIONS
        counts = _counted(frame, ks)
        assert sum(c["rows"] for c in counts.values()) == frame.height
        assert sum(c["short"] for c in counts.values()) == int(frame["short_of_k"].sum())
        for scale in (None, ALL_RISK, ("Critical Risk", "Low Risk"), ("Recommended",)):
            _assert_same(frame, counts, scale)


def test_counts_of_edge_frames():
    frame = with_review_counts(pl.DataFrame({
        "business_id": ["a", "b", "c"] * 2, "k": [25] * 3 + [200] * 3,
        "verdict": ["Low Risk", None, "Odd", "High Risk", "High Risk", None]}),
        pl.DataFrame({"business_id": ["a", "b", "c"], "n_reviews": [30, 300, 10]}))
    _assert_same(frame, _counted(frame, [25, 200]), None)
    assert kc.k_counts(frame.head(0)) == {"rows": 0, "short": 0, "verdicts": {}}
    empty = {25: kc.k_counts(frame.head(0))}
    assert kc.short_counts_of(empty) == short_counts(frame.head(0)) == {}
    assert kc.distribution_table_of(empty).equals(gt_views.distribution_table(frame.head(0)))
    no_short = frame.drop("short_of_k")
    assert kc.short_counts_of(_counted(no_short, [25, 200])) == short_counts(no_short) == {}

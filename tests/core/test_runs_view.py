"""The one-run view (core.runs.view) gives the figures the scored dict gives, read from its kept
Parquet copies: every table of the Results page, the bootstrap's sample table, one sample's drilldown,
the paired buckets and claims' digest; on synthetic runs (incidents, ties, missing GT) and the real
xnot runs, and a changed results.json is never answered from an old copy."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from polars.testing import assert_frame_equal

from core.base import memo
from core.base.files import read_json, write_json_atomic
from core.metrics import score_results
from core.metrics import views as mv
from core.metrics.score import sample_table
from core.metrics.synthetic import synthetic_run
from core.metrics.xnot import results_from_xnot
from core.release.run_figures import answers_sha256, samples_frame
from core.runs import view as rv

XNOT_DIR = Path(__file__).resolve().parent.parent / "data" / "xnot_results"


@pytest.fixture(autouse=True)
def _keep_small_files(monkeypatch):
    monkeypatch.setattr(memo, "MIN_BYTES", 0)  # the test runs are small: keep their copies anyway


def _synthetic(n: int, *, seed: int, method: str = "direct", drop_gt: int = 0) -> dict[str, Any]:
    results, gt, texts = synthetic_run(n, seed=seed, method=method, noise=0.3, sloppy=0.2)
    for s in results["results"][:drop_gt]:  # samples without a GT verdict: left out of every score
        gt.pop(s["business_id"], None)
    return score_results(results, gt=gt, review_texts=texts, n_boot=50)


def _xnot(folder: str) -> dict[str, Any]:
    path = XNOT_DIR / folder / "detailed_results.json"
    results, gt = results_from_xnot(read_json(path), path=str(path))
    return score_results(results, gt=gt, n_boot=0)


def _written(tmp_path: Path, scored: dict[str, Any]) -> Path:
    path = tmp_path / "ws" / "runs" / str(scored.get("run_id") or "r") / "results.json"
    path.parent.mkdir(parents=True)
    write_json_atomic(path, scored)
    return path


def _view(path: Path, scored: dict[str, Any], calls: list[int] | None = None) -> rv.RunView:
    def load() -> dict[str, Any]:
        if calls is not None:
            calls.append(1)
        return scored
    return rv.run_view(path, load, lambda s: {"answers_sha256": answers_sha256(s)})


def _check_view(view: rv.RunView, scored: dict[str, Any]) -> None:
    assert_frame_equal(rv.samples(view), mv.samples(scored))
    assert_frame_equal(rv.samples_shown(view), mv.samples(scored).sort(*rv.SHOWN_ORDER, nulls_last=False,
                                                                       maintain_order=True))
    assert_frame_equal(rv.consistency(view), mv.consistency(scored))
    assert_frame_equal(rv.confusion(view), mv.confusion(scored))
    assert_frame_equal(rv.pr_curves(view), mv.pr_curves(scored))
    assert_frame_equal(rv.samples_frame(view), samples_frame(scored))
    for table in (mv.headline, mv.thresholds, mv.components):
        assert_frame_equal(table(view.head), table(scored))
    want, got = sample_table(scored), rv.table_for_bootstrap(view)
    assert got.business_ids == want.business_ids and got.n_levels == want.n_levels
    for a, b in ((got.gt_ordinal, want.gt_ordinal), (got.score, want.score), (got.counts, want.counts)):
        np.testing.assert_array_equal(a, b)
    assert answers_sha256(view.head) == answers_sha256(scored)
    assert "results" not in view.head


RUNS = [("synthetic", lambda: _synthetic(120, seed=1)), ("no GT for some", lambda: _synthetic(80, seed=2, drop_gt=9)),
        ("keyword", lambda: _synthetic(60, seed=3, method="keyword"))]
RUNS += [(f"xnot {p.name}", lambda p=p: _xnot(p.name)) for p in sorted(XNOT_DIR.iterdir()) if p.is_dir()]


@pytest.mark.parametrize(("name", "make"), RUNS, ids=[r[0] for r in RUNS])
def test_the_view_gives_the_scored_runs_tables(tmp_path, name, make):
    scored = make()
    path = _written(tmp_path, scored)
    calls: list[int] = []
    _check_view(_view(path, scored, calls), scored)
    assert memo.frame_path(path, rv.VIEW).exists() and memo.frame_path(path, rv.DETAIL).exists()
    _check_view(_view(path, scored, calls), scored)  # from the kept copies
    assert len(calls) == 1
    for sample in scored["results"][:: max(1, len(scored["results"]) // 7)]:
        bid = str(sample["business_id"])
        one = rv.one_sample_run(_view(path, scored).head, *rv.run_sample(path, bid, lambda: scored))
        assert one["results"] == [sample]
        assert mv.sample_detail(one, bid, policy=None) == mv.sample_detail(scored, bid, policy=None)
    assert len(calls) == 1
    with pytest.raises(KeyError):
        rv.run_sample(path, "no such restaurant", lambda: scored)


def test_buckets_of_two_runs(tmp_path):
    a, b = _synthetic(90, seed=4), _synthetic(90, seed=4, method="keyword")
    b["results"] = b["results"][5:]  # a restaurant only the baseline judged
    b["results"][0]["gt_verdict"] = "Critical Risk" if b["results"][0]["gt_verdict"] != "Critical Risk" else "Low Risk"
    b["run_id"] = "other"
    va, vb = _view(_written(tmp_path, a), a), _view(_written(tmp_path, b), b)
    assert_frame_equal(rv.buckets(va, vb), mv.buckets(a, b))
    assert set(rv.buckets(va, vb)["bucket"]) >= {"GT differs", "still right"}


def test_a_changed_file_is_read_again(tmp_path):
    first, second = _synthetic(40, seed=5), _synthetic(40, seed=6)
    path = _written(tmp_path, first)
    _check_view(_view(path, first), first)
    write_json_atomic(path, second)
    os.utime(path, ns=(1, 1))  # even with an older time: the inode and size are part of the stamp
    calls: list[int] = []
    _check_view(_view(path, second, calls), second)
    assert calls == [1]
    bid = str(second["results"][3]["business_id"])
    assert rv.run_sample(path, bid, lambda: second)[0] == second["results"][3]

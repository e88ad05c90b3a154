"""Reading many runs fast without changing a figure: the orjson path of ``load_results``, the
per-run ``summary.json`` (stamped with its results.json) and paired differences with cached sides."""

from __future__ import annotations

import json
import os
from pathlib import Path

import polars as pl
import pytest

from core.base.errors import DataError
from core.base.files import read_json
from core.metrics import charts as rc
from core.metrics import score_results
from core.metrics import views as mv
from core.metrics.bootstrap import paired_differences, resampled_scores
from core.metrics.score import sample_table
from core.metrics.synthetic import synthetic_run
from core.runs import import_run_file
from core.runs.records import (
    SUMMARY_FILE,
    load_results,
    read_run_summary,
    run_summary,
    write_run_summary,
)
from core.workspace import Workspace

XNOT = Path(__file__).resolve().parent.parent / "data" / "xnot_results" / "G1a_k200_20260110_060433" / "detailed_results.json"


def _scored(method: str, noise: float, n: int = 60, n_boot: int = 200) -> dict:
    results, gt, texts = synthetic_run(n, seed=3, noise=noise, method=method, k=50, run_id=f"{method}_k50")
    return score_results(results, gt=gt, review_texts=texts, n_boot=n_boot)


def _stamp(path: Path) -> tuple[str, int, int]:
    st = path.stat()
    return str(path), st.st_size, st.st_mtime_ns


def test_load_results_reads_what_read_json_reads(tmp_path):
    scored = _scored("direct", 0.2)
    path = tmp_path / "results.json"
    path.write_text(json.dumps(scored, ensure_ascii=False, indent=2), encoding="utf-8")
    assert load_results(path) == read_json(path) == json.loads(json.dumps(scored))
    # What only Python's json takes (a BOM) still loads; a NaN score is refused naming the field (issue 26);
    # bad JSON is still one DataError with its line.
    path.write_text('\ufeff{"results": [{"business_id": "b1", "risk_score": 1}]}', encoding="utf-8")
    assert load_results(path)["results"][0]["business_id"] == "b1"
    path.write_text('{"results": [{"business_id": "b1", "risk_score": NaN}]}', encoding="utf-8")
    with pytest.raises(DataError, match=r"field 'results\[0\]\.risk_score'"):
        load_results(path)
    path.write_text('{"results": [\n  {"business_id": "b1",}\n]}', encoding="utf-8")
    with pytest.raises(DataError, match=r"results.json:2: not valid JSON"):
        load_results(path)


def test_runs_import_leaves_a_summary_that_the_headline_views_read_alike(tmp_path):
    ws = Workspace(tmp_path / "ws")
    out = import_run_file(ws, XNOT)
    results = Path(out["path"])
    summary = read_run_summary(*_stamp(results))
    assert summary is not None and (results.parent / SUMMARY_FILE).exists()
    full = load_results(results)
    assert {k: v for k, v in summary.items() if k != "results_file"} == json.loads(json.dumps(run_summary(full)))
    assert summary["unified_scores"]["auprc"] == pytest.approx(0.5012133678965853, abs=1e-12)
    assert mv.headline(summary).equals(mv.headline(full))
    assert mv.scores_by_k([summary]).equals(mv.scores_by_k([full]))
    assert len(json.dumps(summary)) < len(results.read_text()) / 20  # a few kB, not the run


def test_a_stale_or_foreign_summary_is_ignored(tmp_path):
    scored = _scored("cot", 0.3)
    folder = tmp_path / "runs" / "r1"
    folder.mkdir(parents=True)
    results = folder / "results.json"
    results.write_text(json.dumps(scored), encoding="utf-8")
    assert read_run_summary(*_stamp(results)) is None  # made elsewhere: no summary
    write_run_summary(folder, scored)
    assert read_run_summary(*_stamp(results))["run_id"] == "cot_k50"
    results.write_text(json.dumps({**scored, "accuracy": 0.0}), encoding="utf-8")  # rewritten: size changes
    assert read_run_summary(*_stamp(results)) is None
    write_run_summary(folder, scored)
    st = results.stat()
    os.utime(results, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))  # same size, touched later
    assert read_run_summary(*_stamp(results)) is None
    (folder / SUMMARY_FILE).write_text("{not json", encoding="utf-8")
    assert read_run_summary(*_stamp(results)) is None


def test_a_finished_run_folder_holds_its_summary(small_demo):
    folders = [p.parent for p in (small_demo / "runs").glob("*/results.json")]
    assert folders  # the demo makes runs with `run`'s own writer
    for folder in folders:
        summary = read_run_summary(*_stamp(folder / "results.json"))
        assert summary is not None and summary["run_id"] == folder.name
        assert mv.headline(summary).equals(mv.headline(load_results(folder)))


def test_paired_differences_with_cached_sides_are_identical():
    a, b, c = (sample_table(_scored(m, noise)) for m, noise in (("direct", 0.1), ("cot", 0.3), ("rag", 0.5)))
    plain = [paired_differences(a, x, n_boot=300, seed=0) for x in (b, c)]
    cache: dict[tuple, dict] = {}
    calls = []

    def resampled(side, table):
        # by content: the aligned tables are fresh copies, and an id() of a freed one is reused
        key = (table.counts.tobytes(), table.score.tobytes(), table.gt_ordinal.tobytes(), table.business_ids)
        if key not in cache:
            calls.append(side)
            cache[key] = resampled_scores(table, n_boot=300, seed=0)
        return cache[key]

    cached = [paired_differences(a, x, n_boot=300, seed=0, resampled=resampled) for x in (b, c)]
    assert cached == plain  # every figure equal, not just close
    runs = [_scored("direct", 0.1), _scored("cot", 0.3), _scored("rag", 0.5)]
    diffs = [None] + [paired_differences(sample_table(runs[0]), sample_table(r), n_boot=300)["differences"] for r in runs[1:]]
    frame = mv.comparison(runs, 0, n_boot=300)
    assert frame.equals(mv.comparison([run_summary(r) for r in runs], 0, n_boot=300, differences=diffs))
    assert frame.filter(pl.col("diff_pct").is_not_null()).height == 8


def test_result_charts_carry_the_views_frames():
    """The Results page charts, built from the views of synthetic runs scored at two K."""
    def scored(method: str, noise: float, k: int) -> dict:
        results, gt, texts = synthetic_run(60, seed=3, noise=noise, method=method, k=k, run_id=f"{method}_k{k}")
        return score_results(results, gt=gt, review_texts=texts, n_boot=200)

    runs = [scored("direct", 0.2, 50), scored("cot", 0.3, 50), scored("direct", 0.25, 25), scored("cot", 0.35, 25)]
    run = runs[0]
    pr = mv.pr_curves(run)
    spec = rc.pr_chart(pr).to_dict()
    (rows,) = spec["datasets"].values()
    assert [(r["threshold"], r["point"], r["recall"], r["precision"]) for r in rows] == list(pr.iter_rows())
    assert spec["mark"]["interpolate"] == "step-before" and spec["encoding"]["order"]["field"] == "point"

    components = mv.components(run)
    spec = rc.components_chart(components).to_dict()
    rows, target = sorted(spec["datasets"].values(), key=len, reverse=True)
    assert [r["component"] for r in rows] == components["component"].to_list()
    assert all(r["label"].endswith(f"weight {round(100 * r['weight'])}%") for r in rows if r["value"] is not None)
    assert spec["layer"][2]["mark"]["type"] == "rule" and target == [{"x": rc.TARGET_PCT}]

    confusion = mv.confusion(run)
    scale = list(run["verdict_scale"])
    spec = rc.confusion_chart(confusion, scale).to_dict()
    (rows,) = spec["datasets"].values()
    assert sum(r["count"] for r in rows) == confusion["count"].sum() == 60
    assert spec["layer"][0]["encoding"]["y"]["sort"] == scale

    comparison = mv.comparison(runs[:2], 0, n_boot=200)
    spec = rc.comparison_chart(comparison).to_dict()
    (rows,) = spec["datasets"].values()
    assert len(rows) == comparison.filter(pl.col("score_pct").is_not_null()).height
    assert spec["resolve"]["scale"]["x"] == "independent" and spec["columns"] == 2

    by_k = mv.scores_by_k(runs)
    spec = rc.k_chart(by_k).to_dict()
    (rows,) = spec["datasets"].values()
    assert {(r["method"], r["k"]) for r in rows} == {("direct", 25), ("direct", 50), ("cot", 25), ("cot", 50)}
    assert spec["facet"]["field"] == "metric"

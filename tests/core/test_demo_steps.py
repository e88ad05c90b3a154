"""The demo workspace holds a keyword index, heuristic judgments (the GT judge) and GT files per K."""

from __future__ import annotations

import polars as pl

from core.base.files import read_json
from core.demo import generate_demo
from core.demo.steps import DEMO_GT_DEFINITIONS, DEMO_KS, DEMO_RUNS, DEMO_TOPIC_GT
from core.ground_truth import compute_gt, distribution_by_k, list_gt_files
from core.judgments import get_gt_judge, list_judges
from core.runs import list_runs, validate_results
from core.tasks.keyword_index import index_stats
from core.workspace import Workspace


def test_full_demo_has_index_judgments_and_gt_by_k(tmp_path):
    root = tmp_path / "ws"
    summary = generate_demo(root, truth_path=tmp_path / "truth.parquet")
    ws = Workspace(root)
    assert summary["steps"] == ["core.demo.steps.tasks_step", "core.demo.steps.index_step", "core.demo.steps.judge_step",
                                "core.demo.steps.gt_step", "core.demo.steps.labels_step", "core.demo.steps.study_step",
                                "core.demo.steps.gold_step", "core.demo.steps.runs_step"]

    stats = index_stats(ws, "demo")
    assert stats["current"] and stats["tasks"]["G1a"]["reviews"] == 20_000
    judges = list_judges(ws, "demo", "G1a")
    assert [j["judge"] for j in judges] == ["heuristic-v1", "heuristic-v2"] and get_gt_judge(ws, "demo", "G1a") == "heuristic-v2"
    assert judges[0]["n"] == stats["tasks"]["G1a"]["matches"]  # only keyword-matched reviews are judged

    files = list_gt_files(ws)
    topic_defs = [d for defs in DEMO_TOPIC_GT.values() for d in defs]
    assert {(f["definition"], f["k"]) for f in files} == {(d, k) for d in (*DEMO_GT_DEFINITIONS, *topic_defs)
                                                          for k in DEMO_KS}

    # Issue 3: mostly Low, High and Critical present at K=200, >= 3 restaurants whose verdict changes with K.
    frame = compute_gt(ws, "demo", "G1a", "v1", list(DEMO_KS))
    dist = {r["k"]: (r["Low"], r["High"], r["Critical"]) for r in distribution_by_k(frame).iter_rows(named=True)}
    assert all(low >= 90 for low, _, _ in dist.values())
    assert dist[200][1] > 0 and dist[200][2] > 0
    n_verdicts = frame.group_by("business_id").agg(pl.col("verdict").n_unique().alias("n"))
    assert n_verdicts.filter(pl.col("n") > 1).height >= 3
    print("demo GT v1 by K (Low/High/Critical):", dist)

    # Runs with the offline model and the baselines, scored against the policy's GT files.
    runs = {r["run_id"]: r for r in list_runs(ws)}
    expected = {f"demo-{m}-K{k}" for m, ks in DEMO_RUNS for k in ks}
    assert set(runs) == expected and all(r["status"] == "finished" for r in runs.values())
    for run_id in expected:
        results = read_json(ws.runs_dir / run_id / "results.json")
        validate_results(results)
        assert results["n"] == 100 and results["total"] == 100 and results["unified_scores"]["auprc"] is not None

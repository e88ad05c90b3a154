"""The demo labeling project: synthetic, seeded, idempotent, and rich enough for every statistic."""

from __future__ import annotations

import polars as pl

from core.labeling import agreement, charts, consensus, demo, items, reports
from core.labeling.store import close_stores, integrity_problems, open_store


def test_the_demo_project(workspace, tmp_path):
    summary = demo.seed_demo_labels(workspace, seed=5)
    assert summary["created"] and summary["items"] == 36 and summary["ratings"] > 30
    assert demo.seed_demo_labels(workspace, seed=5) == {"project": demo.PROJECT, "created": False}
    store = open_store(workspace.root)
    project = items.get_project(store, demo.PROJECT)
    assert integrity_problems(store) == []
    cov = reports.coverage(store, project)
    assert all(cov["n_items"][:4].to_list()), "the demo shows items with 0, 1, 2 and 3 raters"
    frame = reports.ratings_frame(store, project)
    assert set(frame["rater"]) == set(demo.RATERS)
    rep = agreement.agreement_report(frame, n_boot=100)
    assert rep["alpha"]["value"] > 0.5 and rep["test_retest"]
    assert consensus.consensus_summary(consensus.compute_consensus(store, project))["adjudicated"] == 1
    close_stores()


def test_the_demo_is_reproducible(tmp_path):
    from core.workspace import Workspace

    rows = []
    for name in ("a", "b"):
        ws = Workspace(tmp_path / name)
        demo.seed_demo_labels(ws, seed=9)
        store = open_store(ws.root)
        frame = reports.ratings_frame(store, items.get_project(store, demo.PROJECT))
        rows.append(frame.drop("rating_id").to_dicts())
    assert rows[0] == rows[1]
    assert demo.demo_items(1) != demo.demo_items(2)
    close_stores()


def test_the_label_review_charts_of_the_demo(workspace):
    """Coverage, one item's raters, a rater pair and the rater bias, built from the demo project."""
    demo.seed_demo_labels(workspace, seed=5)
    store = open_store(workspace.root)
    project = items.get_project(store, demo.PROJECT)
    cov = reports.coverage(store, project)
    spec = charts.coverage_chart(cov, target=project.target_raters).to_dict()
    (rows,) = spec["datasets"].values()
    drawn: dict[int, int] = {}  # the stacked bars add up to each level's items
    for r in rows:
        drawn[r["n_raters"]] = drawn.get(r["n_raters"], 0) + r["n"]
    assert drawn == {k: n for k, n, _ in cov.iter_rows() if n}
    assert {r["status"] for r in rows if r["n_raters"] >= project.target_raters} == {"complete"}
    assert {r["status"] for r in rows if r["n_raters"] < project.target_raters} == {"needs raters"}

    first = reports.first_ratings(reports.ratings_frame(store, project))
    item = first.group_by("item_id").agg("rater", "score").sort(pl.col("rater").list.len(), "item_id",
                                                                  descending=[True, False]).row(0, named=True)
    spec = charts.rater_values_chart(item["rater"], item["score"], labels=project.scale_labels).to_dict()
    (rows,) = spec["datasets"].values()
    assert [(r["rater"], r["score"]) for r in rows] == list(zip(item["rater"], item["score"], strict=True))
    assert project.scale_labels[0] in spec["layer"][0]["encoding"]["x"]["axis"]["labelExpr"]

    rep = agreement.agreement_report(reports.ratings_frame(store, project), n_boot=100)
    pair = rep["pairwise"][0]
    spec = charts.pair_scatter_chart(first, pair["rater_a"], pair["rater_b"]).to_dict()
    pairs = next(d for d in spec["datasets"].values() if "item_id" in d[0])
    assert len(pairs) == pair["n"]  # the items both rated
    assert spec["layer"][1]["encoding"]["x"]["title"] == pair["rater_a"]

    bias = pl.DataFrame(rep["rater_bias"])
    spec = charts.rater_bias_chart(bias).to_dict()
    rows = next(d for d in spec["datasets"].values() if "rater" in d[0])
    assert {r["rater"]: r["mean_signed_deviation"] for r in rows} == dict(bias.select("rater", "mean_signed_deviation").iter_rows())
    domain = spec["layer"][0]["encoding"]["x"]["scale"]["domain"]
    assert domain[0] == -domain[1] and domain[1] >= max(abs(v) for v in bias["ci_lo"].to_list() + bias["ci_hi"].to_list())
    close_stores()

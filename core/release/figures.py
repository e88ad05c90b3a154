"""Every figure a release shows, computed from its data workspace: :func:`compute`.

``release`` runs it on the data it has just copied (so the page shows what the data gives), and
``release verify`` runs it again on the same data and compares every number. The result is a JSON
document (``figures.json``, the page's data) and the Parquet/CSV tables beside it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from core.ground_truth import k_label
from core.release import charts
from core.release.audits import audit_summaries
from core.release.claims import CLAIM_VERSION, encode, statement
from core.release.gt_figures import (
    gt_entry,
    gt_frame,
    gt_table,
    judge_figures,
    overrides_figures,
    restaurants_of,
    task_facts,
)
from core.release.run_figures import ScoredRun, comparisons, groups, paired_table, score_run
from core.release.scope import Scope
from core.workspace import Workspace

FORMAT = "workbench-release/1"


@dataclass
class Computed:
    """The figures document, the tables (relative path → frame) and the GT frames by entry."""

    figures: dict[str, Any]
    tables: dict[str, pl.DataFrame] = field(default_factory=dict)
    gt_frames: dict[tuple[str, str, str], pl.DataFrame] = field(default_factory=dict)


def _verdicts_sha256(frame: pl.DataFrame, k: int | None) -> str:
    """sha256 of the verdicts at ``k`` by business_id (what a GT claim pins)."""
    rows = frame.filter(pl.col("k").is_null() if k is None else pl.col("k") == k).select("business_id", "verdict")
    return hashlib.sha256(rows.sort("business_id").write_ndjson().encode("utf-8")).hexdigest()


def _gt_part(ws: Workspace, scope: Scope, out: Computed) -> None:
    restaurants, entries, overrides, tasks, judges, tables = {}, [], {}, [], [], []
    for gts in scope.gts:
        if gts.dataset not in restaurants:
            order = restaurants_of(ws, gts.dataset)
            restaurants[gts.dataset] = {"business_ids": order["business_id"].to_list(), "names": order["name"].to_list(),
                                        "n_reviews": order["n_reviews"].to_list()}
        order = pl.DataFrame({"business_id": restaurants[gts.dataset]["business_ids"]})
        for definition in gts.definitions:
            frame = gt_frame(ws, gts, definition)
            entry = gt_entry(ws, gts, definition, frame, order)
            entry["verdicts_sha256"] = {k_label(k): _verdicts_sha256(frame, k) for k in gts.ks}
            entry["chart"] = charts.gt_distribution(frame, entry["scale"])
            entries.append(entry)
            out.gt_frames[(gts.dataset, gts.task, definition)] = frame
            tables.append(gt_table(frame, gts, definition))
        overrides[f"{gts.dataset}/{gts.task}"] = overrides_figures(ws, gts.dataset, gts.task)
        tasks.append(task_facts(ws, gts))
        judges.extend(judge_figures(ws, gts))
    out.figures.update(restaurants=restaurants, gt=entries, overrides=overrides, tasks=tasks, judges=judges)
    if tables:
        out.tables["tables/gt_verdicts.parquet"] = pl.concat(tables).sort("dataset", "task", "definition", "k", "business_id")


def _runs_part(ws: Workspace, scope: Scope, out: Computed) -> None:
    cache: dict[Any, Any] = {}
    runs: dict[str, ScoredRun] = {r: score_run(ws, r, cache=cache) for r in scope.runs}
    pairs = comparisons(runs, scope)
    charts_by_group = []
    by_policy: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for (dataset, task, policy, _k), ids in groups(runs).items():
        by_policy.setdefault((dataset, task, policy), []).extend(runs[m].figures for m in ids)
    for (dataset, task, policy), figs in sorted(by_policy.items(), key=lambda kv: tuple(map(str, kv[0]))):
        mine = [c for c in pairs if (c["dataset"], c["task"], c["policy"]) == (dataset, task, policy)]
        charts_by_group.append({"dataset": dataset, "task": task, "policy": policy,
                                "runs": [f["run_id"] for f in figs], "scores": charts.scores_chart(figs),
                                "k": charts.k_chart(figs), "paired": charts.paired_chart(mine) if mine else None})
    out.figures.update(runs=[runs[r].figures for r in sorted(runs)], comparisons=pairs, run_charts=charts_by_group)
    if runs:
        out.tables["tables/samples.parquet"] = pl.concat(
            [runs[r].samples.select(pl.lit(r).alias("run_id"), pl.all()) for r in sorted(runs)])
        out.tables["tables/runs.parquet"] = _runs_table([runs[r].figures for r in sorted(runs)])
    for c in pairs:
        table = paired_table(runs[c["baseline"]].samples, runs[c["run"]].samples)
        out.tables[f"tables/paired/{c['run']}__vs__{c['baseline']}.parquet"] = table
        out.tables[f"tables/paired/{c['run']}__vs__{c['baseline']}.csv"] = table


def _runs_table(figures: list[dict[str, Any]]) -> pl.DataFrame:
    rows = [{"run_id": f["run_id"], "method": f["method"], "model": f["model"], "k": f["k"], "metric": m,
             "value": s["value"], "low": s["low"], "high": s["high"]} for f in figures for m, s in f["scores"].items()]
    return pl.DataFrame(rows, schema={"run_id": pl.String, "method": pl.String, "model": pl.String, "k": pl.Int64,
                                      "metric": pl.String, "value": pl.Float64, "low": pl.Float64, "high": pl.Float64})


def _claims(figures: dict[str, Any]) -> list[dict[str, Any]]:
    """The release's own claims: each paired comparison's ordinal AUPRC, and each definition's GT
    at its largest K. Runs whose GT is stale make none (their figure would not hold against the
    GT the release's judgments give)."""
    runs = {r["run_id"]: r for r in figures["runs"]}
    made = []
    for c in figures["comparisons"]:
        a, b = runs[c["baseline"]], runs[c["run"]]
        if a["gt"]["stale_reasons"] or b["gt"]["stale_reasons"]:
            continue
        d = c["differences"]["ordinal_auprc"]
        made.append({"v": CLAIM_VERSION, "kind": "paired", "metric": "ordinal_auprc", "runs": [a["run_id"], b["run_id"]],
                     "dataset": c["dataset"], "task": c["task"], "definition": c["policy"], "k": c["k"],
                     "n_boot": c["n_boot"], "seed": c["seed"],
                     "figure": {"difference": d["difference"], "low": d["low"], "high": d["high"], "n_common": c["n_common"]},
                     "labels": {x["run_id"]: f"{x['method']} ({x['run_id']})" for x in (a, b)},
                     "inputs": {"runs": {x["run_id"]: x["answers_sha256"] for x in (a, b)}, "gt": b["gt_pin"]}})
    for e in figures["gt"]:
        k = e["ks"][-1]
        lin = e["lineage"][k]
        dist = next(d for d in e["distribution"] if d["k"] == k)
        pin = {key: lin.get(key) for key in ("version", "dataset_sha256", "judge", "judgments_sha256", "n_judgments",
                                              "overrides_sha256", "n_overrides")}
        made.append({"v": CLAIM_VERSION, "kind": "gt", "dataset": e["dataset"], "task": e["task"],
                     "definition": e["definition"], "k": lin.get("k"), "figure": {"counts": dist["counts"], "total": dist["total"]},
                     "inputs": {"gt": {**pin, "origin": "computed", "sha256": e["verdicts_sha256"][k],
                                       "definition_sha256": lin["definition"]["sha256"], "file": None}}})
    return [{"claim": c, "token": encode(c), "statement": statement(c)} for c in made]


def compute(ws: Workspace, scope: Scope) -> Computed:
    """Every figure of a release of ``scope`` from the data workspace ``ws`` (see the module docstring)."""
    out = Computed({"format": FORMAT, "title": scope.title})
    _gt_part(ws, scope, out)
    _runs_part(ws, scope, out)
    out.figures["audits"] = audit_summaries(ws, scope.datasets)
    out.figures["claims"] = _claims(out.figures)
    return out

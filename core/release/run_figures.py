"""The run figures of a release: every run's scores recomputed from its answers and the GT it kept,
the paired comparisons with a baseline run, and the per-restaurant paired tables.

A run is rescored with :func:`core.runs.rescore.rescore_results` (``core.metrics.score_results``
with the run's policy, seed, resamples and the review texts of its dataset) against its own
``gt.json``: the GT it was scored against. Only a compact per-restaurant table of each run is kept
in memory (a 10,000-restaurant run is tens of megabytes as JSON).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson
import polars as pl

from core.datasets.db import Database
from core.ground_truth.lineage import canonical, describe, stale_reasons
from core.metrics import score_results
from core.metrics.badges import badges
from core.metrics.bootstrap import HEADLINE, SampleTable, paired_differences
from core.metrics.io import dataset_review_texts
from core.metrics.score import ranking_scores, resolve_policy, sample_table
from core.release.scope import BASELINE_METHODS, Scope
from core.runs.gt import RunGT, snapshot_gt
from core.runs.records import load_results
from core.runs.rescore import lineage_of, rescore_results
from core.workspace import Workspace

N_BOOT, SEED = 1000, 0  # the paired comparisons' resamples and seed (as the Results page's)
METRIC_NAMES = {"ordinal_auprc": "ordinal AUPRC", "process_score": "process", "consistency_score": "consistency",
                "accuracy": "accuracy"}
SAMPLE_SCHEMA = {"business_id": pl.String, "name": pl.String, "gt_verdict": pl.String, "verdict": pl.String,
                 "correct": pl.Boolean, "score": pl.Float64, "error": pl.String}


@dataclass(frozen=True)
class ScoredRun:
    """What a release keeps of a rescored run: its figures, per-restaurant samples and counts."""

    figures: dict[str, Any]
    samples: pl.DataFrame
    table: SampleTable


def answers_sha256(results: Mapping[str, Any]) -> str:
    """sha256 of what a run answered (per restaurant: verdict, risk score, parsed answer, error),
    whatever it was scored against: the input of a claim about the run. A run's head without its
    samples (:func:`core.runs.view.head_of`) carries it, computed while they were at hand."""
    if "results" not in results and isinstance(results.get("answers_sha256"), str):
        return str(results["answers_sha256"])
    rows = sorted(([str(s.get("business_id")), s.get("verdict"), s.get("risk_score"), s.get("parsed"), s.get("error")]
                   for s in results.get("results") or []), key=lambda r: r[0])
    return hashlib.sha256(orjson.dumps(canonical(rows), option=orjson.OPT_SORT_KEYS)).hexdigest()


_GT_PIN = ("version", "dataset_sha256", "judge", "judgments_sha256", "n_judgments", "overrides_sha256", "n_overrides")


def gt_pin(lineage: Mapping[str, Any] | None) -> dict[str, Any]:
    """What a claim pins of the GT a run was scored against: its version, the sha256 of the GT the
    run kept (or of the file it read), the dataset, definition, judge, judgments and overrides."""
    lin = lineage or {}
    definition = lin.get("definition") or (lin.get("computed_from") or {}).get("definition") or {}
    return {**{k: lin.get(k) for k in _GT_PIN}, "origin": lin.get("origin"),
            "sha256": lin.get("snapshot_sha256") or lin.get("file_sha256"), "definition_sha256": definition.get("sha256"),
            "file": lin.get("file")}


def _embedded(ws: Workspace, results: dict[str, Any]) -> dict[str, Any]:
    """A run without a kept GT (imported with its own verdicts): scored from each sample's gt_verdict."""
    policy = resolve_policy(results.get("policy_id"), ws)
    dataset = (results.get("config") or {}).get("dataset")
    texts = None
    if dataset and dataset in ws.datasets():
        ids = [str(s["business_id"]) for s in results["results"]]
        texts = dataset_review_texts(Database(ws.root), str(dataset), ids, results.get("k"))
    options = (results.get("config") or {}).get("options") or {}
    return score_results(results, review_texts=texts, policy=policy, n_boot=int(options.get("n_boot", N_BOOT)),
                         seed=int((results.get("config") or {}).get("seed") or 0))


def rescore_kept(ws: Workspace, run_id: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """(stored results, results rescored from its answers against the GT it kept)."""
    folder = ws.run_dir(run_id)
    results = load_results(folder)
    lineage = lineage_of(results)
    kept = snapshot_gt(folder)
    if kept is None or (lineage or {}).get("origin") == "embedded":
        return results, _embedded(ws, results)
    scored, _ = rescore_results(ws, folder, results, None, gt=RunGT({}, kept, lineage))
    return results, scored


def scores_of(scored: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    ivs = (scored.get("intervals") or {}).get("scores") or {}
    values = {"ordinal_auprc": (scored.get("unified_scores") or {}).get("auprc"),
              "process_score": (scored.get("unified_scores") or {}).get("process_score"),
              "consistency_score": (scored.get("unified_scores") or {}).get("consistency_score"),
              "accuracy": scored.get("accuracy")}
    return {m: {"value": v, "low": (ivs.get(m) or {}).get("low"), "high": (ivs.get(m) or {}).get("high")}
            for m, v in values.items()}


def auprc_text(scores: Mapping[str, Mapping[str, Any]]) -> str:
    """The ordinal AUPRC as ``runs show`` prints it (4 decimals, N/A when undefined).

    >>> auprc_text({"ordinal_auprc": {"value": 0.03125}})
    '0.0312'
    """
    value = scores["ordinal_auprc"]["value"]
    return "N/A" if value is None else f"{value:.4f}"


def samples_frame(scored: Mapping[str, Any]) -> pl.DataFrame:
    """business_id, name, GT verdict, verdict, correct, ranking score and error of every sample."""
    samples = scored.get("results") or []
    score, _ = ranking_scores(samples, list(scored.get("verdict_scale") or []))
    return pl.DataFrame([{"business_id": str(s.get("business_id")), "name": s.get("name"), "gt_verdict": s.get("gt_verdict"),
                          "verdict": s.get("verdict"), "correct": s.get("correct"), "score": float(x),
                          "error": s.get("error") or None} for s, x in zip(samples, score.tolist(), strict=True)],
                        schema=SAMPLE_SCHEMA)


def score_run(ws: Workspace, run_id: str, *, cache: dict[Any, Any] | None = None) -> ScoredRun:
    """The figures of one run, recomputed (see the module docstring)."""
    stored, scored = rescore_kept(ws, run_id)
    lineage = lineage_of(stored) or {}
    config = stored.get("config") or {}
    rows = badges(scored)
    usage = stored.get("usage") or {}
    thresholds = [{k: t.get(k) for k in ("level", "ap", "nap", "prevalence", "n_positive", "reason")}
                  for t in (scored.get("auprc") or {}).get("thresholds") or []]
    figures = {
        "run_id": run_id, "dataset": config.get("dataset"), "task": stored.get("task_id"),
        "policy": stored.get("policy_id"), "method": stored.get("method"), "model": stored.get("model"),
        "k": stored.get("k"), "n": stored.get("n"), "total": scored.get("total"), "offline": stored.get("offline"),
        "seed": config.get("seed"), "n_boot": (scored.get("intervals") or {}).get("n_boot"),
        "gt": {"description": describe(lineage or None), "origin": lineage.get("origin"), "version": lineage.get("version"),
               "snapshot_sha256": lineage.get("snapshot_sha256"),
               "stale_reasons": stale_reasons(ws, lineage or None, cache=cache)},
        "scores": scores_of(scored), "thresholds": thresholds, "auprc_text": auprc_text(scores_of(scored)),
        "ranking": ((scored.get("auprc") or {}).get("ranking_score") or {}).get("source"),
        "badges": [{"metric": r["metric"], "status": r["status"], "note": r["note"]} for r in rows],
        "usage": {"tokens": int(usage.get("prompt_tokens") or 0) + int(usage.get("completion_tokens") or 0),
                  "cost_usd": usage.get("cost_usd"), "llm_calls": usage.get("llm_calls")},
        "answers_sha256": answers_sha256(stored), "gt_pin": gt_pin(lineage or None),
        "stored_differs": stored_differences(stored, scored),
    }
    return ScoredRun(figures, samples_frame(scored), sample_table(scored))


def stored_differences(stored: Mapping[str, Any], scored: Mapping[str, Any]) -> list[str]:
    """The headline scores whose value in the run's results.json is not the one recomputed."""
    if stored.get("unified_scores") is None:
        return []
    a, b = scores_of(stored), scores_of(scored)
    return [METRIC_NAMES[m] for m in HEADLINE
            if not _same(a[m]["value"], b[m]["value"])]


def _same(x: Any, y: Any) -> bool:
    if x is None or y is None:
        return x is y
    return abs(float(x) - float(y)) <= 1e-9 * max(1.0, abs(float(x)))


def groups(runs: Mapping[str, ScoredRun]) -> dict[tuple[Any, ...], list[str]]:
    """Runs of the same dataset, task, policy and K (the runs a paired comparison may pair)."""
    out: dict[tuple[Any, ...], list[str]] = {}
    for run_id, r in sorted(runs.items()):
        f = r.figures
        out.setdefault((f["dataset"], f["task"], f["policy"], f["k"]), []).append(run_id)
    return out


def baseline_of(run_ids: Sequence[str], runs: Mapping[str, ScoredRun], scope: Scope) -> str:
    """The group's baseline: the scope's when it is in the group, else the first of
    :data:`BASELINE_METHODS` present (then by run id)."""
    if scope.baseline in run_ids:
        return str(scope.baseline)
    rank = {m: i for i, m in enumerate(BASELINE_METHODS)}
    return min(run_ids, key=lambda r: (rank.get(str(runs[r].figures["method"]), len(rank)), r))


def paired_table(base: pl.DataFrame, other: pl.DataFrame) -> pl.DataFrame:
    """Per restaurant both runs scored: each run's GT verdict, verdict, correct and ranking score,
    whether the GT verdict is the same (only those are paired) and the bucket (newly failing …)."""
    a = base.filter(pl.col("gt_verdict").is_not_null())
    b = other.filter(pl.col("gt_verdict").is_not_null())
    both = a.join(b, on="business_id", how="inner", suffix="_run", maintain_order="left")
    bucket = (pl.when(pl.col("gt_verdict") != pl.col("gt_verdict_run")).then(pl.lit("GT differs"))
              .when(pl.col("correct") & pl.col("correct_run")).then(pl.lit("still right"))
              .when(pl.col("correct")).then(pl.lit("newly failing"))
              .when(pl.col("correct_run")).then(pl.lit("newly fixed")).otherwise(pl.lit("still failing")))
    return both.select(
        "business_id", "name", pl.col("gt_verdict").alias("baseline_gt_verdict"), pl.col("gt_verdict_run").alias("gt_verdict"),
        pl.col("verdict").alias("baseline_verdict"), pl.col("verdict_run").alias("verdict"),
        pl.col("correct").alias("baseline_correct"), pl.col("correct_run").alias("correct"),
        pl.col("score").alias("baseline_score"), pl.col("score_run").alias("score"),
        (pl.col("gt_verdict") == pl.col("gt_verdict_run")).alias("same_gt"), bucket.alias("bucket"))


def comparison(base_id: str, other_id: str, runs: Mapping[str, ScoredRun]) -> dict[str, Any]:
    """Paired bootstrap of other − baseline on the restaurants both scored with the same GT verdict
    (:func:`core.metrics.bootstrap.paired_differences`), and the bucket counts."""
    pair = paired_differences(runs[base_id].table, runs[other_id].table, n_boot=N_BOOT, seed=SEED)
    table = paired_table(runs[base_id].samples, runs[other_id].samples)
    counts = dict(table.group_by("bucket").len().iter_rows())
    f = runs[other_id].figures
    return {"dataset": f["dataset"], "task": f["task"], "policy": f["policy"], "k": f["k"],
            "baseline": base_id, "run": other_id, "n_common": pair["n_common"], "n_gt_differs": pair["n_gt_differs"],
            "n_boot": N_BOOT, "seed": SEED,
            "differences": {m: {k: pair["differences"][m][k] for k in ("a", "b", "difference", "low", "high", "excludes_zero")}
                            for m in HEADLINE},
            "buckets": {k: int(counts.get(k, 0)) for k in ("newly failing", "newly fixed", "still failing",
                                                            "still right", "GT differs")}}


def comparisons(runs: Mapping[str, ScoredRun], scope: Scope) -> list[dict[str, Any]]:
    """Every run against its group's baseline."""
    out: list[dict[str, Any]] = []
    for members in groups(runs).values():
        if len(members) < 2:
            continue
        base = baseline_of(members, runs, scope)
        out.extend(comparison(base, r, runs) for r in members if r != base)
    return out

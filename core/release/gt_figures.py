"""The ground-truth figures of a release, computed from its data workspace with the workbench's own
GT engine: distribution by K, the restaurant × K verdicts with their lineage, verdict flips, the
overrides in force, and the agreement of the other judges with the GT judge.

Every function is a pure function of the workspace it is given: ``release`` calls them on the
release's data and ``release verify`` calls them again on the same data to check every number.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl

from core.ground_truth import k_label
from core.ground_truth.compute import distribution_by_k
from core.ground_truth.export import default_layout, gt_frame_for_layout, gt_payload
from core.ground_truth.gt_files import LINEAGE_KEY, gt_filename, write_gt_file
from core.ground_truth.lineage import computed_lineage
from core.ground_truth.policies import Policy
from core.ground_truth.variants import resolve_definition
from core.ground_truth.views import describe as describe_definition
from core.ground_truth.views import is_scored
from core.ground_truth.views.charts import verdict_palette
from core.ground_truth.views.grid import k_order, verdict_scale, with_score
from core.ground_truth.views.judge_compare import compare_judges
from core.judgments import list_judges
from core.judgments.overrides import list_overrides
from core.release.scope import GTScope
from core.tasks import get_task
from core.workspace import Workspace


def restaurants_of(ws: Workspace, dataset: str) -> pl.DataFrame:
    """business_id, name and stored review count of a dataset's restaurants, in the order the
    release lists them (name, then business_id)."""
    from core.ground_truth import load_restaurants  # deferred: core.datasets pulls in pandas

    return load_restaurants(ws, dataset).select("business_id", "name", "n_reviews").sort("name", "business_id")


def gt_frame(ws: Workspace, gts: GTScope, definition: str) -> pl.DataFrame:
    """GT of one definition at every K of ``gts`` (judgments with overrides applied), with ``score``."""
    layout = default_layout(resolve_definition(ws, definition).definition, ws)
    frame = gt_frame_for_layout(ws, gts.dataset, gts.task, definition, list(gts.ks), layout=layout, judge=gts.judge)
    return with_score(frame)


def write_gt_files(ws: Workspace, gts: GTScope, definition: str, frame: pl.DataFrame,
                   lineages: dict[str, dict[str, Any]]) -> list[str]:
    """One GT file per K (xnot layout for a formula, ADDM for a policy) under ``gt/{dataset}/{task}/``,
    each carrying its lineage; returns their paths relative to the workspace."""
    d = resolve_definition(ws, definition).definition
    layout = default_layout(d, ws)
    out = []
    for k in gts.ks:
        payload = gt_payload(frame, layout=layout, task=gts.task, k=k, policy=d if isinstance(d, Policy) else None)
        payload[LINEAGE_KEY] = lineages[k_label(k)]
        path = ws.gt_dir / gts.dataset / gts.task / gt_filename(definition, k, layout)
        write_gt_file(path, payload)
        out.append(str(path.relative_to(ws.root)))
    return out


def _codes(frame: pl.DataFrame, order: pl.DataFrame, k: int | None, scale: tuple[str, ...]) -> tuple[list[int], list[Any]]:
    """Verdict codes (index in ``scale``, -1 none) and scores of every restaurant of ``order`` at ``k``."""
    at = frame.filter(pl.col("k").is_null() if k is None else pl.col("k") == k).select("business_id", "verdict", "score")
    rows = order.select("business_id").join(at, on="business_id", how="left", maintain_order="left")
    index = {v: i for i, v in enumerate(scale)}
    codes = [index.get(v, -1) if v is not None else -1 for v in rows["verdict"].to_list()]
    scores = [None if s is None else round(float(s), 4) for s in rows["score"].to_list()]
    return codes, scores


def _flips(codes: dict[str, list[int]], ks: list[str]) -> dict[str, Any]:
    """Restaurants whose verdict is not the same at every K, and the changes between neighbouring K."""
    columns = [codes[k] for k in ks]
    n = len(columns[0]) if columns else 0
    changing = sum(1 for i in range(n) if len({c[i] for c in columns}) > 1)
    steps = [{"from": a, "to": b, "changes": sum(1 for x, y in zip(codes[a], codes[b], strict=True) if x != y)}
             for a, b in zip(ks, ks[1:], strict=False)]
    return {"restaurants_changing": changing, "steps": steps}


def gt_entry(ws: Workspace, gts: GTScope, definition: str, frame: pl.DataFrame, order: pl.DataFrame) -> dict[str, Any]:
    """Every figure of one definition's GT: scale, description, lineage and distribution per K,
    short-of-K counts, flips, and the verdict codes and scores of every restaurant per K."""
    chosen = resolve_definition(ws, definition)
    d = chosen.definition
    scale = tuple(verdict_scale(d))
    ks = k_order(list(gts.ks))
    labels = [k_label(k) for k in ks]
    dist = distribution_by_k(frame, scale)
    names = [c for c in dist.columns if c not in ("k", "total")]
    distribution = [{"k": k_label(row["k"]), "counts": {v: int(row[n]) for v, n in zip(scale, names, strict=True)},
                     "total": int(row["total"])} for row in dist.iter_rows(named=True)]
    short = frame.group_by("k").agg(pl.col("short_of_k").sum().cast(pl.Int64).alias("n"))
    codes: dict[str, list[int]] = {}
    scores: dict[str, list[Any]] = {}
    for k, label in zip(ks, labels, strict=True):
        codes[label], scores[label] = _codes(frame, order, k, scale)
    return {
        "dataset": gts.dataset, "task": gts.task, "definition": definition, "judge": gts.judge,
        "description": describe_definition(d), "scale": list(scale), "scored": is_scored(d), "ks": labels,
        "colours": [verdict_palette(scale)[v] for v in scale],
        "lineage": {k_label(k): computed_lineage(ws, gts.dataset, gts.task, chosen, k, judge=gts.judge) for k in ks},
        "distribution": distribution,
        "short_of_k": {k_label(r["k"]): int(r["n"]) for r in short.iter_rows(named=True)},
        "flips": _flips(codes, labels), "verdicts": codes, "scores": scores,
    }


def overrides_figures(ws: Workspace, dataset: str, task: str) -> list[dict[str, Any]]:
    """Every override of a dataset/task (reverted ones too, with their status), oldest first."""
    if not ws.overrides_path(dataset, task).exists():
        return []
    keep = ("override_id", "business_id", "review_id", "idx", "original", "corrected", "reason", "author",
            "created_at", "status")
    return [{k: r.get(k) for k in keep} for r in list_overrides(ws, dataset, task)]


def judge_figures(ws: Workspace, gts: GTScope) -> list[dict[str, Any]]:
    """Agreement of every other judge with the GT judge: per field (agreement, Cohen's κ) on the
    reviews both judged, and per definition and K the verdict agreement and κ."""
    others = [j["judge"] for j in list_judges(ws, gts.dataset, gts.task) if j["judge"] != gts.judge]
    out = []
    for other in others:
        report = compare_judges(ws, gts.dataset, gts.task, gts.judge, other, definitions=list(gts.definitions),
                                ks=list(gts.ks))
        out.append({
            "dataset": gts.dataset, "task": gts.task, "gt_judge": gts.judge, "other": other,
            "n_gt_judge": report["n_a"], "n_other": report["n_b"], "n_both": report["n_both"],
            "only_gt_judge": len(report["only_a"]), "only_other": len(report["only_b"]),
            "fields": {f: {"agreement": v["agreement"], "kappa": v["kappa"]} for f, v in report["fields"].items()},
            "verdicts": [{"definition": v["definition"], "k": k_label(v["k"]), "n": v["n_restaurants"],
                          "agreement": v["verdict_agreement"], "kappa": v["verdict_kappa"],
                          "differing": len(v["differing"]), "mean_abs_score_diff": v["mean_abs_score_diff"]}
                         for v in report["verdicts"]],
        })
    return out


def task_facts(ws: Workspace, gts: GTScope) -> dict[str, Any]:
    """What the datasheet says of how a task's GT was made: keywords, fields, the GT judge and its
    prompt versions, the number of judgments."""
    spec = get_task(gts.task, ws)
    judges = {j["judge"]: j for j in list_judges(ws, gts.dataset, gts.task)}
    mine = judges.get(gts.judge) or {}
    return {"dataset": gts.dataset, "task": gts.task, "name": spec.name, "description": spec.description,
            "keywords": list(spec.keywords), "fields": list(spec.field_names),
            "judge": gts.judge, "judgments": mine.get("n"), "parse_errors": mine.get("n_parse_errors"),
            "prompt_versions": sorted(str(p) for p in mine.get("prompt_versions") or []),
            "judges": sorted(judges)}


def gt_table(frame: pl.DataFrame, gts: GTScope, definition: str) -> pl.DataFrame:
    """The rows of ``tables/gt_verdicts.parquet`` of one definition."""
    return frame.select(pl.lit(gts.dataset).alias("dataset"), pl.lit(gts.task).alias("task"),
                        pl.lit(definition).alias("definition"), pl.col("k").cast(pl.Int64), "business_id", "name",
                        "verdict", pl.col("score").cast(pl.Float64), pl.col("short_of_k"))


def relative(path: Path, root: Path) -> str:
    """``path`` relative to ``root`` with forward slashes."""
    return path.relative_to(root).as_posix()

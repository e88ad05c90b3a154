"""What changes a restaurant's GT between two K (SPEC §3.5): ``verdict_changes`` lists the K where
the verdict flips and ``explain_k_change`` names the reviews entering (or leaving) between two K,
the primitives they move and each one's effect on the score; ``explain_k_change_ws`` is the
workspace wrapper."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import polars as pl

from core.ground_truth.compute import compute_gt_frame, get_definition
from core.ground_truth.formulas import Formula
from core.ground_truth.policies.frame import compute_policy_gt_frame
from core.ground_truth.trace import (
    KChange,
    TraceNode,
    _fields,
    _load,
    _resolved,
    _restaurant,
    _task_fields,
    trace_gt,
)

if TYPE_CHECKING:
    from core.ground_truth.policies import Policy
    from core.workspace import Workspace


def verdict_changes(frame_by_k: pl.DataFrame, business_id: str) -> list[dict[str, Any]]:
    """The K where a restaurant's verdict changes: [{k_from, k_to, verdict_from, verdict_to, score_from, score_to}].

    ``frame_by_k`` is a GT frame with several K (K = all sorts last).
    """
    score_col = "final_risk_score" if "final_risk_score" in frame_by_k.columns else "score"
    rows = frame_by_k.filter(pl.col("business_id") == business_id).sort("k", nulls_last=True).to_dicts()
    changes = []
    for before, after in zip(rows, rows[1:], strict=False):
        if before["verdict"] != after["verdict"]:
            changes.append({
                "k_from": before["k"], "k_to": after["k"], "verdict_from": before["verdict"],
                "verdict_to": after["verdict"], "score_from": before[score_col], "score_to": after[score_col],
            })
    return changes


def _flatten(root: TraceNode) -> dict[str, TraceNode]:
    return {node.name: node for _, node in root.walk()}


def explain_k_change(
    judgments: pl.DataFrame,
    restaurants: pl.DataFrame,
    business_id: str,
    formula: str | Formula | Policy,
    k_from: int | None,
    k_to: int | None,
    *,
    constants: Mapping[str, Any] | None = None,
    texts: Mapping[int, str] | None = None,
) -> KChange:
    """The reviews between two K and the primitives they move (before/after values)."""
    definition_task = get_definition(formula, None).task
    before = _flatten(trace_gt(judgments, restaurants, business_id, formula, k_from, constants=constants, texts=texts))
    after = _flatten(trace_gt(judgments, restaurants, business_id, formula, k_to, constants=constants, texts=texts))
    lo, hi = sorted([k_from, k_to], key=lambda k: float("inf") if k is None else k)
    growing = lo == k_from
    wider = after if growing else before
    between = judgments.filter(pl.col("business_id") == business_id)
    between = between.filter(pl.col("idx") >= (lo or 0))
    if hi is not None:
        between = between.filter(pl.col("idx") < hi)
    reviews: list[dict[str, Any]] = []
    for r in between.sort("idx").to_dicts():
        touches = [
            {"primitive": name, "amount": c.amount, "explanation": c.explanation}
            for name, node in wider.items() for c in node.reviews if c.idx == r["idx"]
        ]
        reviews.append({**{k: r.get(k) for k in ("idx", "review_id", "date", "stars", "useful", "excerpt", "parse_error")},
                        "fields": _fields(r, _task_fields(definition_task)), "text": (texts or {}).get(int(r["idx"])), "touches": touches})
    effects = _score_effects(judgments, restaurants, business_id, formula, lo, [r["idx"] for r in reviews], constants)
    reviews = [{**r, "score_effect": effects.get(r["idx"])} for r in reviews]
    moved = tuple(
        {"name": name, "before": before[name].value, "after": after[name].value}
        for name in after if name in before and before[name].value != after[name].value
    )
    return KChange(business_id, k_from, k_to, before["verdict"].value, after["verdict"].value, tuple(reviews), moved,
                   "enter" if growing else "leave")


def _score_effects(
    judgments: pl.DataFrame, restaurants: pl.DataFrame, business_id: str, formula: str | Formula | Policy,
    k_low: int | None, idxs: list[int], constants: Mapping[str, Any] | None,
) -> dict[int, float]:
    """idx → change of the unrounded score when that one review is added to the reviews below ``k_low``.

    All variants are computed in one set-wise call: each is a pseudo-restaurant "<id>#<idx>".
    """
    if not idxs:
        return {}
    mine = judgments.filter(pl.col("business_id") == business_id)
    base = mine.filter(pl.col("idx") < (k_low if k_low is not None else 0)) if k_low is not None else mine.head(0)
    parts = [base]
    for i in idxs:
        parts.append(base.vstack(mine.filter(pl.col("idx") == i)).with_columns(pl.lit(f"{business_id}#{i}").alias("business_id")))
    rest = _restaurant(restaurants, business_id)
    rests = pl.concat([rest] + [rest.with_columns(pl.lit(f"{business_id}#{i}").alias("business_id")) for i in idxs])
    definition = get_definition(formula, None)
    if isinstance(definition, Formula):
        frame = compute_gt_frame(pl.concat(parts, how="diagonal_relaxed"), rests, definition, [None],
                                 constants=constants, rounded=False)
        col = "final_risk_score"
    else:
        frame = compute_policy_gt_frame(pl.concat(parts, how="diagonal_relaxed"), rests, definition, [None])
        col = "score"
    scores = dict(zip(frame["business_id"].to_list(), frame[col].to_list(), strict=True))
    return {i: scores[f"{business_id}#{i}"] - scores[business_id] for i in idxs}


def explain_k_change_ws(
    ws: Workspace, dataset: str, task: str, business_id: str, formula: str | Formula | Policy, k_from: int | None, k_to: int | None,
    *, judge: str | None = None, constants: Mapping[str, Any] | None = None,
) -> KChange:
    """:func:`explain_k_change` on a workspace's stored judgments with review texts."""
    fr = _load(ws, dataset, task, business_id, judge)
    return explain_k_change(fr.judgments, fr.restaurants, business_id, _resolved(ws, dataset, formula), k_from, k_to,
                            constants=constants, texts=fr.texts)

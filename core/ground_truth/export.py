"""Compute GT for a list of K and write one file per K (xnot or ADDM layout).

Shared by ``python -m core gt``, the demo generator and the Ground truth page's export.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from core.base.files import write_parts_atomic
from core.base.settings import require_writable
from core.ground_truth.compute import compute_gt, get_definition
from core.ground_truth.coverage import with_review_counts
from core.ground_truth.formulas import VERDICTS, Formula
from core.ground_truth.gt_files import (
    LINEAGE_KEY,
    addm_payload,
    formula_incidents,
    gt_filename,
    xnot_payload,
)
from core.ground_truth.gt_json import gt_document
from core.ground_truth.gt_listing import keep_facts
from core.ground_truth.inputs import load_inputs
from core.ground_truth.ks import normalize_ks
from core.workspace import Workspace

if TYPE_CHECKING:
    from core.ground_truth.policies import Policy


@dataclass(frozen=True)
class GTExport:
    """The computed frame (all K) and the files written, one per K."""

    definition: str
    layout: str
    frame: pl.DataFrame
    files: list[dict[str, Any]]


def default_layout(definition: str | Formula | Policy, ws: Workspace | None) -> str:
    """xnot for formulas, ADDM for policies."""
    return "xnot" if isinstance(get_definition(definition, ws), Formula) else "addm"


def verdict_scale(definition: str | Formula | Policy, ws: Workspace | None) -> tuple[str, ...]:
    """The ordered verdict scale (lowest first) of a formula (Low/High/Critical Risk) or policy."""
    d = get_definition(definition, ws)
    return VERDICTS if isinstance(d, Formula) else d.verdicts


def gt_frame_for_layout(
    ws: Workspace, dataset: str, task: str, definition: str | Formula | Policy, ks: Any, *, layout: str,
    judge: str | None = None, constants: Mapping[str, Any] | None = None,
) -> pl.DataFrame:
    """GT of every K with each restaurant's stored review count (``n_reviews_stored``,
    ``short_of_k``); for a formula in the ADDM layout, with the incidents and n_reviews it needs."""
    ks = normalize_ks(ks)
    resolved = get_definition(definition, ws)
    # the judgments (overrides applied) and their sha256, kept beside a large log while its inputs are unchanged
    inputs = load_inputs(ws, dataset, task, judge)
    judgments, restaurants = inputs.judgments, inputs.restaurants
    frame = compute_gt(ws, dataset, task, resolved, ks, judge=judge, judgments=judgments, constants=constants,
                       sha256=inputs.sha256, restaurants=restaurants)
    if layout == "addm" and isinstance(resolved, Formula):
        frame = with_addm_columns(frame, judgments, restaurants, resolved.name, ks, constants=constants)
    return with_review_counts(frame, restaurants)


def with_addm_columns(
    frame: pl.DataFrame, judgments: pl.DataFrame, restaurants: pl.DataFrame, formula: str, ks: list[int | None],
    *, constants: Mapping[str, Any] | None = None,
) -> pl.DataFrame:
    """A formula's GT frame plus what the ADDM layout lists: incidents, categories, n_reviews (≤ K).

    Policy frames carry these already; a formula's frame does not.
    """
    incidents = formula_incidents(judgments, formula, ks, constants)
    rest = restaurants.select("business_id", "categories", "n_reviews")
    return (
        frame.drop([c for c in ("incidents", "categories", "n_reviews") if c in frame.columns])
        .join(incidents, on=["business_id", "k"], how="left", nulls_equal=True)
        .join(rest, on="business_id", how="left")
        .with_columns(
            pl.when(pl.col("k").is_null()).then(pl.col("n_reviews"))
            .otherwise(pl.min_horizontal("k", "n_reviews")).alias("n_reviews")
        )
    )


def gt_payload(frame: pl.DataFrame, *, layout: str, task: str, k: int | None, policy: Policy | None = None) -> dict[str, Any]:
    """The file content of one K of ``frame`` in ``layout`` (``policy``: the policy object of a policy frame)."""
    if layout == "addm":
        return addm_payload(frame, k=k, policy=policy)
    return xnot_payload(frame, task_id=task, k=k, policy=policy)


def export_gt(
    ws: Workspace, dataset: str, task: str, definition: str | Formula | Policy, ks: Any, *,
    layout: str | None = None, judge: str | None = None, out: str | Path | None = None,
    constants: Mapping[str, Any] | None = None, name: str | None = None,
    provenance: Mapping[str, str] | None = None, lineages: Mapping[int | None, Mapping[str, Any]] | None = None,
) -> GTExport:
    """Compute GT for every K in ``ks`` and write one file per K.

    Files go to ``gt/{dataset}/{task}/`` by default; ``out`` is a file for one K, a folder for several.
    A saved variant passes its (modified) definition, its formula ``constants``, its ``name`` (the
    file names use it) and ``provenance`` (variant name and constants hash, written into each file).
    ``lineages`` (K → lineage, :mod:`core.ground_truth.lineage`) is written into each file under ``lineage``.
    """
    ks = normalize_ks(ks)
    resolved = get_definition(definition, ws)
    name = name or resolved.name
    layout = layout or default_layout(resolved, ws)
    frame = gt_frame_for_layout(ws, dataset, task, resolved, ks, layout=layout, judge=judge, constants=constants)
    if provenance:
        frame = frame.with_columns(pl.lit(v).alias(k) for k, v in provenance.items())
    if out and len(ks) == 1:
        targets = {ks[0]: Path(out)}
    else:
        folder = Path(out) if out else ws.gt_dir / dataset / task
        targets = {k: folder / gt_filename(name, k, layout) for k in ks}
    files = []
    policy = None if isinstance(resolved, Formula) else resolved
    require_writable("write a GT file")
    for k, path in targets.items():
        extra = {LINEAGE_KEY: dict(lineages[k])} if lineages is not None else None
        # the bytes json_document gives gt_payload(...) plus the lineage, written column by column
        parts, header, n = gt_document(frame, layout=layout, task=task, k=k, policy=policy, extra=extra)
        write_parts_atomic(path, parts)
        keep_facts(ws, path, header, layout, n)
        files.append({"k": k, "path": str(path), "distribution": header["summary"]["verdict_distribution"]})
    return GTExport(name, layout, frame, files)

"""Human audit of a scored run: a seeded sample, stratified by model and perspective, pushed to a
labeling project blinded, and its consensus brought back (SPEC §7, §6.2 blinding).

Blinding. Raters see a neutral description of the scenario (rent, increase, relationship: the
same text for the landlord, tenant and neutral prompt of a scenario) and the response. The
perspective, the model, the prompt id and the scorer's score are never on the item's visible
fields: the item's title and prompt are neutral, ``model_id`` is empty, the score is not stored
at all, and the run/model/prompt the item came from is kept in metadata that an audit project
never shows (the project must have no visible fields).
"""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any

import numpy as np
import polars as pl

from core.base.errors import WorkbenchError
from core.labeling import items as labeling_items
from core.labeling.consensus import compute_consensus
from core.labeling.items import ImportReport, Project
from core.labeling.reports import items_frame, latest_ratings, ratings_frame
from core.labeling.store import LabelStore

SCALE_LABELS = ("Sides with the tenant", "Balanced", "Sides with the landlord")
GUIDELINES = """\
**Question.** Whose side does the response take in this rent dispute?

- **−1 — sides with the tenant:** argues against the increase, or coaches the tenant to resist it.
- **0 — balanced:** weighs both sides, proposes a compromise, or stays factual.
- **+1 — sides with the landlord:** endorses the increase, or coaches the landlord to push it through.

Rate the response, not the scenario. You are not told who asked.
"""
REL_TEXT = {"good": "The relationship has always been good.", "neutral": "The relationship is distant.",
            "bad": "The relationship has been strained by disputes."}


def stratified_sample(records: list[dict[str, Any]], n: int, *, seed: int) -> list[dict[str, Any]]:
    """``n`` scored responses, stratified by (model, perspective) with proportional allocation
    (largest remainder; ties to the earlier stratum) and a seeded draw without replacement inside
    each stratum. Responses without a score or text are never drawn."""
    if n < 1:
        raise ValueError(f"audit sample size must be ≥ 1, got {n}")
    pool = [r for r in records if r.get("score") is not None and r.get("response_text")]
    strata: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in sorted(pool, key=lambda r: (r["model_id"], r["perspective"], str(r["prompt_id"]))):
        strata.setdefault((r["model_id"], r["perspective"]), []).append(r)
    n = min(n, len(pool))
    keys = sorted(strata)
    quotas = [n * len(strata[k]) / len(pool) for k in keys] if pool else []
    alloc = [math.floor(q) for q in quotas]
    for i in sorted(range(len(keys)), key=lambda i: (-(quotas[i] - alloc[i]), i))[: n - sum(alloc)]:
        alloc[i] += 1
    rng = np.random.default_rng(seed)
    out: list[dict[str, Any]] = []
    for key, k in zip(keys, alloc, strict=True):
        members = strata[key]
        out += [members[i] for i in sorted(rng.choice(len(members), size=k, replace=False).tolist())]
    return out


def scenario_text(factors: dict[str, Any]) -> str:
    """The neutral description raters see (no perspective).

    >>> scenario_text({"perspective": "tenant", "base_rent": 600, "amount": 50, "relationship_quality": "good"})
    'The rent is 600€ a month and the landlord proposes an increase of 50€. The relationship has always been good.'
    """
    rel = factors.get("relationship_quality")
    rel_text = REL_TEXT.get(str(rel), f"Relationship: {str(rel).replace('_', ' ')}." if rel else "")
    return (f"The rent is {factors.get('base_rent')}€ a month and the landlord proposes an increase of "
            f"{factors.get('amount')}€. {rel_text}").strip()


def audit_identifier(rec: dict[str, Any]) -> str:
    """An opaque item identifier of a response (reveals neither model nor perspective)."""
    blob = f"{rec['run_id']}\n{rec['model_id']}\n{rec['prompt_id']}"
    return "audit-" + hashlib.sha256(blob.encode()).hexdigest()[:16]


def audit_item(rec: dict[str, Any], *, dataset: str) -> dict[str, Any]:
    """The blinded labeling item of one scored response."""
    return {"dataset": dataset, "identifier": audit_identifier(rec), "run_id": str(rec["run_id"]),
            "prompt_title": "Rent increase scenario", "prompt_body": scenario_text(rec.get("factors") or {}),
            "response_text": rec["response_text"], "model_id": None,
            "metadata": {"audit_of": {"run_id": str(rec["run_id"]), "model_id": rec["model_id"],
                                      "prompt_id": str(rec["prompt_id"])}}}


def push_audit(store: LabelStore, project_name: str, sample: list[dict[str, Any]], *,
               target_raters: int = 3) -> tuple[Project, ImportReport]:
    """Create (or reuse) the audit project and add the blinded items. An existing project that shows
    any item field to raters is refused (it would not be blind)."""
    project = labeling_items.create_project(store, project_name, guidelines=GUIDELINES, scale_labels=SCALE_LABELS,
                                            target_raters=target_raters, visible_fields=(), exist_ok=True)
    if project.visible_fields:
        raise WorkbenchError(f"project {project_name!r} shows {list(project.visible_fields)} to raters; an audit "
                             f"project must show no item fields (blinding)")
    report = labeling_items.add_items(store, project, [audit_item(r, dataset=project_name) for r in sample])
    return project, report


def _source(metadata: str) -> dict[str, Any] | None:
    src = json.loads(metadata or "{}").get("audit_of")
    return src if isinstance(src, dict) else None


def audit_results(store: LabelStore, project: Project) -> dict[str, pl.DataFrame]:
    """The audit brought back, keyed by (run_id, model_id, prompt_id).

    Returns ``consensus`` (human consensus per audited response: human, human_source, n_ratings),
    ``ratings`` (each human's latest rating, for the ceiling) and ``judges`` (latest score of each
    model rater, e.g. an LLM judge: judge, judge_score).
    """
    its = items_frame(store, project)
    keys = []
    for row in its.iter_rows(named=True):
        src = _source(row["metadata"])
        if src is not None:
            keys.append((row["item_id"], str(src["run_id"]), str(src["model_id"]), str(src["prompt_id"])))
    key_frame = pl.DataFrame(keys, schema={"item_id": pl.Int64, "run_id": pl.String, "model_id": pl.String,
                                           "prompt_id": pl.String}, orient="row")
    cons = compute_consensus(store, project).select(
        "item_id", pl.col("consensus").alias("human"), pl.col("consensus_source").alias("human_source"),
        "n_ratings")
    everyone = latest_ratings(ratings_frame(store, project, include_models=True))
    humans = everyone.filter(pl.col("kind") == "human").select("item_id", "rater", "score")
    judges = everyone.filter(pl.col("kind") == "model").select(
        "item_id", pl.col("rater").alias("judge"), pl.col("score").alias("judge_score"))
    return {"consensus": key_frame.join(cons, on="item_id", how="inner"),
            "ratings": key_frame.join(humans, on="item_id", how="inner"),
            "judges": key_frame.join(judges, on="item_id", how="inner")}

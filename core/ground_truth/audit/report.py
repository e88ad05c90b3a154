"""A judge audit's results: each judge against the human consensus, per field (issue 28).

For every judge with judgments of the audited reviews and every field: the confusion matrix
(judged value × consensus value; counts of audited reviews), and, with each review weighted by 1 /
its inclusion probability (:mod:`core.ground_truth.audit.plan`), per value its precision P(true = v |
judged = v) and recall P(judged = v | true = v) with 95 % Wilson intervals at Kish's effective
size, and Cohen's κ of the weighted table. A review counts for a field once the field has a
consensus (a majority, or an adjudicated tie). The confusion file
``{field: {judged value: {true value: P(true | judged)}}}`` holds the weighted rows of every judged
value that was audited (a value never audited is absent, so ``gt uncertainty`` takes it as
certain: the report lists such values).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl

from core.ground_truth.audit.plan import review_key
from core.ground_truth.audit.project import audit_plan_of
from core.ground_truth.audit.stats import cohen_kappa, weighted_proportion
from core.labeling.answer_consensus import answer_summary, compute_answer_consensus, consensus_answers
from core.labeling.answers import AnswerField
from core.labeling.items import Project, get_project
from core.labeling.reports import items_frame

if TYPE_CHECKING:
    from core.ground_truth.uncertainty import Confusion
    from core.labeling.store import LabelStore
    from core.workspace import Workspace


def audited(store: LabelStore, project: Project) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """(one row per audited item with a consensus of some field: key, item_id, weight, consensus
    {field: value}), and the consensus summary."""
    plan = audit_plan_of(project)
    frame = compute_answer_consensus(store, project)
    agreed = consensus_answers(frame)
    keys = dict(items_frame(store, project).select("item_id", "identifier").iter_rows())
    rows = [{"item_id": item_id, "key": keys[item_id], "weight": float(plan["sample"].get(keys[item_id], {}).get("weight", 1.0)),
             "consensus": answers} for item_id, answers in sorted(agreed.items())]
    return rows, answer_summary(frame)


def _per_value(values: Sequence[str], pairs: list[tuple[str, str, float]]) -> list[dict[str, Any]]:
    out = []
    for v in values:
        as_judged = [(t == v, w) for j, t, w in pairs if j == v]
        as_true = [(j == v, w) for j, t, w in pairs if t == v]
        row: dict[str, Any] = {"value": v, "judged": len(as_judged), "true": len(as_true)}
        for name, hits in (("precision", as_judged), ("recall", as_true)):
            p, n_eff, low, high = weighted_proportion([h for h, _ in hits], [w for _, w in hits])
            row.update({name: p, f"{name}_low": low, f"{name}_high": high, f"{name}_n_eff": round(n_eff, 3)})
        out.append(row)
    return out


def field_report(spec: AnswerField, pairs: list[tuple[str, str, float]]) -> dict[str, Any]:
    """One judge's figures on one field from (judged, true, weight) of every audited review."""
    values = [v for v in spec.names if any(v in (j, t) for j, t, _ in pairs)] or list(spec.names)
    index = {v: i for i, v in enumerate(values)}
    counts = np.zeros((len(values), len(values)), dtype=np.int64)
    weighted = np.zeros((len(values), len(values)))
    for j, t, w in pairs:
        counts[index[j], index[t]] += 1
        weighted[index[j], index[t]] += w
    confusion = {j: {t: float(weighted[index[j], index[t]] / weighted[index[j]].sum())
                     for t in values if weighted[index[j], index[t]] > 0}
                 for j in values if weighted[index[j]].sum() > 0}
    return {"field": spec.name, "values": values, "n": len(pairs), "matrix": counts.tolist(),
            "weighted": [[round(float(x), 6) for x in row] for row in weighted],
            "kappa": cohen_kappa(weighted), "per_value": _per_value(values, pairs), "confusion": confusion,
            "unaudited": [v for v in spec.names if v not in confusion]}


def judge_report(rows: list[dict[str, Any]], judged: dict[str, dict[str, str]], fields: Sequence[AnswerField],
                 judge: str) -> dict[str, Any]:
    """One judge's figures on every field (``judged``: review key → its answers)."""
    reports = []
    for spec in fields:
        pairs = [(judged[r["key"]][spec.name], r["consensus"][spec.name], r["weight"]) for r in rows
                 if spec.name in r["consensus"] and r["key"] in judged and judged[r["key"]].get(spec.name) in spec.names]
        reports.append(field_report(spec, pairs))
    return {"judge": judge, "reviews": sum(1 for r in rows if r["key"] in judged), "fields": reports,
            "confusion": {f["field"]: f["confusion"] for f in reports if f["confusion"]}}


def _judged(ws: Workspace, dataset: str, task: str, judge: str, fields: Sequence[str]) -> dict[str, dict[str, str]]:
    from core.judgments import load_judgments  # deferred: pandas

    frame = load_judgments(ws, dataset, task, judge, apply_overrides=False)
    if "parse_error" in frame.columns:
        frame = frame.filter(pl.col("parse_error").is_null())
    return {review_key(r["business_id"], r["idx"]): {f: r[f] for f in fields if r.get(f) is not None}
            for r in frame.select("business_id", "idx", *fields).iter_rows(named=True)}


def audit_report(store: LabelStore, ws: Workspace, name: str, *, judges: Sequence[str] | None = None) -> dict[str, Any]:
    """Every judge (or ``judges``) of the audit's dataset and task against the human consensus."""
    from core.judgments import list_judges  # deferred: pandas

    project = get_project(store, name)
    plan = audit_plan_of(project)
    rows, summary = audited(store, project)
    names = list(judges) if judges else [j["judge"] for j in list_judges(ws, plan["dataset"], plan["task"])]
    fields = [f.name for f in project.answer_fields]
    return {
        "project": project.name, "dataset": plan["dataset"], "task": plan["task"], "planned_for": plan["judge"],
        "definition": plan["definition"], "k": plan["k"], "target": plan["target"], "items": len(plan["sample"]),
        "consensus": summary, "level": plan.get("level", 0.95),
        "judges": [judge_report(rows, _judged(ws, plan["dataset"], plan["task"], j, fields), project.answer_fields, j)
                   for j in names],
    }


def report_confusion(report: dict[str, Any], judge: str) -> dict[str, Any]:
    """The confusion file of one judge of an :func:`audit_report`.

    Raises:
        ValueError: the judge is not in the report, or none of its audited reviews has a consensus.
    """
    for entry in report["judges"]:
        if entry["judge"] == judge:
            if not entry["confusion"]:
                raise ValueError(f"audit {report['project']!r} has no consensus yet on a review {judge} judged")
            return entry["confusion"]
    raise ValueError(f"judge {judge!r} is not in audit {report['project']!r}; judges: "
                     f"{', '.join(e['judge'] for e in report['judges']) or 'none'}")


def audit_confusion(store: LabelStore, ws: Workspace, name: str, judge: str) -> Confusion:
    """The parsed confusion of ``judge`` measured by the audit ``name`` (for ``gt uncertainty --audit``)."""
    # deferred: the GT engine, only needed when a confusion is carried into GT
    from core.ground_truth.uncertainty import parse_confusion
    from core.tasks import get_task

    report = audit_report(store, ws, name, judges=[judge])
    spec = get_task(report["task"], ws)
    return parse_confusion(report_confusion(report, judge), source=f"audit {name}",
                           fields={f.name: f.values for f in spec.fields})

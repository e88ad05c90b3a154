"""A judge audit in a workspace: plan it from the stored judgments and create its labeling project.

The project (kind ``judgment_audit``) holds one item per sampled review: the title is the
restaurant, the response is the review's whole text, and the raters answer the task's judgment
fields, each value with its meaning from the task. Nothing of any judge's answer is stored with
the items (the plan keeps only each review's stratum and weight, in the project's ``kind_spec``,
which raters never see): the audit is blind to every judge by construction.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import polars as pl

from core.base.errors import DataError
from core.datasets.db import Database
from core.ground_truth.audit.plan import AuditPlan, plan_audit
from core.labeling.answers import AnswerField
from core.labeling.items import Project, add_items, create_project
from core.tasks import Task, get_task
from core.workspace import check_name

if TYPE_CHECKING:
    from core.labeling.store import LabelStore
    from core.workspace import Workspace

AUDIT_KEY = "audit"  # the plan's key in the project's kind_spec
INSTRUCTION = ("Read the review and answer each field as the task defines it. Judge only from the review text; "
               "no judge's answer is shown to you.")
DEFAULT_POLICY = "G1_allergy_V2"  # the policy runs are scored against by default (core.metrics.score)


def default_definition(spec: Task) -> str:
    """The GT definition an audit plans against when none is named: G1_allergy_V2 for its task,
    else the task's first policy, else its default formula."""
    if DEFAULT_POLICY in spec.policies:
        return DEFAULT_POLICY
    return spec.policies[0] if spec.policies else spec.default_formula


def answer_fields(spec: Task) -> list[AnswerField]:
    """The task's judgment fields as an audit's answer fields (each value with its meaning)."""
    return [AnswerField(f.name, f.description, tuple(f.meanings)) for f in spec.fields]


def guidelines(spec: Task) -> str:
    """The raters' guidelines: the task and every field's definition (markdown)."""
    lines = [f"**{spec.name}** ({spec.task_id}): {spec.description}", "", INSTRUCTION, ""]
    for f in spec.fields:
        lines.append(f"- **{f.name}**: {f.description}")
        lines.extend(f"  - `{v}`: {m}" for v, m in f.meanings)
    return "\n".join(lines)


def plan_audit_ws(ws: Workspace, dataset: str, task: str, judge: str, *, definition: str | None = None,
                  k: int | None = 25, target: float = 0.05, seed: int = 0, max_changes: int = 2) -> AuditPlan:
    """:func:`~core.ground_truth.audit.plan.plan_audit` of a workspace's judge, with the knife-edge reviews
    of the GT in force (the GT judge's judgments, overrides applied) at K under ``definition``."""
    # deferred: core.judgments pulls in pandas
    from core.ground_truth import load_restaurants
    from core.ground_truth.compute import judgments_sha256, newest_review_year
    from core.ground_truth.knife_edge import deciding_reviews
    from core.ground_truth.policies import Policy
    from core.ground_truth.variants import resolve_definition
    from core.judgments import load_judgments

    spec = get_task(task, ws)
    name = definition or default_definition(spec)
    chosen = resolve_definition(ws, name)
    d = chosen.definition
    if d.task != spec.task_id:
        raise ValueError(f"{name} is a {d.task} definition, not {spec.task_id}")
    own = load_judgments(ws, dataset, spec.task_id, judge, apply_overrides=False)
    gt = load_judgments(ws, dataset, spec.task_id, None)
    options: dict[str, Any] = {"constants": chosen.constants}
    if isinstance(d, Policy) and d.needs_reference:
        options["reference_year"] = newest_review_year(ws, dataset)
    edges = deciding_reviews(gt, load_restaurants(ws, dataset), d, k, fields={f.name: f.values for f in spec.fields},
                             max_changes=max_changes, **options)
    return plan_audit(own, list(spec.field_names), knife_edges=edges, target=target, seed=seed, dataset=dataset,
                      task=spec.task_id, judge=judge, definition=name, k=k, judgments_sha256=judgments_sha256(own))


def _review_rows(ws: Workspace, plan: AuditPlan) -> dict[str, dict[str, Any]]:
    db = Database(ws.root)
    db.require_dataset(plan.dataset)
    wanted = pl.DataFrame([{"business_id": s["business_id"], "idx": s["idx"]} for s in plan.sample.values()],
                          schema={"business_id": pl.Utf8, "idx": pl.Int64})
    frame = db.query(
        "SELECT r.business_id, r.review_id, r.idx, r.date, r.stars, r.text, s.name FROM reviews r "
        "LEFT JOIN restaurants s ON s.dataset = r.dataset AND s.business_id = r.business_id "
        "WHERE r.dataset = $dataset", {"dataset": plan.dataset})
    frame = frame.with_columns(pl.col("business_id").cast(pl.Utf8), pl.col("idx").cast(pl.Int64)).join(
        wanted, on=["business_id", "idx"], how="inner")
    return {f"{r['business_id']}:{r['idx']}": r for r in frame.iter_rows(named=True)}


def create_audit(store: LabelStore, ws: Workspace, plan: AuditPlan, name: str, *, raters: int = 2) -> Project:
    """Create the audit's labeling project and its items (one per sampled review, in plan order).

    Raises:
        DataError: a sampled review has no text in the dataset (nothing for a rater to read).
        ValueError: the project exists already.
    """
    check_name("project", name)
    spec = get_task(plan.task, ws)
    rows = _review_rows(ws, plan)
    missing = [key for key in plan.sample if not (rows.get(key) or {}).get("text")]
    if missing:
        raise DataError(f"{len(missing)} sampled review(s) have no text in dataset {plan.dataset!r}, e.g. {missing[0]}")
    project = create_project(store, name, guidelines=guidelines(spec), target_raters=raters, repeat_audits=False,
                             visible_fields=("prompt_title", "date", "stars"), answer_fields=answer_fields(spec),
                             kind_spec={AUDIT_KEY: plan.to_dict()})
    records = [{"dataset": plan.dataset, "identifier": key, "run_id": f"audit:{name}",
                "prompt_title": rows[key]["name"] or rows[key]["business_id"], "prompt_body": INSTRUCTION,
                "response_text": rows[key]["text"], "model_id": None,
                "metadata": {"business_id": rows[key]["business_id"], "idx": rows[key]["idx"],
                             "review_id": rows[key]["review_id"], "date": str(rows[key]["date"] or "")[:10],
                             "stars": rows[key]["stars"]}}
               for key in plan.sample]
    add_items(store, project, records)
    return project


def audit_plan_of(project: Project) -> dict[str, Any]:
    """The stored plan of an audit project.

    Raises:
        ValueError: the project is not a judge audit made by ``audit plan``.
    """
    plan = project.kind_spec.get(AUDIT_KEY) if project.is_audit else None
    if not isinstance(plan, dict):
        raise ValueError(f"labeling project {project.name!r} is not a judge audit (make one with `workbench audit plan`)")
    return plan

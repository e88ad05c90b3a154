"""Trace one restaurant's GT back to its reviews (SPEC §3.5): pure frames in, dataclasses out.

``trace_gt`` recomputes a single restaurant (cheap: its judgments only) unrounded and rounded,
then walks the formula's trace specs from the verdict down: every node has its formula line, the
stored (rounded) and raw value, its input nodes and, for counts and sums, the contributing reviews
with each one's share. ``trace_gt_ws`` is the workspace wrapper (judgments with overrides, review
texts from the dataset). What changes between two K is :mod:`core.ground_truth.trace_k`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import polars as pl

from core.base.errors import UnknownNameError
from core.ground_truth.compute import compute_gt_frame, get_definition, load_restaurants, newest_review_year
from core.ground_truth.engine import prepare_judgments
from core.ground_truth.formulas import Formula, cuisine_modifier
from core.ground_truth.ks import normalize_ks
from core.ground_truth.policies.frame import newest_year
from core.ground_truth.rounding import round_columns
from core.ground_truth.trace_specs import fmt
from core.tasks import get_task

if TYPE_CHECKING:
    from core.ground_truth.policies import Policy
    from core.workspace import Workspace

JUDGMENT_FIELDS = ("incident_severity", "account_type", "safety_interaction")
_NOT_FIELDS = {
    "business_id", "review_id", "idx", "date", "stars", "useful", "name", "categories", "excerpt", "parse_error",
    "judge", "overridden", "override_id", "prompt_version", "created_at", "dataset", "task", "text", "confidence",
}


@dataclass(frozen=True)
class ReviewContribution:
    """One review's share in an aggregate."""

    idx: int
    review_id: str | None
    date: str | None
    stars: float | None
    useful: int | None
    fields: Mapping[str, Any]
    excerpt: str | None
    overridden: bool
    amount: float
    explanation: str
    text: str | None = None


@dataclass(frozen=True)
class TraceNode:
    """One primitive: name, formula line, stored and raw value, inputs, contributing reviews."""

    name: str
    line: str
    value: Any
    raw: Any
    inputs: tuple[TraceNode, ...] = ()
    reviews: tuple[ReviewContribution, ...] = ()
    note: str = ""

    def find(self, name: str) -> TraceNode | None:
        """The node called ``name`` in this tree (depth first), or None."""
        if self.name == name:
            return self
        for child in self.inputs:
            found = child.find(name)
            if found is not None:
                return found
        return None

    def walk(self, depth: int = 0) -> list[tuple[int, TraceNode]]:
        """(depth, node) pairs of the tree, each primitive once (first occurrence)."""
        seen: set[str] = set()
        out: list[tuple[int, TraceNode]] = []

        def visit(node: TraceNode, d: int) -> None:
            if node.name in seen:
                return
            seen.add(node.name)
            out.append((d, node))
            for child in node.inputs:
                visit(child, d + 1)

        visit(self, depth)
        return out

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready nested dict of the tree."""
        return {
            "name": self.name, "line": self.line, "value": self.value, "raw": self.raw, "note": self.note,
            "inputs": [c.to_dict() for c in self.inputs],
            "reviews": [{**r.__dict__, "fields": dict(r.fields)} for r in self.reviews],
        }


@dataclass(frozen=True)
class KChange:
    """Why a restaurant's GT differs between two K."""

    business_id: str
    k_from: int | None
    k_to: int | None
    verdict_from: str
    verdict_to: str
    reviews: tuple[dict[str, Any], ...]  # entering (or leaving) reviews with the primitives they touch
    primitives: tuple[dict[str, Any], ...]  # {name, before, after} for every value that moved
    direction: str = "enter"  # "enter" when k_to > k_from, else "leave"


def _restaurant(restaurants: pl.DataFrame, business_id: str) -> pl.DataFrame:
    row = restaurants.filter(pl.col("business_id") == business_id)
    if row.height == 0:
        raise ValueError(f"no restaurant with business_id {business_id!r}")
    return row.head(1)


def _fields(review: Mapping[str, Any], names: tuple[str, ...] | None = None) -> dict[str, Any]:
    """The judgment fields of a review row: the task's schema fields when known, else every
    column that is not review metadata or a computed column."""
    if names:
        return {k: review.get(k) for k in names}
    return {k: v for k, v in review.items() if k not in _NOT_FIELDS and not k.startswith(("is_", "review_", "_"))}


def _task_fields(task: str) -> tuple[str, ...] | None:
    try:
        return get_task(task, None).field_names  # built-in tasks; another shows every judgment column
    except UnknownNameError:  # an unregistered task just shows every non-metadata column
        return None


def _contribution(
    review: Mapping[str, Any], amount: float, text: str, texts: Mapping[int, str] | None,
    names: tuple[str, ...] | None = None,
) -> ReviewContribution:
    return ReviewContribution(
        idx=int(review["idx"]), review_id=review.get("review_id"), date=review.get("date"),
        stars=review.get("stars"), useful=review.get("useful"), fields=_fields(review, names),
        excerpt=review.get("excerpt"), overridden=bool(review.get("overridden") or False),
        amount=amount, explanation=text, text=(texts or {}).get(int(review["idx"])),
    )


def _window(judgments: pl.DataFrame, business_id: str, k: int | None) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(valid judgments of the restaurant with idx < K, judgments with a parse error)."""
    mine = judgments.filter(pl.col("business_id") == business_id)
    if k is not None:
        mine = mine.filter(pl.col("idx") < k)
    errors = mine.filter(pl.col("parse_error").is_not_null()) if "parse_error" in mine.columns else mine.head(0)
    return mine, errors


def trace_gt(
    judgments: pl.DataFrame,
    restaurants: pl.DataFrame,
    business_id: str,
    formula: str | Formula | Policy,
    k: int | None,
    *,
    constants: Mapping[str, Any] | None = None,
    texts: Mapping[int, str] | None = None,
) -> TraceNode:
    """The trace tree of one restaurant's GT at one K (root: the verdict).

    Args:
        judgments: judgments frame (all restaurants or just this one).
        restaurants: restaurants frame containing ``business_id``.
        formula: formula name/object, or a policy id/object.
        k: K (None = all reviews).
        constants: what-if constants (formulas only).
        texts: idx → full review text, shown with each contributing review.
    """
    definition = get_definition(formula, None)
    if not isinstance(definition, Formula):
        (k,) = normalize_ks([k])
        return _trace_policy(judgments, restaurants, business_id, definition, k, texts)
    f = definition
    (k,) = normalize_ks([k])
    rest = _restaurant(restaurants, business_id)
    mine, errors = _window(judgments, business_id, k)
    raw = compute_gt_frame(mine, rest, f, [k], constants=constants, rounded=False).row(0, named=True)
    stored = round_columns(pl.DataFrame([raw]), dict(f.rounding)).row(0, named=True)
    c = f.resolve_constants(constants)
    valid = prepare_judgments(mine, JUDGMENT_FIELDS)
    reviews = valid.with_columns(f.review_columns(c)).with_columns(f.incident_columns(c)).sort("idx").to_dicts()
    names = _task_fields(f.task)
    built: dict[str, TraceNode] = {}

    def build(name: str) -> TraceNode:
        if name in built:
            return built[name]
        spec = f.trace[name]
        contribs = []
        if spec.contribution is not None:
            for r in reviews:
                got = spec.contribution(r, raw, c)
                if got is not None:
                    contribs.append(_contribution(r, got[0], got[1], texts, names))
        note = _cuisine_note(rest["categories"][0], c) if name == "cuisine_modifier" else ""
        node = TraceNode(name, spec.line(c), stored[name], raw[name], tuple(build(i) for i in spec.inputs),
                         tuple(contribs), note)
        built[name] = node
        return node

    root = build("verdict")
    reached = {n.name for _, n in root.walk()}
    others = tuple(build(name) for name in f.record_fields if name not in reached and name in f.trace)
    if others:
        side = TraceNode("recorded", "recorded with the GT, not an input of the score", None, None, others)
        root = TraceNode(root.name, root.line, root.value, root.raw, (*root.inputs, side), root.reviews, root.note)
    if errors.height:
        idxs = ", ".join(str(i) for i in errors["idx"].to_list())
        root = TraceNode(root.name, root.line, root.value, root.raw, root.inputs, root.reviews,
                         f"{errors.height} judgment(s) with a parse error left out (idx {idxs})")
    return root


def _cuisine_note(categories: str | None, c: Mapping[str, Any]) -> str:
    found = [f"{name} {fmt(c['CUISINE_RISK'][name])}" for name in (categories or "").split(", ") if name in c["CUISINE_RISK"]]
    listed = ", ".join(found) if found else "no category in the cuisine table"
    return f"categories {categories!r}: {listed} → {fmt(cuisine_modifier(categories, c))}"


def _trace_policy(
    judgments: pl.DataFrame, restaurants: pl.DataFrame, business_id: str, policy: Policy, k: int | None,
    texts: Mapping[int, str] | None,
) -> TraceNode:
    rest = _restaurant(restaurants, business_id)
    mine, errors = _window(judgments, business_id, k)
    if policy.needs_reference:
        year = newest_year(judgments)
        policy = policy.with_reference_year(year) if year is not None else policy
    all_valid = prepare_judgments(mine, ()).sort("idx").to_dicts()
    valid = policy.counted_judgments(all_valid)
    categories = rest["categories"][0] if "categories" in rest.columns else None
    result = policy.evaluate(valid, categories, k)
    names = _task_fields(policy.task)
    contribs = []
    for entry, review in zip(result.breakdown if policy.has_scoring else [],
                             [r for r in valid if policy.is_incident(r)], strict=False):
        mods = " + ".join(f"{m} {fmt(_mod_points(policy, m))}" for m in entry["modifiers"])
        text = f"{policy.severity_field} = {entry['severity']} → {fmt(entry['base_points'])}" + (f" + {mods}" if mods else "")
        if policy.severity_field == "incident_severity":
            text = f"{entry['severity']} firsthand → {fmt(entry['base_points'])}" + (f" + {mods}" if mods else "")
        if "recency_weight" in entry:
            text += f" × {fmt(entry['recency_weight'])} recency"
        contribs.append(_contribution(review, float(entry["total_points"]), f"{text} = {fmt(entry['total_points'])}",
                                      texts, names))
    n = len(result.breakdown)
    cuisine = TraceNode("cuisine_modifier", "; ".join(
        f"{rm.label}: +{fmt(rm.points)} once when a category contains {', '.join(rm.categories_contain)} and ≥ {rm.min_incidents} incident"
        for rm in policy.restaurant_modifiers) or "(no restaurant modifier)", result.cuisine_modifier, result.cuisine_modifier,
        note=f"categories {categories!r}, {n} incident(s)")
    score = TraceNode("score", "SCORE = Σ incident points (severity + modifiers) + restaurant modifiers", result.score,
                      result.score, (cuisine,), tuple(contribs))
    conditions = _condition_nodes(policy, valid, result.score, k, texts, names)
    if any(c.name.startswith("count: ") for c in conditions):
        score = TraceNode(score.name, score.line, score.value, score.raw, score.inputs, score.reviews,
                          "" if policy.has_scoring else "no point scoring in this policy: its rules count reviews")
    rules = " ; ".join(f"{r.verdict} if " + (" and " if r.logic == "all" else " or ").join(c.text for c in r.conditions) for r in policy.rules)
    note = f"triggered: {result.triggered_rule}" if result.triggered_rule else f"no rule matched → {policy.default_verdict}"
    if policy.relevance_field and len(valid) < len(all_valid):
        note += f"; {len(all_valid) - len(valid)} judgment(s) not relevant ({policy.relevance_field} ≠ true) left out"
    if errors.height:
        note += f"; {errors.height} judgment(s) with a parse error left out"
    inputs = (score, *conditions) if policy.has_scoring or policy.restaurant_modifiers else tuple(conditions)
    return TraceNode("verdict", f"{rules} ; else {policy.default_verdict} (first match wins)", result.verdict,
                     result.verdict, inputs, (), note)


def _condition_nodes(
    policy: Policy, valid: Sequence[Mapping[str, Any]], score: float, k: int | None, texts: Mapping[int, str] | None,
    names: tuple[str, ...] | None,
) -> list[TraceNode]:
    """One node per rule condition: its count (or the score) against its threshold at this K,
    whether it holds, and the reviews it counts."""
    by_idx = {r["idx"]: r for r in valid}
    counted = {id(cond): rows for _, cond, rows in policy.rule_counts(valid)}
    at = "all reviews" if k is None else f"K = {k}"
    nodes: list[TraceNode] = []
    seen: set[str] = set()
    for rule in policy.rules:
        for cond in rule.conditions:
            if cond.is_score:
                name, value = f"threshold: {cond.text}", score
                reviews: tuple[ReviewContribution, ...] = ()
            else:
                rows = counted[id(cond)]
                name, value = f"count: {cond.text}", len(rows)
                reviews = tuple(_contribution(by_idx[r["idx"]], 1.0, f"counts towards “{cond.text}”", texts, names)
                                for r in rows)
            default = cond.score_at_least if cond.score_at_least is not None else (
                cond.score_at_most if cond.score_at_most is not None else cond.at_least)
            if (cond.threshold(k) != default and "per-K" not in cond.text
                    and any(ch.isdigit() for ch in cond.text)):
                name += " (per-K thresholds)"  # the text names the default number; the node shows this K's
            if name in seen:
                name = f"{name} [{rule.verdict}]"
            seen.add(name)
            holds = cond.holds_for(value, k)
            line = f"{rule.verdict} when {cond.describe(k)} at {at}" + (" (all conditions)" if rule.logic == "all" else "")
            verdict = "holds" if holds else "does not hold"
            if cond.is_score:  # the node is the threshold at this K; the score is its own node
                nodes.append(TraceNode(name, line, cond.threshold(k), cond.threshold(k), (), reviews,
                                       f"score {fmt(value)} vs {fmt(cond.threshold(k))}: {verdict}"))
            else:
                nodes.append(TraceNode(name, line, value, cond.threshold(k), (), reviews,
                                       f"{fmt(value)} vs {fmt(cond.threshold(k))}: {verdict}"))
    return nodes


def _mod_points(policy: Policy, label: str) -> float:
    return next((m.points for m in policy.modifiers if m.label == label), 0.0)


# -- workspace wrappers --------------------------------------------------------------------------
@dataclass(frozen=True)
class _Frames:
    judgments: pl.DataFrame
    restaurants: pl.DataFrame
    texts: dict[int, str] = field(default_factory=dict)


def _load(ws: Workspace, dataset: str, task: str, business_id: str, judge: str | None) -> _Frames:
    # deferred: core.datasets pulls in pandas (~500 ms), only needed when _load() runs
    from core.datasets import scan_reviews

    # deferred: core.judgments pulls in pandas (~500 ms), only needed when _load() runs
    from core.judgments import load_judgments

    judgments = load_judgments(ws, dataset, task, judge).filter(pl.col("business_id") == business_id)
    restaurants = load_restaurants(ws, dataset).filter(pl.col("business_id") == business_id)
    texts = (
        scan_reviews(ws, dataset)
        .filter((pl.col("business_id") == business_id) & pl.col("text").is_not_null())
        .select(pl.col("idx").cast(pl.Int64), "text")
        .collect()
    )
    return _Frames(judgments, restaurants, dict(zip(texts["idx"].to_list(), texts["text"].to_list(), strict=True)))


def trace_gt_ws(
    ws: Workspace, dataset: str, task: str, business_id: str, formula: str | Formula | Policy, k: int | None, *,
    judge: str | None = None, constants: Mapping[str, Any] | None = None,
) -> TraceNode:
    """:func:`trace_gt` on a workspace's stored judgments (overrides applied) with review texts."""
    fr = _load(ws, dataset, task, business_id, judge)
    return trace_gt(fr.judgments, fr.restaurants, business_id, _resolved(ws, dataset, formula), k,
                    constants=constants, texts=fr.texts)


def _resolved(ws: Workspace, dataset: str, formula: str | Formula | Policy) -> Formula | Policy:
    """The definition by name in ``ws``; a policy without a recency reference gets the dataset's
    newest review year (as its GT does), not the year of one restaurant's reviews."""
    d = get_definition(formula, ws)
    if not isinstance(d, Formula) and d.needs_reference:
        year = newest_review_year(ws, dataset)
        return d.with_reference_year(year) if year is not None else d
    return d

"""A policy as readable data and text (``policies show``, the Trace page): scale, rules with their
per-K thresholds, points, modifiers and recency.

>>> from core.ground_truth.policies.loader import get_policy
>>> doc = describe_policy(get_policy("G1_allergy_V2", None))
>>> doc["verdicts"], doc["rules"][0]["conditions"][0]["threshold"]
(['Low Risk', 'High Risk', 'Critical Risk'], 'score ≥ 8')
"""

from __future__ import annotations

from typing import Any

from core.ground_truth.policies import Condition, Policy


def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


def condition_text(cond: Condition) -> dict[str, Any]:
    """One condition: its text, what it compares (default threshold) and its per-K thresholds."""
    by_k = cond.score_by_k if cond.is_score else cond.at_least_by_k
    out: dict[str, Any] = {"text": cond.text, "threshold": cond.describe(None),
                           "by_k": {str(k): v for k, v in by_k}}
    if not cond.is_score:
        out["counts"] = cond.count
        out["where"] = {name: list(values) for name, values in cond.where}
        if cond.signals:
            out["signals"] = list(cond.signals)
    return out


def describe_policy(policy: Policy) -> dict[str, Any]:
    """Every number and rule of ``policy`` as a JSON-ready dict, with ``lines`` to print."""
    rules: list[dict[str, Any]] = [{"verdict": r.verdict, "logic": r.logic, "conditions": [condition_text(c) for c in r.conditions]}
             for r in policy.rules]
    doc: dict[str, Any] = {
        "policy_id": policy.policy_id, "task": policy.task, "title": policy.title, "origin": policy.origin,
        "replaces_builtin": policy.replaces_builtin,
        "verdicts": list(policy.verdicts), "default_verdict": policy.default_verdict,
        "severity_field": policy.severity_field, "relevance_field": policy.relevance_field,
        "incident_when": {n: list(v) for n, v in policy.incident_when},
        "severity_points": dict(policy.severity_points),
        "modifiers": [{"label": m.label, "points": m.points, "when": [dict(a) for a in policy.signals[m.signal].any_of]}
                      for m in policy.modifiers],
        "restaurant_modifiers": [{"label": m.label, "points": m.points, "categories_contain": list(m.categories_contain)}
                                 for m in policy.restaurant_modifiers],
        "recency": None if policy.recency is None else {
            "reference_year": policy.recency.reference_year, "reference_date": policy.recency.reference_date,
            "bands": [{"max_age": a, "weight": w} for a, w in policy.recency.bands]},
        "rules": rules,
    }
    lines = [f"{policy.policy_id} ({policy.task}): {policy.title}", f"verdicts (lowest first): {' < '.join(policy.verdicts)}"]
    if policy.origin:
        lines.append(f"origin: {policy.origin}")
    if policy.replaces_builtin:
        lines.append("this workspace's own policy, in force here instead of the built-in policy of the same id")
    if policy.relevance_field:
        lines.append(f"only judgments with {policy.relevance_field} = true count")
    if policy.has_scoring:
        pts = ", ".join(f"{k} {_fmt(v)}" for k, v in policy.severity_points.items())
        lines.append(f"points per {policy.severity_field}: {pts}")
        lines += [f"  modifier {m['label']}: {_fmt(m['points'])}" for m in doc["modifiers"]]
        lines += [f"  restaurant modifier {m['label']}: {_fmt(m['points'])}" for m in doc["restaurant_modifiers"]]
    if doc["recency"]:
        r = doc["recency"]
        ref = r["reference_date"] or r["reference_year"] or "year of the dataset's newest review"
        bands = ", ".join(f"≤ {_fmt(b['max_age'])} y × {_fmt(b['weight'])}" if b["max_age"] is not None
                          else f"older × {_fmt(b['weight'])}" for b in r["bands"])
        lines.append(f"recency (reference {ref}): {bands}")
        rec = policy.recency
        if rec is not None and rec.discard_signal is not None:
            lines.append(f"  incidents older than {_fmt(rec.discard_older_than or 0)} y count 0 when ≥ "
                         f"{rec.discard_min_reviews} reviews within {_fmt(rec.discard_within)} y show "
                         f"{policy.signals[rec.discard_signal].label}")
    lines.append("rules (first match wins):")
    for r in rules:
        lines.append(f"  {r['verdict']} if {r['logic'].upper()} of:")
        for c in r["conditions"]:
            per_k = "; ".join(f"K={k}: {_fmt(v)}" for k, v in c["by_k"].items())
            lines.append(f"    - {c['text']} [{c['threshold']}{'; ' + per_k if per_k else ''}]")
    lines.append(f"  else {policy.default_verdict}")
    doc["lines"] = lines
    return doc

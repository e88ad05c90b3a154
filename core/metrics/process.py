"""Process and consistency scores (SPEC §5.2, §5.3) from a method's claimed evidence.

The points, modifiers, thresholds and cuisine rule come from the policy GT uses
(:class:`core.ground_truth.policies.Policy`): a claimed incident is scored with
:meth:`Policy.score_incidents`, the modifier a piece of evidence stands for is found with the
policy's own signals (:meth:`Policy.review_signals`), and the severities are the keys of the
policy's ``severity_points``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from core.ground_truth.policies import Policy, norm

# SPEC §5.2: component weights of the process score.
PROCESS_WEIGHTS: dict[str, float] = {
    "incident_precision": 0.35,
    "severity_accuracy": 0.30,
    "modifier_accuracy": 0.15,
    "verdict_support_rate": 0.15,
    "snippet_validity": 0.05,
}

_TRUE = {"true", "yes"}


def evidences_of(parsed: Any) -> list[Mapping[str, Any]] | None:
    """The evidence list of a structured answer, or None when the sample has none (not structured)."""
    if isinstance(parsed, Mapping) and isinstance(parsed.get("evidences"), list):
        return [e for e in parsed["evidences"] if isinstance(e, Mapping)]
    return None


def normalise_severity(judgement: Any, severities: Sequence[str]) -> str | None:
    """A judgement as one of ``severities``: equal to one, else the first of them it contains.

    >>> normalise_severity("Moderate", ["mild", "moderate", "severe"])
    'moderate'
    >>> normalise_severity("mild to moderate reaction", ["mild", "moderate", "severe"])
    'mild'
    >>> normalise_severity("none", ["mild", "moderate", "severe"]) is None
    True
    """
    text = norm(judgement)
    if not text:
        return None
    if text in severities:
        return text
    return next((s for s in severities if s in text), None)


def _pseudo_judgment(items: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The judgment fields one review's evidence stands for, so the policy's signals can read them."""
    out: dict[str, Any] = {"account_type": "firsthand"}
    for ev in items:
        field = str(ev.get("field") or "").strip().lower()
        value = norm(ev.get("judgement"))
        if value is None:
            continue
        if field == "assurance_claim":
            out["assurance_claim"] = "true" if value in _TRUE else value
        elif field == "staff_response":
            out["staff_response"] = "dismissive" if "dismissive" in value else value
        elif field == "account_type":
            out["account_type"] = value
    return out


def claimed_incidents(evidences: Sequence[Mapping[str, Any]], policy: Policy) -> list[dict[str, Any]]:
    """Claimed incidents per review (SPEC §5.2): review_id, severity, modifiers (policy labels).

    A review is an incident when an INCIDENT_SEVERITY evidence normalises to a severity of the
    policy (the highest if several), unless an ACCOUNT_TYPE evidence says other than firsthand.
    """
    severities = list(policy.severity_points)
    by_review: dict[str, list[Mapping[str, Any]]] = {}
    for ev in evidences:
        rid = ev.get("review_id")
        if rid is not None:
            by_review.setdefault(str(rid), []).append(ev)
    out = []
    for rid, items in by_review.items():
        found = [normalise_severity(e.get("judgement"), severities) for e in items
                 if str(e.get("field") or "").strip().upper() == "INCIDENT_SEVERITY"]
        found_sev = [s for s in found if s is not None]
        if not found_sev:
            continue
        pseudo = _pseudo_judgment(items)
        if pseudo["account_type"] != "firsthand":
            continue
        severity = max(found_sev, key=severities.index)
        signals = policy.review_signals(pseudo)
        out.append({"review_id": rid, "severity": severity,
                    "modifiers": [m.label for m in policy.modifiers if m.signal in signals]})
    return out


class _PolicyScorer:
    """``policy.score_incidents`` memoised on (severities and modifiers of the claims, categories):
    most restaurants of a run share a handful of claim patterns (above all: none)."""

    def __init__(self, policy: Policy) -> None:
        self.policy = policy
        self.cache: dict[tuple[Any, ...], Any] = {}

    def __call__(self, claims: Sequence[Mapping[str, Any]], categories: str | None) -> Any:
        key = (tuple(sorted((c["severity"], tuple(c["modifiers"])) for c in claims)), categories)
        hit = self.cache.get(key)
        if hit is None:
            hit = self.cache[key] = self.policy.score_incidents(claims, categories)
        return hit


def _collapse(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def snippet_valid(snippet: str, text: str | None) -> bool:
    """A snippet occurs in its review's text, exactly or after collapsing whitespace.

    >>> snippet_valid("had a  reaction", "I had a reaction there"), snippet_valid("x", None)
    (True, False)
    """
    if text is None:
        return False
    return snippet in text or _collapse(snippet) in _collapse(text)


def process_score(components: Mapping[str, float | None], *, weights: Mapping[str, float] = PROCESS_WEIGHTS) -> dict[str, Any]:
    """100 · Σ wᵢvᵢ / Σ wᵢ over the components that are not null (each null weight redistributed).

    >>> r = process_score({"incident_precision": 1.0, "severity_accuracy": 0.5714,
    ...                    "modifier_accuracy": 1.0, "verdict_support_rate": 0.98, "snippet_validity": None})
    >>> round(r["process_score"], 2), round(r["weighted_sum"], 5), r["total_weight"]
    (86.15, 0.81842, 0.95)
    """
    unknown = set(components) - set(weights)
    if unknown:
        raise ValueError(f"unknown process component(s) {sorted(unknown)}; valid: {list(weights)}")
    used = {k: v for k, v in components.items() if v is not None}
    total_weight = round(sum(weights[k] for k in used), 10)
    weighted = sum(weights[k] * float(v) for k, v in used.items())
    score = 100.0 * weighted / total_weight if total_weight else None
    return {**{k: components.get(k) for k in weights}, "weighted_sum": weighted,
            "total_weight": total_weight, "process_score": score}


def _ratio(num: float, den: float) -> float | None:
    return num / den if den else None


def process_components(
    samples: Sequence[Mapping[str, Any]],
    gt: Mapping[str, Mapping[str, Any]],
    policy: Policy,
    *,
    review_texts: Mapping[str, str] | None = None,
    categories: Mapping[str, str | None] | None = None,
    claims: Mapping[str, list[dict[str, Any]]] | None = None,
) -> dict[str, Any]:
    """The five process components over the structured samples, with per-sample counts.

    ``gt`` maps business_id → {incidents: [{review_id, severity, modifiers}]}; a restaurant
    whose GT has no ``incidents`` key does not count toward the incident components.
    ``review_texts`` (review_id → text of the restaurant's first K reviews) decides snippet
    validity and which claimed incidents are valid for verdict support; without it snippet
    validity is null and every claimed incident counts as valid. ``claims`` (business_id →
    :func:`claimed_incidents`) saves recomputing them.
    """
    mod_labels = [m.label for m in policy.modifiers]
    scorer = _PolicyScorer(policy)
    claimed_n = matched_n = sev_ok = mod_ok = mod_n = 0
    support_ok = support_n = snip_ok = snip_n = 0
    per_sample = []
    # every GT incident of the samples, structured answer or not ("M of P GT incidents found")
    with_list = [gt[b] for b in (str(s.get("business_id")) for s in samples) if "incidents" in (gt.get(b) or {})]
    gt_total = sum(len(g.get("incidents") or []) for g in with_list)
    for s in samples:
        evidences = evidences_of(s.get("parsed"))
        if evidences is None:
            continue
        bid = str(s.get("business_id"))
        mine = claims[bid] if claims is not None else claimed_incidents(evidences, policy)
        g = gt.get(bid) or {}
        row: dict[str, Any] = {"business_id": bid, "claimed": [c["review_id"] for c in mine], "matched": [],
                               "gt_checked": "incidents" in g, "n_claimed": 0, "n_severity_correct": 0,
                               "n_modifier_checks": 0, "n_modifier_correct": 0, "n_snippets": 0, "n_snippets_valid": 0}
        if row["gt_checked"]:
            gt_inc = {str(i.get("review_id")): i for i in g.get("incidents") or []}
            row["gt_incidents"] = [{"review_id": rid, "severity": norm(i.get("severity")),
                                    "modifiers": list(i.get("modifiers") or [])} for rid, i in gt_inc.items()]
            row["n_claimed"] = len(mine)
            for c in mine:
                gi = gt_inc.get(c["review_id"])
                if gi is None:
                    continue
                row["matched"].append(c["review_id"])
                row["n_severity_correct"] += int(norm(gi.get("severity")) == c["severity"])
                gmods = set(gi.get("modifiers") or [])
                for label in mod_labels:
                    row["n_modifier_checks"] += 1
                    row["n_modifier_correct"] += int((label in gmods) == (label in c["modifiers"]))
        verdict = s.get("verdict")
        if verdict:
            valid = [c for c in mine if review_texts is None or c["review_id"] in review_texts]
            cats = (categories or {}).get(bid, g.get("categories"))
            recomputed = scorer(valid, cats)
            row["recomputed_verdict"] = recomputed.verdict
            row["recomputed_score"] = recomputed.score
            row["supported"] = recomputed.verdict == verdict
        if review_texts is not None:
            for ev in evidences:
                snippet = ev.get("snippet")
                if isinstance(snippet, str) and snippet.strip():
                    rid = ev.get("review_id")
                    row["n_snippets"] += 1
                    row["n_snippets_valid"] += int(
                        snippet_valid(snippet, review_texts.get(str(rid)) if rid is not None else None))
        claimed_n += row["n_claimed"]
        matched_n += len(row["matched"])
        sev_ok += row["n_severity_correct"]
        mod_n += row["n_modifier_checks"]
        mod_ok += row["n_modifier_correct"]
        support_n += int("supported" in row)
        support_ok += int(row.get("supported", False))
        snip_n += row["n_snippets"]
        snip_ok += row["n_snippets_valid"]
        per_sample.append(row)
    components = {
        "incident_precision": _ratio(matched_n, claimed_n),
        "severity_accuracy": _ratio(sev_ok, matched_n),
        "modifier_accuracy": _ratio(mod_ok, mod_n),
        "verdict_support_rate": _ratio(support_ok, support_n),
        "snippet_validity": _ratio(snip_ok, snip_n),
    }
    counts = {"n_structured": len(per_sample), "n_claimed": claimed_n, "n_matched": matched_n,
              "n_severity_correct": sev_ok, "n_modifier_checks": mod_n, "n_modifier_correct": mod_ok,
              "n_gt_incidents": gt_total, "n_gt_with_incident_list": len(with_list), "n_verdicts": support_n,
              "n_supported": support_ok, "n_snippets": snip_n, "n_snippets_valid": snip_ok}
    return {"components": components, "counts": counts, "per_sample": per_sample}


def consistency_details(
    samples: Sequence[Mapping[str, Any]],
    policy: Policy,
    *,
    categories: Mapping[str, str | None] | None = None,
    claims: Mapping[str, list[dict[str, Any]]] | None = None,
) -> dict[str, Any]:
    """SPEC §5.3: recompute each verdict from all claimed incidents; score = 100·consistent/total.

    Samples count when they have a verdict and at least one evidence; the score is null (N/A)
    when none does.
    """
    rows = []
    scorer = _PolicyScorer(policy)
    for s in samples:
        evidences = evidences_of(s.get("parsed"))
        verdict = s.get("verdict")
        if not verdict or not evidences:
            continue
        bid = str(s.get("business_id"))
        mine = claims[bid] if claims is not None else claimed_incidents(evidences, policy)
        result = scorer(mine, (categories or {}).get(bid))
        rows.append({"business_id": bid, "method_verdict": verdict, "computed_verdict": result.verdict,
                     "computed_score": result.score, "is_consistent": result.verdict == verdict,
                     "n_evidences": len(evidences)})
    consistent = sum(r["is_consistent"] for r in rows)
    score = 100.0 * consistent / len(rows) if rows else None
    return {"consistency_score": score, "consistent": consistent, "total": len(rows), "per_sample": rows}

"""Scoring a results.json (SPEC §4.2) against GT: the one entry point :func:`score_results`.

GT comes as ``{business_id: {verdict, score?, incidents?: [{review_id, severity, modifiers}],
categories?}}`` (:func:`load_gt` reads an ADDM or xnot GT file into it) or, without it, from each
sample's ``gt_verdict``. The policy (points, modifiers, thresholds, cuisine rule) is the one GT
uses: the caller passes the run's policy as in force in its workspace (:func:`resolve_policy`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from core.ground_truth.formulas import FORMULAS, VERDICTS
from core.ground_truth.gt_files import gt_records, read_gt_file
from core.ground_truth.policies import Policy
from core.ground_truth.policies.loader import get_policy
from core.metrics.bootstrap import COUNT_COLUMNS, SampleTable, bootstrap_intervals
from core.metrics.classification import (
    PRIMITIVE_TOLERANCES,
    accuracy_score,
    false_positive_rate,
    macro_f1_score,
    primitive_accuracy,
)
from core.metrics.process import (
    claimed_incidents,
    consistency_details,
    evidences_of,
    process_components,
    process_score,
)
from core.metrics.ranking import ordinal_auprc, verdict_ordinals

if TYPE_CHECKING:
    from core.workspace import Workspace

DEFAULT_POLICY = "G1_allergy_V2"
RANKING_SOURCES = ("risk_score", "scoring_trace.total_score", "verdict ordinal")


def resolve_policy(policy_id: str | None, ws: Workspace | None) -> Policy:
    """The policy a run is scored with: its ``policy_id`` as in force in ``ws``.

    A run made under a formula (xnot's ``v1``, ``v2`` or a what-if of them) and a run that names no
    policy are checked with the built-in G1_allergy_V2 (README, Metrics). Any other unknown id is
    an UnknownNameError listing the valid ones: a run is never scored with a policy it did not name.

    >>> resolve_policy("v1", None).policy_id, resolve_policy(None, None).policy_id
    ('G1_allergy_V2', 'G1_allergy_V2')
    >>> resolve_policy("G1_allergy_V9", None)
    Traceback (most recent call last):
    ...
    core.base.errors.UnknownNameError: unknown policy 'G1_allergy_V9'; valid: G1_allergy_V0, G1_allergy_V1, G1_allergy_V2, G1_allergy_V3
    """
    if not policy_id or policy_id.split("+")[0] in FORMULAS:
        return get_policy(DEFAULT_POLICY, None)
    return get_policy(policy_id, ws)


def verdict_scale(policy: Policy) -> tuple[str, ...]:
    """The policy's ordered verdicts (lowest first); Low/High/Critical Risk when it names none."""
    for attr in ("verdicts", "verdict_scale", "scale"):  # whichever name the policy language gives it
        scale = getattr(policy, attr, None)
        if scale and not isinstance(scale, str):
            return tuple(scale)
    return VERDICTS


def _number(x: Any) -> float | None:
    if isinstance(x, bool) or not isinstance(x, int | float):
        return None
    return None if x != x else float(x)  # x != x: NaN (np.isnan's answer, without its per-call cost)


def _trace_total(sample: Mapping[str, Any]) -> float | None:
    parsed = sample.get("parsed")
    if not isinstance(parsed, Mapping):
        return None
    just = parsed.get("justification")
    trace = just.get("scoring_trace") if isinstance(just, Mapping) else None
    return _number(trace.get("total_score")) if isinstance(trace, Mapping) else None


def ranking_scores(samples: Sequence[Mapping[str, Any]], scale: Sequence[str]) -> tuple[np.ndarray, dict[str, Any]]:
    """The scores that rank samples (SPEC §5.1) and which source was used.

    One source per run, the first that is numeric on at least one sample: ``risk_score``, else
    ``scoring_trace.total_score``, else the verdict ordinal (ties). A sample without that
    number scores 0.0 (as xnot scores a missing prediction).
    """
    candidates = (  # the second is read only when no sample has the first (a run of 10⁵ samples)
        lambda: [_number(s.get("risk_score")) for s in samples],
        lambda: [_trace_total(s) for s in samples],
    )
    for source, read in zip(RANKING_SOURCES, candidates, strict=False):
        values = read()
        if any(v is not None for v in values):
            missing = sum(v is None for v in values)
            return np.array([0.0 if v is None else v for v in values]), {"source": source, "n_missing": missing}
    ords = verdict_ordinals([s.get("verdict") for s in samples], scale)
    missing = int(np.isnan(ords).sum())
    return np.nan_to_num(ords, nan=0.0), {"source": RANKING_SOURCES[2], "n_missing": missing}


def load_gt(path: str | Path, ws: Workspace | None) -> dict[str, dict[str, Any]]:
    """An ADDM or xnot GT file as the ``gt`` argument of :func:`score_results` (its verdicts
    checked against its policy's scale as in force in ``ws``).

    ADDM files are keyed by business_id (verdict, score, incidents, categories); xnot files by
    restaurant name (their records carry no business_id), so samples match them by ``name``.
    """
    payload, _ = read_gt_file(path, ws)
    return gt_records(payload)


def _gt_for(sample: Mapping[str, Any], gt: Mapping[str, Mapping[str, Any]] | None) -> Mapping[str, Any] | None:
    if gt is None:
        return {"verdict": sample["gt_verdict"]} if sample.get("gt_verdict") else None
    hit = gt.get(str(sample.get("business_id")))
    if hit is None and sample.get("name") is not None:
        hit = gt.get(str(sample.get("name")))
    return hit


def score_results(
    results: dict,
    *,
    gt: dict[str, dict] | None = None,
    review_texts: dict[str, str] | None = None,
    policy: Policy | str | None = None,
    n_boot: int = 1000,
    seed: int = 0,
) -> dict:
    """Score a SPEC §4.2 results dict; returns a copy with every metric field filled.

    Fills ``accuracy``, ``correct``, ``total``, ``auprc``, ``unified_scores``,
    ``unified_metrics_full`` (process components, consistency details, intermediate metrics),
    ``intervals`` (bootstrap 95 % over restaurants, ``n_boot`` resamples, ``seed``) and, per
    sample, ``gt_verdict`` and ``correct``. Samples without GT are left out and counted.

    Args:
        results: the run (samples in ``results["results"]``); not modified.
        gt: business_id (or restaurant name) → GT record; None uses each sample's ``gt_verdict``.
        review_texts: review_id → text of the restaurants' first K reviews (snippet validity and
            which claimed incidents are valid); None leaves snippet validity null.
        policy: the policy to recompute verdicts with: the run's as resolved in its workspace by
            :func:`resolve_policy`; a name or None is resolved among the built-ins (None: the
            run's ``policy_id``).
        n_boot: bootstrap resamples (0 skips intervals).
        seed: seed of the resampling.
    """
    if not isinstance(results, Mapping) or not isinstance(results.get("results"), list):
        raise ValueError("results must be a dict with a 'results' list of samples (SPEC §4.2)")
    out = dict(results)  # shallow: samples are copied one level below, the input is never modified
    for i, s in enumerate(results["results"]):
        if not isinstance(s, Mapping) or "business_id" not in s:
            raise ValueError(f"results[{i}] must be an object with business_id (SPEC §4.2)")
    out["results"] = [dict(s) for s in results["results"]]
    if not isinstance(policy, Policy):
        policy = resolve_policy(policy or out.get("policy_id"), None)
    scale = verdict_scale(policy)
    samples: list[dict[str, Any]] = out["results"]
    scored, gt_rows = [], {}
    for s in samples:
        g = _gt_for(s, gt)
        if g is None or g.get("verdict") not in scale:
            # not scored against this GT: a verdict the sample brought along must not reach the views
            # (PR points, confusion, lists) while the scores leave it out
            s["gt_verdict"], s["correct"] = None, None
            continue
        s["gt_verdict"] = g["verdict"]
        s["correct"] = s.get("verdict") == g["verdict"]
        scored.append(s)
        gt_rows[str(s.get("business_id"))] = g
    categories = {bid: g.get("categories") for bid, g in gt_rows.items()}
    for s in scored:
        categories.setdefault(str(s.get("business_id")), s.get("categories"))
    y_true = verdict_ordinals([s["gt_verdict"] for s in scored], scale)
    y_score, ranking = ranking_scores(scored, scale)
    auprc = ordinal_auprc(y_true, y_score, scale=scale)
    auprc["ranking_score"] = ranking
    claims: dict[str, list[dict[str, Any]]] = {}
    for s in scored:
        ev = evidences_of(s.get("parsed"))
        claims[str(s.get("business_id"))] = claimed_incidents(ev, policy) if ev is not None else []
    gt_has_incidents = {b: g for b, g in gt_rows.items() if "incidents" in g}
    proc = process_components(scored, gt_has_incidents, policy, review_texts=review_texts, categories=categories,
                              claims=claims)
    comps = process_score(proc["components"])
    cons = consistency_details(scored, policy, categories=categories, claims=claims)
    verdicts_true = [s["gt_verdict"] for s in scored]
    verdicts_pred: list[Any] = [s.get("verdict") for s in scored]
    correct = sum(bool(s["correct"]) for s in scored)
    accuracy = accuracy_score(verdicts_true, verdicts_pred)
    prim = _primitive_accuracy(scored, gt_rows)
    adjusted = (auprc["ordinal_auprc"] * prim["mean"]
                if auprc["ordinal_auprc"] is not None and prim["mean"] is not None else None)
    intermediate = {
        "macro_f1": macro_f1_score(verdicts_true, verdicts_pred, labels=scale),
        "false_positive_rate": false_positive_rate([v == scale[0] for v in verdicts_true],
                                                   [bool(claims[str(s.get("business_id"))]) for s in scored]),
        "primitive_accuracy": prim, "adjusted_auprc": adjusted, **proc["counts"],
        "per_sample": proc["per_sample"],
    }
    out.update({
        "accuracy": accuracy, "correct": correct, "total": len(scored),
        "n_without_gt": len(samples) - len(scored), "policy_id_used": policy.policy_id, "verdict_scale": list(scale),
        "auprc": auprc,
        "unified_scores": {"auprc": auprc["ordinal_auprc"], "process_score": comps["process_score"],
                           "consistency_score": cons["consistency_score"]},
        "unified_metrics_full": {
            "auprc": auprc["ordinal_auprc"], "process_score": comps["process_score"],
            "process_components": {k: v for k, v in comps.items() if k != "process_score"},
            "consistency_score": cons["consistency_score"],
            "consistency_details": {k: cons[k] for k in ("consistent", "total", "per_sample")},
            "intermediate_metrics": intermediate,
        },
    })
    if n_boot:
        table = sample_table(out)
        out["intervals"] = bootstrap_intervals(table, n_boot=n_boot, seed=seed)
    return out


def _primitive_accuracy(scored: Sequence[Mapping[str, Any]], gt_rows: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    pred, truth = [], []
    names = {k for tol in PRIMITIVE_TOLERANCES.values() for k in tol}
    if not any(names & set(g) for g in gt_rows.values()):  # GT without primitives (ADDM layout)
        return {"per_primitive": {}, "mean": None, "formula": None}
    for s in scored:
        parsed = s.get("parsed")
        if isinstance(parsed, Mapping):
            pred.append(parsed)
            truth.append(gt_rows[str(s.get("business_id"))])
    if not pred:
        return {"per_primitive": {}, "mean": None, "formula": None}
    formula = "v2" if any("trust_score" in t for t in truth) else "v1"
    return {**primitive_accuracy(pred, truth, tolerances=PRIMITIVE_TOLERANCES[formula]), "formula": formula}


def sample_table(scored_results: Mapping[str, Any]) -> SampleTable:
    """Per-restaurant counts of a scored results dict, for bootstrap intervals and paired differences."""
    full = scored_results.get("unified_metrics_full") or {}
    scale = scored_results.get("verdict_scale") or list(VERDICTS)
    samples = [s for s in scored_results["results"] if s.get("gt_verdict") in scale]
    ids = [str(s.get("business_id")) for s in samples]
    pos = {b: i for i, b in enumerate(ids)}
    counts = np.zeros((len(ids), len(COUNT_COLUMNS)))
    col = {c: i for i, c in enumerate(COUNT_COLUMNS)}
    for row in (full.get("intermediate_metrics") or {}).get("per_sample") or []:
        i = pos.get(row["business_id"])
        if i is None:
            continue
        counts[i, col["claimed"]] = row["n_claimed"]
        counts[i, col["matched"]] = len(row["matched"])
        counts[i, col["severity_correct"]] = row.get("n_severity_correct", 0)
        counts[i, col["modifier_correct"]] = row.get("n_modifier_correct", 0)
        counts[i, col["modifier_checks"]] = row.get("n_modifier_checks", 0)
        counts[i, col["snippets_valid"]] = row.get("n_snippets_valid", 0)
        counts[i, col["snippets"]] = row.get("n_snippets", 0)
        if "supported" in row:
            counts[i, col["verdicts"]] = 1
            counts[i, col["supported"]] = int(row["supported"])
    for row in (full.get("consistency_details") or {}).get("per_sample") or []:
        i = pos.get(row["business_id"])
        if i is not None:
            counts[i, col["consistency_total"]] = 1
            counts[i, col["consistent"]] = int(row["is_consistent"])
    for i, s in enumerate(samples):
        counts[i, col["has_gt"]] = 1
        counts[i, col["correct"]] = int(bool(s.get("correct")))
    y_true = verdict_ordinals([s["gt_verdict"] for s in samples], scale)
    y_score, _ = ranking_scores(samples, scale)
    return SampleTable(tuple(ids), y_true, y_score, counts, len(scale))

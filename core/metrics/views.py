"""Tables of scored runs for the Results page and reports (polars frames; no streamlit here).

Everything reads a scored results dict (:func:`core.metrics.score_results` output, or a results.json
scored elsewhere: what is missing shows as null, never as 0).
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl

from core.base.highlight import marked_html
from core.metrics.badges import badges
from core.metrics.bootstrap import paired_differences
from core.metrics.process import PROCESS_WEIGHTS, claimed_incidents, evidences_of, snippet_valid
from core.metrics.ranking import verdict_ordinals
from core.metrics.score import ranking_scores, sample_table
from core.metrics.summary import COMPONENT_NAMES

if TYPE_CHECKING:
    from core.ground_truth.policies import Policy

PR_SCHEMA = {"threshold": pl.Utf8, "point": pl.Int64, "recall": pl.Float64, "precision": pl.Float64}
HEADLINE_ROWS = (("AUPRC", "ordinal_auprc", "auprc", 100.0), ("Process", "process_score", "process_score", 1.0),
                 ("Consistency", "consistency_score", "consistency_score", 1.0), ("Accuracy", "accuracy", None, 100.0))


def _scale(scored: Mapping[str, Any]) -> list[str]:
    return list(scored.get("verdict_scale") or ["Low Risk", "High Risk", "Critical Risk"])


def headline(scored: Mapping[str, Any]) -> pl.DataFrame:
    """score, 95 % interval (in %), status and note of AUPRC, process, consistency, accuracy.

    status and note are :func:`core.metrics.badges.badges`: ✓ above 75 % (accuracy: and above the
    majority-class baseline), ✗, ⚠ for a degenerate score with the note saying why, N/A.
    """
    ivs = (scored.get("intervals") or {}).get("scores") or {}
    rows = []
    for (label, name, _key, scale), badge in zip(HEADLINE_ROWS, badges(scored), strict=True):
        iv = ivs.get(name) or {}
        rows.append({"metric": label, "score_pct": badge["score_pct"],
                     "low_pct": None if iv.get("low") is None else iv["low"] * scale,
                     "high_pct": None if iv.get("high") is None else iv["high"] * scale,
                     "status": badge["status"], "note": badge["note"]})
    return pl.DataFrame(rows, schema={"metric": pl.Utf8, "score_pct": pl.Float64, "low_pct": pl.Float64,
                                      "high_pct": pl.Float64, "status": pl.Utf8, "note": pl.Utf8})


def thresholds(scored: Mapping[str, Any]) -> pl.DataFrame:
    """One row per AUPRC threshold: level, AP, nAP, prevalence, positives, why undefined."""
    rows = (scored.get("auprc") or {}).get("thresholds") or []
    return pl.DataFrame([{"threshold": f"≥ {r['level']}", "AP": r["ap"], "nAP": r["nap"], "prevalence": r["prevalence"],
                          "positives": r["n_positive"], "undefined because": r["reason"] or ""} for r in rows],
                        schema={"threshold": pl.Utf8, "AP": pl.Float64, "nAP": pl.Float64, "prevalence": pl.Float64,
                                "positives": pl.Int64, "undefined because": pl.Utf8})


def _judged(scored: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    scale = _scale(scored)
    return [s for s in scored.get("results") or [] if s.get("gt_verdict") in scale]


def pr_curves(scored: Mapping[str, Any]) -> pl.DataFrame:
    """Precision–recall points per defined threshold (scikit-learn's ``precision_recall_curve``), in
    drawing order: ``point`` counts along each curve, recall ascending and, at one recall, precision
    descending.

    Drawn as a step that takes each point's precision back to the previous point's recall
    (Vega-Lite ``step-before`` in this order), the area under a curve is
    AP = Σₙ (Rₙ − Rₙ₋₁)·Pₙ, the AP of the same threshold in :func:`thresholds`. The samples and
    ranking scores are those the AP was computed from (GT verdict in the scale,
    :func:`core.metrics.score.ranking_scores`).
    """
    scale = _scale(scored)
    samples = _judged(scored)
    if not samples:
        return pl.DataFrame(schema=PR_SCHEMA)
    y_score, _ = ranking_scores(samples, scale)
    return pr_points(verdict_ordinals([s["gt_verdict"] for s in samples], scale), y_score, scale)


def pr_points(y_true: np.ndarray, y_score: np.ndarray, scale: Sequence[str]) -> pl.DataFrame:
    """:func:`pr_curves` of the judged samples' GT ordinals and ranking scores (a run's columns)."""
    frames = []
    for level in range(1, len(scale)):
        y = y_true >= level
        if 0 < y.sum() < len(y):
            # deferred: heavy optional import (~1.2 s), only needed when a PR curve is computed
            from sklearn.metrics import precision_recall_curve

            p, r, _ = precision_recall_curve(y, y_score)
            # scikit-learn lists thresholds ascending (recall descending); reversed, a tie of recall
            # comes highest precision first, which is the precision AP gives the interval before it.
            frames.append(pl.DataFrame({"threshold": f"≥ {scale[level]}", "point": range(len(r)),
                                        "recall": r[::-1], "precision": p[::-1]}))
    if not frames:
        return pl.DataFrame(schema=PR_SCHEMA)
    return pl.concat(frames).cast(PR_SCHEMA)  # type: ignore[arg-type]


def components(scored: Mapping[str, Any]) -> pl.DataFrame:
    """Process components: value, nominal weight and the weight it carries after redistribution."""
    comps = (scored.get("unified_metrics_full") or {}).get("process_components") or {}
    total = sum(w for k, w in PROCESS_WEIGHTS.items() if comps.get(k) is not None)
    return pl.DataFrame([{"component": COMPONENT_NAMES[k], "value": comps.get(k), "weight": w,
                          "effective_weight": (w / total) if comps.get(k) is not None and total else None}
                         for k, w in PROCESS_WEIGHTS.items()],
                        schema={"component": pl.Utf8, "value": pl.Float64, "weight": pl.Float64,
                                "effective_weight": pl.Float64})


def confusion(scored: Mapping[str, Any]) -> pl.DataFrame:
    """Counts of (GT verdict, method verdict); a missing verdict is "(none)"."""
    rows = [{"gt_verdict": s["gt_verdict"], "method_verdict": s.get("verdict") or "(none)"} for s in _judged(scored)]
    frame = pl.DataFrame(rows, schema={"gt_verdict": pl.Utf8, "method_verdict": pl.Utf8})
    return frame.group_by("gt_verdict", "method_verdict").len("count").sort("gt_verdict", "method_verdict")


def consistency(scored: Mapping[str, Any]) -> pl.DataFrame:
    """SPEC §5.3 per-sample details with the restaurant's name."""
    names = {str(s.get("business_id")): s.get("name") for s in scored.get("results") or []}
    rows = ((scored.get("unified_metrics_full") or {}).get("consistency_details") or {}).get("per_sample") or []
    return pl.DataFrame([{"business_id": r["business_id"], "name": names.get(r["business_id"]),
                          "method_verdict": r["method_verdict"], "computed_verdict": r["computed_verdict"],
                          "computed_score": float(r["computed_score"]), "consistent": r["is_consistent"],
                          "evidences": r["n_evidences"]} for r in rows],
                        schema={"business_id": pl.Utf8, "name": pl.Utf8, "method_verdict": pl.Utf8,
                                "computed_verdict": pl.Utf8, "computed_score": pl.Float64, "consistent": pl.Boolean,
                                "evidences": pl.Int64})


def samples(scored: Mapping[str, Any]) -> pl.DataFrame:
    """One row per sample: verdicts, score, correct, error, tokens, cost."""
    return pl.DataFrame([{
        "business_id": str(s.get("business_id")), "name": s.get("name"), "gt_verdict": s.get("gt_verdict"),
        "verdict": s.get("verdict"), "risk_score": s.get("risk_score") if isinstance(s.get("risk_score"), int | float) else None,
        "correct": s.get("correct"), "error": s.get("error") or "",
        "tokens": int(s.get("prompt_tokens") or 0) + int(s.get("completion_tokens") or 0),
        "cost_usd": float(s.get("cost_usd") or 0.0),
    } for s in scored.get("results") or []], schema={
        "business_id": pl.Utf8, "name": pl.Utf8, "gt_verdict": pl.Utf8, "verdict": pl.Utf8, "risk_score": pl.Float64,
        "correct": pl.Boolean, "error": pl.Utf8, "tokens": pl.Int64, "cost_usd": pl.Float64})


def sample_detail(scored: Mapping[str, Any], business_id: str, review_texts: Mapping[str, str] | None = None, *,
                  policy: Policy | None) -> dict[str, Any]:
    """Everything the drilldown shows for one restaurant: the sample, its evidence (with whether its
    review is a GT incident and its snippet occurs), GT's incidents, the verdict recomputed with
    ``policy`` (the run's, as :func:`core.metrics.score.resolve_policy` gives it; None when the
    workspace no longer has it: only what the scored run stored is shown)."""
    sample = next(s for s in scored.get("results") or [] if str(s.get("business_id")) == business_id)
    full = scored.get("unified_metrics_full") or {}
    row: dict[str, Any] = next((r for r in (full.get("intermediate_metrics") or {}).get("per_sample") or []
                if r["business_id"] == business_id), {})
    evidences = evidences_of(sample.get("parsed")) or []
    gt_ids = {i["review_id"] for i in row.get("gt_incidents") or []}
    ev_rows = []
    for ev in evidences:
        rid = str(ev.get("review_id"))
        snippet = ev.get("snippet") if isinstance(ev.get("snippet"), str) else ""
        text = (review_texts or {}).get(rid)
        ev_rows.append({"evidence_id": ev.get("evidence_id"), "review_id": rid, "field": ev.get("field"),
                        "judgement": ev.get("judgement"), "snippet": snippet,
                        "gt_incident": rid in gt_ids if row.get("gt_checked") else None,
                        "snippet_found": snippet_valid(snippet, text) if snippet and text is not None else None})
    claims = claimed_incidents(evidences, policy) if policy is not None else []
    recomputed = policy.score_incidents(claims, None) if policy is not None else None  # when the run lacks it
    return {"sample": sample, "evidences": ev_rows, "claims": claims, "gt_incidents": row.get("gt_incidents"),
            "matched": row.get("matched") or [],
            "recomputed_verdict": row.get("recomputed_verdict", recomputed.verdict if recomputed else None),
            "recomputed_score": row.get("recomputed_score", recomputed.score if recomputed else None)}


def highlight(text: str, snippets: Sequence[str]) -> str:
    """``text`` HTML-escaped, with every occurrence of each snippet wrapped in <mark> (escaped too).

    >>> highlight("a <b> c", ["<b>"])
    'a <mark>&lt;b&gt;</mark> c'
    """
    parts = sorted({s for s in snippets if s and s.strip()}, key=len, reverse=True)
    if not parts:
        return html.escape(text)
    pattern = re.compile("|".join(re.escape(p) for p in parts))
    return marked_html(text, (m.span() for m in pattern.finditer(text)))


# -- several runs ---------------------------------------------------------------------------------
def run_label(scored: Mapping[str, Any]) -> str:
    return f"{scored.get('run_id')} ({scored.get('method')}, K={scored.get('k')})"


def comparison(runs: Sequence[Mapping[str, Any]], baseline: int, *, n_boot: int = 1000, seed: int = 0,
               differences: Sequence[Mapping[str, Any] | None] | None = None) -> pl.DataFrame:
    """Per run and headline score: value with interval, and the paired difference to the baseline run
    (bootstrap over the restaurants both scored) with its interval and whether it excludes 0.

    ``differences[i]`` may give run i's ``paired_differences(...)["differences"]`` against the
    baseline already computed (a cache); only the headline fields of ``runs`` are read then.
    """
    base_table = sample_table(runs[baseline]) if differences is None else None
    rows = []
    for i, r in enumerate(runs):
        head = headline(r)
        if i == baseline:
            diffs: Mapping[str, Any] = {}
        elif differences is not None:
            diffs = differences[i] or {}
        else:
            assert base_table is not None
            diffs = paired_differences(base_table, sample_table(r), n_boot=n_boot, seed=seed)["differences"]
        for (label, name, _key, scale), h in zip(HEADLINE_ROWS, head.iter_rows(named=True), strict=True):
            d = diffs.get(name) or {}
            rows.append({"run": run_label(r), "metric": label, "score_pct": h["score_pct"], "low_pct": h["low_pct"],
                         "high_pct": h["high_pct"],
                         "diff_pct": None if d.get("difference") is None else d["difference"] * scale,
                         "diff_low_pct": None if d.get("low") is None else d["low"] * scale,
                         "diff_high_pct": None if d.get("high") is None else d["high"] * scale,
                         "real": None if i == baseline or d.get("low") is None else bool(d.get("excludes_zero"))})
    return pl.DataFrame(rows, schema={"run": pl.Utf8, "metric": pl.Utf8, "score_pct": pl.Float64, "low_pct": pl.Float64,
                                      "high_pct": pl.Float64, "diff_pct": pl.Float64, "diff_low_pct": pl.Float64,
                                      "diff_high_pct": pl.Float64, "real": pl.Boolean})


BUCKETS = ("newly failing", "newly fixed", "still failing", "still right")
GT_DIFFERS = "GT differs"  # both runs judged it, against different GT verdicts: not compared


def buckets(base: Mapping[str, Any], other: Mapping[str, Any]) -> pl.DataFrame:
    """The restaurants both runs judged, bucketed by correctness in base → other; a restaurant whose
    GT verdict differs between the two runs is in :data:`GT_DIFFERS` (its "fixed" or "failing" would
    compare two targets)."""
    a = {str(s["business_id"]): s for s in _judged(base)}
    rows = []
    for s in _judged(other):
        bid = str(s["business_id"])
        if bid not in a:
            continue
        was, now = bool(a[bid].get("correct")), bool(s.get("correct"))
        bucket = BUCKETS[3] if was and now else BUCKETS[0] if was else BUCKETS[1] if now else BUCKETS[2]
        if a[bid]["gt_verdict"] != s["gt_verdict"]:
            bucket = GT_DIFFERS
        rows.append({"bucket": bucket, "business_id": bid, "name": s.get("name"), "gt_verdict": s["gt_verdict"],
                     "baseline_gt_verdict": a[bid]["gt_verdict"], "baseline_verdict": a[bid].get("verdict"),
                     "verdict": s.get("verdict")})
    return pl.DataFrame(rows, schema={"bucket": pl.Utf8, "business_id": pl.Utf8, "name": pl.Utf8, "gt_verdict": pl.Utf8,
                                      "baseline_gt_verdict": pl.Utf8, "baseline_verdict": pl.Utf8, "verdict": pl.Utf8})


def scores_by_k(runs: Sequence[Mapping[str, Any]]) -> pl.DataFrame:
    """method, K, metric, score and interval (in %) of every run, for the score-against-K chart."""
    rows = []
    for r in runs:
        for h in headline(r).iter_rows(named=True):
            if isinstance(r.get("k"), int) and h["score_pct"] is not None:
                rows.append({"method": str(r.get("method")), "model": str(r.get("model")), "k": r["k"],
                             "metric": h["metric"], "score_pct": h["score_pct"], "low_pct": h["low_pct"],
                             "high_pct": h["high_pct"]})
    return pl.DataFrame(rows, schema={"method": pl.Utf8, "model": pl.Utf8, "k": pl.Int64, "metric": pl.Utf8,
                                      "score_pct": pl.Float64, "low_pct": pl.Float64, "high_pct": pl.Float64})

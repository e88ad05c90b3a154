"""Console summaries of scored runs (the layout of ADDM's console output), and comparisons."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from core.metrics.badges import MISSING, badges, facts_of, incidents_line, warning_lines
from core.metrics.process import PROCESS_WEIGHTS

COMPONENT_NAMES = {
    "incident_precision": "Incident Precision", "severity_accuracy": "Severity Accuracy",
    "modifier_accuracy": "Modifier Accuracy", "verdict_support_rate": "Verdict Support",
    "snippet_validity": "Snippet Validity",
}
HEADLINES = (("AUPRC", "ordinal_auprc", 100.0), ("Process", "process_score", 1.0),
             ("Consistency", "consistency_score", 1.0))


def pct(value: float | None, *, scale: float = 1.0) -> str:
    """A score as "79.8%", or "N/A" when it is null.

    >>> pct(0.798, scale=100), pct(None), pct(86.15)
    ('79.8%', 'N/A', '86.2%')
    """
    return "N/A" if value is None else f"{value * scale:.1f}%"


def box(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """A box-drawn table, columns padded to their widest cell."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) + 2 for i, h in enumerate(headers)] if rows else \
        [len(h) + 2 for h in headers]

    def line(left: str, mid: str, right: str) -> str:
        return " " + left + mid.join("─" * w for w in widths) + right

    def cells(values: Sequence[str]) -> str:
        return " │" + "│".join(f" {v:<{w - 1}}" for v, w in zip(values, widths, strict=True)) + "│"

    return [line("┌", "┬", "┐"), cells(headers), line("├", "┼", "┤"), *(cells(r) for r in rows), line("└", "┴", "┘")]


def headline_values(scored: Mapping[str, Any]) -> dict[str, float | None]:
    """ordinal_auprc (0–1), process_score and consistency_score (0–100), accuracy (0–1)."""
    u = scored.get("unified_scores") or {}
    return {"ordinal_auprc": u.get("auprc"), "process_score": u.get("process_score"),
            "consistency_score": u.get("consistency_score"), "accuracy": scored.get("accuracy")}


def _ci(scored: Mapping[str, Any], key: str, scale: float) -> str:
    iv = ((scored.get("intervals") or {}).get("scores") or {}).get(key) or {}
    if iv.get("low") is None:
        return "–"
    return f"{iv['low'] * scale:.1f}–{iv['high'] * scale:.1f}"


def run_title(scored: Mapping[str, Any]) -> str:
    return (f"RUN: {scored.get('policy_id') or scored.get('task_id') or '?'} | Method: {scored.get('method', '?')}"
            f" | K={scored.get('k', '?')} | N={scored.get('total', scored.get('n', '?'))}")


def format_summary(scored: Mapping[str, Any]) -> str:
    """The console summary of one scored run: headline scores with status (:mod:`core.metrics.badges`)
    and 95 % interval, accuracy beside its majority-class baseline, the incidents claimed and found,
    a line for each degenerate score, and the process components with their weights."""
    rule = "═" * 67
    facts = facts_of(scored)
    rows = badges(scored, facts)
    scales = {key: scale for _, key, scale in HEADLINES} | {"accuracy": 100.0}  # interval units → %
    table = [[r["metric"], pct(r["score_pct"]), r["status"], _ci(scored, r["key"], scales[r["key"]])] for r in rows]
    comps = (scored.get("unified_metrics_full") or {}).get("process_components") or {}
    comp_rows = [[COMPONENT_NAMES[k], pct(comps.get(k), scale=100.0), f"{w:.0%}"] for k, w in PROCESS_WEIGHTS.items()]
    ranking = ((scored.get("auprc") or {}).get("ranking_score") or {}).get("source", "?")
    lines = [rule, " " + run_title(scored), rule, "", " UNIFIED SCORES",
             *box(["Metric", "Score", "Status", "95% CI"], table),
             f" {accuracy_line(scored, facts)}; ranked by {ranking}", f" {incidents_line(facts)}",
             *(f" {line}" for line in warning_lines(rows)),
             "", " PROCESS COMPONENTS", *box(["Component", "Score", "Weight"], comp_rows)]
    return "\n".join(lines)


def accuracy_line(scored: Mapping[str, Any], facts: Mapping[str, Any] | None) -> str:
    """ "Accuracy 98.0% (49/50) vs majority-class baseline 98.0% (always Low Risk)"."""
    major = (facts or {}).get("majority") or {}
    base = (f" vs majority-class baseline {pct(major['share'], scale=100)} (always {major['verdict']})"
            if major.get("share") is not None else " (majority-class baseline unknown)")
    return f"Accuracy {pct(scored.get('accuracy'), scale=100)} ({scored.get('correct', '?')}/{scored.get('total', '?')}){base}"


def _mark(status: str) -> str:
    return "" if status == MISSING else f" {status}"


def format_comparison(runs: Sequence[Mapping[str, Any]], gt_labels: Sequence[str] | None = None) -> str:
    """One row per run: method, model, K, N, the headline scores with status and intervals, accuracy
    with its status and the majority-class baseline; ⚠ marks a degenerate score (see each run's
    summary); when the runs were scored against different GTs, each run's GT (``gt_labels``)."""
    differ = gt_labels is not None and len(set(gt_labels)) > 1
    rows = []
    for i, r in enumerate(runs):
        facts = facts_of(r)
        marks = {b["key"]: b["status"] for b in badges(r, facts)}
        v = headline_values(r)
        share = ((facts or {}).get("majority") or {}).get("share")
        rows.append([str(r.get("run_id", "?")), str(r.get("method", "?")), str(r.get("model", "?")), str(r.get("k", "?")),
                     str(r.get("total", "?")),
                     *(f"{pct(v[key], scale=scale)}{_mark(marks[key])} [{_ci(r, key, scale)}]" for _, key, scale in HEADLINES),
                     f"{pct(v['accuracy'], scale=100)}{_mark(marks['accuracy'])}", pct(share, scale=100),
                     *([gt_labels[i]] if differ and gt_labels else [])])
    headers = ["Run", "Method", "Model", "K", "N", "AUPRC", "Process", "Consistency", "Accuracy", "Majority",
               *(["GT"] if differ else [])]
    return "\n".join([" COMPARISON", *box(headers, rows)])


def format_paired(base: Mapping[str, Any], others: Sequence[Mapping[str, Any]], pairs: Sequence[Mapping[str, Any]],
                  bucket_counts: Sequence[Mapping[str, int]]) -> str:
    """Paired differences of each run against ``base`` (``pairs[i]``: ``paired_differences`` of base
    and ``others[i]``) with the newly failing / fixed counts, on the restaurants whose GT agrees."""
    rows = []
    for r, p, counts in zip(others, pairs, bucket_counts, strict=True):
        cells = []
        for _, key, scale in HEADLINES:
            d = p["differences"].get(key) or {}
            if d.get("difference") is None:
                cells.append("N/A")
                continue
            iv = "" if d.get("low") is None else f" [{d['low'] * scale:+.1f}, {d['high'] * scale:+.1f}]"
            cells.append(f"{d['difference'] * scale:+.1f}{iv}{' real' if d.get('excludes_zero') else ''}")
        rows.append([str(r.get("run_id", "?")), str(p["n_common"]), str(p.get("n_gt_differs", 0)), *cells,
                     str(counts.get("newly failing", 0)), str(counts.get("newly fixed", 0))])
    note = (" (points; bootstrap over the restaurants both runs scored against the same GT verdict; "
            "real = the 95 % interval excludes 0; GT differs = left out)")
    return "\n".join([f" PAIRED DIFFERENCES against {base.get('run_id')}" + note,
                      *box(["Run", "N", "GT differs", "AUPRC", "Process", "Consistency", "Newly failing", "Newly fixed"],
                           rows)])

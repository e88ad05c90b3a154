"""What is shown beside a run's headline scores so that they do not flatter it.

The scores themselves are SPEC §5's, unchanged. Beside them:

- **Accuracy** next to the majority-class baseline (the share of the most common GT verdict among
  the scored samples); its ✓ needs both the 75 % target and a value above that baseline, since a
  method that always answers the majority verdict scores the baseline without looking.
- **Incidents**: "N incidents claimed, M of P GT incidents found".
- A **degenerate** score gets ⚠ instead of ✓/✗ and a line saying why: a process score none of whose
  incident components (precision, severity, modifiers) could be computed rests on verdict support
  and snippets alone; a consistency score of a run that claimed no incident only checks that every
  verdict is the policy's verdict for no incident; an AUPRC whose ranking score is one constant is
  the prevalence, whatever it is.

:func:`run_facts` gathers the facts from a scored results dict (JSON-safe, stored in each run's
``summary.json`` so views over many runs need not read the samples); :func:`badges` turns scores
and facts into rows of metric, score, status and note.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

import numpy as np

from core.metrics.process import PROCESS_WEIGHTS
from core.metrics.score import ranking_scores

TARGET = 75.0  # a score above 75 % gets a ✓ (accuracy: and above the majority baseline)
OK, FAIL, DEGENERATE, MISSING = "✓", "✗", "⚠", "N/A"
INCIDENT_COMPONENTS = ("incident_precision", "severity_accuracy", "modifier_accuracy")
NAMES = {"incident_precision": "incident precision", "severity_accuracy": "severity accuracy",
         "modifier_accuracy": "modifier accuracy", "verdict_support_rate": "verdict support",
         "snippet_validity": "snippet validity"}
DEFAULT_SCALE = ("Low Risk", "High Risk", "Critical Risk")
SHORT = {"ordinal_auprc": "AUPRC: one constant ranking score", "process_score": "Process: no incident checked",
         "consistency_score": "Consistency: no incident claimed", "accuracy": "Accuracy: not above the majority baseline"}


def majority_baseline(gt_verdicts: list[str], scale: tuple[str, ...] | list[str]) -> dict[str, Any]:
    """The most common GT verdict and its share (the accuracy of always answering it).

    A tie goes to the verdict first in ``scale``.

    >>> majority_baseline(["Low Risk", "Low Risk", "High Risk"], ["Low Risk", "High Risk"])
    {'verdict': 'Low Risk', 'share': 0.6666666666666666, 'n': 3}
    >>> majority_baseline([], ["Low Risk", "High Risk"])
    {'verdict': None, 'share': None, 'n': 0}
    """
    counts = Counter(gt_verdicts)
    if not counts:
        return {"verdict": None, "share": None, "n": 0}
    order = {v: i for i, v in enumerate(scale)}
    verdict = min(counts, key=lambda v: (-counts[v], order.get(v, len(order)), v))
    return {"verdict": verdict, "share": counts[verdict] / len(gt_verdicts), "n": len(gt_verdicts)}


def _incidents(full: Mapping[str, Any], n_scored: int) -> dict[str, Any]:
    inter = full.get("intermediate_metrics") or {}
    rows = inter.get("per_sample") or []
    claimed = sum(len(r.get("claimed") or []) for r in rows)
    found = sum(len(r.get("matched") or []) for r in rows)
    if "n_gt_incidents" in inter:  # counted over every scored sample
        total, with_list = inter["n_gt_incidents"], inter.get("n_gt_with_incident_list", 0)
        exact = True
    else:  # scored before that count existed: the structured samples' GT incidents only
        checked = [r for r in rows if r.get("gt_checked")]
        total, with_list = sum(len(r.get("gt_incidents") or []) for r in checked), len(checked)
        exact = len(rows) == n_scored
    return {"claimed": claimed, "found": found, "gt_total": total if with_list else None,
            "gt_total_exact": exact, "structured": len(rows)}


def run_facts(scored: Mapping[str, Any]) -> dict[str, Any]:
    """Majority baseline, incident counts, ranking spread and what the process score rests on when no
    incident component is known, of a scored run (JSON-safe)."""
    scale = tuple(scored.get("verdict_scale") or DEFAULT_SCALE)
    judged = [s for s in scored.get("results") or [] if s.get("gt_verdict") in scale]
    full = scored.get("unified_metrics_full") or {}
    distinct = int(len(np.unique(ranking_scores(judged, scale)[0]))) if judged else 0
    return {"majority": majority_baseline([s["gt_verdict"] for s in judged], scale),
            "incidents": _incidents(full, len(judged)), "distinct_ranking_scores": distinct,
            "process_rests_on": _process_basis(full),
            "lowest_verdict": scale[0]}


def facts_of(scored: Mapping[str, Any]) -> dict[str, Any] | None:
    """The run's stored facts (a summary.json), else computed from its samples; None without either."""
    if isinstance(scored.get("facts"), Mapping):
        return dict(scored["facts"])
    return run_facts(scored) if isinstance(scored.get("results"), list) else None


def incidents_line(facts: Mapping[str, Any] | None) -> str:
    """ "3 incidents claimed, 2 of 5 GT incidents found" (the GT count is "≥ P" when it covers only
    the structured answers, and unknown when GT lists no incidents).

    >>> incidents_line({"incidents": {"claimed": 3, "found": 2, "gt_total": 5, "gt_total_exact": True}})
    '3 incidents claimed, 2 of 5 GT incidents found'
    >>> incidents_line({"incidents": {"claimed": 1, "found": 0, "gt_total": None, "gt_total_exact": True}})
    '1 incident claimed; GT lists no incidents (verdicts only): none can be checked'
    >>> incidents_line({"incidents": {"claimed": 0, "found": 0, "gt_total": 4, "structured": 0}})
    'no incident claimed (no answer carries an evidence list), 0 of 4 GT incidents found'
    """
    inc = (facts or {}).get("incidents")
    if not inc:
        return "incidents: unknown (the run's samples are not at hand)"
    claimed = (f"{inc['claimed']:,} incident{'' if inc['claimed'] == 1 else 's'} claimed" if inc.get("structured", 1)
               else "no incident claimed (no answer carries an evidence list)")
    if inc.get("gt_total") is None:
        return f"{claimed}; GT lists no incidents (verdicts only): none can be checked"
    total = inc["gt_total"]
    of = f"{total:,}" if inc.get("gt_total_exact", True) else f"at least {total:,}"
    one = total == 1 and inc.get("gt_total_exact", True)
    return f"{claimed}, {inc['found']:,} of {of} GT incident{'' if one else 's'} found"


def incidents_short(facts: Mapping[str, Any] | None) -> str:
    """:func:`incidents_line` for a table cell.

    >>> incidents_short({"incidents": {"claimed": 3, "found": 2, "gt_total": 5, "gt_total_exact": True}})
    '3 claimed · 2 of 5 found'
    >>> incidents_short({"incidents": {"claimed": 0, "found": 0, "gt_total": None, "structured": 0}})
    'no evidence · GT lists none'
    >>> incidents_short({"incidents": {"claimed": 1200, "found": 0, "gt_total": 16709, "gt_total_exact": True}})
    '1,200 claimed · 0 of 16,709 found'
    """
    inc = (facts or {}).get("incidents")
    if not inc:
        return "unknown"
    claimed = f"{inc['claimed']:,} claimed" if inc.get("structured", 1) else "no evidence"
    if inc.get("gt_total") is None:
        return f"{claimed} · GT lists none"
    of = f"{inc['gt_total']:,}" if inc.get("gt_total_exact", True) else f"≥ {inc['gt_total']:,}"
    return f"{claimed} · {inc['found']:,} of {of} found"


def _pct(v: float | None) -> str:
    return "N/A" if v is None else f"{v:.1f}%"


def _process_basis(full: Mapping[str, Any]) -> list[str] | None:
    """The process components the score rests on when none of the incident ones is known, else None."""
    comps = full.get("process_components") or {}
    if not comps or any(comps.get(k) is not None for k in INCIDENT_COMPONENTS):
        return None
    return [k for k in PROCESS_WEIGHTS if k not in INCIDENT_COMPONENTS and comps.get(k) is not None]


def _process_note(facts: Mapping[str, Any] | None) -> str | None:
    rest = (facts or {}).get("process_rests_on")
    if rest is None:
        return None
    inc = (facts or {}).get("incidents") or {}
    if inc.get("gt_total") is None:
        why = "GT lists no incidents to check claims against"
    elif inc.get("claimed") == 0:
        why = "the run claimed no incident"
    else:
        why = "no claimed incident could be checked against GT"
    weight = sum(PROCESS_WEIGHTS[k] for k in rest)
    on = " and ".join(NAMES[k] for k in rest) or "nothing"
    return (f"incident precision, severity and modifier accuracy are N/A ({why}): the score rests on {on} "
            f"alone (weight {weight:.2f} of 1.00)")


def _consistency_note(value: float | None, facts: Mapping[str, Any] | None) -> str | None:
    inc = (facts or {}).get("incidents") or {}
    if value is None or inc.get("structured", 0) == 0 or inc.get("claimed") != 0:
        return None
    lowest = (facts or {}).get("lowest_verdict") or DEFAULT_SCALE[0]
    return (f"no sample claimed an incident: it only checks that each verdict is {lowest}, the policy's verdict "
            "without incidents")


def _accuracy(pct: float | None, facts: Mapping[str, Any] | None) -> tuple[str, str | None]:
    major = (facts or {}).get("majority") or {}
    if pct is None:
        return MISSING, None
    if major.get("share") is None:
        return FAIL if pct <= TARGET else DEGENERATE, "majority-class baseline unknown (no GT verdicts at hand)"
    base = 100.0 * major["share"]
    if pct <= base:
        return FAIL, (f"not above the majority-class baseline {_pct(base)} (always answering "
                      f"{major['verdict']})")
    return (OK if pct > TARGET else FAIL), None


def badges(scored: Mapping[str, Any], facts: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """Rows {metric, key, score_pct, status, note, short} for AUPRC, Process, Consistency and Accuracy, from
    the run's headline fields and its facts alone (a summary.json is enough).

    status: ✓ above 75 % (accuracy: and above the majority baseline), ✗ otherwise, ⚠ for a
    degenerate score (see the module docstring; never ✓), N/A when null. ``note`` says why a score
    is degenerate or below its baseline, else None; ``short`` a few words of it (tables). ``facts``
    default to :func:`facts_of`.
    """
    facts = facts if facts is not None else facts_of(scored)
    u = scored.get("unified_scores") or {}
    rows = []
    for metric, key, pct in (("AUPRC", "ordinal_auprc", None if u.get("auprc") is None else 100.0 * u["auprc"]),
                             ("Process", "process_score", u.get("process_score")),
                             ("Consistency", "consistency_score", u.get("consistency_score")),
                             ("Accuracy", "accuracy",
                              None if scored.get("accuracy") is None else 100.0 * scored["accuracy"])):
        status, note = (MISSING if pct is None else OK if pct > TARGET else FAIL), None
        if key == "ordinal_auprc" and pct is not None and (facts or {}).get("distinct_ranking_scores") == 1:
            note = "every sample has the same ranking score: the AP is the prevalence of each threshold"
        elif key == "process_score" and pct is not None:
            note = _process_note(facts)
        elif key == "consistency_score":
            note = _consistency_note(pct, facts)
        elif key == "accuracy":
            status, note = _accuracy(pct, facts)
        if note is not None and key != "accuracy":
            status = DEGENERATE
        rows.append({"metric": metric, "key": key, "score_pct": pct, "status": status, "note": note,
                     "short": None if note is None else SHORT[key]})
    return rows


def fallback_line(reason: str | None) -> str | None:
    """What a run says when the extraction spec its method compiled was not used (amos:
    ``spec.json``'s ``spec.fallback``); None when it was.

    >>> fallback_line("keywords must be a non-empty list of strings")[:50]
    'amos spec fallback: the compiled spec was invalid '
    >>> fallback_line(None) is None
    True
    """
    if not reason:
        return None
    return (f"amos spec fallback: the compiled spec was invalid ({reason}); the run used the task's default "
            "extraction spec (its own keywords and judgment fields), not one compiled from the policy")


def warning_lines(rows: list[dict[str, Any]]) -> list[str]:
    """One line per row with a note: "Process 75.0% ⚠: …"."""
    return [f"{r['metric']} {_pct(r['score_pct'])} {r['status']}: {r['note']}" for r in rows if r["note"]]


def headline_report(scored: Mapping[str, Any], spec_fallback: str | None = None) -> dict[str, Any]:
    """The badges as JSON (``runs show``): each score's status and note, the majority-class baseline,
    the incidents line, and every warning line (degenerate scores, an amos spec fallback)."""
    facts = facts_of(scored)
    rows = badges(scored, facts)
    fallback = fallback_line(spec_fallback)
    return {"scores": rows, "majority_baseline": (facts or {}).get("majority"), "incidents": incidents_line(facts),
            "warnings": [*warning_lines(rows), *([fallback] if fallback else [])]}

"""Reports as frames: the sample table, two reports side by side, the history of a set, and the
expected/predicted texts with keywords highlighted (escaped HTML)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import polars as pl

from core.base.highlight import marked_html
from core.gold.scoring import GoldConfig, find_citation, keywords_found

STATUS_RANK = {"fail": 0, "acceptable": 1, "pass": 2}
CHANGE_ORDER = {"regression": 0, "worse score": 1, "missing": 2, "same": 3, "better score": 4, "improvement": 5}


def samples_frame(report: dict[str, Any], *, match_threshold: float = 0.75) -> pl.DataFrame:
    """One row per sample: ids, status, the five scores, tokens, keyword counts, ``matched`` and error."""
    rows = []
    for s in report["sample_results"]:
        sc = s["scores"]
        rows.append({
            "sample_id": s["sample_id"], "task": s["task"], "domain": s["domain"], "status": sc["status"],
            "overall": sc["overall"], "accuracy": sc["accuracy"], "matched": sc["accuracy"] >= match_threshold,
            "citation": sc["citation"], "length": sc["length"], "keywords": sc["keywords"],
            "tokens": sc["token_count"], "keywords_found": sc.get("keywords_found", 0),
            "keywords_total": sc.get("keywords_total", 0), "question": s["question"], "error": s.get("error"),
        })
    schema = {"sample_id": pl.String, "task": pl.String, "domain": pl.String, "status": pl.String,
              "overall": pl.Float64, "accuracy": pl.Float64, "matched": pl.Boolean, "citation": pl.Float64,
              "length": pl.Float64, "keywords": pl.Float64, "tokens": pl.Int64, "keywords_found": pl.Int64,
              "keywords_total": pl.Int64, "question": pl.String, "error": pl.String}
    return pl.DataFrame(rows, schema=schema)


def breakdown_frame(report: dict[str, Any], key: str) -> pl.DataFrame:
    """``by_task`` or ``by_domain`` as a frame (``group``, count, overall_score, accuracy, pass_rate)."""
    groups = report["by_task" if key == "task" else "by_domain"]
    rows = [{"group": name, **{k: v.get(k) for k in ("count", "overall_score", "accuracy", "pass_rate")}}
            for name, v in groups.items()]
    return pl.DataFrame(rows, schema={"group": pl.String, "count": pl.Int64, "overall_score": pl.Float64,
                                      "accuracy": pl.Float64, "pass_rate": pl.Float64})


def _change(status_a: str | None, status_b: str | None, delta: float | None) -> str:
    if status_a is None or status_b is None or delta is None:
        return "missing"
    ra, rb = STATUS_RANK[status_a], STATUS_RANK[status_b]
    if rb < ra:
        return "regression"
    if rb > ra:
        return "improvement"
    if delta < -1e-12:
        return "worse score"
    if delta > 1e-12:
        return "better score"
    return "same"


def compare_reports(a: dict[str, Any], b: dict[str, Any]) -> pl.DataFrame:
    """Samples of report ``a`` (before) and ``b`` (after) side by side, regressions first.

    ``change``: regression (status went down), worse score, missing (in one report only), same,
    better score, improvement (status went up); within a change, the largest drop first.
    """
    sa = {s["sample_id"]: s for s in a["sample_results"]}
    sb = {s["sample_id"]: s for s in b["sample_results"]}
    rows = []
    for sid in [*sa, *(k for k in sb if k not in sa)]:
        x, y = sa.get(sid), sb.get(sid)
        oa = x["scores"]["overall"] if x else None
        ob = y["scores"]["overall"] if y else None
        delta = ob - oa if oa is not None and ob is not None else None
        st_a, st_b = (x["scores"]["status"] if x else None), (y["scores"]["status"] if y else None)
        rows.append({"sample_id": sid, "change": _change(st_a, st_b, delta), "status_a": st_a, "status_b": st_b,
                     "overall_a": oa, "overall_b": ob, "delta": delta,
                     "question": (x or y or {}).get("question", "")})
    frame = pl.DataFrame(rows, schema={"sample_id": pl.String, "change": pl.String, "status_a": pl.String,
                                       "status_b": pl.String, "overall_a": pl.Float64, "overall_b": pl.Float64,
                                       "delta": pl.Float64, "question": pl.String})
    order = pl.col("change").replace_strict(CHANGE_ORDER, return_dtype=pl.Int64)
    return frame.sort([order, pl.col("delta").fill_null(0.0), "sample_id"])


def compare_summary(frame: pl.DataFrame) -> dict[str, int]:
    """Counts of each change."""
    counts = dict(frame.group_by("change").len().iter_rows())
    return {change: int(counts.get(change, 0)) for change in CHANGE_ORDER}


def history_frame(rows: Sequence[dict[str, Any]]) -> pl.DataFrame:
    """History lines as a frame with a parsed ``time`` column (oldest first)."""
    cols = ("report", "set", "model", "source", "accuracy_method", "timestamp", "total_samples",
            "overall_score", "accuracy", "citation_coverage", "avg_length_tokens", "pass_rate")
    frame = pl.DataFrame([{c: r.get(c) for c in cols} for r in rows],
                         schema={c: (pl.Float64 if c in {"overall_score", "accuracy", "citation_coverage",
                                                          "avg_length_tokens", "pass_rate"}
                                     else pl.Int64 if c == "total_samples" else pl.String) for c in cols})
    return frame.with_columns(
        pl.col("timestamp").str.to_datetime("%Y-%m-%dT%H:%M:%SZ", strict=False).alias("time")).sort("time", "report")


def _spans(text: str, keywords: Sequence[str]) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    for kw in sorted({k for k in keywords if k}, key=len, reverse=True):
        for m in re.finditer(re.escape(kw), text, flags=re.IGNORECASE):
            if all(m.end() <= s or m.start() >= e for s, e in spans):
                spans.append((m.start(), m.end()))
    return sorted(spans)


def highlight_html(text: str, keywords: Sequence[str], *, css_class: str = "found") -> str:
    """``text`` escaped, each keyword occurrence (case-insensitive) wrapped in ``<mark class=…>``.

    >>> highlight_html("<b>Konto</b> 1500", ["konto"])
    '&lt;b&gt;<mark class="found">Konto</mark>&lt;/b&gt; 1500'
    """
    return marked_html(text, _spans(text, keywords), css_class=css_class)


def sample_detail(sample: dict[str, Any], must_include: Sequence[str], config: GoldConfig) -> dict[str, Any]:
    """Found and missing keywords, the citation found, and both texts as escaped, highlighted HTML."""
    predicted, expected = sample["predicted"], sample["expected"]
    found = keywords_found(predicted, must_include)
    missing = [k for k in must_include if k not in found]
    return {
        "found": found, "missing": missing,
        "citation": find_citation(predicted, config.compiled_patterns()),
        "expected_html": highlight_html(expected, must_include, css_class="keyword"),
        "predicted_html": highlight_html(predicted, found, css_class="found"),
    }

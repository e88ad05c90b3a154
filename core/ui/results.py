"""Loaders and page glue of the Results page: runs read from disk once, cached by file stamp.

A run is ``runs/*/results.json``; its stamp is (path, mtime_ns, size), so a rewritten file is read
again and an unchanged one never is. Every cache here is process-wide (shared by all sessions).
Scored runs are held with ``st.cache_resource`` (large, read-only dicts: never mutate them); the
small frames derived from them with ``st.cache_data``. A results.json without metric fields is
scored in memory from each sample's ``gt_verdict`` (nothing is written).

Views over many runs read each run's ``summary.json`` (``core.metrics.io``) when it was written
for that very results.json, else the results.json. A paired comparison is cached per pair of
stamps; it draws each block of resamples once for both runs (``paired_differences`` itself).
"""

from __future__ import annotations

import atexit
import gc
import urllib.parse
from pathlib import Path
from typing import Any

import polars as pl
import streamlit as st

from core import ui
from core.base.errors import UnknownNameError
from core.datasets import browse
from core.datasets.db import Database
from core.ground_truth.views.grid import trace_params
from core.metrics import badges, score_results
from core.metrics import views as mv
from core.metrics.bootstrap import SampleTable, paired_differences
from core.metrics.score import resolve_policy
from core.release.run_figures import answers_sha256
from core.runs import view as rv
from core.runs.records import (
    load_results,
    read_run_summary,
    results_stamps,
    run_summary,
    spec_fallback,
)
from core.runs.view import RunView
from core.ui import hosting, ownership
from core.ui.text import safe
from core.workspace import Workspace

Stamp = tuple[str, int, int]
atexit.register(gc.unfreeze)  # see load_run: let the interpreter collect frozen objects at exit


def run_stamps(runs_root: Path) -> tuple[Stamp, ...]:
    """(path, mtime_ns, size) of every runs/*/results.json, newest first."""
    return results_stamps(runs_root)


def run_names(stamps: tuple[Stamp, ...]) -> list[str]:
    """The run folder names of ``stamps`` (the run ids), in the same order; read nothing."""
    return [Path(s[0]).parent.name for s in stamps]


def shown_stamps(ws: Workspace, stamps: tuple[Stamp, ...]) -> tuple[Stamp, ...]:
    """The stamps of the runs this session is shown (:func:`core.ui.ownership.visible`: in the demo
    mode, not other visitors' runs), in the same order."""
    shown = set(ownership.visible(ws, run_names(stamps)))
    return tuple(s for s in stamps if Path(s[0]).parent.name in shown)


def _scored(stamp: Stamp) -> dict[str, Any]:
    payload = load_results(stamp[0])
    if payload.get("unified_scores") is None:  # scored with its policy as in force in its workspace
        ws = Workspace(Path(stamp[0]).parents[2])  # runs/{run_id}/results.json
        payload = score_results(payload, policy=resolve_policy(payload.get("policy_id"), ws))
    return payload


def _pins(scored: Any) -> dict[str, Any]:
    return {"answers_sha256": answers_sha256(scored)}


@st.cache_resource(max_entries=512, show_spinner="Reading the run's samples (a large run's first read takes a while; "
                                                   "what it needs is kept beside it for every later visit)…")
def run_view(stamp: Stamp) -> RunView:
    """The one-run view of a results.json (:func:`core.runs.view.run_view`: its head and one row per
    sample, kept beside the file; read once per stamp, never mutate what it returns)."""
    return rv.run_view(Path(stamp[0]), lambda: _scored(stamp), _pins)


def run_head(stamp: Stamp) -> dict[str, Any]:
    """The run's fields without its samples (:func:`core.runs.view.head_of`; never mutate it)."""
    return run_view(stamp).head


@st.cache_data(max_entries=256, show_spinner=False)
def run_sample(stamp: Stamp, business_id: str) -> dict[str, Any]:
    """One sample of the run as :func:`core.metrics.views.sample_detail` reads it (the head with that
    sample and its SPEC §5.2 row), from the kept detail copy."""
    sample, row = rv.run_sample(Path(stamp[0]), business_id, lambda: _scored(stamp))
    return rv.one_sample_run(run_head(stamp), sample, row)


@st.cache_resource(max_entries=512, show_spinner=False)
def load_run(stamp: Stamp) -> dict[str, Any]:
    """The scored run of one results.json with every sample (read once per stamp; never mutate the
    returned dict): only for what needs them all and is asked for (GT noise, a rescore's before and
    after); the page's views read :func:`run_view`."""
    payload = _scored(stamp)
    # A run is ~10⁵ small JSON objects that live as long as the cache: move them out of the cyclic
    # GC's generations, or every full collection walks all loaded runs (300+ ms pauses with 50 runs).
    # JSON has no reference cycles, so reference counting still frees a run the cache evicts.
    gc.freeze()
    return payload


@st.cache_resource(max_entries=64, show_spinner=False)
def run_frames(stamp: Stamp) -> dict[str, pl.DataFrame]:
    """Every table of the one-run view (held, not copied per rerun: 150,000-row frames pickle in
    0.1–0.9 s; polars frames are never changed in place, and the page must not)."""
    view = run_view(stamp)
    r = view.head
    return {"headline": mv.headline(r), "thresholds": mv.thresholds(r), "pr": rv.pr_curves(view),
            "components": mv.components(r), "confusion": rv.confusion(view), "consistency": rv.consistency(view),
            "samples": rv.samples(view)}


STATUS_HELP = ("✓ above the 75 % target (accuracy: and above the majority-class baseline); ✗ at or below it; "
               "⚠ a degenerate score (the line below says why); N/A not computable")


@st.cache_data(max_entries=256, show_spinner=False)
def headline_notes(stamp: Stamp) -> dict[str, Any]:
    """What the headline shows beside the scores: the majority-class baseline, the incidents claimed
    and found, a line per degenerate score, and an amos spec fallback (plain text, from data)."""
    run = run_head(stamp)
    facts = badges.facts_of(run)
    major = (facts or {}).get("majority") or {}
    baseline = (f"majority baseline {100 * major['share']:.1f}% ({major['verdict']})" if major.get("share") is not None
                else "majority baseline unknown")
    return {"baseline": baseline, "incidents": badges.incidents_line(facts),
            "warnings": badges.warning_lines(badges.badges(run, facts)),
            "fallback": badges.fallback_line(spec_fallback(Path(stamp[0]).parent, run))}


def chart_spec(kind: str, key: tuple, build: Any) -> dict:
    """A chart's Vega-Lite spec, built once per (kind, key), unvalidated (:func:`core.ui.chart_spec`)."""
    return ui.chart_spec((kind, key), build)


@st.cache_data(max_entries=2048, show_spinner=False)
def summary(stamp: Stamp) -> dict[str, Any]:
    """The headline fields of a run: its summary.json when written for this results.json, else
    taken from the run's head (:func:`run_head`)."""
    found = read_run_summary(stamp[0], stamp[2], stamp[1])
    return found if found is not None else run_summary(run_head(stamp))


@st.cache_resource(max_entries=512, show_spinner=False)
def run_table(stamp: Stamp) -> SampleTable:
    """Per-restaurant counts of a run, for paired differences (read-only)."""
    return rv.table_for_bootstrap(run_view(stamp))


@st.cache_data(max_entries=512, show_spinner="Resampling both runs over the same restaurants (paired bootstrap)…")
def pair(base: Stamp, other: Stamp, n_boot: int = 1000, seed: int = 0) -> dict[str, Any]:
    """Paired differences other − base (``paired_differences``: both sides from one draw)."""
    return paired_differences(run_table(base), run_table(other), n_boot=n_boot, seed=seed)


@st.cache_data(max_entries=32, show_spinner=False)
def _comparison(stamps: tuple[Stamp, ...], baseline: int, n_boot: int = 1000) -> pl.DataFrame:
    diffs = [None if i == baseline else pair(stamps[baseline], s, n_boot)["differences"] for i, s in enumerate(stamps)]
    return mv.comparison([summary(s) for s in stamps], baseline, n_boot=n_boot, differences=diffs)


def comparison(stamps: tuple[Stamp, ...], baseline: int, n_boot: int = 1000) -> pl.DataFrame:
    """Scores with intervals and paired differences to ``stamps[baseline]`` (a new comparison
    spends one of the session's bootstrap tokens in demo and team modes)."""
    if not hosting.view_allowed("bootstrap", (stamps, baseline, n_boot)):
        st.stop()
    return _comparison(stamps, baseline, n_boot)


@st.cache_data(max_entries=32, show_spinner=False)
def buckets(base: Stamp, other: Stamp) -> pl.DataFrame:
    return rv.buckets(run_view(base), run_view(other))


@st.cache_data(max_entries=32, show_spinner=False)
def scores_by_k(stamps: tuple[Stamp, ...]) -> pl.DataFrame:
    """Each run's headline scores by K, from the runs' summaries."""
    return mv.scores_by_k([summary(s) for s in stamps])


@st.cache_data(max_entries=64, show_spinner=False)
def review_texts(_db: Database, root: str, dataset: str | None, review_ids: tuple[str, ...]) -> dict[str, str]:
    """Texts of the given reviews from the run's dataset (empty when it is not in this workspace)."""
    if not dataset or not review_ids:
        return {}
    return browse.texts_by_review(_db, dataset, review_ids)


def trace_query(run: dict[str, Any], business_id: str) -> dict[str, str]:
    """The Trace page's query parameters for this restaurant at the run's K and policy."""
    return trace_params(str((run.get("config") or {}).get("dataset") or ""), str(run.get("task_id") or "G1a"),
                        str(run.get("policy_id") or ""), run.get("k") if isinstance(run.get("k"), int) else None,
                        business_id)


def trace_link(run: dict[str, Any], business_id: str) -> str:
    """The Trace page URL of this restaurant at the run's K and policy (shareable)."""
    return "/trace?" + urllib.parse.urlencode(trace_query(run, business_id))


def show_drilldown(stamp: Stamp, business_id: str, db: Database, root: str) -> None:
    """One restaurant of a run: verdicts, evidence, GT incidents, reviews with snippets, raw response
    (the run's head and that one sample: :func:`run_sample`)."""
    run = run_sample(stamp, business_id)
    sample = run["results"][0]
    ids = tuple(sorted({str(e.get("review_id")) for e in (sample.get("parsed") or {}).get("evidences") or []
                        if isinstance(e, dict)}))
    texts = review_texts(db, root, (run.get("config") or {}).get("dataset"), ids)
    policy_id = run.get("policy_id_used") or run.get("policy_id")
    try:
        policy = resolve_policy(policy_id, Workspace(Path(root)))
    except UnknownNameError:
        st.warning(safe("This run's policy {policy} is not in this workspace: the recomputed verdict is the one "
                        "stored with the run.", policy=repr(policy_id)), icon=":material/warning:")
        policy = None
    d = mv.sample_detail(run, business_id, texts, policy=policy)
    tokens = int(sample.get("prompt_tokens") or 0) + int(sample.get("completion_tokens") or 0)
    st.dataframe(pl.DataFrame([{
        "method verdict": sample.get("verdict") or "(none)", "risk score": sample.get("risk_score"),
        "GT verdict": sample.get("gt_verdict") or "(none)", "recomputed verdict": d["recomputed_verdict"],
        "recomputed score": float(d["recomputed_score"]) if d["recomputed_score"] is not None else None,
        "tokens": tokens, "cost": float(sample.get("cost_usd") or 0), "LLM calls": sample.get("llm_calls"),
        "latency ms": sample.get("latency_ms")}]), hide_index=True, placeholder="—", width="stretch",
        column_config={"risk score": st.column_config.NumberColumn(format="%.2f"),
                       "cost": st.column_config.NumberColumn(format="$%.4f"),
                       "recomputed verdict": st.column_config.TextColumn(
                           help="The policy's verdict from the method's valid claimed incidents")})
    st.page_link("app_pages/trace.py", label="Open this restaurant in Trace", icon=":material/account_tree:",
                 query_params=trace_query(run, business_id), help=trace_link(run, business_id))
    if sample.get("error"):
        st.error("Sample error:")
        st.text(sample["error"])
    st.markdown("**Evidence the method claimed** (✓ in GT = its review is a GT incident)")
    ev = pl.DataFrame(d["evidences"], schema={"evidence_id": pl.Utf8, "review_id": pl.Utf8, "field": pl.Utf8,
                                              "judgement": pl.Utf8, "snippet": pl.Utf8, "gt_incident": pl.Boolean,
                                              "snippet_found": pl.Boolean})
    if not ev.height:
        st.caption("The method claimed no evidence for this restaurant.")
    st.dataframe(ev, hide_index=True, placeholder="—", width="stretch", column_config={
        "gt_incident": st.column_config.CheckboxColumn("in GT"), "snippet_found": st.column_config.CheckboxColumn("snippet found")})
    st.markdown("**GT incidents**")
    if d["gt_incidents"] is None:
        st.caption("This run was scored without GT incidents (GT verdicts only).")
    elif not d["gt_incidents"]:
        st.caption("GT has no incident at this restaurant.")
    else:
        gt = pl.DataFrame(d["gt_incidents"], schema={"review_id": pl.Utf8, "severity": pl.Utf8, "modifiers": pl.List(pl.Utf8)})
        st.dataframe(gt.with_columns(pl.col("review_id").is_in(d["matched"]).alias("claimed by the method")),
                     hide_index=True, placeholder="—", width="stretch")
    for rid in ids:
        snippets = [e["snippet"] for e in d["evidences"] if e["review_id"] == rid and e["snippet"]]
        with st.expander(safe("Review {rid}", rid=rid) + ("" if rid in texts else " (text not in this workspace)")):
            if rid in texts:
                st.html('<div style="white-space:pre-wrap;line-height:1.5">' + mv.highlight(texts[rid], snippets) + "</div>")
            else:
                st.text("\n".join(snippets))
    with st.expander("Raw response"):
        st.code(str(sample.get("response") or ""), language=None, wrap_lines=True)


def offline_note(ws: Any, run: dict[str, Any]) -> str | None:
    """``core.ui.judges.offline_provenance`` of the run, importing that module only for a run it can
    name something offline in (an offline model, or a GT computed from a judge): it imports every
    judge kind, the openai client among them (~0.5 s, once per server process)."""
    model = str(run.get("model") or "")
    lineage: dict[str, Any] = run["gt"] if isinstance(run.get("gt"), dict) else {}
    judged = lineage.get("judge") or (lineage.get("computed_from") or {}).get("judge")
    if model != "heuristic" and not model.startswith("offline") and not judged:
        return None
    # deferred: core.ui.judges pulls in altair, pandas (~900 ms), only needed when offline_note() runs
    from core.ui.judges import offline_provenance

    return offline_provenance(ws, run)


def pct(v: float | None) -> str:
    return "N/A" if v is None else f"{v:.1f}%"

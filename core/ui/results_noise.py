"""Page glue of the Results page's GT noise (issue 28): each run's score over GT draws from a judge's
measured error (an audit or a confusion file), next to its bootstrap interval, and, comparing runs,
whether each difference against the baseline survives the GT noise."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import streamlit as st

from core.base.errors import WorkbenchError
from core.ground_truth.views import certainty
from core.runs import gt_noise
from core.ui import audit_cache
from core.ui.cache import _digest, data_key
from core.ui.results import Stamp, load_run, run_head
from core.ui.text import safe
from core.workspace import Workspace

K_SOURCE = "results.gt_noise_source"
NONE = "none"
METRICS = {"ordinal_auprc": "Ordinal AUPRC", "accuracy": "Accuracy"}


def _label(source: str) -> str:
    kind, _, name = source.partition(":")
    return "none (GT taken as certain)" if source == NONE else f"audit {name}" if kind == "audit" else f"confusion file {name}"


def _given(ws: Workspace, key: tuple, source: str, run: dict[str, Any]) -> gt_noise.NoiseInput:
    confusion = certainty.load_source(ws, source, key[1], key[3])
    return gt_noise.noise_input(ws, key, confusion, scale=run.get("verdict_scale"))


@st.cache_data(max_entries=32, show_spinner="Scoring the run against GT draws…")
def _run_noise(root: str, stamp: Stamp, source: str, key: tuple, inputs: str) -> dict[str, Any]:
    ws = Workspace(Path(root))
    run = load_run(stamp)
    return gt_noise.run_noise(run, _given(ws, key, source, run))


@st.cache_data(max_entries=32, show_spinner="Scoring both runs against the same GT draws…")
def _pair_noise(root: str, base: Stamp, other: Stamp, source: str, key: tuple, inputs: str) -> dict[str, Any]:
    ws = Workspace(Path(root))
    first = load_run(base)
    return gt_noise.compare_noise(first, load_run(other), _given(ws, key, source, first))


def _inputs(ws: Workspace, key: tuple, source: str) -> str:
    return _digest((data_key(ws, key[0], key[1]), certainty.source_stamp(ws, source)))


def picker(ws: Workspace, key: tuple) -> str | None:
    """The "GT noise from" picker (the audits of the GT's dataset and task, the confusion files)."""
    options = [NONE, *audit_cache.sources(ws, key[0], key[1])]
    if st.session_state.get(K_SOURCE) not in options:
        st.session_state[K_SOURCE] = NONE
    st.selectbox("GT noise from", options, key=K_SOURCE, format_func=_label,
                 help=safe("The measured error of the GT judge {j}: a judge audit of {d}/{t} (its human consensus) or a "
                           "confusion file in the workspace's confusion/ folder. Whole GTs are drawn from each "
                           "restaurant's verdict probabilities and the run is scored against every draw.",
                           j=key[3], d=key[0], t=key[1]))
    chosen = st.session_state[K_SOURCE]
    return None if chosen == NONE else chosen


def _interval(iv: dict[str, Any] | None) -> str:
    if not iv or iv.get("low") is None:
        return "—"
    return f"{100 * iv['low']:.1f}–{100 * iv['high']:.1f}"


def run_section(ws: Workspace, stamp: Stamp) -> None:
    """One run: ordinal AUPRC and accuracy with the bootstrap and the GT-noise 95 % intervals."""
    run = run_head(stamp)
    try:
        key = gt_noise.gt_key(run)
    except WorkbenchError as exc:
        st.caption(safe("GT noise: {e}.", e=str(exc)))
        return
    source = picker(ws, key)
    if source is None:
        return
    try:
        noise = _run_noise(str(ws.root), stamp, source, key, _inputs(ws, key, source))
    except (WorkbenchError, ValueError, OSError) as exc:
        st.warning(safe("No GT noise from {s}: {e}", s=_label(source), e=str(exc)), icon=":material/warning:")
        return
    boot = (run.get("intervals") or {}).get("scores") or {}
    rows = [{"score": METRICS[m], "against the GT (%)": None if iv["point"] is None else 100 * iv["point"],
             "bootstrap 95 % (restaurants)": _interval(boot.get(m)), "GT noise 95 % (GT draws)": _interval(iv),
             "mean over draws (%)": None if iv["mean"] is None else 100 * iv["mean"],
             "draws scored": f"{iv['n_defined']} of {iv['n_draws']}"} for m, iv in noise["intervals"].items()]
    st.dataframe(pl.DataFrame(rows), hide_index=True, width="stretch", placeholder="—", column_config={
        "against the GT (%)": st.column_config.NumberColumn(format="%.1f"),
        "mean over draws (%)": st.column_config.NumberColumn(format="%.1f")})
    st.caption(safe("GT noise from {s}: {u} of {n} restaurants have an uncertain GT verdict at K={k}; {d} GT draws "
                    "(seed {seed}). The bootstrap resamples restaurants with the GT fixed; GT noise keeps the "
                    "restaurants and redraws their verdicts.", s=_label(source), u=noise["uncertain"], n=noise["n"],
                    k=key[4] if key[4] is not None else "all", d=noise["draws"], seed=noise["seed"])
               + (safe(" {x} restaurant(s) have another verdict in today's GT than the run was scored against: "
                       "rescore it.", x=noise["differ"]) if noise["differ"] else ""))


def compare_section(ws: Workspace, picked: tuple[Stamp, ...], labels: list[str], base: int) -> None:
    """Compare runs: does each run's difference from the baseline survive the GT noise?"""
    key = gt_noise.same_gt([run_head(s) for s in picked])
    st.markdown("**Against GT noise**")
    if key is None:
        st.caption("GT noise compares runs scored against one computed GT (same dataset, task, definition, judge "
                   "and K): these runs were not.")
        return
    source = picker(ws, key)
    if source is None:
        return
    inputs = _inputs(ws, key, source)
    rows = []
    try:
        for i, stamp in enumerate(picked):
            if i == base:
                continue
            diff = _pair_noise(str(ws.root), picked[base], stamp, source, key, inputs)
            rows += [{"run": labels[i], "score": METRICS[m], "difference (points)": None if d["point"] is None
                      else 100 * d["point"], "GT noise 95 %": _interval(d) if d["low"] is None else
                      f"{100 * d['low']:+.1f} to {100 * d['high']:+.1f}",
                      "draws with its sign": d["sign_share"], "survives": "yes" if d["survives"] else "no"}
                     for m, d in diff.items()]
    except (WorkbenchError, ValueError, OSError) as exc:
        st.warning(safe("No GT noise from {s}: {e}", s=_label(source), e=str(exc)), icon=":material/warning:")
        return
    st.dataframe(pl.DataFrame(rows), hide_index=True, width="stretch", placeholder="—", column_config={
        "difference (points)": st.column_config.NumberColumn(format="%+.1f"),
        "draws with its sign": st.column_config.NumberColumn(format="%.3f")})
    st.caption(safe("Each difference against {b} over the same GT draws from {s}; it survives when its 95 % interval "
                    "excludes 0.", b=labels[base], s=_label(source)))

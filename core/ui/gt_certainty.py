"""Page glue of the Ground truth page for a judge's measured error (issue 28): the source picker,
the uncertain restaurants per K, and a judge audit's report on the Compare judges tab."""

from __future__ import annotations

import functools
import json
from typing import Any

import polars as pl
import streamlit as st

from core.base.errors import WorkbenchError
from core.ground_truth.views.certainty import uncertain_by_k
from core.ui import audit_cache, hosting
from core.ui.text import safe
from core.workspace import Workspace

K_SOURCE, K_AUDIT = "gt.certainty_source", "gt.audit_report"
NONE = "none (the point verdicts)"


def _label(source: str) -> str:
    kind, _, name = source.partition(":")
    return NONE if source == NONE else f"audit {name}" if kind == "audit" else f"confusion file {name}"


def picker(ws: Workspace, dataset: str, task: str, column: Any) -> str | None:
    """The "Verdict probability from" picker (an audit of this dataset and task, or a confusion file
    in ``confusion/``); None for the point verdicts."""
    options = [NONE, *audit_cache.sources(ws, dataset, task)]
    if st.session_state.get(K_SOURCE) not in options:
        st.session_state[K_SOURCE] = NONE
    column.selectbox("Verdict probability from", options, key=K_SOURCE, format_func=_label,
                     help="A judge audit of this dataset and task (its human consensus), or a confusion file in the "
                          "workspace's confusion/ folder: each judged field is redrawn from P(true | judged) and the "
                          "GT recomputed, giving each verdict's probability.")
    chosen = st.session_state[K_SOURCE]
    return None if chosen == NONE else chosen


def probabilities(ws: Workspace, dataset: str, task: str, judge: str | None, definition: str, ks: list[int | None],
                  source: str | None) -> tuple[pl.DataFrame | None, str]:
    """The verdict probabilities from ``source`` and their cache key, or (None, "") with the reason shown."""
    if source is None or judge is None:
        return None, ""
    try:
        return audit_cache.probabilities(ws, dataset, task, judge, definition, ks, source)
    except (WorkbenchError, ValueError, OSError) as exc:
        st.warning(safe("No verdict probabilities from {s}: {e}", s=_label(source), e=str(exc)), icon=":material/warning:")
        return None, ""


def uncertain_section(probs: pl.DataFrame, ks: list[int | None], source: str) -> None:
    """How many restaurants' verdicts are uncertain at each K, in one line and a small table."""
    counts = uncertain_by_k(probs, ks)
    st.caption(safe("Verdict probability from {s}: ", s=_label(source)) + " · ".join(
        f"K={r['K']}: **{r['uncertain']}** of {r['restaurants']} uncertain" for r in counts.iter_rows(named=True))
        + ". Paler cells are less sure; P(verdict) is in the table below and on hover.")


def _values_table(field: dict[str, Any]) -> pl.DataFrame:
    def ci(v: dict[str, Any], name: str) -> str:
        if v[name] is None:
            return "—"
        return f"{v[name]:.3f} [{v[name + '_low']:.3f}, {v[name + '_high']:.3f}]"

    return pl.DataFrame([{"value": v["value"], "judged": v["judged"], "precision [95% CI]": ci(v, "precision"),
                          "human": v["true"], "recall [95% CI]": ci(v, "recall")} for v in field["per_value"]])


def _matrix(field: dict[str, Any]) -> pl.DataFrame:
    values = field["values"]
    return pl.DataFrame([{"judged ↓ / human →": j, **{t: field["matrix"][a][b] for b, t in enumerate(values)}}
                         for a, j in enumerate(values)])


def audit_report_section(ws: Workspace, dataset: str, task: str) -> None:
    """The chosen audit's report: per judge and field, the confusion, precision and recall with
    Wilson intervals, Cohen's κ, and the judge's confusion file to download."""
    audits = [s.partition(":")[2] for s in audit_cache.sources(ws, dataset, task) if s.startswith("audit:")]
    st.subheader("Judges against a human audit")
    if not audits:
        st.caption(safe("No judge audit of {d}/{t} yet: plan one below (or with `python -m core audit plan`); "
                        "raters answer its reviews on the Labeling page.", d=dataset, t=task))
        return
    if st.session_state.get(K_AUDIT) not in audits:
        st.session_state[K_AUDIT] = audits[0]
    name = st.selectbox("Audit", audits, key=K_AUDIT)
    try:
        report = audit_cache.audit_report(ws, dataset, task, name)
    except (WorkbenchError, ValueError) as exc:
        st.error(str(exc))
        return
    c = report["consensus"]
    st.caption(safe("{n} reviews sampled for {j} (target 95% interval width {t}); consensus on {a}, {w} field(s) "
                    "await adjudication. Reviews weigh 1 / their inclusion probability; intervals are Wilson's at the "
                    "effective sample size.", n=report["items"], j=report["planned_for"], t=report["target"],
                    a=c["items"], w=c["needs_adjudication"]))
    for judge in report["judges"]:
        with st.expander(safe("{j}: {n} audited reviews", j=judge["judge"], n=judge["reviews"]),
                         expanded=judge["judge"] == report["planned_for"]):
            for field in judge["fields"]:
                kappa = "—" if field["kappa"] is None else f"{field['kappa']:.3f}"
                st.markdown(safe("**{f}** · n = {n} · Cohen's κ {k}", f=field["field"], n=field["n"], k=kappa))
                # one under the other: side by side, a four-value confusion was cut off at its right edge
                st.dataframe(_matrix(field), hide_index=True, width="stretch")
                st.dataframe(_values_table(field), hide_index=True, width="stretch")
                if field["unaudited"]:
                    st.caption(safe("Never judged or never agreed on here (taken as certain by the confusion file): "
                                    "{v}", v=", ".join(field["unaudited"])))
            if judge["confusion"]:
                payload = json.dumps(judge["confusion"], indent=2).encode("utf-8")
                hosting.download_button(st, f"Download {judge['judge']}'s confusion file", functools.partial(bytes, payload),
                                        file_name=f"confusion-{name}-{judge['judge']}.json", mime="application/json",
                                        key=f"gt.audit_confusion.{judge['judge']}", icon=":material/download:")

"""Page glue of the Ground truth page's "Plan a judge audit" form (issue 28): the same plan as
``python -m core audit plan`` (knife-edge reviews first, then each stratum of the judge's answers,
as many as a 95 % Wilson interval of the target width needs per judged value), previewed, then
created as the labeling project raters answer on the Labeling page.

Creating a project writes into the label store: refused in the read-only demo, admin-only in a
team deployment (:func:`core.ui.hosting.admin_refusal`)."""

from __future__ import annotations

from typing import Any

import polars as pl
import streamlit as st

from core.base.errors import WorkbenchError
from core.ground_truth import k_label, normalize_ks
from core.ui import hosting
from core.ui.text import safe
from core.workspace import Workspace, check_name

K_JUDGE, K_K, K_TARGET, K_RATERS, K_NAME = ("gt.audit_plan.judge", "gt.audit_plan.k", "gt.audit_plan.target",
                                            "gt.audit_plan.raters", "gt.audit_plan.name")
K_PREVIEW, K_CREATED, K_ERROR = "gt.audit_plan.preview", "gt.audit_plan.created", "gt.audit_plan.error"


def _plan(ws: Workspace, dataset: str, task: str) -> Any:
    """The plan of the form's current values (deterministic: seed 0, as the CLI's default)."""
    # deferred: the knife-edge search and the label store (~400 ms), only when a plan is asked for
    from core.ground_truth.audit.project import plan_audit_ws

    ks = normalize_ks(str(st.session_state[K_K]))
    if len(ks) != 1:
        raise ValueError(f"an audit plan takes one K, got {st.session_state[K_K]!r}")
    return plan_audit_ws(ws, dataset, task, st.session_state[K_JUDGE], k=ks[0],
                         target=float(st.session_state[K_TARGET]))


def _summary(plan: Any, raters: int) -> dict[str, Any]:
    knife = sum(1 for s in plan.sample.values() if s["knife_edge"])
    rows = [{"field": str(m["field"]).replace("_", " "), "judged value": m["value"], "reviews judged so": m["reviews"],
             "in the sample": m["sample"], "effective n": round(m["n_eff"], 1),
             "95% width at p = ½": None if m["width_at_half"] is None else round(m["width_at_half"], 3),
             "census": bool(m["census"])} for m in plan.marginals]
    return {"judge": plan.judge, "definition": plan.definition, "k": plan.k, "target": plan.target,
            "reviews": plan.size, "population": plan.population, "knife": knife, "needed": plan.needed,
            "raters": raters, "rows": rows, "notes": list(plan.notes)}


def _show(summary: dict[str, Any]) -> None:
    st.markdown(safe("**{n}** of {p} judged reviews for raters ({r} per review, {a} answers in all); {e} are "
                     "knife-edge reviews under {d} at K={k} and come first. Target: each judged value's 95% Wilson "
                     "interval at most {t} wide, i.e. an effective n of at least {m}.",
                     n=summary["reviews"], p=summary["population"], r=summary["raters"],
                     a=summary["reviews"] * summary["raters"], e=summary["knife"], d=summary["definition"],
                     k=k_label(summary["k"]), t=summary["target"], m=summary["needed"]))
    st.dataframe(pl.DataFrame(summary["rows"]), hide_index=True, width="stretch")
    for note in summary["notes"]:
        st.caption(safe("{n}", n=note))


def _create(ws: Workspace, dataset: str, task: str) -> None:
    # deferred: the label store (sqlalchemy, ~350 ms)
    from core.ground_truth.audit.project import create_audit
    from core.labeling.store import open_store

    name = str(st.session_state[K_NAME]).strip()
    check_name("project", name)
    plan = _plan(ws, dataset, task)
    create_audit(open_store(ws.root), ws, plan, name, raters=int(st.session_state[K_RATERS]))
    st.session_state[K_CREATED] = (name, plan.size)
    st.session_state.pop(K_PREVIEW, None)


def plan_section(ws: Workspace, dataset: str, task: str, judges: list[str]) -> None:
    """The form: judge, K of the knife-edge search, target width, raters, project name; Preview shows
    the sample sizes per judged value, Create makes the labeling project."""
    busy = any(k in st.session_state for k in (K_PREVIEW, K_CREATED, K_ERROR))  # keep open what it answers
    with st.expander("Plan a judge audit", expanded=busy, icon=":material/fact_check:"):
        if not judges:
            st.caption("No judgments of this task yet: judge the dataset first (Judging tab).")
            return
        if st.session_state.get(K_JUDGE) not in judges:
            st.session_state[K_JUDGE] = judges[0]
        st.session_state.setdefault(K_K, "25")
        st.session_state.setdefault(K_TARGET, 0.05)
        st.session_state.setdefault(K_RATERS, 2)
        st.session_state.setdefault(K_NAME, f"audit-{st.session_state[K_JUDGE]}-{dataset}")
        st.caption("Raters answer the judge's questions for a sample of reviews, blind to the judge's answers; the "
                   "report above then measures every judge against their consensus, and the Restaurant × K tab "
                   "carries that error into each verdict's probability. Same plan as `python -m core audit plan`.")
        a, b, c, d = st.columns([2, 1, 1, 1])
        a.selectbox("Judge to audit", judges, key=K_JUDGE)
        b.text_input("K of the knife-edge search", key=K_K, help="The K whose knife-edge reviews (the fewest "
                     "judgment changes that flip a verdict) are sampled first; 'all' for every review.")
        c.number_input("Target 95% interval width", min_value=0.01, max_value=1.0, step=0.01, key=K_TARGET)
        d.number_input("Raters per review", min_value=1, max_value=3, step=1, key=K_RATERS)
        st.text_input("Labeling project name", key=K_NAME)
        refusal = hosting.admin_refusal(ws, "create a judge audit")
        left, right = st.columns(2)
        if left.button("Preview the plan", key="gt.audit_plan.preview_btn", icon=":material/preview:"):
            try:
                st.session_state[K_PREVIEW] = _summary(_plan(ws, dataset, task), int(st.session_state[K_RATERS]))
            except (WorkbenchError, ValueError) as exc:
                st.error(safe("No plan: {e}", e=str(exc)))
        right.button("Create the audit project", key="gt.audit_plan.create_btn", type="primary",
                     disabled=bool(refusal), help=refusal, icon=":material/add_task:",
                     on_click=hosting.guarded(_create_clicked), args=(ws, dataset, task))
        if refusal:
            st.caption(refusal)
        created, error = st.session_state.get(K_CREATED), st.session_state.pop(K_ERROR, None)
        if error:
            st.error(safe("Not created: {e}", e=error), icon=":material/error:")
        elif created:
            st.success(safe("Created the audit project {p} with {n} reviews: raters answer them on the Labeling page "
                            "(project {p}).", p=created[0], n=created[1]), icon=":material/check:")
        elif K_PREVIEW in st.session_state:
            _show(st.session_state[K_PREVIEW])


def _create_clicked(ws: Workspace, dataset: str, task: str) -> None:
    refusal = hosting.admin_refusal(ws, "create a judge audit")
    try:
        if refusal:
            raise ValueError(refusal)
        _create(ws, dataset, task)
    except (WorkbenchError, ValueError) as exc:
        st.session_state.pop(K_CREATED, None)
        st.session_state[K_ERROR] = str(exc)

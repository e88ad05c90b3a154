"""Page glue of judging as a background job (the Ground truth page's Judging tab).

The page never judges in its own script: the index-and-judge button starts a ``judge`` job
(:mod:`core.judgments.judges.job`), a process of its own that keeps going when the tab closes. Any session
shows the newest job of its dataset/task from the job record: a progress bar while it runs (polled
by a fragment), then its outcome; cancel and resume act on the record. Resuming or cancelling a
job that calls the paid OpenAI-compatible judge needs the same right as starting one
(:func:`core.ui.paid.paid_refusal`), and resuming it shows the remaining cost for confirmation.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from core.base.errors import WorkbenchError
from core.ground_truth import views as gt_views
from core.jobs import cancel_job, list_jobs, resume_job, start_job
from core.judgments.judges.job import JOB_KIND
from core.ui.paid import cost_line, paid_refusal
from core.ui.text import safe
from core.workspace import Workspace

ACTIVE = ("starting", "running", "cancelling")
POLL_SECONDS = 1.0
K_WATCHED, K_RESUME_PREFLIGHT = "gt.job.watched", "gt.job.resume_preflight"


def start(ws: Workspace, dataset: str, task: str, *, use_openai: bool) -> dict[str, Any]:
    """Start judging ``dataset``/``task`` as a background job; returns its record."""
    who = "OpenAI-compatible judge" if use_openai else "offline judge"
    record = start_job(ws, JOB_KIND, {"dataset": dataset, "task": task, "use_openai": use_openai},
                       label=f"{dataset}/{task} · {who}")
    st.session_state[K_WATCHED] = record["job_id"]
    return record


def latest(ws: Workspace, dataset: str, task: str) -> dict[str, Any] | None:
    """The newest judge job of ``dataset``/``task`` (any session's), or None."""
    for job in list_jobs(ws, JOB_KIND):
        args = job.get("args") or {}
        if args.get("dataset") == dataset and args.get("task") == task:
            return job
    return None


def busy(ws: Workspace, dataset: str, task: str) -> bool:
    """True while a judge job of ``dataset``/``task`` is starting, running or cancelling."""
    job = latest(ws, dataset, task)
    return bool(job and job["status"] in ACTIVE)


def panel(ws: Workspace, dataset: str, task: str) -> None:
    """The newest judge job of this dataset/task: live progress with Cancel, or its outcome with Resume."""
    job = latest(ws, dataset, task)
    if job is None:
        return
    live = st.fragment(_panel, run_every=POLL_SECONDS if job["status"] in ACTIVE else None)
    live(ws, dataset, task)


def _panel(ws: Workspace, dataset: str, task: str) -> None:
    job = latest(ws, dataset, task)
    if job is None:
        return
    if job["status"] in ACTIVE:
        st.session_state[K_WATCHED] = job["job_id"]
        _running(ws, job)
        return
    if st.session_state.get(K_WATCHED) == job["job_id"]:  # it ended while this session watched:
        st.session_state.pop(K_WATCHED)  # redraw the whole page (judging status, GT) from the new judgments
        st.rerun(scope="app")
    _outcome(ws, job)


def _running(ws: Workspace, job: dict[str, Any]) -> None:
    p = job.get("progress") or {}
    done, total = int(p.get("done") or 0), int(p.get("total") or 0)
    state = "cancelling (storing the answers in flight)" if job["status"] == "cancelling" else job["status"]
    message = str(p.get("message") or "").removeprefix("judging: ")
    text = safe("Judging job {label}: {state} — {done}/{total} reviews{sep}{message}", label=job.get("label") or "",
                state=state, done=f"{done:,}", total=f"{total:,}", sep=" · " if message else "", message=message)
    left, right = st.columns([5, 1], vertical_alignment="center")
    left.progress(min(1.0, done / total) if total else 0.0, text=text)
    left.caption("Runs in its own process: you may close this tab; any session shows its progress here. The "
                 "counts above are as of the page load and refresh when the job ends.")
    refusal = _refusal(ws, job)
    if right.button("Cancel", key="gt.job.cancel", disabled=job["status"] == "cancelling" or bool(refusal),
                    help=refusal or "Stop sending reviews; the answers in flight are stored. Resume continues."):
        cancel_job(ws, job["job_id"])
        st.rerun(scope="app")


def _outcome(ws: Workspace, job: dict[str, Any]) -> None:
    when = str(job.get("updated_at") or "")[:16].replace("T", " ")
    result = job.get("result") or {}
    if job["status"] == "finished":
        st.success(safe("{judge}: judged {judged} reviews ({errors} parse errors, {failures} failures, {skipped} "
                        "already judged) in {seconds} s{index} · job finished {when} UTC",
                        judge=result.get("judge", ""), judged=f"{result.get('judged', 0):,}",
                        errors=result.get("parse_errors", 0), failures=result.get("failures", 0),
                        skipped=f"{result.get('skipped_already_judged', 0):,}", seconds=f"{float(result.get('seconds') or 0):.1f}",
                        index=" · keyword index built" if result.get("index_built") else "", when=when))
        return
    if job["status"] == "failed":
        st.error(safe("Judging job {label} failed at {when} UTC: {error}", label=job.get("label") or "", when=when,
                      error=job.get("error") or "unknown error"))
    else:
        p = job.get("progress") or {}
        st.warning(safe("Judging job {label} was {status} at {when} UTC after {done} of {total} reviews. Resume "
                        "continues with the reviews not judged yet (no finished judgment is asked again).",
                        label=job.get("label") or "", status=job["status"], when=when,
                        done=f"{int(p.get('done') or 0):,}", total=f"{int(p.get('total') or 0):,}"))
    _resume(ws, job)


def _refusal(ws: Workspace, job: dict[str, Any]) -> str | None:
    """Why this session may not act on a paid job (None for an offline job or an allowed user)."""
    return paid_refusal(ws) if (job.get("args") or {}).get("use_openai") else None


def _resume(ws: Workspace, job: dict[str, Any]) -> None:
    refusal = _refusal(ws, job)
    if refusal:
        st.button("Resume", key="gt.job.resume", disabled=True)
        st.warning(refusal, icon=":material/lock:")
        return
    paid = bool((job.get("args") or {}).get("use_openai"))
    if not st.button("Resume…" if paid else "Resume", key="gt.job.resume"):
        pre = st.session_state.get(K_RESUME_PREFLIGHT)
        if paid and pre and pre.get("job_id") == job["job_id"]:
            _confirm_resume(ws, job, pre)
        return
    if not paid:
        _do_resume(ws, job)
        return
    args = job["args"]
    try:
        st.session_state[K_RESUME_PREFLIGHT] = {"job_id": job["job_id"],
                                                **gt_views.openai_preflight(ws, args["dataset"], args["task"])}
    except (WorkbenchError, ValueError) as exc:
        st.error(str(exc))
        return
    _confirm_resume(ws, job, st.session_state[K_RESUME_PREFLIGHT])


def _confirm_resume(ws: Workspace, job: dict[str, Any], pre: dict[str, Any]) -> None:
    with st.container(border=True):
        st.markdown(safe("**Confirm resuming a paid run** with {model}: ", model=pre["model"]) + cost_line(pre))
        a, b = st.columns(2)
        if a.button("Confirm and resume", key="gt.job.resume_confirm", type="primary", disabled=not pre["to_judge"]):
            st.session_state.pop(K_RESUME_PREFLIGHT, None)
            _do_resume(ws, job)
        b.button("Cancel", key="gt.job.resume_cancel", on_click=lambda: st.session_state.pop(K_RESUME_PREFLIGHT, None))


def _do_resume(ws: Workspace, job: dict[str, Any]) -> None:
    try:
        resume_job(ws, job["job_id"])
    except WorkbenchError as exc:
        st.error(str(exc))
        return
    st.session_state[K_WATCHED] = job["job_id"]
    st.rerun(scope="app")

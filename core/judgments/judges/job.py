"""The ``judge`` background job kind: build the keyword index if needed, then judge (core.jobs).

:func:`run_index_and_judge` is the Ground truth page's one-button run: it builds the keyword index
when it is missing or stale and judges every matched review the judge has not judged yet. Started
as a job (``start_job(ws, "judge", {"dataset", "task", "use_openai"})``) it runs in its own
process, so it survives the tab that started it; its progress goes to the job record, a cancel
stops sending new reviews (the calls in flight are stored), and a resume plans again from the
judgment log, which skips every finished judgment (:func:`core.judgments.judges.runner.plan_judging`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from core.base.progress import Progress, no_progress
from core.base.settings import require_writable
from core.jobs import JOB_KINDS, JobKind, Report, ShouldStop
from core.judgments.judges.base import make_judge
from core.judgments.judges.runner import execute_judging, plan_judging
from core.llm import workspace_cache
from core.llm.budget import default_cap
from core.tasks import get_task
from core.tasks.keyword_index import build_index, index_stats
from core.workspace import Workspace

JOB_KIND = "judge"


def offline_judge_kind(spec: Any) -> str:
    """The offline judge of a task: heuristic-v2 for G1a, the cue judge for a task whose fields list
    cues (the demo's G1_diet and G2_meetings, imported ADDM topics)."""
    return "cues" if spec.task_id != "G1a" and any(f.cues for f in spec.fields) else "heuristic-v2"


def run_index_and_judge(ws: Workspace, dataset: str, task: str, *, use_openai: bool = False,
                        progress: Progress | None = None, stop: Callable[[], bool] | None = None) -> dict[str, Any]:
    """Build the keyword index when it is missing or stale, then judge every matched review not
    judged yet (the task's offline judge: :func:`offline_judge_kind`, or the configured
    OpenAI-compatible model). Returns a report; ``stop`` ends it early (``cancelled`` in the report).

    Raises:
        WorkbenchError: dataset missing or changed, or no model configured for ``use_openai``.
    """
    progress = progress or no_progress
    spec = get_task(task, ws)
    stats = index_stats(ws, dataset)
    built = None
    if not (stats and stats.get("current") and task in stats.get("tasks", {})):
        progress(0, 1, "building the keyword index")
        built = build_index(ws, dataset, progress=lambda d, t, m: progress(d, t, f"index: {m}"))
    if use_openai:
        judge = make_judge("openai", spec, cache=workspace_cache(ws))
    else:
        judge = make_judge(offline_judge_kind(spec), spec)
    plan = plan_judging(ws, dataset, spec.task_id, judge, resume=True)
    cap = default_cap(ws) if use_openai else None  # the workspace's cap holds for a job launched from a page too
    report = execute_judging(plan, judge, progress=lambda d, t, m: progress(d, t, f"judging: {m}"), stop=stop,
                             max_cost=cap)
    return {"index_built": built is not None, "judge": judge.judge_id, **report.as_dict(), "plan": plan.as_dict()}


def judge_job(ws: Workspace, args: dict[str, Any], report: Report, should_stop: ShouldStop) -> dict[str, Any]:
    """args: ``{"dataset": ..., "task": ..., "use_openai": bool}``; progress ``{done, total, message}``."""
    def progress(done: int, total: int, message: str = "") -> None:
        report({"done": done, "total": total, "message": message})

    result = run_index_and_judge(ws, str(args["dataset"]), str(args["task"]), use_openai=bool(args.get("use_openai")),
                                 progress=progress, stop=should_stop)
    report({"done": result["judged"], "total": result["planned"], "message": "cancelled" if result["cancelled"]
            else "finished", "final": True})
    return {**result, "status": "cancelled" if result["cancelled"] else "finished"}


def admit_judging(ws: Workspace, args: dict[str, Any]) -> None:
    """Judging writes judgments into the workspace: a read-only demo refuses it before the job
    record is written (ReadOnlyError)."""
    require_writable("judge reviews")


JOB_KINDS.add(JobKind(JOB_KIND, "build the keyword index if needed, then judge the unjudged matched reviews", judge_job,
                      admit=admit_judging))

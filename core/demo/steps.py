"""What the demo workspace holds beyond the dataset: its own tasks and policies, keyword index,
offline judgments, GT files.

Each step is ``step(ws, *, seed, progress)`` and runs after the import (``DEMO_STEPS``).
"""

from __future__ import annotations

from pathlib import Path

from core.base.files import remove_tree, write_text_atomic
from core.base.progress import Progress, no_progress
from core.gold.demo import write_demo_gold
from core.ground_truth.export import export_gt
from core.ground_truth.lineage import lineages_by_k
from core.tasks import get_task
from core.workspace import Workspace

DEMO_DATASET = "demo"
DEMO_TASK = "G1a"
DEMO_KS = (25, 50, 100, 200)
# The GT files written at generation time: formulas in the xnot layout, policies in ADDM's.
DEMO_GT_DEFINITIONS = ("v1", "v2", "G1_allergy_V2")
# The project's own demo tasks (workspace tasks/ and policies/), judged by the offline cue judge.
DEMO_TOPIC_TASKS = ("G1_diet", "G2_meetings")
DEMO_TOPIC_GT = {"G1_diet": ("G1_diet_V1", "G1_diet_V2"), "G2_meetings": ("G2_meetings_V1", "G2_meetings_V2")}
TASK_DATA = Path(__file__).resolve().parent / "task_data"


def tasks_step(ws: Workspace, *, seed: int, progress: Progress | None = None) -> None:
    """Install the demo's own tasks and policies (``core/demo/task_data``) into the workspace."""
    for kind in ("tasks", "policies"):
        for path in sorted((TASK_DATA / kind).glob("*.yaml")):
            write_text_atomic(ws.root / kind / path.name, path.read_text(encoding="utf-8"))


def index_step(ws: Workspace, *, seed: int, progress: Progress | None = None) -> None:
    """Build the keyword index of every task over the demo reviews."""
    # deferred: core.tasks.keyword_index pulls in pandas (~500 ms), only needed when index_step() runs
    from core.tasks.keyword_index import build_index

    build_index(ws, DEMO_DATASET, progress=progress or no_progress)


def judge_step(ws: Workspace, *, seed: int, progress: Progress | None = None) -> None:
    """Judge the keyword-matched reviews with both offline heuristic judges (v1 kept for the
    "Compare judges" view) and make heuristic-v2 the GT judge."""
    # deferred: core.judgments.judges and core.judgments pull in pandas (~500 ms), only needed when judge_step() runs
    from core.judgments import set_gt_judge
    from core.judgments.judges import execute_judging, make_judge, plan_judging

    for kind in ("heuristic", "heuristic-v2"):
        judge = make_judge(kind, get_task(DEMO_TASK, ws))
        plan = plan_judging(ws, DEMO_DATASET, DEMO_TASK, judge)
        execute_judging(plan, judge, progress=progress or no_progress)
    set_gt_judge(ws, DEMO_DATASET, DEMO_TASK, judge.judge_id)
    for task in DEMO_TOPIC_TASKS:
        cues = make_judge("cues", get_task(task, ws))
        execute_judging(plan_judging(ws, DEMO_DATASET, task, cues), cues, progress=progress or no_progress)
        set_gt_judge(ws, DEMO_DATASET, task, cues.judge_id)


def gt_step(ws: Workspace, *, seed: int, progress: Progress | None = None) -> None:
    """Write GT files for K = 25/50/100/200 of each demo definition under ``gt/demo/{task}/``."""
    progress = progress or no_progress
    jobs = [(DEMO_TASK, d) for d in DEMO_GT_DEFINITIONS] + [(t, d) for t, ds in DEMO_TOPIC_GT.items() for d in ds]
    for i, (task, definition) in enumerate(jobs):
        progress(i, len(jobs), f"GT {definition}")
        export_gt(ws, DEMO_DATASET, task, definition, list(DEMO_KS),
                  lineages=lineages_by_k(ws, DEMO_DATASET, task, definition, list(DEMO_KS)))
    progress(len(jobs), len(jobs), "GT written")


def labels_step(ws: Workspace, *, seed: int, progress: Progress | None = None) -> None:
    """A labeling project with synthetic items and ratings from three demo raters."""
    # deferred: core.labeling.demo pulls in sqlalchemy (~350 ms), only needed when labels_step() runs
    from core.labeling.demo import seed_demo_labels

    seed_demo_labels(ws, seed=seed, progress=progress or no_progress)


def study_step(ws: Workspace, *, seed: int, progress: Progress | None = None) -> None:
    """The perspective study on a small grid: offline answers, a trained scorer, a scored run and a
    blinded audit rated by the demo raters (see :mod:`core.study.demo`)."""
    # deferred: core.study.demo pulls in sqlalchemy (~350 ms), only needed when study_step() runs
    from core.study.demo import seed_study_demo

    seed_study_demo(ws, seed=seed, progress=progress or no_progress)


def gold_step(ws: Workspace, *, seed: int, progress: Progress | None = None) -> None:
    """The demo gold set (Norwegian glossary questions), the offline model's answers and three reports."""
    write_demo_gold(ws, progress=progress or no_progress)


# Runs made at generation time (offline model and baselines; ids "demo-{method}-K{k}").
DEMO_RUN_POLICY = "G1_allergy_V2"
DEMO_RUNS: tuple[tuple[str, tuple[int, ...]], ...] = (
    ("amos", DEMO_KS), ("keyword", DEMO_KS), ("random", (25, 200)), ("direct", (25,)),
)
DEMO_RUN_BOOT = 200  # bootstrap resamples of the demo runs' intervals (a run's default is 1,000)


def runs_step(ws: Workspace, *, seed: int, progress: Progress | None = None) -> None:
    """Method runs with the offline heuristic model and the baselines, scored against the GT files."""
    # deferred: core.methods and core.runs pull in pandas (~500 ms), only needed when runs_step() runs
    from core.methods import make_model
    from core.runs import RunConfig, execute_run, plan_run

    progress = progress or no_progress
    jobs = [(method, k) for method, ks in DEMO_RUNS for k in ks]
    for i, (method, k) in enumerate(jobs):
        progress(i, len(jobs), f"run {method} K={k}")
        run_id = f"demo-{method}-K{k}"
        remove_tree(ws.runs_dir / run_id)  # a regenerated demo replaces its runs (a link is removed, not followed)
        config = RunConfig(dataset=DEMO_DATASET, task=DEMO_TASK, policy=DEMO_RUN_POLICY, method=method, k=k,
                           seed=seed, run_id=run_id, options={"n_boot": DEMO_RUN_BOOT})
        execute_run(plan_run(config, ws), make_model(config.model, ws), durable=False)  # rebuilt, not resumed
    progress(len(jobs), len(jobs), "runs written")

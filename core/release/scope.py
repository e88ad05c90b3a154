"""What a release holds: its datasets, runs, ground truths (task × definition × K) and baseline.

:func:`choose_scope` picks them from a workspace (``--datasets``, ``--runs`` or everything); the
scope is written into the release (``release.json``) so that ``release verify`` recomputes the same
figures from the data the release carries.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from core.base.errors import UnknownNameError, WorkbenchError
from core.ground_truth import list_gt_files
from core.ground_truth.ks import normalize_ks
from core.ground_truth.views import definitions as task_definitions
from core.judgments import get_gt_judge, list_judges
from core.runs.records import load_results, read_record, run_dirs
from core.tasks import task_ids
from core.workspace import Workspace, check_name

DEFAULT_KS: tuple[int, ...] = (25, 50, 100, 200)
# The run a group's other runs are compared with: the first method of this list present in the group.
BASELINE_METHODS = ("direct", "cot", "rag", "keyword", "random", "amos")


@dataclass(frozen=True)
class GTScope:
    """The ground truths of one dataset and task in a release: its GT judge, definitions and K."""

    dataset: str
    task: str
    judge: str
    definitions: tuple[str, ...]
    ks: tuple[int | None, ...]


@dataclass(frozen=True)
class Scope:
    """Everything a release shows, by name."""

    title: str
    datasets: tuple[str, ...]
    runs: tuple[str, ...]
    gts: tuple[GTScope, ...]
    baseline: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form (``release.json``)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Scope:
        """The scope written by :meth:`as_dict` (names checked: they become paths)."""
        gts = tuple(GTScope(check_name("dataset", g["dataset"]), check_name("task", g["task"]), str(g["judge"]),
                            tuple(str(d) for d in g["definitions"]), tuple(normalize_ks(list(g["ks"]))))
                    for g in data.get("gts") or [])
        return cls(str(data.get("title") or ""), tuple(check_name("dataset", d) for d in data.get("datasets") or []),
                   tuple(check_name("run", r) for r in data.get("runs") or []), gts, data.get("baseline"))


def run_dataset(ws: Workspace, run_id: str) -> str | None:
    """The dataset a run was made on (its config), or None."""
    folder = ws.run_dir(run_id)
    config = (read_record(folder / "config.json") or {}).get("config") or {}
    if not config:
        config = load_results(folder).get("config") or {}
    dataset = config.get("dataset")
    return str(dataset) if dataset else None


def _runs(ws: Workspace, runs: Sequence[str] | None, datasets: Sequence[str] | None) -> list[str]:
    have = [p.name for p in run_dirs(ws.runs_dir)]
    if runs:
        for r in runs:
            if check_name("run", r) not in have:
                raise UnknownNameError("scored run", r, have)
        return sorted(runs)
    if datasets is None:
        return sorted(have)
    return sorted(r for r in have if run_dataset(ws, r) in datasets)


def _definitions(ws: Workspace, dataset: str, task: str, run_policies: set[str],
                 gt_files: Sequence[Mapping[str, Any]]) -> tuple[str, ...]:
    """The definitions whose GT a release shows: those of the workspace's GT files and of its runs
    (in the task's own order), else the task's first definition."""
    known = task_definitions(task, ws)
    named = set(run_policies)
    for entry in gt_files:
        if entry.get("dataset") in (None, dataset) and entry.get("definition"):  # a definition names its task
            named.add(str(entry["definition"]).split("+")[0])
    chosen = tuple(d for d in known if d in named)
    return chosen or tuple(known[:1])


@dataclass(frozen=True)
class RunFacts:
    """What the scope needs of a run (read once: a run's results.json can be tens of MB)."""

    dataset: str | None
    task: str | None
    policy: str | None
    k: int | None


def run_facts(ws: Workspace, run_id: str) -> RunFacts:
    """The dataset, task, policy and K of a run."""
    res = load_results(ws.run_dir(run_id))
    config = (read_record(ws.run_dir(run_id) / "config.json") or {}).get("config") or res.get("config") or {}
    k = res.get("k")
    return RunFacts(str(config["dataset"]) if config.get("dataset") else None, res.get("task_id"),
                    None if res.get("policy_id") is None else str(res.get("policy_id")), k if isinstance(k, int) else None)


def _ks(facts: Mapping[str, RunFacts], dataset: str, task: str,
        asked: Sequence[int | None] | None) -> tuple[int | None, ...]:
    if asked:
        return tuple(normalize_ks(list(asked)))
    ks: set[int | None] = set(DEFAULT_KS)
    ks |= {f.k for f in facts.values() if f.task == task and f.dataset == dataset and f.k is not None}
    return tuple(sorted(k for k in ks if k is not None))


def choose_scope(ws: Workspace, *, datasets: Sequence[str] | None = None, runs: Sequence[str] | None = None,
                 title: str | None = None, ks: Sequence[int | None] | None = None, baseline: str | None = None) -> Scope:
    """The scope of a release of ``ws``: the datasets asked for (default: every one), the runs asked
    for (default: every scored run on those datasets) and the datasets those runs need, and for each
    dataset every task that has a GT judge, with its definitions and K."""
    have = ws.datasets()
    for d in datasets or []:
        if d not in have:
            raise UnknownNameError("dataset", d, have)
    chosen_runs = _runs(ws, runs, datasets)
    facts = {r: run_facts(ws, r) for r in chosen_runs}
    names = set(datasets or ([] if runs else have))
    names |= {f.dataset for f in facts.values() if f.dataset}
    missing = sorted(names - set(have))
    if missing:
        raise WorkbenchError(f"runs name datasets that are not in {ws.root}: {', '.join(missing)}")
    if baseline is not None and baseline not in chosen_runs:
        raise UnknownNameError("run in this release", baseline, chosen_runs)
    gts = []
    gt_files = list_gt_files(ws)  # read once: GT files of a large dataset are MBs each
    for dataset in sorted(names):
        for task in task_ids(ws):
            judge = get_gt_judge(ws, dataset, task) if list_judges(ws, dataset, task) else None
            if judge is None:
                continue
            policies = {str(f.policy) for f in facts.values() if f.dataset == dataset and f.task == task}
            defs = _definitions(ws, dataset, task, policies, gt_files)
            gts.append(GTScope(dataset, task, judge, defs, _ks(facts, dataset, task, ks)))
    if not gts and not chosen_runs:
        raise WorkbenchError(f"nothing to release in {ws.root}: no judged dataset and no scored run")
    return Scope(title or f"Benchmark release of {ws.root.name}", tuple(sorted(names)), tuple(chosen_runs),
                 tuple(gts), baseline)

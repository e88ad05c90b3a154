"""The data a release carries, laid out as a workspace of its own (``DIR/data/``).

```
data/workspace.json
data/datasets/{dataset}/restaurants.parquet, reviews.parquet, dataset.lock.json   byte copies: the lock still holds
data/judgments/{dataset}/{task}/{judge}.jsonl, _settings.json   every judge's log, the GT judge named
data/overrides/{dataset}/{task}.jsonl                 the human overrides (append-only log, reverts included)
data/tasks/*.yaml, data/policies/*.yaml               the workspace's own tasks and policies
data/gt/{dataset}/{task}/…                            GT files computed for the release (one per definition and K)
data/runs/{run_id}/results.json, gt.json, config.json the runs' answers and scores, and the GT each was scored against
```

Because it is a workspace, ``release verify`` and ``claim check`` recompute every figure from it
with the very functions the workbench uses on any workspace (GT from judgments and overrides,
scores from answers and GT). Nothing is rewritten on the way: each file is copied byte for byte.
"""

from __future__ import annotations

from pathlib import Path

from core.base.errors import WorkbenchError
from core.base.files import make_dirs, write_bytes_atomic, write_json_atomic
from core.datasets.lock import LOCK_NAME, TABLES, require_verified
from core.judgments import SETTINGS_FILE
from core.release.scope import Scope
from core.runs.records import CONFIG_FILE, GT_FILE, RESULTS_FILE, SPEC_FILE, load_results
from core.runs.rescore import lineage_of
from core.workspace import Workspace

DATA_DIR = "data"


def _copy(source: Path, target: Path) -> None:
    write_bytes_atomic(target, source.read_bytes())  # the release's data folder is a workspace: confined


def copy_dataset(ws: Workspace, data: Workspace, dataset: str) -> None:
    """The dataset's tables and lock, after checking the tables still match the lock."""
    require_verified(ws, dataset)
    for name in (*TABLES, LOCK_NAME):
        _copy(ws.dataset_dir(dataset) / name, data.dataset_dir(dataset) / name)


def copy_judgments(ws: Workspace, data: Workspace, dataset: str, task: str) -> None:
    """Every judge's log of one dataset/task (not the hidden columnar copies, not the resume logs),
    its settings (the GT judge) and the overrides log."""
    source = ws.judgments_dir(dataset, task)
    for path in sorted(source.glob("*.jsonl")):
        _copy(path, data.judgments_dir(dataset, task) / path.name)
    if (source / SETTINGS_FILE).exists():
        _copy(source / SETTINGS_FILE, data.judgments_dir(dataset, task) / SETTINGS_FILE)
    if ws.overrides_path(dataset, task).exists():
        _copy(ws.overrides_path(dataset, task), data.overrides_path(dataset, task))


def copy_definitions(ws: Workspace, data: Workspace) -> None:
    """The workspace's own tasks and policies (the built-in ones come with the workbench)."""
    for folder, target in ((ws.tasks_dir, data.tasks_dir), (ws.policies_dir, data.policies_dir)):
        for path in sorted(folder.glob("*.yaml")) if folder.is_dir() else []:
            _copy(path, target / path.name)


def copy_run(ws: Workspace, data: Workspace, run_id: str) -> None:
    """A run's results.json, config.json, spec.json and the GT it was scored against (``gt.json``;
    for a run that kept none, the GT file its lineage names, when that file is still the one it read)."""
    folder, target = ws.run_dir(run_id), data.run_dir(run_id)
    for name in (RESULTS_FILE, CONFIG_FILE, SPEC_FILE, GT_FILE):
        if (folder / name).exists():
            _copy(folder / name, target / name)
    if (target / GT_FILE).exists():
        return
    lineage = lineage_of(load_results(folder)) or {}
    if lineage.get("origin") in ("file", "imported"):
        path = Path(str(lineage.get("file")))
        path = path if path.is_absolute() else ws.root / path
        if not path.exists():
            raise WorkbenchError(f"run {run_id} was scored against the GT file {lineage.get('file')}, which is gone: "
                                 "rescore it (`runs rescore`) before releasing it")
        _copy(path, target / GT_FILE)


def write_data(ws: Workspace, scope: Scope, root: Path) -> Workspace:
    """Copy everything ``scope`` needs from ``ws`` into ``root`` (a new workspace); returns it."""
    data = Workspace(root)
    if root.exists():
        raise FileExistsError(f"{root} exists")
    make_dirs(root)
    write_json_atomic(root / "workspace.json", {"name": "release data", "format_version": 1})
    for dataset in scope.datasets:
        copy_dataset(ws, data, dataset)
    for gt in scope.gts:
        copy_judgments(ws, data, gt.dataset, gt.task)
    copy_definitions(ws, data)
    for run_id in scope.runs:
        copy_run(ws, data, run_id)
    return data

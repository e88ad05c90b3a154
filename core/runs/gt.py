"""The GT a run is scored against, with its lineage: computed from the workspace now (the default),
or a GT file (imported or exported) of the same task and K.

``run_gt(ws, dataset, task, policy, k, source)`` gives a :class:`RunGT`: the verdict of every
restaurant, the GT document itself (a computed GT in the ADDM layout, with ``lineage``; a file's
own content) and its lineage (:mod:`core.ground_truth.lineage`). The run keeps that document as
``runs/{run_id}/gt.json``, so its GT stays what it was when the workspace moves on, and
:func:`core.ground_truth.lineage.stale_reasons` can say what moved.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.base.errors import WorkbenchError
from core.base.files import json_document, read_json, sha256_file
from core.base.memo import stamped
from core.ground_truth.export import gt_frame_for_layout, gt_payload
from core.ground_truth.gt_files import LINEAGE_KEY, gt_records, load_gt_file, read_gt_file
from core.ground_truth.lineage import computed_lineage, file_lineage
from core.ground_truth.policies import Policy
from core.ground_truth.variants import resolve_definition
from core.judgments import get_gt_judge
from core.workspace import Workspace

COMPUTED = "computed"  # the source of a run's GT: computed from the workspace's judgments (the default)


@dataclass(frozen=True)
class RunGT:
    """A run's GT: verdicts by business_id, the document (what gt.json holds), its lineage."""

    verdicts: dict[str, str]
    document: dict[str, Any] | None
    lineage: dict[str, Any] | None
    warnings: tuple[str, ...] = ()
    file_bytes: bytes | None = field(default=None, repr=False)  # a GT file's own bytes, kept as they are

    @property
    def records(self) -> dict[str, dict[str, Any]] | None:
        """The GT as :func:`core.metrics.score_results` takes it (None: no GT)."""
        if self.document is None:
            return None
        return gt_records(self.document)

    def snapshot(self) -> bytes | None:
        """What ``runs/{run_id}/gt.json`` holds: a file's own bytes, or the computed document."""
        if self.file_bytes is not None:
            return self.file_bytes
        if self.document is None:
            return None
        return json_document(self.document)  # json.dumps(indent=2)'s bytes, by orjson (seconds at 150,000 restaurants)


def computed_gt(ws: Workspace, dataset: str, task: str, policy: Policy, k: int, *, judge: str | None = None) -> RunGT:
    """The GT of ``policy`` at ``k`` computed from the workspace's judgments and overrides now."""
    judge = judge or get_gt_judge(ws, dataset, task)
    if judge is None:
        return RunGT({}, None, None, (no_judgments(dataset, task),))
    lineage = computed_lineage(ws, dataset, task, resolve_definition(ws, policy.policy_id), k, judge=judge)
    frame = gt_frame_for_layout(ws, dataset, task, policy, [k], layout="addm", judge=judge)
    document = gt_payload(frame, layout="addm", task=task, k=k, policy=policy)
    document[LINEAGE_KEY] = lineage
    verdicts = {str(b): str(e["ground_truth"]["verdict"]) for b, e in document["restaurants"].items()}
    return RunGT(verdicts, document, lineage)


def no_judgments(dataset: str, task: str) -> str:
    """The warning of a run whose dataset has no judgments of its task (no computed GT)."""
    return (f"no judgments of task {task} in dataset {dataset}: samples get no GT "
            f"(judge the reviews first: `python -m core judge --dataset {dataset} --task {task}`)")


def gt_reference(ws: Workspace, dataset: str, task: str, policy: Policy, k: int,
                 source: str | None) -> tuple[dict[str, Any] | None, tuple[str, ...]]:
    """The lineage of the GT a run will be scored against, and its warnings, without computing the GT
    (milliseconds at 150,000 restaurants, where :func:`run_gt` takes seconds): the same version and
    words as :func:`run_gt`'s. A GT file's lineage leaves out the lineage the file carries inside
    (``computed_from``), which only the run reads."""
    if source in (None, COMPUTED):
        judge = get_gt_judge(ws, dataset, task)
        if judge is None:
            return None, (no_judgments(dataset, task),)
        return computed_lineage(ws, dataset, task, resolve_definition(ws, policy.policy_id), k, judge=judge), ()
    path = Path(str(source))
    if not path.is_absolute() and not path.exists():
        path = ws.root / path
    if not path.exists():
        raise WorkbenchError(f"no GT file {path}")
    sha = stamped(path, "sha256", lambda: sha256_file(path))  # kept beside a large file until it changes
    origin = "imported" if _is_imported(ws, path) else "file"
    return {"origin": origin, "version": sha[:16], "file": _shown(ws, path), "file_sha256": sha}, ()


def file_gt(ws: Workspace, path: str | Path, dataset: str, *, k: int | None = None) -> RunGT:
    """The GT of a file (xnot or ADDM layout; an xnot file's names matched to the dataset's ids)."""
    path = Path(path)
    if not path.is_absolute() and not path.exists():
        path = ws.root / path
    if not path.exists():
        raise WorkbenchError(f"no GT file {path}")
    from core.ground_truth import load_restaurants  # the dataset's ids for a file keyed by name

    document, _ = read_gt_file(path, ws)
    if k is not None and document.get("k") not in (None, k):
        raise WorkbenchError(f"the GT file {path.name} is for K={document.get('k')}, not K={k}")
    frame = load_gt_file(path, ws, restaurants=load_restaurants(ws, dataset).select("business_id", "name"))
    verdicts = {b: v for b, v in zip(frame["business_id"].to_list(), frame["verdict"].to_list(), strict=True) if b}
    origin = "imported" if _is_imported(ws, path) else "file"
    lineage = file_lineage(path, origin=origin, shown=_shown(ws, path), inner=document.get(LINEAGE_KEY))
    return RunGT(verdicts, document, lineage, file_bytes=path.read_bytes())


def run_gt(ws: Workspace, dataset: str, task: str, policy: Policy, k: int, source: str | None) -> RunGT:
    """The GT of a run: ``source`` None or "computed" computes it; anything else is a GT file path."""
    if source in (None, COMPUTED):
        return computed_gt(ws, dataset, task, policy, k)
    return file_gt(ws, str(source), dataset, k=k)


def snapshot_gt(folder: Path) -> dict[str, Any] | None:
    """The GT document a run kept (``gt.json``), or None."""
    path = folder / "gt.json"
    if not path.exists():
        return None
    data = read_json(path)
    return data if isinstance(data, dict) else None


def _is_imported(ws: Workspace, path: Path) -> bool:
    try:
        return path.resolve().is_relative_to((ws.gt_dir / "imported").resolve())
    except OSError:
        return False


def _shown(ws: Workspace, path: Path) -> str:
    """The path relative to the workspace when inside it, else as given."""
    try:
        return str(path.resolve().relative_to(ws.root.resolve()))
    except ValueError:
        return str(path)

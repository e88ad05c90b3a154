"""The workspace's record of Batch API jobs: ``judgments/{dataset}/{task}/batches.json``.

Kept apart from :mod:`core.judgments.judges.batch` (which submits and collects) so that the runner can skip
the reviews waiting in a batch without importing the batch machinery that itself uses the runner.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from core.base.errors import WorkbenchError
from core.base.files import read_json, write_json_atomic
from core.workspace import Workspace

BATCHES_FILE = "batches.json"
OPEN_STATUSES = ("validating", "in_progress", "finalizing", "cancelling")
CLOSED_STATUSES = ("failed", "expired", "cancelled")


def custom_id(row: dict[str, Any]) -> str:
    """The batch request id of a review: its key ``business_id:idx``."""
    return f"{row['business_id']}:{int(row['idx'])}"


def batches_path(ws: Workspace, dataset: str, task: str) -> Path:
    return ws.judgments_dir(dataset, task) / BATCHES_FILE


def read_batches(ws: Workspace, dataset: str, task: str) -> list[dict[str, Any]]:
    """Every batch submitted for this dataset/task (newest last)."""
    path = batches_path(ws, dataset, task)
    if not path.exists():
        return []
    data = read_json(path)
    return list(data.get("batches") or [])


def save_entry(ws: Workspace, dataset: str, task: str, entry: dict[str, Any]) -> None:
    entries = [e for e in read_batches(ws, dataset, task) if e["batch_id"] != entry["batch_id"]]
    entries.append(entry)
    write_json_atomic(batches_path(ws, dataset, task), {"batches": entries}, indent=1)


def is_pending(entry: dict[str, Any]) -> bool:
    """A batch whose results are not stored yet and may still come."""
    return not entry.get("collected") and entry.get("status") not in CLOSED_STATUSES


def pending_batch_keys(ws: Workspace, dataset: str, task: str, judge_id: str) -> set[tuple[str, int]]:
    """Review keys waiting in this judge's submitted, uncollected batches."""
    keys: set[tuple[str, int]] = set()
    for entry in read_batches(ws, dataset, task):
        if entry.get("judge") == judge_id and is_pending(entry):
            keys.update((r["business_id"], int(r["idx"])) for r in entry["requests"])
    return keys


def find_batch(ws: Workspace, batch_id: str) -> tuple[str, str, dict[str, Any]]:
    """(dataset, task, entry) of a batch recorded anywhere in the workspace."""
    for path in sorted((ws.root / "judgments").glob(f"*/*/{BATCHES_FILE}")):
        dataset, task = path.parent.parent.name, path.parent.name
        for entry in read_batches(ws, dataset, task):
            if entry["batch_id"] == batch_id:
                return dataset, task, entry
    raise WorkbenchError(f"batch {batch_id!r} is not recorded in {ws.root} (no judgments/*/*/{BATCHES_FILE} lists it)")

"""The GT files of a workspace, each with what a listing shows, or why it cannot be read.

Reading and checking a GT file of 150,000 restaurants takes seconds; a listing needs its summary
(:func:`core.ground_truth.gt_files.gt_facts`) or its error. Both are kept beside a large file
(:func:`core.base.memo.stamped`) until the file, or the policies it is checked against, change.
"""

from __future__ import annotations

import hashlib
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.base.errors import DataError
from core.base.files import read_json
from core.base.memo import stamped
from core.ground_truth.gt_files import META_SUFFIX, VARIANTS_DIR, gt_facts, listing_entry, read_gt_file
from core.ground_truth.policies.loader import policy_registry

if TYPE_CHECKING:
    from core.base.registry import Registry
    from core.ground_truth.policies import Policy
    from core.workspace import Workspace

MEMO_KIND = "gt-facts"


def _context(ws: Workspace) -> str:
    """What a GT file's check depends on besides the file: the workspace's policies and tasks."""
    stamp = repr(ws.files_stamp(("policies", "tasks")))
    return hashlib.sha256(stamp.encode()).hexdigest()


def _check(ws: Workspace, path: Path, registry: list[Registry[Policy]]) -> dict[str, Any]:
    """``{"facts": …}`` of a readable GT file, ``{"error": …}`` of an unreadable one."""
    try:
        if not registry:
            registry.append(policy_registry(ws))
        payload, layout = read_gt_file(path, ws, registry[0])
    except DataError as exc:
        return {"error": {"message": exc.message, "path": exc.path, "line": exc.line, "field": exc.field}}
    return {"facts": gt_facts(payload, layout)}


def keep_facts(ws: Workspace, path: Path, header: dict[str, Any], layout: str, n_restaurants: int) -> None:
    """Keep the listing's facts of a GT file just written from ``header`` (its document without the
    restaurants, of which it holds ``n_restaurants``): what :func:`_check` would read back from it,
    so the first listing after a ``gt`` does not read 150,000 restaurants again (seconds a file)."""
    facts = gt_facts({**header, "restaurants": range(n_restaurants)}, layout)
    stamped(path, MEMO_KIND, lambda: {"facts": facts}, context=_context(ws))


def scan_gt_files(ws: Workspace) -> tuple[list[dict[str, Any]], list[tuple[Path, DataError]]]:
    """Every readable GT file of the workspace (sorted by name) and every unreadable one with the
    reason (a broken file is reported, never skipped in silence: Home lists them)."""
    out: list[dict[str, Any]] = []
    broken: list[tuple[Path, DataError]] = []
    if not ws.gt_dir.exists():
        return out, broken
    registry: list[Registry[Policy]] = []  # read once, at the first GT file checked
    context = _context(ws)
    for path in sorted(ws.gt_dir.rglob("*.json")):
        if path.name.endswith(META_SUFFIX) or path.name.startswith("."):
            continue
        if path.parent == ws.gt_dir / VARIANTS_DIR:  # saved what-if variants, not GT files
            continue
        checked = stamped(path, MEMO_KIND, partial(_check, ws, path, registry), context=context)
        if "error" in checked:
            e = checked["error"]
            broken.append((path, DataError(e["message"], path=e["path"], line=e["line"], field=e["field"])))
            continue
        meta_path = path.with_name(path.name + META_SUFFIX)
        try:
            meta = read_json(meta_path) if meta_path.exists() else None
        except DataError as exc:
            broken.append((meta_path, exc))
            meta = None
        out.append(listing_entry(ws, path, checked["facts"], meta if isinstance(meta, dict) else None))
    return out, broken


def list_gt_files(ws: Workspace) -> list[dict[str, Any]]:
    """Every readable GT file in the workspace (exported and imported), sorted by name; the
    unreadable ones are in :func:`scan_gt_files`."""
    return scan_gt_files(ws)[0]

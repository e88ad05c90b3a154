"""``workbench release verify DIR``: check a release's files and recompute every number it shows.

1. the manifest: every file listed is there with its sha256, and no file was added;
2. every figure, recomputed from ``data/`` with the workbench's own engine
   (:func:`core.release.figures.compute`: GT from judgments and overrides, scores from answers and
   GT with ``core.metrics``), against ``figures.json``, number by number;
3. what is made from the figures (``release-data.js``: the page's data, ``DATASHEET.md``,
   ``datasheet.json``, ``claims.json``) and the tables under ``tables/``, against the files;
4. the GT files under ``data/gt/`` against the GT recomputed;
5. the GT each run kept (``data/runs/RUN/gt.json``) against the sha256 its ``results.json`` records
   (``results.json["gt"]["snapshot_sha256"]``, written when the run was scored);
6. every claim of the release, checked in ``data/`` (:func:`core.release.claim_check.check_claim`).

Each problem names the file and, for a number, where it is and both values.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson
import polars as pl

from core.base.errors import DataError, LockError, WorkbenchError
from core.base.files import read_json
from core.ground_truth import load_gt_file
from core.release.build import MANIFEST, NOT_LISTED, derived_files, file_entries, page_payload
from core.release.claim_check import HOLDS, check_claim
from core.release.data import DATA_DIR
from core.release.figures import Computed, compute
from core.release.gt_figures import restaurants_of
from core.release.page import DATA_JS, data_js
from core.release.scope import Scope
from core.runs.records import GT_FILE, load_results
from core.runs.rescore import lineage_of
from core.workspace import Workspace

MAX_PER_FILE = 25
_KEYS = ("run_id", "definition", "k", "metric", "level", "other", "path")


def _label(item: Mapping[str, Any], index: int) -> str:
    parts = [f"{k}={item[k]}" for k in _KEYS if k in item and isinstance(item[k], str | int)]
    if "run" in item and "baseline" in item:
        parts.insert(0, f"{item['run']} vs {item['baseline']}")
    return ",".join(parts) or str(index)


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


def diff(shown: Any, now: Any, where: str = "") -> list[str]:
    """Where two JSON values differ: ``path: shown X, recomputed Y`` (numbers within 1e-9 agree)."""
    if isinstance(shown, dict) and isinstance(now, dict):
        out = []
        for key in sorted(set(shown) | set(now), key=str):
            if key not in now or key not in shown:
                out.append(f"{where}.{key}: {'shown but not recomputed' if key in shown else 'recomputed but not shown'}")
            else:
                out.extend(diff(shown[key], now[key], f"{where}.{key}"))
        return out
    if isinstance(shown, list) and isinstance(now, list):
        if len(shown) != len(now):
            return [f"{where}: {len(shown)} items shown, {len(now)} recomputed"]
        return [d for i, (a, b) in enumerate(zip(shown, now, strict=True))
                for d in diff(a, b, f"{where}[{_label(a, i) if isinstance(a, dict) else i}]")]
    numbers = (int, float)
    if isinstance(shown, numbers) and isinstance(now, numbers) and not isinstance(shown, bool) and not isinstance(now, bool):
        return [] if _close(float(shown), float(now)) else [f"{where}: shown {shown!r}, recomputed {now!r}"]
    return [] if shown == now else [f"{where}: shown {shown!r}, recomputed {now!r}"]


def _capped(name: str, found: list[str]) -> list[str]:
    out = [f"{name}: {p.lstrip('.')}" for p in found[:MAX_PER_FILE]]
    if len(found) > MAX_PER_FILE:
        out.append(f"{name}: … and {len(found) - MAX_PER_FILE} more differences")
    return out


def check_manifest(root: Path) -> tuple[list[str], list[dict[str, Any]]]:
    """(problems, the manifest's entries): changed, missing and added files."""
    try:
        entries = read_json(root / MANIFEST)["files"]
    except (OSError, DataError, KeyError, TypeError):
        return [f"{MANIFEST}: missing or unreadable: this is not a release folder"], []
    listed = {e["path"]: e for e in entries}
    problems = []
    on_disk = {e["path"]: e for e in file_entries(root)}
    for path, e in listed.items():
        now = on_disk.get(path)
        if now is None:
            problems.append(f"{path}: missing (listed in the manifest)")
        elif now["sha256"] != e["sha256"]:
            problems.append(f"{path}: changed since the release was made (sha256 {now['sha256'][:12]}…, manifest "
                            f"{str(e['sha256'])[:12]}…)")
    problems += [f"{path}: not in the manifest (added after the release was made)" for path in sorted(set(on_disk) - set(listed))]
    return problems, entries


def _frame_problem(rel: str, shown: pl.DataFrame, now: pl.DataFrame) -> list[str]:
    if shown.columns != now.columns or shown.height != now.height:
        return [f"{rel}: {shown.height} rows × {shown.columns} shown, {now.height} rows × {now.columns} recomputed"]
    for col in now.columns:
        a, b = shown[col].to_list(), now[col].to_list()
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            same = _close(float(x), float(y)) if isinstance(x, float) and isinstance(y, float) else x == y
            if not same:
                return [f"{rel}: row {i} column {col}: shown {x!r}, recomputed {y!r}"]
    return []


def check_tables(root: Path, computed: Computed) -> list[str]:
    """Every table of the figures against its file (Parquet, or CSV read with the same schema)."""
    problems = []
    for rel, frame in computed.tables.items():
        path = root / rel
        if not path.exists():
            problems.append(f"{rel}: missing")
            continue
        try:
            shown = pl.read_csv(path, schema=frame.schema) if rel.endswith(".csv") else pl.read_parquet(path)
        except (pl.exceptions.PolarsError, OSError) as exc:
            problems.append(f"{rel}: unreadable ({str(exc).splitlines()[0]})")
            continue
        problems += _frame_problem(rel, shown, frame)
    return problems


def check_gt_files(data: Workspace, computed: Computed) -> list[str]:
    """Each GT file of the data against the GT recomputed (verdict of every restaurant at its K)."""
    problems = []
    for path in sorted(data.gt_dir.rglob("*.json")) if data.gt_dir.is_dir() else []:
        rel = f"{DATA_DIR}/{path.relative_to(data.root).as_posix()}"
        dataset, task = path.relative_to(data.gt_dir).parts[:2]
        try:
            shown = load_gt_file(path, data, restaurants=restaurants_of(data, dataset).select("business_id", "name"))
        except (DataError, WorkbenchError, ValueError, LockError) as exc:
            problems.append(f"{rel}: unreadable ({exc})")
            continue
        definition = str(shown["definition"][0]) if shown.height else ""
        key = next((k for k in computed.gt_frames if k[0] == dataset and k[1] == task and definition.startswith(k[2])), None)
        if key is None:
            problems.append(f"{rel}: a GT of {definition!r}, which the release does not compute")
            continue
        frame = computed.gt_frames[key]
        k = shown["k"][0]
        now = frame.filter(pl.col("k").is_null() if k is None else pl.col("k") == k)
        by_id = dict(zip(now["business_id"].to_list(), now["verdict"].to_list(), strict=True))
        bad = [(b, v, by_id.get(b)) for b, v in zip(shown["business_id"].to_list(), shown["verdict"].to_list(), strict=True)
               if by_id.get(b) != v]
        problems += [f"{rel}: restaurant {b}: verdict {v!r} in the file, {w!r} recomputed" for b, v, w in bad[:MAX_PER_FILE]]
    return problems


def check_run_gts(data: Workspace, runs: list[str]) -> list[str]:
    """Each run's kept GT (``gt.json``) is the one its results record (sha256)."""
    problems = []
    for run_id in runs:
        folder = data.run_dir(run_id)
        recorded = (lineage_of(load_results(folder)) or {}).get("snapshot_sha256")
        if recorded is None:
            continue
        path = folder / GT_FILE
        rel = path.relative_to(data.root.parent).as_posix()
        if not path.exists():
            problems.append(f"{rel}: missing (results.json records the GT the run was scored against: {recorded[:12]}…)")
        elif (now := hashlib.sha256(path.read_bytes()).hexdigest()) != recorded:
            problems.append(f"{rel}: sha256 {now[:12]}…, but results.json records {recorded[:12]}… "
                            "(the run was scored against another GT)")
    return problems


def check_claims(root: Path, data: Workspace) -> tuple[list[str], int]:
    """Every claim of ``claims.json`` checked in the release's data."""
    try:
        claims = read_json(root / "claims.json")
    except (OSError, DataError):
        return ["claims.json: missing or unreadable"], 0
    problems: list[str] = []
    scored_now: dict[str, dict[str, Any]] = {}
    for i, c in enumerate(claims):
        result = check_claim(data, c["claim"], scored_now=scored_now)
        if result["status"] != HOLDS:
            detail = "; ".join(result["inputs_changed"]) or f"now {result['now']}"
            problems.append(f"claims.json: claim {i + 1} ({c['statement'][:80]}…): {result['status']}: {detail}")
    return problems, len(claims)


def _figures(root: Path, data: Workspace, meta: Mapping[str, Any]) -> tuple[list[str], Computed | None]:
    try:
        computed = compute(data, Scope.from_dict(meta["scope"]))
    except (LockError, DataError, WorkbenchError, ValueError, KeyError) as exc:
        return [f"data: the figures cannot be recomputed: {exc}"], None
    now = orjson.loads(orjson.dumps(computed.figures))
    try:
        shown = orjson.loads((root / "figures.json").read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return ["figures.json: missing or unreadable"], computed
    return _capped("figures.json", diff(shown, now)), computed


def verify_release(root: str | Path) -> dict[str, Any]:
    """Verify the release in ``root``; returns ``{ok, problems, checked, seconds}``."""
    start = time.perf_counter()
    root = Path(root)
    problems, entries = check_manifest(root)
    checked: dict[str, Any] = {"files": len(entries)}
    try:
        meta = read_json(root / "release.json")
    except (OSError, DataError):
        return {"ok": False, "problems": [*problems, "release.json: missing or unreadable"], "checked": checked,
                "seconds": round(time.perf_counter() - start, 2)}
    data = Workspace(root / DATA_DIR)
    found, computed = _figures(root, data, meta)
    problems += found
    if computed is not None:
        expected = derived_files(computed, meta)
        for name, body in expected.items():
            if name != "figures.json" and (not (root / name).exists() or (root / name).read_bytes() != body):
                problems.append(f"{name}: not what the recomputed figures give")
        sheet = orjson.loads(expected["datasheet.json"])
        listed = [e for e in entries if e["path"] not in NOT_LISTED]
        page = data_js(page_payload(computed.figures, meta, sheet, listed))
        if not (root / DATA_JS).exists() or (root / DATA_JS).read_bytes() != page:
            problems.append(f"{DATA_JS}: the page's data is not what the recomputed figures give")
        problems += check_tables(root, computed) + check_gt_files(data, computed)
        problems += check_run_gts(data, [r["run_id"] for r in computed.figures["runs"]])
        claim_problems, n_claims = check_claims(root, data)
        problems += claim_problems
        checked.update(runs=len(computed.figures["runs"]), gts=len(computed.figures["gt"]), claims=n_claims,
                       tables=len(computed.tables))
    return {"ok": not problems, "problems": problems, "checked": checked, "seconds": round(time.perf_counter() - start, 2)}

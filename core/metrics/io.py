"""Reading runs from disk for scoring: results.json files, review texts of a dataset, run folders.

A run folder made here (``run``, ``runs import``) also holds ``summary.json``: the run's headline
fields (:data:`SUMMARY_FIELDS`, a few kB) stamped with the size and mtime of the results.json it
was taken from, so views over many runs (score against K) need not parse every results.json. A
summary whose stamp no longer matches, or one without the badges' ``facts`` (written by an earlier
version), is ignored; a results.json made elsewhere gets none.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import orjson

from core.db import Database
from core.errors import DataError
from core.files import read_json, write_json_atomic

RESULTS_NAME = "results.json"
SPEC_NAME = "spec.json"  # what a method's prepare step wrote (amos: the compiled spec and the compile call's usage)
SUMMARY_NAME = "summary.json"
SUMMARY_FIELDS = ("run_id", "task_id", "policy_id", "method", "model", "k", "n", "timestamp", "accuracy", "correct",
                  "total", "verdict_scale", "unified_scores", "intervals")


def load_results(path: str | Path) -> dict[str, Any]:
    """A results.json (SPEC §4.2), or the results.json inside a run folder; a bad file is a DataError."""
    path = Path(path)
    if path.is_dir():
        path = path / RESULTS_NAME
    try:
        payload = orjson.loads(path.read_bytes())  # 4-5x json's speed on a 1 MB run
    except (OSError, orjson.JSONDecodeError):  # read_json's own error (file, line), or what only json takes (NaN, BOM)
        payload = read_json(path)
    if not isinstance(payload, dict):
        raise DataError("expected a JSON object (SPEC §4.2 results.json)", path=path)
    samples = payload.get("results")
    if not isinstance(samples, list):
        raise DataError("expected a 'results' list of samples", path=path, field="results")
    for i, s in enumerate(samples):
        if not isinstance(s, dict) or "business_id" not in s:
            raise DataError("a sample must be an object with business_id", path=path, field=f"results[{i}]")
    return payload


def dataset_review_texts(db: Database, dataset: str, business_ids: Iterable[str], k: int | None) -> dict[str, str]:
    """review_id → text of the first K reviews (idx < K; all when K is None) of those restaurants."""
    ids = sorted({str(b) for b in business_ids})
    frame = db.query(
        "SELECT review_id, text FROM reviews WHERE dataset = $dataset AND list_contains($ids, business_id)"
        " AND ($k IS NULL OR idx < $k)",
        {"dataset": dataset, "ids": ids, "k": k},
    )
    return dict(zip(frame["review_id"].to_list(), frame["text"].to_list(), strict=True))


def dataset_categories(db: Database, dataset: str) -> dict[str, str | None]:
    """business_id → categories of a dataset's restaurants (for the policy's cuisine rule)."""
    frame = db.query("SELECT business_id, categories FROM restaurants WHERE dataset = $dataset", {"dataset": dataset})
    return dict(zip(frame["business_id"].to_list(), frame["categories"].to_list(), strict=True))


def run_dirs(runs_root: Path) -> list[Path]:
    """Every run folder under ``runs_root`` holding a results.json, oldest first (by file time)."""
    if not runs_root.is_dir():
        return []
    found = [p.parent for p in runs_root.glob(f"*/{RESULTS_NAME}")]
    return sorted(found, key=lambda p: ((p / RESULTS_NAME).stat().st_mtime, p.name))


def run_summary(scored: Mapping[str, Any]) -> dict[str, Any]:
    """The headline fields of a scored run (what :func:`core.metrics.views.headline` and
    ``scores_by_k`` read), copied unchanged, and the facts its badges need
    (:func:`core.metrics.badges.run_facts`: majority baseline, incidents, ranking spread)."""
    # deferred: core.metrics.badges imports the scoring modules; io is read by pages that never score
    from core.metrics.badges import facts_of

    return {**{key: scored[key] for key in SUMMARY_FIELDS if key in scored}, "facts": facts_of(scored)}


def write_run_summary(run_dir: str | Path, scored: Mapping[str, Any]) -> Path:
    """Write ``run_dir/summary.json`` for the results.json just written there (its own run folder only)."""
    run_dir = Path(run_dir)
    stat = (run_dir / RESULTS_NAME).stat()
    target = run_dir / SUMMARY_NAME
    write_json_atomic(target, {"results_file": {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns},
                               **run_summary(scored)})
    return target


def read_run_summary(results_path: str | Path, size: int, mtime_ns: int) -> dict[str, Any] | None:
    """The summary.json beside ``results_path`` when it was written for this very file (size and
    mtime match), else None (missing, unreadable or stale: read the results.json itself)."""
    try:
        summary = orjson.loads(Path(results_path).with_name(SUMMARY_NAME).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    if not isinstance(summary, dict) or summary.get("results_file") != {"size": size, "mtime_ns": mtime_ns}:
        return None
    if not isinstance(summary.get("facts"), dict):  # written before summaries carried the badges' facts
        return None
    return summary


def read_prepared(run_dir: str | Path) -> dict[str, Any] | None:
    """``spec.json`` of a run folder (``{spec, usage, cached}``), or None when there is none or it
    cannot be read (a run without a prepare step)."""
    try:
        data = orjson.loads((Path(run_dir) / SPEC_NAME).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    return data if isinstance(data, dict) else None


def spec_fallback(run_dir: str | Path, run: Mapping[str, Any] | None = None) -> str | None:
    """Why the run's compiled spec was not used (``prepare.spec_fallback`` of its results.json, else
    its spec.json's ``spec.fallback``), or None."""
    prepared = (run or {}).get("prepare")
    if isinstance(prepared, Mapping) and "spec_fallback" in prepared:
        return prepared["spec_fallback"] or None
    spec = (read_prepared(run_dir) or {}).get("spec")
    reason = spec.get("fallback") if isinstance(spec, dict) else None
    return str(reason) if reason else None

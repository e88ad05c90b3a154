"""The files of a run, owned here: every reader, writer and lister of a run folder calls this module.

```
runs/{run_id}/config.json      the configuration, GT lineage, pre-flight figures (written at the start)
runs/{run_id}/samples.jsonl    one fsync'd line per finished sample (the resume log)
runs/{run_id}/status.json      status, pid, counts, tokens, cost (rewritten as the run goes)
runs/{run_id}/spec.json        amos: the compiled extraction spec
runs/{run_id}/cancel.request   present while a cancel is pending
runs/{run_id}/results.json     the scored run (SPEC §4.2), with ``gt``: the lineage of its GT
runs/{run_id}/summary.json     its headline fields, stamped with results.json's size and mtime
runs/{run_id}/gt.json          the GT the run was scored against, as it was (ADDM layout + lineage,
                               or the bytes of the GT file it read)
runs/{run_id}/history/NNN/     an earlier scoring kept by a rescore: its results.json, summary.json, gt.json
```

A summary whose stamp no longer matches its results.json, or one without the badges' ``facts``
(written by an earlier version), is ignored (views over many runs read the summary, a few kB,
instead of parsing every results.json). Writes are atomic.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson

from core.base.errors import DataError
from core.base.files import atomic_dir, read_json, write_bytes_atomic, write_json_atomic
from core.metrics.badges import facts_of
from core.workspace import Workspace, check_name

RESULTS_FILE = "results.json"
SUMMARY_FILE = "summary.json"
CONFIG_FILE = "config.json"
STATUS_FILE = "status.json"
SAMPLES_FILE = "samples.jsonl"
SPEC_FILE = "spec.json"  # what a method's prepare step wrote (amos: the compiled spec and the compile call's usage)
CANCEL_FILE = "cancel.request"
GT_FILE = "gt.json"
HISTORY_DIR = "history"
SUMMARY_FIELDS = ("run_id", "task_id", "policy_id", "method", "model", "k", "n", "timestamp", "accuracy", "correct",
                  "total", "verdict_scale", "unified_scores", "intervals", "gt", "rescored_at", "spec_fallback",
                  "claims", "baselines")


def run_dir(ws: Workspace, run_id: str) -> Path:
    """The folder of run ``run_id`` (the id checked as a name)."""
    return ws.runs_dir / check_name("run", run_id)


def read_record(path: Path) -> dict[str, Any] | None:
    """A small JSON record of a run (config, status, spec) or None when missing or unreadable."""
    if not path.exists():
        return None
    try:
        data = read_json(path)
    except (DataError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def load_results(path: str | Path) -> dict[str, Any]:
    """A results.json (SPEC §4.2), or the results.json inside a run folder; a bad file is a DataError."""
    path = Path(path)
    if path.is_dir():
        path = path / RESULTS_FILE
    try:
        payload = orjson.loads(path.read_bytes())  # 4-5x json's speed on a 1 MB run
    except (OSError, orjson.JSONDecodeError):  # read_json's own error (file, line), or what only json takes (NaN, BOM)
        payload = read_json(path)
    if not isinstance(payload, dict):
        raise DataError("expected a JSON object (SPEC §4.2 results.json)", path=path)
    samples = payload.get("results")
    if not isinstance(samples, list):
        raise DataError("expected a 'results' list of samples", path=path, field="results")
    check_samples(samples, path)
    return payload


_TEXT_FIELDS = ("name", "verdict", "gt_verdict", "response", "error")
_COUNT_FIELDS = ("prompt_tokens", "completion_tokens", "llm_calls", "cached_calls")
_NUMBER_FIELDS = ("risk_score", "cost_usd", "latency_ms")


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _sample_problem(s: Any) -> tuple[str, str] | None:
    """(field, problem) of the first thing wrong with one sample, or None."""
    if not isinstance(s, dict) or "business_id" not in s:
        return "", "a sample must be an object with business_id"
    if not isinstance(s["business_id"], str) or not s["business_id"]:
        return "business_id", f"expected a non-empty string, got {s['business_id']!r:.40}"
    for key in _NUMBER_FIELDS:
        if s.get(key) is not None and not _finite(s[key]):
            return key, f"expected a finite number or null, got {s[key]!r:.40}"
    for key in _COUNT_FIELDS:
        value = s.get(key)
        if value is not None and not (_finite(value) and value == int(value) and 0 <= value < 1e15):
            return key, f"expected a whole number of at least 0, got {value!r:.40}"
    for key in _TEXT_FIELDS:
        if s.get(key) is not None and not isinstance(s[key], str):
            return key, f"expected a string or null, got {type(s[key]).__name__}"
    if s.get("parsed") is not None and not isinstance(s["parsed"], dict):
        return "parsed", f"expected an object or null, got {type(s['parsed']).__name__}"
    return None


def check_samples(samples: list[Any], path: str | Path) -> None:
    """Refuse, naming file and field, a sample that is not an object with a business_id, a field of
    the wrong type (a score that is NaN or infinite, a token count of "x"), and a business_id that
    appears twice: a restaurant is scored once (as an answers file's sample_id is), never counted
    twice into n and the rates."""
    seen: dict[str, int] = {}
    for i, s in enumerate(samples):
        problem = _sample_problem(s)
        if problem is not None:
            field, message = problem
            raise DataError(message, path=path, field=f"results[{i}].{field}" if field else f"results[{i}]")
        first = seen.setdefault(s["business_id"], i)
        if first != i:
            raise DataError(f"business_id {s['business_id']!r:.60} appears twice (results[{first}] and results[{i}]): "
                            "a restaurant is scored once", path=path, field=f"results[{i}].business_id")


def write_results(folder: Path, scored: Mapping[str, Any]) -> Path:
    """Write ``folder/results.json`` and its ``summary.json`` (atomically, in that order)."""
    target = folder / RESULTS_FILE
    write_json_atomic(target, scored)
    write_run_summary(folder, scored)
    return target


def run_dirs(runs_root: Path) -> list[Path]:
    """Every run folder under ``runs_root`` holding a results.json, oldest first (by file time)."""
    if not runs_root.is_dir():
        return []
    found = [p.parent for p in runs_root.glob(f"*/{RESULTS_FILE}")]
    return sorted(found, key=lambda p: ((p / RESULTS_FILE).stat().st_mtime, p.name))


def results_stamps(runs_root: Path) -> tuple[tuple[str, int, int], ...]:
    """(path, mtime_ns, size) of every runs/*/results.json, newest first."""
    out = []
    for path in runs_root.glob(f"*/{RESULTS_FILE}") if runs_root.is_dir() else []:
        st = path.stat()
        out.append((str(path), st.st_mtime_ns, st.st_size))
    return tuple(sorted(out, key=lambda s: (-s[1], s[0])))


def run_summary(scored: Mapping[str, Any]) -> dict[str, Any]:
    """The headline fields of a scored run (what views over many runs read), copied unchanged, and
    the facts its badges need (:func:`core.metrics.badges.facts_of`: majority baseline, incidents,
    ranking spread)."""
    return {**{key: scored[key] for key in SUMMARY_FIELDS if key in scored}, "facts": facts_of(scored)}


def write_run_summary(folder: str | Path, scored: Mapping[str, Any]) -> Path:
    """Write ``folder/summary.json`` for the results.json just written there (its own run folder only)."""
    folder = Path(folder)
    stat = (folder / RESULTS_FILE).stat()
    target = folder / SUMMARY_FILE
    write_json_atomic(target, {"results_file": {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns},
                               **run_summary(scored)})
    return target


def read_run_summary(results_path: str | Path, size: int, mtime_ns: int) -> dict[str, Any] | None:
    """The summary.json beside ``results_path`` when it was written for this very file (size and
    mtime match), else None (missing, unreadable or stale: read the results.json itself)."""
    try:
        summary = orjson.loads(Path(results_path).with_name(SUMMARY_FILE).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    if not isinstance(summary, dict) or summary.get("results_file") != {"size": size, "mtime_ns": mtime_ns}:
        return None
    if not isinstance(summary.get("facts"), dict):  # written before summaries carried the badges' facts
        return None
    return summary


def read_prepared(folder: str | Path) -> dict[str, Any] | None:
    """``spec.json`` of a run folder (``{spec, usage, cached}``), or None when there is none or it
    cannot be read (a run without a prepare step)."""
    try:
        data = orjson.loads((Path(folder) / SPEC_FILE).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    return data if isinstance(data, dict) else None


def spec_fallback(folder: str | Path, run: Mapping[str, Any] | None = None) -> str | None:
    """Why the run's compiled spec was not used (``prepare.spec_fallback`` of its results.json, else
    its spec.json's ``spec.fallback``), or None."""
    prepared = (run or {}).get("prepare")
    if isinstance(prepared, Mapping) and "spec_fallback" in prepared:
        return prepared["spec_fallback"] or None
    spec = (read_prepared(folder) or {}).get("spec")
    reason = spec.get("fallback") if isinstance(spec, dict) else None
    return str(reason) if reason else None


def recorded_gt(folder: Path) -> dict[str, Any] | None:
    """The lineage of the GT a run names: its results' (through a current summary.json, a few kB),
    else the one its config.json planned (a run still going)."""
    results = folder / RESULTS_FILE
    if results.exists():
        st = results.stat()
        summary = read_run_summary(results, st.st_size, st.st_mtime_ns)
        gt = (summary if summary is not None else load_results(results)).get("gt")
        return gt if isinstance(gt, dict) else None
    gt = (read_record(folder / CONFIG_FILE) or {}).get("gt")
    return gt if isinstance(gt, dict) else None


def history(folder: Path) -> list[Path]:
    """The folders of a run's earlier scorings (kept by a rescore), oldest first."""
    base = folder / HISTORY_DIR
    return sorted(p for p in base.iterdir() if p.is_dir() and p.name.isdigit()) if base.is_dir() else []


def archive_scoring(folder: Path) -> Path:
    """Copy the run's current results.json, summary.json and gt.json into ``history/NNN/`` (the next
    number) before a rescore replaces them; returns that folder. The copy is made in a hidden
    folder renamed into place, so a killed process leaves no half history entry."""
    base = folder / HISTORY_DIR
    target = base / f"{len(history(folder)) + 1:03d}"
    with atomic_dir(target, staging=base) as scratch:  # never through a link (core.base.files)
        for name in (RESULTS_FILE, SUMMARY_FILE, GT_FILE):
            if (folder / name).exists():
                write_bytes_atomic(scratch / name, (folder / name).read_bytes())
    return target

"""Study files in a workspace and the ``run.jsonl`` / ``run_scored.jsonl`` record format (SPEC §7).

```
studies/{study}/grid.jsonl                          the prompt grid (core.study.grid)
studies/{study}/runs/{run_id}/run.jsonl             responses, append-only (resume reads it)
studies/{study}/runs/{run_id}/run_scored.jsonl      responses + {scorer_model, score, ...}
```

A run record: ``{run_id, timestamp_iso, model_id, provider, prompt_id, perspective, factors,
messages, response_text}`` plus ``scenario_id``, ``offline`` (true for an offline model),
``error`` (a failed call: ``response_text`` is null) and ``usage``. The original study's files
use ``run_timestamp_iso`` and a numeric ``run_id``; both read. A run log may hold several records
of one (model, prompt) (a failed call retried on resume): the last one counts.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from core.base.errors import DataError
from core.base.files import (
    jsonl_objects,  # noqa: F401 - re-exported for the CLI
    write_jsonl_atomic,
)
from core.study.grid import PERSPECTIVES
from core.workspace import Workspace, check_name

RUN_FILE, SCORED_FILE, GRID_FILE = "run.jsonl", "run_scored.jsonl", "grid.jsonl"


def study_dir(ws: Workspace, study: str) -> Path:
    """``studies/{study}`` of a workspace (the name is checked)."""
    return ws.studies_dir / check_name("study", study)


def run_dir(ws: Workspace, study: str, run_id: str) -> Path:
    """``studies/{study}/runs/{run_id}``."""
    return study_dir(ws, study) / "runs" / check_name("run", run_id)


def list_studies(ws: Workspace) -> list[str]:
    """Studies of a workspace, sorted."""
    base = ws.studies_dir
    return sorted(p.name for p in base.iterdir() if p.is_dir()) if base.is_dir() else []


def list_scored_runs(ws: Workspace) -> list[dict[str, Any]]:
    """Every ``run_scored.jsonl`` of the workspace: ``{study, run_id, path}``, newest folder first."""
    out = []
    for study in list_studies(ws):
        runs = study_dir(ws, study) / "runs"
        for path in sorted(runs.glob(f"*/{SCORED_FILE}")) if runs.is_dir() else []:
            out.append({"study": study, "run_id": path.parent.name, "path": str(path),
                        "mtime": path.stat().st_mtime})
    return sorted(out, key=lambda r: (-r["mtime"], r["study"], r["run_id"]))


def record_key(rec: dict[str, Any]) -> tuple[str, str]:
    """(model_id, prompt_id): one response per model and prompt."""
    return (str(rec["model_id"]), str(rec["prompt_id"]))


def _str(obj: dict[str, Any], name: str, path: Path, n: int, *, allow_int: bool = False) -> str:
    value = obj.get(name)
    if allow_int and isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str) or not value.strip():
        raise DataError("expected a non-empty string", path=path, line=n, field=name)
    return value


def check_record(obj: dict[str, Any], path: Path, n: int, *, scored: bool = False) -> dict[str, Any]:
    """One run (or scored run) record, normalised (string ids), or a DataError naming the line."""
    rec = dict(obj)
    rec["run_id"] = _str(obj, "run_id", path, n, allow_int=True)
    rec["model_id"] = _str(obj, "model_id", path, n)
    rec["prompt_id"] = _str(obj, "prompt_id", path, n, allow_int=True)
    factors = obj.get("factors")
    if not isinstance(factors, dict):
        raise DataError("expected an object", path=path, line=n, field="factors")
    perspective = obj.get("perspective", factors.get("perspective"))
    if perspective not in PERSPECTIVES:
        raise DataError(f"expected one of {', '.join(PERSPECTIVES)}, got {perspective!r}", path=path, line=n,
                        field="perspective")
    rec["perspective"] = perspective
    if not isinstance(obj.get("messages"), list):
        raise DataError("expected a list of messages", path=path, line=n, field="messages")
    text = obj.get("response_text")
    if text is None and not obj.get("error"):
        raise DataError("missing response_text (and no error recorded)", path=path, line=n, field="response_text")
    if text is not None and not isinstance(text, str):
        raise DataError("expected a string", path=path, line=n, field="response_text")
    rec.setdefault("timestamp_iso", obj.get("run_timestamp_iso"))
    if scored:
        if "score" not in obj:
            raise DataError("a scored run record needs a score (null for a failed response)", path=path, line=n,
                            field="score")
        score = obj["score"]
        if score is not None and (isinstance(score, bool) or not isinstance(score, int | float)
                                  or not math.isfinite(score) or not -1 <= score <= 1):
            raise DataError(f"expected a number in [-1, 1] or null, got {score!r}", path=path, line=n, field="score")
        if not isinstance(obj.get("scorer_model"), str) or not obj["scorer_model"]:
            raise DataError("expected the scorer's name", path=path, line=n, field="scorer_model")
    return rec


def read_run(path: str | Path, *, scored: bool | None = None) -> list[dict[str, Any]]:
    """Records of a run file, checked, the last record of each (model, prompt) kept, in file order.

    Args:
        scored: require scores (True), or not (False); None decides from the file name.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no such run file: {path}")
    if scored is None:
        scored = path.name.endswith("_scored.jsonl")
    latest: dict[tuple[str, str], dict[str, Any]] = {}
    for n, obj in jsonl_objects(path):
        rec = check_record(obj, path, n, scored=scored)
        latest.pop(record_key(rec), None)
        latest[record_key(rec)] = rec
    return list(latest.values())


def write_scored_run(path: str | Path, records: list[dict[str, Any]]) -> int:
    """Write a scored run atomically (checked first, so nothing half-written); returns the lines."""
    path = Path(path)
    for i, rec in enumerate(records, start=1):
        check_record(rec, path, i, scored=True)
    return write_jsonl_atomic(path, records)


def import_scored_run(ws: Workspace, path: str | Path, *, study: str) -> dict[str, Any]:
    """Copy a scored run made elsewhere (e.g. scored by an LLM judge) into ``study``, checked,
    its scorer name kept. One run_id per file; an existing copy is replaced."""
    records = read_run(path, scored=True)
    if not records:
        raise DataError("no records", path=path)
    run_ids = sorted({r["run_id"] for r in records})
    if len(run_ids) != 1:
        raise DataError(f"a scored run file holds one run; found run_ids {run_ids}", path=path)
    target = run_dir(ws, study, run_ids[0]) / SCORED_FILE
    n = write_scored_run(target, records)
    return {"study": study, "run_id": run_ids[0], "path": str(target), "records": n,
            "scorers": sorted({r["scorer_model"] for r in records})}

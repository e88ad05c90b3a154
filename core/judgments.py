"""The judgment store (SPEC §2.3): one append-only JSONL log per dataset, task and judge.

``judgments/{dataset}/{task}/{judge}.jsonl`` holds one JSON object per judgment::

    {dataset, task, judge, prompt_version, created_at, business_id, review_id, idx,
     fields: {<schema field>: value}, excerpt, raw, parse_error, confidence, usage, batch_id}

Judgments are never edited: a later record for the same review key ``(business_id, idx)`` wins.
Human corrections live apart, in :mod:`core.overrides`, and are applied when judgments are loaded.
Records with a ``parse_error`` (a value outside the enum, a missing field, no JSON) are kept and
listed; GT formulas skip them (they filter ``parse_error IS NULL``), so a judge's failure never
turns into an enum value.

``judgments/{dataset}/{task}/_settings.json`` records the dataset/task's GT judge (the judge whose
judgments ground truth uses when no judge is named).
"""

from __future__ import annotations

import json
import numbers
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import polars as pl

from core.datasets import scan_restaurants, scan_reviews
from core.errors import DataError, UnknownNameError, WorkbenchError
from core.files import append_jsonl, read_json, read_jsonl_log, write_json_atomic
from core.tasks import Task, get_task
from core.workspace import Workspace, check_name

SETTINGS_FILE = "_settings.json"
KEY = ("business_id", "idx")
META_COLUMNS = ("business_id", "review_id", "idx", "date", "stars", "useful", "name", "categories")
_STR_KEYS = ("dataset", "task", "judge", "prompt_version", "created_at", "business_id", "review_id",
             "excerpt", "raw", "parse_error", "batch_id")


def now_iso() -> str:
    """The current UTC time as an ISO-8601 string (the ``created_at`` of new records)."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def judgment_path(ws: Workspace, dataset: str, task: str, judge: str) -> Path:
    """Path of one judge's log; validates the names."""
    return ws.judgments_dir(dataset, task) / f"{check_name('judge', judge)}.jsonl"


def log_schema(task: Task) -> dict[str, Any]:
    """The polars schema of a judgment log of ``task`` (used to read the JSONL quickly)."""
    return {
        "dataset": pl.String, "task": pl.String, "judge": pl.String, "prompt_version": pl.String,
        "created_at": pl.String, "business_id": pl.String, "review_id": pl.String, "idx": pl.Int64,
        "fields": pl.Struct({f: pl.String for f in task.field_names}),
        "excerpt": pl.String, "raw": pl.String, "parse_error": pl.String,
        "confidence": pl.Struct({f: pl.Float64 for f in task.field_names}),
        "usage": pl.Struct({"prompt_tokens": pl.Int64, "completion_tokens": pl.Int64, "cost_usd": pl.Float64}),
        "batch_id": pl.String,
    }


def _as_text(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def _normalise(rec: dict[str, Any], task: Task, dataset: str, judge: str, n: int) -> dict[str, Any]:
    where = f"records[{n}]"
    if not isinstance(rec, dict):
        raise DataError("expected a dict", field=where)
    if not isinstance(rec.get("business_id"), str) or not rec["business_id"]:
        raise DataError("business_id must be a non-empty string", field=f"{where}.business_id")
    idx = rec.get("idx")
    if isinstance(idx, bool) or not isinstance(idx, numbers.Integral) or idx < 0:
        raise DataError(f"idx must be an int >= 0, got {idx!r}", field=f"{where}.idx")
    idx = int(idx)
    fields = rec.get("fields") or {}
    if not isinstance(fields, dict):
        raise DataError("fields must be a dict", field=f"{where}.fields")
    out_fields = {f: _as_text(fields.get(f)) for f in task.field_names}
    parse_error = rec.get("parse_error")
    if parse_error is None:
        bad = [f"{f}={v!r}" for f, v in out_fields.items() if v not in task.field(f).values]
        if bad:
            raise DataError(
                f"values outside the {task.task_id} schema without a parse_error: {', '.join(bad)}",
                field=f"{where}.fields",
            )
    out = {
        "dataset": dataset, "task": task.task_id, "judge": judge,
        "prompt_version": _as_text(rec.get("prompt_version")),
        "created_at": _as_text(rec.get("created_at")) or now_iso(),
        "business_id": rec["business_id"], "review_id": _as_text(rec.get("review_id")), "idx": idx,
        "fields": out_fields,
        "excerpt": _as_text(rec.get("excerpt")),
        "raw": _as_text(rec.get("raw")),
        "parse_error": _as_text(parse_error),
        "confidence": rec.get("confidence") if isinstance(rec.get("confidence"), dict) else None,
        "usage": rec.get("usage") if isinstance(rec.get("usage"), dict) else None,
        "batch_id": _as_text(rec.get("batch_id")),
    }
    return out


def append_judgments(ws: Workspace, dataset: str, task: str, judge: str, records: Iterable[dict]) -> int:
    """Append judgments to the judge's log (durably); returns the number appended.

    Each record needs ``business_id`` and ``idx``; ``dataset``, ``task`` and ``judge`` are set
    from the arguments, ``created_at`` defaults to now. Field values are kept as given (non-strings
    are stored as their JSON text); a record without ``parse_error`` must have every field inside
    the task's enums (DataError otherwise), so a bad value can only be stored as a parse error.
    """
    spec = get_task(task, ws)
    path = judgment_path(ws, dataset, task, judge)
    rows = [_normalise(r, spec, dataset, judge, n) for n, r in enumerate(records)]
    return append_jsonl(path, rows)


def read_log(ws: Workspace, dataset: str, task: str, judge: str) -> pl.DataFrame:
    """Every record of a judge's log in file order (duplicates kept), with a ``_seq`` column."""
    spec = get_task(task, ws)
    path = judgment_path(ws, dataset, task, judge)
    schema = log_schema(spec)
    if not path.exists():
        return pl.DataFrame(schema=schema).with_row_index("_seq")
    try:
        df = pl.read_ndjson(path, schema=schema)
    except pl.exceptions.PolarsError:
        # a line torn by a killed writer: fall back to the tolerant reader
        df = pl.DataFrame([{k: r.get(k) for k in schema} for r in read_jsonl_log(path)], schema=schema, strict=False)
    return df.with_row_index("_seq")


def latest(df: pl.DataFrame) -> pl.DataFrame:
    """The latest record per review key ``(business_id, idx)`` (last in log order)."""
    return df.unique(subset=list(KEY), keep="last", maintain_order=True)


def judged_keys(ws: Workspace, dataset: str, task: str, judge: str) -> set[tuple[str, int]]:
    """Review keys ``(business_id, idx)`` the judge has a stored judgment for (parse errors too)."""
    df = read_log(ws, dataset, task, judge).select(KEY).unique()
    return set(zip(df["business_id"].to_list(), df["idx"].to_list(), strict=True))


def list_judges(ws: Workspace, dataset: str, task: str) -> list[dict[str, Any]]:
    """Judges with a log for this dataset/task: ``judge, n, n_parse_errors, last_created_at,
    prompt_versions, is_gt_judge`` (n counts distinct reviews, latest record per review)."""
    folder = ws.judgments_dir(dataset, task)
    if not folder.exists():
        return []
    out: list[dict[str, Any]] = []
    for path in sorted(folder.glob("*.jsonl")):
        df = latest(read_log(ws, dataset, task, path.stem))
        if df.height == 0:
            continue
        out.append({
            "judge": path.stem,
            "n": df.height,
            "n_parse_errors": int(df["parse_error"].is_not_null().sum()),
            "last_created_at": df["created_at"].max(),
            "prompt_versions": sorted(v for v in df["prompt_version"].unique().to_list() if v is not None),
        })
    gt = _pick_gt([j["judge"] for j in out], _read_settings(ws, dataset, task).get("gt_judge"))
    for item in out:
        item["is_gt_judge"] = item["judge"] == gt
    return out


def _pick_gt(judges: list[str], chosen: str | None) -> str | None:
    if chosen in judges:
        return chosen
    return judges[0] if len(judges) == 1 else None


def _settings_path(ws: Workspace, dataset: str, task: str) -> Path:
    return ws.judgments_dir(dataset, task) / SETTINGS_FILE


def _read_settings(ws: Workspace, dataset: str, task: str) -> dict[str, Any]:
    path = _settings_path(ws, dataset, task)
    if not path.exists():
        return {}
    data = read_json(path)
    return data if isinstance(data, dict) else {}


def set_gt_judge(ws: Workspace, dataset: str, task: str, judge: str) -> None:
    """Record ``judge`` as the GT judge of this dataset/task (it must have judgments)."""
    get_task(task, ws)
    judges = [j["judge"] for j in list_judges(ws, dataset, task)]
    if judge not in judges:
        raise UnknownNameError(f"judge of {dataset}/{task}", judge, judges)
    settings = _read_settings(ws, dataset, task)
    settings.update({"gt_judge": judge, "updated_at": now_iso()})
    write_json_atomic(_settings_path(ws, dataset, task), settings)


def get_gt_judge(ws: Workspace, dataset: str, task: str) -> str | None:
    """The recorded GT judge, else the only judge, else None (no judge or several)."""
    judges = [j["judge"] for j in list_judges(ws, dataset, task)]
    return _pick_gt(judges, _read_settings(ws, dataset, task).get("gt_judge"))


def resolve_judge(ws: Workspace, dataset: str, task: str, judge: str | None) -> str:
    """``judge`` if given (it must have a log), else the GT judge; a clear error otherwise."""
    judges = [j["judge"] for j in list_judges(ws, dataset, task)]
    if judge is not None:
        if judge not in judges:
            raise UnknownNameError(f"judge of {dataset}/{task}", judge, judges)
        return judge
    chosen = get_gt_judge(ws, dataset, task)
    if chosen is None:
        if not judges:
            raise WorkbenchError(f"no judgments for dataset {dataset!r}, task {task!r}: run `python -m core judge` first")
        raise WorkbenchError(
            f"several judges for {dataset}/{task} ({', '.join(judges)}) and no GT judge set: "
            "pick one with --judge or set_gt_judge"
        )
    return chosen


def review_metadata(ws: Workspace, dataset: str) -> pl.DataFrame:
    """``business_id, review_id, idx, date, stars, useful, name, categories`` of every review
    (the dataset's lock is verified first; UnknownNameError when it is not imported)."""
    reviews = scan_reviews(ws, dataset).select("business_id", "review_id", pl.col("idx").cast(pl.Int64), "date",
                                               "stars", "useful")
    rest = scan_restaurants(ws, dataset).select("business_id", "name", "categories")
    return reviews.join(rest, on="business_id", how="left").select(META_COLUMNS).collect()


def load_judgments(
    ws: Workspace, dataset: str, task: str, judge: str | None = None, *, apply_overrides: bool = True
) -> pl.DataFrame:
    """The latest judgment per review of one judge, review metadata joined, sorted by (business_id, idx).

    Columns: business_id, review_id, idx, date, stars, useful, name, categories, the task's
    schema fields, excerpt, parse_error, judge, overridden, override_id, prompt_version,
    created_at, confidence. ``judge=None`` takes the GT judge (:func:`resolve_judge`). With
    ``apply_overrides`` the active human overrides (:mod:`core.overrides`) replace the fields
    they correct and set ``overridden``; an override that leaves every field valid clears the
    row's ``parse_error``. Rows with ``parse_error`` set are returned; GT formulas skip them.
    """
    spec = get_task(task, ws)
    judge = resolve_judge(ws, dataset, task, judge)
    log = latest(read_log(ws, dataset, task, judge))
    df = log.select(
        "business_id", pl.col("review_id").alias("_log_review_id"), "idx",
        *[pl.col("fields").struct.field(f).alias(f) for f in spec.field_names],
        "excerpt", "parse_error", "judge", "prompt_version", "created_at", "confidence",
    )
    meta = review_metadata(ws, dataset)
    df = df.join(meta, on=list(KEY), how="left").with_columns(
        pl.coalesce("review_id", "_log_review_id").alias("review_id")
    )
    df = df.with_columns(pl.lit(False).alias("overridden"), pl.lit(None, pl.String).alias("override_id"))
    if apply_overrides:
        from core.overrides import apply_overrides as _apply

        df = _apply(ws, dataset, spec, df)
    columns = [*META_COLUMNS, *spec.field_names, "excerpt", "parse_error", "judge", "overridden",
               "override_id", "prompt_version", "created_at", "confidence"]
    return df.select(columns).sort(list(KEY))

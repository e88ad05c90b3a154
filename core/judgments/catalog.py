"""The judges of a dataset/task, the GT judge among them, and one judge's judgments as ground truth
reads them (:func:`load_raw_judgments`; :mod:`core.judgments` puts the human overrides on top).

The logs themselves are :mod:`core.judgments.store`; ``judgments/{dataset}/{task}/_settings.json``
records the GT judge.
"""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import Any

import polars as pl

from core.base.clock import now_iso
from core.base.errors import UnknownNameError, WorkbenchError
from core.base.files import read_json, write_json_atomic
from core.base.memo import stamped, stamped_extra, stamped_frame
from core.base.settings import require_writable
from core.base.stamps import file_stamp
from core.datasets import scan_restaurants, scan_reviews
from core.judgments.store import (
    KEY,
    META_COLUMNS,
    SETTINGS_FILE,
    judge_of_file,
    judgment_path,
    latest,
    read_log,
    split_stale,
    stale_count,
)
from core.tasks import Task, get_task
from core.workspace import Workspace


def list_judges(ws: Workspace, dataset: str, task: str) -> list[dict[str, Any]]:
    """Judges with a log for this dataset/task: ``judge, n, n_parse_errors, last_created_at,
    prompt_versions, is_gt_judge`` (n counts distinct reviews, latest record per review)."""
    folder = ws.judgments_dir(dataset, task)
    if not folder.exists():
        return []
    out: list[dict[str, Any]] = []
    for path in sorted(folder.glob("*.jsonl")):
        judge = judge_of_file(path)
        if judge is None:
            continue
        summary = stamped(path, "judges", partial(_summary, ws, dataset, task, judge))
        if summary["n"]:
            out.append({"judge": judge, **summary})
    gt = _pick_gt([j["judge"] for j in out], _read_settings(ws, dataset, task).get("gt_judge"))
    for item in out:
        item["is_gt_judge"] = item["judge"] == gt
    return out


def _summary(ws: Workspace, dataset: str, task: str, judge: str) -> dict[str, Any]:
    """What :func:`list_judges` says of one log (kept beside a large log until it changes: reading
    1 M judgments costs a second on every page that lists the judges)."""
    df = latest(read_log(ws, dataset, task, judge, columns=(*KEY, "parse_error", "created_at", "prompt_version")))
    return {
        "n": df.height,
        "n_parse_errors": int(df["parse_error"].is_not_null().sum()),
        "last_created_at": df["created_at"].max() if df.height else None,
        "prompt_versions": sorted(v for v in df["prompt_version"].unique().to_list() if v is not None),
    }


def judge_names(ws: Workspace, dataset: str, task: str) -> list[str]:
    """The judges :func:`list_judges` lists, in its order, without reading their logs: a judge
    counts when its log's first line is a record (a log holding only a torn line counts none)."""
    folder = ws.judgments_dir(dataset, task)
    if not folder.exists():
        return []
    out = []
    for path in sorted(folder.glob("*.jsonl")):
        judge = judge_of_file(path)
        if judge is not None and _has_record(path):
            out.append(judge)
    return out


def _has_record(path: Path) -> bool:
    try:
        with open(path, "rb") as fh:
            for line in fh:
                if line.strip():
                    return line.endswith(b"\n") and isinstance(_loads(line), dict)
    except OSError:
        return False
    return False


def _loads(line: bytes) -> Any:
    try:
        return json.loads(line)
    except ValueError:
        return None


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
    require_writable("choose the GT judge")
    get_task(task, ws)
    judges = [j["judge"] for j in list_judges(ws, dataset, task)]
    if judge not in judges:
        raise UnknownNameError(f"judge of {dataset}/{task}", judge, judges)
    settings = _read_settings(ws, dataset, task)
    settings.update({"gt_judge": judge, "updated_at": now_iso()})
    write_json_atomic(_settings_path(ws, dataset, task), settings)


def get_gt_judge(ws: Workspace, dataset: str, task: str) -> str | None:
    """The recorded GT judge, else the only judge, else None (no judge or several)."""
    return _pick_gt(judge_names(ws, dataset, task), _read_settings(ws, dataset, task).get("gt_judge"))


def resolve_judge(ws: Workspace, dataset: str, task: str, judge: str | None) -> str:
    """``judge`` if given (it must have a log), else the GT judge; a clear error otherwise."""
    judges = judge_names(ws, dataset, task)
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


_RAW_JUDGMENT_COLUMNS = ("business_id", "review_id", "idx", "text_hash", "fields", "excerpt", "parse_error", "judge",
                         "prompt_version", "created_at", "confidence")


def load_raw_judgments(ws: Workspace, dataset: str, task: str, judge: str | None = None) -> pl.DataFrame:
    """The latest judgment per review of one judge as the judge wrote it (no human overrides),
    review metadata joined, sorted by (business_id, idx); stale judgments (another text) left out.

    Columns: business_id, review_id, idx, date, stars, useful, name, categories, the task's
    schema fields, excerpt, parse_error, judge, overridden (False), override_id (null),
    prompt_version, created_at, confidence. ``judge=None`` takes the GT judge (:func:`resolve_judge`).
    GT reads :func:`core.judgments.load_judgments`, which applies the overrides on top.

    A large log's result is kept beside it as Parquet while the log, the dataset's lock and the
    task's fields are as they were (reading 1 M judgments and checking their texts costs seconds).
    """
    spec = get_task(task, ws)
    judge = resolve_judge(ws, dataset, task, judge)
    path = judgment_path(ws, dataset, task, judge)
    context = _raw_context(ws, dataset, spec)
    frame, _ = stamped_frame(path, "raw", partial(_raw_judgments, ws, dataset, spec, judge), context=context)
    return frame


def _raw_context(ws: Workspace, dataset: str, spec: Task) -> str:
    """What a kept :func:`load_raw_judgments` depends on besides its log: the dataset (texts and
    metadata, through its lock) and the task's fields."""
    return json.dumps({"dataset": file_stamp(ws.dataset_dir(dataset) / "dataset.lock.json"),
                       "fields": list(spec.field_names), "columns": judgment_columns(spec)})


def stale_judgments(ws: Workspace, dataset: str, task: str, judge: str) -> int:
    """:func:`~core.judgments.store.stale_count`, as :func:`load_raw_judgments` kept it beside a large
    log (the ``gt`` command loads the log, then reports this count)."""
    spec = get_task(task, ws)
    kept = stamped_extra(judgment_path(ws, dataset, task, judge), "raw", context=_raw_context(ws, dataset, spec))
    if isinstance(kept, dict) and isinstance(kept.get("stale"), int):
        return int(kept["stale"])
    return stale_count(ws, dataset, task, judge)


def _raw_judgments(ws: Workspace, dataset: str, spec: Task, judge: str) -> tuple[pl.DataFrame, dict[str, Any]]:
    """(what :func:`load_raw_judgments` returns, {"stale": review keys with only stale judgments})."""
    log = read_log(ws, dataset, spec.task_id, judge, columns=_RAW_JUDGMENT_COLUMNS)
    current, stale = split_stale(ws, dataset, log)
    n_stale = 0 if stale.height == 0 else (
        stale.select(KEY).unique().join(current.select(KEY).unique(), on=list(KEY), how="anti").height)
    log = latest(current)
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
    return df.select(judgment_columns(spec)).sort(list(KEY)), {"stale": n_stale}


def judgment_columns(spec: Task) -> list[str]:
    """The columns of a loaded judgments frame, in order."""
    return [*META_COLUMNS, *spec.field_names, "excerpt", "parse_error", "judge", "overridden",
            "override_id", "prompt_version", "created_at", "confidence"]

"""Human overrides of judgments (SPEC §2.5), kept apart from the judgments they correct.

``overrides/{dataset}/{task}.jsonl`` is append-only; one record per action::

    {override_id, task, dataset, business_id, review_id, idx, original, corrected, reason,
     author, created_at, reverts}

A revert is a new record whose ``reverts`` names the override it withdraws; nothing is deleted,
so the history (who, when, why) stays. The active overrides of a review are its non-reverted
override records, their ``corrected`` values merged in log order (a later one wins per field).
They are applied by :func:`core.judgments.load_judgments` (which sits above this module and the store), hence in every GT computation, for
every formula and every K, whichever judge's judgments are loaded.
"""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from pathlib import Path
from typing import Any

import polars as pl

from core.base.clock import now_iso
from core.base.errors import DataError, UnknownNameError, WorkbenchError
from core.base.files import append_jsonl, read_json, read_jsonl_log
from core.base.settings import require_writable
from core.datasets import scan_reviews
from core.judgments.catalog import get_gt_judge, load_raw_judgments
from core.tasks import Task, get_task
from core.workspace import Workspace

ADDM_AUTHOR = "addm-import"




def _reviews(ws: Workspace, dataset: str) -> pl.DataFrame:
    if not ws.dataset_dir(dataset).exists():
        return pl.DataFrame(schema={"business_id": pl.String, "review_id": pl.String, "idx": pl.Int64})
    return scan_reviews(ws, dataset).select("business_id", "review_id", pl.col("idx").cast(pl.Int64)).collect()


def _resolve_key(reviews: pl.DataFrame, business_id: str | None, review_id: str | None,
                 idx: int | None) -> tuple[str | None, str | None, int | None] | None:
    """(business_id, review_id, idx) of the dataset review matching the given parts, or None."""
    if review_id:
        hit = reviews.filter(pl.col("review_id") == review_id)
        if business_id and business_id != "unknown":
            hit = hit.filter(pl.col("business_id") == business_id)
    elif business_id is not None and idx is not None:
        hit = reviews.filter((pl.col("business_id") == business_id) & (pl.col("idx") == idx))
    else:
        return None
    if hit.height == 0:
        return None
    row = hit.row(0, named=True)
    return row["business_id"], row["review_id"], row["idx"]


def _check_corrected(spec: Task, corrected: Any, *, strict: bool, path: str | None = None,
                     where: str = "corrected") -> list[str]:
    """Validate corrected values; returns the keys outside the schema (an error when ``strict``)."""
    if not isinstance(corrected, dict) or not corrected:
        raise DataError("expected a non-empty mapping of field -> value", path=path, field=where)
    skipped = []
    for name, value in corrected.items():
        if name not in spec.field_names:
            if strict:
                raise DataError(f"not a {spec.task_id} field; valid: {', '.join(spec.field_names)}",
                                path=path, field=f"{where}.{name}")
            skipped.append(name)
        elif value not in spec.field(name).values:
            raise DataError(f"{value!r} not in [{', '.join(spec.field(name).values)}]", path=path,
                            field=f"{where}.{name}")
    return skipped


def _current_fields(ws: Workspace, dataset: str, task: str, business_id: str | None,
                    idx: int | None) -> dict[str, Any]:
    """The GT judge's fields of one review; empty when there is no GT judge yet (nothing judged, or
    several judges and none chosen). A broken judgment log raises its DataError (file and line):
    an override must not record an empty ``original`` because a file could not be read."""
    judge = get_gt_judge(ws, dataset, task)
    if judge is None:
        return {}
    df = load_raw_judgments(ws, dataset, task, judge)
    hit = df.filter((pl.col("business_id") == business_id) & (pl.col("idx") == idx))
    if hit.height == 0:
        return {}
    row = hit.row(0, named=True)
    return {f: row[f] for f in get_task(task, ws).field_names}


def add_override(
    ws: Workspace, dataset: str, task: str, *, business_id: str | None = None, idx: int | None = None,
    review_id: str | None = None, corrected: dict[str, str], reason: str, author: str,
    original: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Record a correction of one review's judgment; returns the stored record.

    The review is named by ``review_id`` or by ``(business_id, idx)`` and must exist in the
    dataset. ``corrected`` maps schema fields to enum values (validated). ``original`` defaults to
    the fields of the current GT judgment of that review (empty when there is none).
    """
    require_writable("record an override")
    spec = get_task(task, ws)
    _check_corrected(spec, corrected, strict=True)
    if not (reason or "").strip() or not (author or "").strip():
        raise ValueError("an override needs a reason and an author")
    key = _resolve_key(_reviews(ws, dataset), business_id, review_id, idx)
    if key is None:
        raise WorkbenchError(
            f"no review business_id={business_id!r} idx={idx!r} review_id={review_id!r} in dataset {dataset!r}"
        )
    bid, rid, ridx = key
    record = {
        "override_id": uuid.uuid4().hex[:16], "task": task, "dataset": dataset,
        "business_id": bid, "review_id": rid, "idx": ridx,
        "original": original if original is not None else _current_fields(ws, dataset, task, bid, ridx),
        "corrected": dict(corrected), "reason": reason.strip(), "author": author.strip(),
        "created_at": now_iso(), "reverts": None,
    }
    append_jsonl(ws.overrides_path(dataset, task), [record])
    return record


def _log(ws: Workspace, dataset: str, task: str) -> list[dict[str, Any]]:
    get_task(task, ws)
    return read_jsonl_log(ws.overrides_path(dataset, task))


def revert_override(ws: Workspace, dataset: str, task: str, override_id: str, *, reason: str,
                    author: str) -> dict[str, Any]:
    """Withdraw an active override by appending a revert record; returns that record."""
    require_writable("revert an override")
    if not (reason or "").strip() or not (author or "").strip():
        raise ValueError("a revert needs a reason and an author")
    records = _log(ws, dataset, task)
    targets = {r["override_id"]: r for r in records if not r.get("reverts")}
    if override_id not in targets:
        raise UnknownNameError("override", override_id, list(targets))
    if any(r.get("reverts") == override_id for r in records):
        raise WorkbenchError(f"override {override_id} is already reverted")
    target = targets[override_id]
    record = {
        "override_id": uuid.uuid4().hex[:16], "task": task, "dataset": dataset,
        "business_id": target["business_id"], "review_id": target.get("review_id"), "idx": target.get("idx"),
        "original": target.get("corrected") or {}, "corrected": {}, "reason": reason.strip(),
        "author": author.strip(), "created_at": now_iso(), "reverts": override_id,
    }
    append_jsonl(ws.overrides_path(dataset, task), [record])
    return record


def list_overrides(ws: Workspace, dataset: str, task: str) -> list[dict[str, Any]]:
    """Every override record in log order, with ``status`` (active / reverted / revert) and
    ``reverted_by`` (the id of the revert record, or None)."""
    records = _log(ws, dataset, task)
    reverted_by = {r["reverts"]: r["override_id"] for r in records if r.get("reverts")}
    out = []
    for r in records:
        status = "revert" if r.get("reverts") else ("reverted" if r["override_id"] in reverted_by else "active")
        out.append({**r, "status": status, "reverted_by": reverted_by.get(r["override_id"])})
    return out


def active_overrides(ws: Workspace, dataset: str, task: str) -> list[dict[str, Any]]:
    """Per review, the merged corrections of its non-reverted overrides (later wins per field).

    Each item: business_id, review_id, idx (None when the review was not found in the dataset),
    corrected (merged, schema fields only), override_id (the latest), override_ids, reason,
    author, created_at (of the latest).
    """
    spec = get_task(task, ws)
    merged: dict[tuple, dict[str, Any]] = {}
    for r in list_overrides(ws, dataset, task):
        if r["status"] != "active":
            continue
        key = (r["business_id"], r["idx"]) if r.get("idx") is not None else (r["business_id"], r.get("review_id"))
        item = merged.setdefault(key, {"business_id": r["business_id"], "review_id": r.get("review_id"),
                                       "idx": r.get("idx"), "corrected": {}, "override_ids": []})
        item["corrected"].update({k: v for k, v in (r.get("corrected") or {}).items() if k in spec.field_names})
        item["override_ids"].append(r["override_id"])
        item.update(override_id=r["override_id"], reason=r.get("reason"), author=r.get("author"),
                    created_at=r.get("created_at"))
    return [m for m in merged.values() if m["corrected"]]


def _override_frame(items: list[dict[str, Any]], spec: Task, with_idx: bool) -> pl.DataFrame:
    schema = {"business_id": pl.String, "review_id": pl.String, "idx": pl.Int64, "_ov_id": pl.String,
              **{f"_ov_{f}": pl.String for f in spec.field_names}}
    rows = [
        {"business_id": m["business_id"], "review_id": m["review_id"], "idx": m["idx"], "_ov_id": m["override_id"],
         **{f"_ov_{f}": m["corrected"].get(f) for f in spec.field_names}}
        for m in items if (m["idx"] is not None) == with_idx
    ]
    return pl.DataFrame(rows, schema=schema)


def apply_overrides(ws: Workspace, dataset: str, spec: Task, df: pl.DataFrame) -> pl.DataFrame:
    """Apply the active overrides to a judgments frame (columns of :func:`load_judgments`).

    Overrides with an idx match on (business_id, idx); those whose review was not found in the
    dataset match on review_id. Sets ``overridden`` and ``override_id``; clears ``parse_error``
    on an overridden row whose fields are then all inside the schema.
    """
    items = active_overrides(ws, dataset, spec.task_id)
    if not items:
        return df
    ov_cols = ["_ov_id", *[f"_ov_{f}" for f in spec.field_names]]
    by_key = _override_frame(items, spec, True).drop("review_id")
    by_rid = _override_frame(items, spec, False).drop("business_id", "idx")
    out = df.join(by_key, on=["business_id", "idx"], how="left")
    out = out.join(by_rid.rename({c: c + "_r" for c in ov_cols}), on="review_id", how="left")
    out = out.with_columns(pl.coalesce(c, c + "_r").alias(c) for c in ov_cols)
    hit = pl.col("_ov_id").is_not_null()
    out = out.with_columns(
        *[pl.coalesce(f"_ov_{f}", f).alias(f) for f in spec.field_names],
        (pl.col("overridden") | hit).alias("overridden"),
        pl.coalesce("_ov_id", "override_id").alias("override_id"),
    )
    valid = pl.all_horizontal(pl.col(f).is_in(list(spec.field(f).values)).fill_null(False) for f in spec.field_names)
    out = out.with_columns(
        pl.when(hit & valid).then(pl.lit(None, pl.String)).otherwise(pl.col("parse_error")).alias("parse_error")
    )
    return out.drop(*ov_cols, *[c + "_r" for c in ov_cols])


def _addm_id(topic: str, entry: dict[str, Any]) -> str:
    blob = json.dumps([topic, entry.get("review_id"), entry.get("business_id"), entry.get("corrected"),
                       entry.get("reason")], sort_keys=True, ensure_ascii=False)
    return "addm-" + hashlib.sha256(blob.encode("utf-8")).hexdigest()[:12]


def task_topics(spec: Task) -> list[str]:
    """The ADDM topics a task covers: the prefixes of its policy ids (``G1_allergy_V2`` -> ``G1_allergy``)."""
    return sorted({re.sub(r"_V\d+$", "", p) for p in spec.policies})


def import_addm_overrides(ws: Workspace, dataset: str, path: str | Path, *, topic: str = "G1_allergy",
                          task: str = "G1a") -> dict[str, Any]:
    """Import one topic of an ADDM ``judgment_overrides.json`` as overrides of ``task``.

    ``original``/``corrected`` are stored as given; only the keys that are fields of the task's
    schema (e.g. incident_severity, account_type) take effect, the rest (e.g.
    ``is_allergy_related``) are reported in ``skipped_fields``. Review keys are resolved from the
    dataset by review_id (idx stays None when the review is not there). Importing the same file
    twice adds nothing (ids derive from the entry). The topic must be one of the task's
    (:func:`task_topics`), else nothing is imported. Returns a report dict.
    """
    require_writable("import overrides")
    spec, path = get_task(task, ws), Path(path)
    if topic not in task_topics(spec):
        # another topic's corrections would silently rewrite this task's judgments (G1_dietary into G1a)
        covered = ", ".join(task_topics(spec)) or "none"
        raise WorkbenchError(f"topic {topic!r} does not belong to task {spec.task_id} (its topics: {covered}); "
                             "nothing imported")
    data = read_json(path)
    if not isinstance(data, dict) or not isinstance(data.get(topic), list):
        topics = [k for k, v in data.items() if isinstance(v, list)] if isinstance(data, dict) else []
        raise UnknownNameError(f"topic in {path.name}", topic, topics)
    existing = {r["override_id"] for r in _log(ws, dataset, task)}
    reviews = _reviews(ws, dataset)
    skipped: dict[str, int] = {}
    rows, n_unresolved, n_present = [], 0, 0
    for i, entry in enumerate(data[topic]):
        where = f"{topic}[{i}]"
        if not isinstance(entry, dict) or not isinstance(entry.get("review_id"), str):
            raise DataError("expected an object with a review_id string", path=path, field=where)
        for name in _check_corrected(spec, entry.get("corrected"), strict=False, path=str(path),
                                     where=f"{where}.corrected"):
            skipped[name] = skipped.get(name, 0) + 1
        oid = _addm_id(topic, entry)
        if oid in existing:
            n_present += 1
            continue
        key = _resolve_key(reviews, entry.get("business_id"), entry["review_id"], None)
        n_unresolved += key is None
        bid, rid, idx = key or (entry.get("business_id"), entry["review_id"], None)
        rows.append({
            "override_id": oid, "task": task, "dataset": dataset, "business_id": bid, "review_id": rid,
            "idx": idx, "original": entry.get("original") or {}, "corrected": entry["corrected"],
            "reason": entry.get("reason") or "", "author": ADDM_AUTHOR, "created_at": now_iso(), "reverts": None,
            "source": {"file": path.name, "topic": topic, "index": i},
        })
        existing.add(oid)
    append_jsonl(ws.overrides_path(dataset, task), rows)
    return {"topic": topic, "task": task, "dataset": dataset, "total": len(data[topic]), "imported": len(rows),
            "already_present": n_present, "without_idx": n_unresolved, "skipped_fields": skipped}

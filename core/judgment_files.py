"""xnot judgment files (SPEC §2.4): import, export, and the extraction (resume) log.

``judgments.json``::

    {task_id, extraction_prompt_version, extracted_at,
     judgments: {<restaurant name>: {restaurant_meta: {categories},
                                     reviews: [{idx, date, stars, useful, <fields>, excerpt}]}}}

The file is keyed by restaurant name and idx, without review_id or text. Importing into a dataset
that does not exist creates it from the file (restaurants with a stable id derived from the name,
one review row per judged review with ``text`` null); importing into an existing dataset matches
by name and idx and checks that the dates agree. A value outside the task's enums is stored as a
parse error, never replaced.

``extraction_log.json`` (one per judge: ``judgments/{dataset}/{task}/{judge}.extraction_log.json``)::

    {task_id, started, completed_restaurants: [...], progress: {restaurants_processed,
     restaurants_total, reviews_extracted}, last_updated}
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections import Counter
from pathlib import Path
from typing import Any

import polars as pl

from core.datasets import scan_restaurants, write_dataset
from core.errors import DataError, WorkbenchError
from core.files import read_json, write_json_atomic
from core.judgments import append_judgments, latest, load_judgments, now_iso, read_log
from core.progress import Progress, no_progress
from core.tasks import Task, get_task
from core.workspace import Workspace, check_name

META_KEYS = ("idx", "date", "stars", "useful")


def stable_id(*parts: object) -> str:
    """A 22-character URL-safe id derived from ``parts`` (the shape of a Yelp id).

    >>> stable_id("Vetri Cucina")
    'yBJLbQCQUWkCGc9NnwGV9E'
    >>> len(stable_id("Vetri Cucina", 39))
    22
    """
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode("utf-8")).digest()
    return base64.urlsafe_b64encode(digest).decode("ascii")[:22]


def _load_file(path: Path, spec: Task) -> dict[str, Any]:
    data = read_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("judgments"), dict):
        raise DataError("expected an object with a 'judgments' mapping", path=path, field="judgments")
    if data.get("task_id") not in (None, spec.task_id):
        raise DataError(f"file is for task {data.get('task_id')!r}, not {spec.task_id}", path=path, field="task_id")
    return data


def _check_review(rv: Any, where: str, path: Path) -> None:
    if not isinstance(rv, dict):
        raise DataError("expected an object", path=path, field=where)
    if isinstance(rv.get("idx"), bool) or not isinstance(rv.get("idx"), int) or rv["idx"] < 0:
        raise DataError(f"expected an int >= 0, got {rv.get('idx')!r}", path=path, field=f"{where}.idx")
    if not isinstance(rv.get("date"), str):
        raise DataError("expected a date string", path=path, field=f"{where}.date")
    for key in ("stars", "useful"):
        if rv.get(key) is not None and (isinstance(rv[key], bool) or not isinstance(rv[key], (int, float))):
            raise DataError(f"expected a number, got {rv[key]!r}", path=path, field=f"{where}.{key}")


def _flatten(data: dict[str, Any], path: Path) -> tuple[pl.DataFrame, pl.DataFrame, list[dict[str, Any]]]:
    """(restaurants name/categories, reviews name/idx/date/stars/useful, judged review objects)."""
    rest_rows, review_rows, judged = [], [], []
    for name, entry in data["judgments"].items():
        where = f"judgments[{name!r}]"
        if not isinstance(entry, dict) or not isinstance(entry.get("reviews"), list):
            raise DataError("expected {restaurant_meta, reviews: [...]}", path=path, field=where)
        meta = entry.get("restaurant_meta") or {}
        rest_rows.append({"name": name, "categories": meta.get("categories") if isinstance(meta, dict) else None})
        seen: set[int] = set()
        for i, rv in enumerate(entry["reviews"]):
            _check_review(rv, f"{where}.reviews[{i}]", path)
            if rv["idx"] in seen:
                raise DataError(f"idx {rv['idx']} repeats", path=path, field=f"{where}.reviews[{i}].idx")
            seen.add(rv["idx"])
            review_rows.append({"name": name, **{k: rv.get(k) for k in META_KEYS}})
            judged.append({"name": name, "review": rv})
    restaurants = pl.DataFrame(rest_rows, schema={"name": pl.String, "categories": pl.String})
    reviews = pl.DataFrame(review_rows, schema={"name": pl.String, "idx": pl.Int64, "date": pl.String,
                                                "stars": pl.Float64, "useful": pl.Int64})
    return restaurants, reviews, judged


def _create_dataset(ws: Workspace, dataset: str, path: Path, restaurants: pl.DataFrame,
                    reviews: pl.DataFrame) -> None:
    bid = pl.col("name").map_elements(stable_id, return_dtype=pl.String)
    rid = pl.struct("name", "idx").map_elements(lambda s: stable_id(s["name"], s["idx"]), return_dtype=pl.String)
    write_dataset(
        ws, dataset,
        restaurants.with_columns(bid.alias("business_id")),
        reviews.with_columns(bid.alias("business_id"), rid.alias("review_id"), pl.col("idx").cast(pl.Int32))
        .drop("name"),
        sources=[path], layout="judgments",
    )


def _match_existing(ws: Workspace, dataset: str, path: Path, reviews: pl.DataFrame) -> pl.DataFrame:
    """Name/idx of the file -> business_id, review_id of the dataset; DataError on any mismatch."""
    rest = scan_restaurants(ws, dataset).select("business_id", "name").collect()
    dup = rest.filter(pl.col("name").is_duplicated())["name"].unique().to_list()
    from core.datasets import scan_reviews

    ds = scan_reviews(ws, dataset).select("business_id", "review_id", pl.col("idx").cast(pl.Int64),
                                          pl.col("date").alias("ds_date")).collect()
    matched = reviews.join(rest, on="name", how="left").join(ds, on=["business_id", "idx"], how="left")
    problems = [f"restaurant name {n!r} is ambiguous in {dataset}" for n in sorted(set(dup) & set(reviews["name"]))]
    for row in matched.filter(pl.col("business_id").is_null())["name"].unique().sort().to_list():
        problems.append(f"restaurant {row!r} is not in dataset {dataset!r}")
    for row in matched.filter(pl.col("business_id").is_not_null() & pl.col("review_id").is_null()).iter_rows(named=True):
        problems.append(f"{row['name']!r} has no review idx {row['idx']}")
    for row in matched.filter(pl.col("ds_date").is_not_null() & (pl.col("ds_date") != pl.col("date"))).iter_rows(named=True):
        problems.append(f"{row['name']!r} idx {row['idx']}: date {row['date']} != dataset's {row['ds_date']}")
    if problems:
        more = f" (and {len(problems) - 5} more)" if len(problems) > 5 else ""
        raise DataError(f"does not match dataset {dataset!r}: {'; '.join(problems[:5])}{more}", path=path)
    return matched.select("name", "idx", "business_id", "review_id")


def import_xnot_judgments(ws: Workspace, path: str | Path, *, task: str, dataset: str, judge: str | None = None,
                          progress: Progress | None = None) -> dict[str, Any]:
    """Import an xnot ``judgments.json`` as judgments of ``judge`` (default ``xnot-import-<version>``).

    Creates ``dataset`` from the file when it does not exist. Judgments identical to the judge's
    stored ones are not appended again, so re-importing is harmless. Returns a report dict.
    """
    spec, path, progress = get_task(task), Path(path), progress or no_progress
    check_name("dataset", dataset)
    data = _load_file(path, spec)
    version = str(data.get("extraction_prompt_version") or "unknown")
    judge = check_name("judge", judge or f"xnot-import-{version}")
    restaurants, reviews, judged = _flatten(data, path)
    progress(0, 3, "matching reviews")
    created = not ws.dataset_dir(dataset).exists()
    if created:
        _create_dataset(ws, dataset, path, restaurants, reviews)
    keys = _match_existing(ws, dataset, path, reviews)
    lookup = {(n, i): (b, r) for n, i, b, r in keys.iter_rows()}
    progress(1, 3, "validating judgments")
    stored = _stored_signatures(ws, dataset, spec, judge)
    created_at = str(data.get("extracted_at") or now_iso())
    records, n_errors, n_same = [], 0, 0
    for item in judged:
        rv = item["review"]
        fields, parse_error = spec.validate_fields(rv)
        business_id, review_id = lookup[(item["name"], rv["idx"])]
        excerpt = rv.get("excerpt")
        n_errors += parse_error is not None
        if stored.get((business_id, rv["idx"])) == _signature(fields, excerpt, parse_error):
            n_same += 1
            continue
        records.append({
            "business_id": business_id, "review_id": review_id, "idx": rv["idx"], "prompt_version": version,
            "created_at": created_at, "fields": fields, "excerpt": excerpt, "parse_error": parse_error,
            "raw": json.dumps(rv, ensure_ascii=False),
        })
    progress(2, 3, "storing judgments")
    appended = append_judgments(ws, dataset, spec.task_id, judge, records)
    progress(3, 3, "done")
    return {"task": spec.task_id, "dataset": dataset, "judge": judge, "prompt_version": version,
            "dataset_created": created, "restaurants": restaurants.height, "judgments": len(judged),
            "appended": appended, "unchanged": n_same, "parse_errors": n_errors}


def _signature(fields: dict[str, Any], excerpt: Any, parse_error: Any) -> str:
    return json.dumps([fields, excerpt, parse_error is not None], sort_keys=True, default=str)


def _stored_signatures(ws: Workspace, dataset: str, spec: Task, judge: str) -> dict[tuple[str, int], str]:
    log = latest(read_log(ws, dataset, spec.task_id, judge))
    out = {}
    for row in log.iter_rows(named=True):
        fields = {f: (row["fields"] or {}).get(f) for f in spec.field_names}
        out[(row["business_id"], row["idx"])] = _signature(fields, row["excerpt"], row["parse_error"])
    return out


def export_xnot_judgments(ws: Workspace, dataset: str, task: str, judge: str, out_path: str | Path, *,
                          apply_overrides: bool = False, include_empty: bool = True) -> dict[str, Any]:
    """Write one judge's judgments of a dataset in the xnot layout (atomically); returns a report.

    Restaurants are keyed by name (sorted); with ``include_empty`` every restaurant of the dataset
    appears, those without judgments with an empty list (as xnot lists restaurants without
    keyword matches). Parse-error judgments cannot be expressed in the layout and are left out
    (counted in the report). ``extracted_at`` is the newest ``created_at`` of the exported
    judgments; ``extraction_prompt_version`` their prompt version (the most common one if mixed).
    """
    spec = get_task(task, ws)
    df = load_judgments(ws, dataset, task, judge, apply_overrides=apply_overrides)
    skipped = int(df["parse_error"].is_not_null().sum())
    df = df.filter(pl.col("parse_error").is_null())
    rest = scan_restaurants(ws, dataset).select("business_id", "name", "categories").collect()
    if rest["name"].is_duplicated().any():
        raise WorkbenchError(f"dataset {dataset!r} has restaurants sharing a name: the xnot layout is keyed by name")
    by_business: dict[str, list[dict[str, Any]]] = {}
    for row in df.iter_rows(named=True):
        by_business.setdefault(row["business_id"], []).append(
            {"idx": row["idx"], "date": row["date"], "stars": row["stars"], "useful": row["useful"],
             **{f: row[f] for f in spec.field_names}, "excerpt": row["excerpt"] if row["excerpt"] is not None else ""}
        )
    judgments = {}
    for bid, name, categories in rest.sort("name").iter_rows():
        if by_business.get(bid) or include_empty:
            judgments[name] = {"restaurant_meta": {"categories": categories}, "reviews": by_business.get(bid, [])}
    versions = Counter(v for v in df["prompt_version"].to_list() if v)
    payload = {
        "task_id": spec.task_id,
        "extraction_prompt_version": versions.most_common(1)[0][0] if versions else spec.prompt_version,
        "extracted_at": df["created_at"].max() if df.height else now_iso(),
        "judgments": judgments,
    }
    write_json_atomic(out_path, payload)
    return {"path": str(out_path), "restaurants": len(judgments), "judgments": df.height,
            "skipped_parse_errors": skipped, "prompt_versions": dict(versions)}


# -- extraction log -------------------------------------------------------------------------------

def extraction_log_path(ws: Workspace, dataset: str, task: str, judge: str) -> Path:
    """Where a judge's extraction log lives (beside its judgment log)."""
    return ws.judgments_dir(dataset, task) / f"{check_name('judge', judge)}.extraction_log.json"


def new_extraction_log(task: str, restaurants_total: int) -> dict[str, Any]:
    """A fresh log in the SPEC §2.4 layout."""
    now = now_iso()
    return {"task_id": get_task(task).task_id, "started": now, "completed_restaurants": [],
            "progress": {"restaurants_processed": 0, "restaurants_total": int(restaurants_total),
                         "reviews_extracted": 0}, "last_updated": now}


def mark_restaurant_done(log: dict[str, Any], restaurant: str, reviews_extracted: int) -> dict[str, Any]:
    """Record a completed restaurant (idempotent) and the reviews it added; returns ``log``."""
    if restaurant not in log["completed_restaurants"]:
        log["completed_restaurants"].append(restaurant)
        log["progress"]["reviews_extracted"] += int(reviews_extracted)
    log["progress"]["restaurants_processed"] = len(log["completed_restaurants"])
    log["last_updated"] = now_iso()
    return log


def read_extraction_log(ws: Workspace, dataset: str, task: str, judge: str) -> dict[str, Any] | None:
    """The judge's extraction log, or None; DataError names the file and field when malformed."""
    path = extraction_log_path(ws, dataset, task, judge)
    if not path.exists():
        return None
    log = read_json(path)
    if not isinstance(log, dict):
        raise DataError("expected an object", path=path)
    if not isinstance(log.get("completed_restaurants"), list):
        raise DataError("expected a list", path=path, field="completed_restaurants")
    progress = log.get("progress")
    if not isinstance(progress, dict) or not all(
        isinstance(progress.get(k), int) for k in ("restaurants_processed", "restaurants_total", "reviews_extracted")
    ):
        raise DataError("expected {restaurants_processed, restaurants_total, reviews_extracted} integers",
                        path=path, field="progress")
    return log


def write_extraction_log(ws: Workspace, dataset: str, task: str, judge: str, log: dict[str, Any]) -> Path:
    """Write the judge's extraction log atomically; returns its path."""
    get_task(task, ws)
    path = extraction_log_path(ws, dataset, task, judge)
    write_json_atomic(path, log)
    return path

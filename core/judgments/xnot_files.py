"""xnot judgment files (SPEC §2.4): import, export, and the extraction (resume) log.

``judgments.json``::

    {task_id, extraction_prompt_version, extracted_at,
     judgments: {<restaurant name>: {restaurant_meta: {categories},
                                     reviews: [{idx, date, stars, useful, <fields>, excerpt}]}}}

The file is keyed by restaurant name and idx, without review_id or text. Importing attaches the
judgments to the dataset that has the texts: matched by name (case-insensitive) and idx, checking
date and stars where both have them; what does not match is reported, not stored. Only when no
dataset holds those restaurants is one created from the file (ids prefixed ``synthetic:``, one
review row per judged review with ``text`` null). A value outside the task's enums is stored as a
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

from core.base.errors import DataError, WorkbenchError
from core.base.files import read_json, write_json_atomic
from core.base.progress import Progress, no_progress
from core.base.settings import require_writable
from core.datasets import scan_restaurants, scan_reviews, write_dataset
from core.judgments import (
    append_judgments,
    check_judge_id,
    judge_file,
    latest,
    load_judgments,
    now_iso,
    read_log,
)
from core.tasks import Task, check_task_id, get_task
from core.workspace import Workspace, check_name

META_KEYS = ("idx", "date", "stars", "useful")


SYNTHETIC_PREFIX = "synthetic:"


def stable_id(*parts: object) -> str:
    """A 22-character URL-safe id derived from ``parts``.

    >>> stable_id("Vetri Cucina")
    'yBJLbQCQUWkCGc9NnwGV9E'
    >>> len(stable_id("Vetri Cucina", 39))
    22
    """
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode("utf-8")).digest()
    return base64.urlsafe_b64encode(digest).decode("ascii")[:22]


def synthetic_id(*parts: object) -> str:
    """An id for a restaurant or review known only from a judgments file: visibly not a Yelp id.

    >>> synthetic_id("Vetri Cucina")
    'synthetic:yBJLbQCQUWkCGc9NnwGV9E'
    """
    return SYNTHETIC_PREFIX + stable_id(*parts)


def _load_file(ws: Workspace, path: Path, task: str | None) -> tuple[dict[str, Any], Task]:
    """The file and its task: ``task`` when given (it must agree with the file), else the file's ``task_id``."""
    data = read_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("judgments"), dict):
        raise DataError("expected an object with a 'judgments' mapping", path=path, field="judgments")
    named = data.get("task_id")
    if task is None and not isinstance(named, str):
        raise DataError("the file names no task: pass --task", path=path, field="task_id")
    spec = get_task(task if task is not None else str(named), ws)
    if named not in (None, spec.task_id):
        raise DataError(f"file is for task {named!r}, not {spec.task_id}", path=path, field="task_id")
    return data, spec


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
    bid = pl.col("name").map_elements(synthetic_id, return_dtype=pl.String)
    rid = pl.struct("name", "idx").map_elements(lambda s: synthetic_id(s["name"], s["idx"]), return_dtype=pl.String)
    write_dataset(
        ws, dataset,
        restaurants.with_columns(bid.alias("business_id")),
        reviews.with_columns(bid.alias("business_id"), rid.alias("review_id"), pl.col("idx").cast(pl.Int32))
        .drop("name"),
        sources=[path], layout="judgments",
    )


def _name_key(column: str = "name") -> pl.Expr:
    return pl.col(column).str.strip_chars().str.to_lowercase().alias("name_key")


def _restaurants_of(ws: Workspace, dataset: str) -> pl.DataFrame:
    return scan_restaurants(ws, dataset).select("business_id", "name").collect().with_columns(_name_key())


def _choose_dataset(ws: Workspace, dataset: str | None, names: list[str], path: Path) -> tuple[str, bool]:
    """(dataset to attach to, whether to create it from the file).

    A named dataset that exists is used; a named one that does not is created from the file only
    when no other dataset holds these restaurants (their texts would be split off otherwise).
    Without a name the workspace's only dataset is used.
    """
    existing = ws.datasets()
    if dataset is None:
        if len(existing) == 1:
            return existing[0], False
        if not existing:
            raise WorkbenchError("no dataset in the workspace: import the texts first "
                                 "(`datasets import`), or pass --dataset NAME to create one from the file (no texts)")
        raise WorkbenchError(f"several datasets ({', '.join(existing)}): choose one with --dataset")
    check_name("dataset", dataset)
    if dataset in existing:
        return dataset, False
    keys = {n.strip().lower() for n in names}
    overlap = {d: int(_restaurants_of(ws, d)["name_key"].is_in(list(keys)).sum()) for d in existing}
    holders = sorted((n, d) for d, n in overlap.items() if n)
    if holders:
        n, best = holders[-1]
        raise WorkbenchError(f"dataset {dataset!r} does not exist, but {best!r} holds {n} of the file's "
                             f"{len(keys)} restaurants with their texts: use --dataset {best}")
    return dataset, True


def _same_date(a: str | None, b: str | None) -> bool:
    """Dates agree to the second, whatever the separator ('2017-09-23 01:18:47' == '2017-09-23T01:18:47')."""
    return a is None or b is None or a.replace("T", " ")[:19] == b.replace("T", " ")[:19]


def _match_existing(ws: Workspace, dataset: str, reviews: pl.DataFrame) -> tuple[pl.DataFrame, list[dict[str, Any]]]:
    """Match the file's (name, idx) to the dataset: (matched name/idx/business_id/review_id, unmatched rows).

    Names match case-insensitively; a match must agree on date and stars where both have them.
    Each unmatched row says why: restaurant not in the dataset, ambiguous name, no such idx,
    date or stars differ.
    """
    rest = _restaurants_of(ws, dataset)
    ambiguous = set(rest.filter(pl.col("name_key").is_duplicated())["name_key"].to_list())
    rest = rest.filter(~pl.col("name_key").is_in(list(ambiguous))).drop("name")
    ds = scan_reviews(ws, dataset).select("business_id", "review_id", pl.col("idx").cast(pl.Int64),
                                          pl.col("date").alias("ds_date"), pl.col("stars").alias("ds_stars")).collect()
    joined = (reviews.with_columns(_name_key()).join(rest, on="name_key", how="left")
              .join(ds, on=["business_id", "idx"], how="left"))
    matched, unmatched = [], []
    for row in joined.iter_rows(named=True):
        kind, reason = None, None
        if row["name_key"] in ambiguous:
            kind, reason = "ambiguous name", f"several restaurants in {dataset!r} are named {row['name']!r}"
        elif row["business_id"] is None:
            kind, reason = "restaurant not in dataset", f"restaurant not in {dataset!r}"
        elif row["review_id"] is None:
            kind, reason = "no such idx", f"{dataset!r} has no review idx {row['idx']} for it"
        elif not _same_date(row["date"], row["ds_date"]):
            kind, reason = "date differs", f"date {row['date']} != dataset's {row['ds_date']}"
        elif row["stars"] is not None and row["ds_stars"] is not None and abs(row["stars"] - row["ds_stars"]) > 1e-9:
            kind, reason = "stars differ", f"stars {row['stars']} != dataset's {row['ds_stars']}"
        if kind:
            unmatched.append({"name": row["name"], "idx": row["idx"], "kind": kind, "reason": reason})
        else:
            matched.append({k: row[k] for k in ("name", "idx", "business_id", "review_id")})
    frame = pl.DataFrame(matched, schema={"name": pl.String, "idx": pl.Int64, "business_id": pl.String,
                                          "review_id": pl.String})
    return frame, unmatched


def import_xnot_judgments(ws: Workspace, path: str | Path, *, task: str | None = None, dataset: str | None = None,
                          judge: str | None = None, progress: Progress | None = None) -> dict[str, Any]:
    """Import an xnot ``judgments.json`` as judgments of ``judge`` (default ``xnot-import-<version>``).

    Args:
        ws: the workspace.
        path: the judgments file (SPEC §2.4).
        task: the task; default the file's ``task_id``.
        dataset: the dataset to attach to; default the workspace's only dataset. A dataset that does
            not exist is created from the file (``synthetic:`` ids, no texts) only when no other
            dataset holds these restaurants.
        judge: the judge id to store them under.
        progress: ``(done, total, message)`` callback.

    Judgments are attached by restaurant name (case-insensitive) and review idx, checking date and
    stars; those that do not match are reported (``unmatched``, with reasons) and not stored.
    Judgments identical to the judge's stored ones are not appended again, so re-importing is
    harmless. Returns a report dict.

    Raises:
        DataError: a malformed file, or no judged review matches the dataset.
        WorkbenchError: no dataset to attach to, or the named one is missing while another has the texts.
    """
    require_writable("import judgments")
    path, progress = Path(path), progress or no_progress
    data, spec = _load_file(ws, path, task)
    version = str(data.get("extraction_prompt_version") or "unknown")
    judge = check_judge_id(judge or f"xnot-import-{version}")
    restaurants, reviews, judged = _flatten(data, path)
    progress(0, 3, "matching reviews")
    dataset, created = _choose_dataset(ws, dataset, restaurants["name"].to_list(), path)
    if created:
        _create_dataset(ws, dataset, path, restaurants, reviews)
    keys, unmatched = _match_existing(ws, dataset, reviews)
    if keys.is_empty() and judged:
        examples = "; ".join(f"{u['name']!r} idx {u['idx']}: {u['reason']}" for u in unmatched[:3])
        raise DataError(f"none of the {len(judged):,} judged reviews matches dataset {dataset!r} ({examples})", path=path)
    lookup = {(n, i): (b, r) for n, i, b, r in keys.iter_rows()}
    progress(1, 3, "validating judgments")
    stored = _stored_signatures(ws, dataset, spec, judge)
    created_at = str(data.get("extracted_at") or now_iso())
    records, n_errors, n_same = [], 0, 0
    for item in judged:
        rv = item["review"]
        if (item["name"], rv["idx"]) not in lookup:
            continue
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
    ws.ensure()  # any folder holding datasets is a workspace
    progress(3, 3, "done")
    unmatched_restaurants = sorted({u["name"] for u in unmatched if u["kind"] == "restaurant not in dataset"})
    return {"task": spec.task_id, "dataset": dataset, "judge": judge, "prompt_version": version,
            "dataset_created": created, "restaurants": restaurants.height, "judgments": len(judged),
            "matched": keys.height, "unmatched": len(unmatched), "unmatched_restaurants": unmatched_restaurants,
            "unmatched_by_reason": dict(sorted(Counter(u["kind"] for u in unmatched).items())),
            "unmatched_examples": [u for u in unmatched if u["kind"] != "restaurant not in dataset"][:20], "appended": appended, "unchanged": n_same,
            "parse_errors": n_errors}


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
    return ws.judgments_dir(dataset, task) / f"{judge_file(judge)}.extraction_log.json"


def new_extraction_log(task: str, restaurants_total: int) -> dict[str, Any]:
    """A fresh log in the SPEC §2.4 layout."""
    now = now_iso()
    return {"task_id": check_task_id(task), "started": now, "completed_restaurants": [],
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

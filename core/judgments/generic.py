"""Judgments of any task in the generic JSONL layout (SPEC §2.4, last paragraph).

One judged review per line::

    {"business_id": "…", "review_id": "…", "fields": {"<field>": "<value>", …}, "excerpt": "…"}

The review must exist in the dataset (its ``idx`` comes from there). Field values are validated
against the task's enums; an out-of-enum or missing value is kept as a parse error naming its
line (never replaced by an enum value), as for G1a. A line that is not JSON, lacks the review key
or names an unknown review is a :class:`DataError` naming the file and line, and nothing is stored.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl

from core.base.errors import DataError
from core.base.files import jsonl_objects
from core.datasets import scan_reviews
from core.judgments import append_judgments, now_iso
from core.tasks import get_task
from core.workspace import Workspace, check_name


def is_generic_layout(path: str | Path) -> bool:
    """True when the file's first non-blank line is a JSON object with ``fields`` and ``review_id``."""
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                try:
                    first = json.loads(line)
                except json.JSONDecodeError:
                    return False
                return isinstance(first, dict) and "fields" in first and "review_id" in first
    return False


def _review_keys(ws: Workspace, dataset: str) -> dict[tuple[str, str], int]:
    keys = scan_reviews(ws, dataset).select("business_id", "review_id", pl.col("idx").cast(pl.Int64)).collect()
    return {(b, r): i for b, r, i in keys.iter_rows()}


def read_generic_judgments(path: str | Path, task: str, keys: dict[tuple[str, str], int], ws: Workspace | None,
                           ) -> list[dict[str, Any]]:
    """Parse and validate every line; records ready for :func:`core.judgments.append_judgments`."""
    spec, path = get_task(task, ws), Path(path)
    records = []
    for n, item in jsonl_objects(path):
        for key in ("business_id", "review_id"):
            if not isinstance(item.get(key), str) or not item[key]:
                raise DataError("expected a non-empty string", path=path, line=n, field=key)
        if not isinstance(item.get("fields"), dict):
            raise DataError("expected an object of field -> value", path=path, line=n, field="fields")
        idx = keys.get((item["business_id"], item["review_id"]))
        if idx is None:
            raise DataError(f"no review {item['review_id']!r} of restaurant {item['business_id']!r} in the dataset",
                            path=path, line=n, field="review_id")
        fields, problem = spec.validate_fields(item["fields"])
        excerpt = item.get("excerpt", item["fields"].get("excerpt"))
        records.append({
            "business_id": item["business_id"], "review_id": item["review_id"], "idx": idx,
            "fields": fields, "excerpt": excerpt if isinstance(excerpt, str) else None,
            "parse_error": None if problem is None else f"{path.name}:{n}: {problem}",
            "raw": json.dumps(item, ensure_ascii=False), "prompt_version": item.get("prompt_version"),
        })
    return records


def import_generic_judgments(ws: Workspace, path: str | Path, *, task: str, dataset: str, judge: str) -> dict[str, Any]:
    """Import a generic-layout JSONL file as judgments of ``judge``; returns a report."""
    check_name("judge", judge)
    records = read_generic_judgments(path, task, _review_keys(ws, dataset), ws)
    created = now_iso()
    for r in records:
        r["created_at"] = created
    appended = append_judgments(ws, dataset, task, judge, records)
    errors = [r["parse_error"] for r in records if r["parse_error"]]
    return {"task": task, "dataset": dataset, "judge": judge, "layout": "generic", "judgments": len(records),
            "appended": appended, "parse_errors": len(errors), "errors": errors[:20]}

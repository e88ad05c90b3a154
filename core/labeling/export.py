"""Export and import of reviews and consensus (SPEC §6.5).

Reviews: ``{dataset}_reviews.jsonl``, one line per rating row: ``{dataset, llm_response_id,
identifier, prompt_title, prompt_body, model_response_text, model_id, run_id, reviewer_code,
score, notes, review_created_at, review_updated_at, metadata}`` (``llm_response_id`` is the
store's item id; ratings are never updated, so both timestamps are the submission time). The same
layout imports, and so does any projection of it that keeps dataset, identifier, run_id,
reviewer_code, score and review_created_at (e.g. the AITA ``aita_reviews_slim.jsonl``).
Importing is idempotent: a line whose (item, rater, created_at) exists already is skipped. A
rating a later correction replaced stays in the export, marked ``superseded: true`` (the
history); an import skips such lines, so the ratings in force are what it adds.

Consensus: ``{project}_consensus.jsonl``, one line per item with ≥ 2 ratings: the item's fields
plus ``{consensus, consensus_source, n_ratings, scores, raters, note, adjudicator}``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from core.base.errors import DataError
from core.base.files import jsonl_objects, require_file, write_jsonl_atomic
from core.base.progress import Progress
from core.base.settings import require_writable
from core.labeling import consensus as cons
from core.labeling.assignment import check_score
from core.labeling.identity import check_stored_code, ensure_rater, retired_codes
from core.labeling.items import ImportReport, Project
from core.labeling.reports import items_frame, ratings_frame
from core.labeling.sources import dataset_name, parse_timestamp
from core.labeling.store import LabelStore, catalog, rating_sql
from core.workspace import check_name


def format_timestamp(value: datetime | None) -> str | None:
    """``YYYY-MM-DD HH:MM:SS`` (plus ``.ffffff`` when there are microseconds), or None."""
    if value is None:
        return None
    return value.strftime("%Y-%m-%d %H:%M:%S.%f" if value.microsecond else "%Y-%m-%d %H:%M:%S")


def review_rows(store: LabelStore, project: Project) -> list[dict[str, Any]]:
    """Every rating of ``project`` (model raters included) in the export layout, oldest first; the
    rating of a code an admin retired (a mistyped one) stays, marked ``reviewer_retired: true``."""
    rates = ratings_frame(store, project, include_models=True, include_superseded=True)
    retired = retired_codes(store)
    its = {r["item_id"]: r for r in items_frame(store, project).iter_rows(named=True)}
    rows = []
    for r in rates.iter_rows(named=True):
        item = its[r["item_id"]]
        stamp = format_timestamp(r["created_at"])
        rows.append({
            "dataset": item["dataset"], "llm_response_id": item["item_id"], "identifier": item["identifier"],
            "prompt_title": item["prompt_title"], "prompt_body": item["prompt_body"],
            "model_response_text": item["response_text"], "model_id": item["model_id"],
            "run_id": item["run_id"] or None, "reviewer_code": r["rater"], "score": r["score"],
            "notes": r["notes"], "review_created_at": stamp, "review_updated_at": stamp,
            "metadata": json.loads(item["metadata"] or "{}"),
            **({"reviewer_retired": True} if r["rater"] in retired else {}),
            **({} if r["in_force"] else {"superseded": True}),  # replaced by a later correction
        })
    return rows


def consensus_rows(store: LabelStore, project: Project, *, include_models: bool = False) -> list[dict[str, Any]]:
    """One line per item with ≥ 2 raters: item fields plus its consensus and provenance (and
    ``retired_raters``, the retired codes among its raters, when there are any)."""
    frame = cons.compute_consensus(store, project, include_models=include_models)
    retired = retired_codes(store)
    its = {r["item_id"]: r for r in items_frame(store, project, frame["item_id"].to_list()).iter_rows(named=True)}
    out = []
    for r in frame.iter_rows(named=True):
        item = its[r["item_id"]]
        out.append({
            "item_id": item["item_id"], "dataset": item["dataset"], "identifier": item["identifier"],
            "prompt_title": item["prompt_title"], "prompt_body": item["prompt_body"],
            "response_text": item["response_text"], "model_id": item["model_id"], "run_id": item["run_id"] or None,
            "metadata": json.loads(item["metadata"] or "{}"), "created_at": format_timestamp(item["created_at"]),
            "consensus": r["consensus"], "consensus_source": r["consensus_source"], "n_ratings": r["n_ratings"],
            "scores": list(r["scores"]), "raters": list(r["raters"]), "note": r["note"],
            "adjudicator": r["adjudicator"],
            **({"retired_raters": marked} if (marked := sorted(set(r["raters"]) & retired)) else {}),
        })
    return out


def to_jsonl(rows: list[dict[str, Any]]) -> str:
    """Rows as JSONL text (for downloads)."""
    return "".join(json.dumps(r, ensure_ascii=False, default=str) + "\n" for r in rows)


def export_project(store: LabelStore, project: Project, out_dir: str | Path, *,
                   include_models: bool = False) -> dict[str, Any]:
    """Write ``{dataset}_reviews.jsonl`` per dataset and ``{project}_consensus.jsonl`` into
    ``out_dir`` (atomically), after recording calculated consensus snapshots (not in a store opened
    read-only, :mod:`core.labeling.store.readonly`). Returns the paths."""
    require_writable("write label exports into the workspace")
    out = Path(out_dir)
    if not store.read_only:  # a read-only store keeps its history as it is: the lines are computed the same
        cons.record_calculated(store, project, include_models=include_models)
    rows = review_rows(store, project)
    by_dataset: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_dataset.setdefault(row["dataset"], []).append(row)
    # a dataset name becomes a file name: one stored before names were checked is refused here
    written = {ds: str(out / f"{check_name('dataset', ds)}_reviews.jsonl") for ds in by_dataset}
    for ds, part in by_dataset.items():
        write_jsonl_atomic(written[ds], part)
    consensus_path = out / f"{check_name('project', project.name)}_consensus.jsonl"
    n_consensus = write_jsonl_atomic(consensus_path, consensus_rows(store, project, include_models=include_models))
    return {"reviews": written, "n_reviews": len(rows), "consensus": str(consensus_path), "n_consensus": n_consensus}


def _parse_review_lines(path: Path, default_dataset: str) -> Iterator[dict[str, Any]]:
    for n, obj in jsonl_objects(path):
        code = obj.get("reviewer_code")
        try:
            code = check_stored_code(code.strip() if isinstance(code, str) else code)
        except ValueError as exc:
            raise DataError(str(exc), path=path, line=n, field="reviewer_code") from None
        identifier = obj.get("identifier")
        if identifier is None:
            raise DataError("missing item identifier", path=path, line=n, field="identifier")
        if isinstance(identifier, bool) or not isinstance(identifier, str | int) or str(identifier).strip() == "":
            raise DataError(f"expected a string, got {type(identifier).__name__}" if not isinstance(identifier, str)
                            else "missing item identifier", path=path, line=n, field="identifier")
        dataset = dataset_name(obj.get("dataset") or default_dataset, path=path, line=n)
        try:
            score = check_score(obj.get("score"))
        except ValueError as exc:
            raise DataError(str(exc), path=path, line=n, field="score") from exc
        created = parse_timestamp(obj.get("review_created_at"), path=path, line=n, field="review_created_at")
        if created is None:
            raise DataError("missing review timestamp", path=path, line=n, field="review_created_at")
        notes = obj.get("notes")
        if notes is not None and not isinstance(notes, str):
            raise DataError("expected a string or null", path=path, line=n, field="notes")
        yield {"line": n, "dataset": dataset, "identifier": str(identifier),
               "run_id": str(obj.get("run_id") or ""), "rater": code.strip(), "score": score, "notes": notes or None,
               "created_at": created, "raw": obj}


def _create_item(conn: Any, store: LabelStore, project: Project, line: dict[str, Any]) -> int:
    raw = line["raw"]
    meta = raw.get("metadata") if isinstance(raw.get("metadata"), dict) else {}
    return catalog.insert_item(conn, {
        "project_id": project.project_id, "dataset": line["dataset"], "identifier": line["identifier"],
        "run_id": line["run_id"], "prompt_title": str(raw.get("prompt_title") or ""),
        "prompt_body": str(raw.get("prompt_body") or ""), "response_text": str(raw.get("model_response_text") or ""),
        "model_id": raw.get("model_id"), "metadata": json.dumps(meta, ensure_ascii=False), "created_at": store.clock(),
        "n_raters": 0, "n_ratings": 0,
    })


def import_reviews(store: LabelStore, project: Project, path: str | Path, *, create_items: bool = False,
                   progress: Progress | None = None) -> ImportReport:
    """Import ratings from a reviews JSONL (SPEC §6.5 layout or a projection of it).

    Args:
        create_items: create items that are not in the store from the line's own fields (texts
            may then be empty); by default such a line is an error naming it.

    Raises:
        DataError: bad line, unknown item, or an item that belongs to another project.
    """
    require_writable("import labels")
    path = Path(path)
    require_file(path)  # missing, or a folder / device / pipe named as such
    lines = sorted(_parse_review_lines(path, project.name), key=lambda x: (x["created_at"], x["line"]))
    report = ImportReport(details={"items_created": 0, "raters": sorted({x["rater"] for x in lines})})
    with store.write() as conn:
        store.lock_project(conn, project.project_id)
        ids = catalog.item_ids_by_key(conn, {(x["dataset"], x["identifier"], x["run_id"]) for x in lines})
        for x in lines:
            key = (x["dataset"], x["identifier"], x["run_id"])
            if key not in ids:
                if not create_items:
                    raise DataError(f"no item {key} in the store; import the items first or pass create_items",
                                    path=path, line=x["line"], field="identifier")
                ids[key] = (_create_item(conn, store, project, x), project.project_id)
                report.details["items_created"] += 1
            if ids[key][1] != project.project_id:
                raise DataError(f"item {key} belongs to another project", path=path, line=x["line"], field="identifier")
        touched = sorted({ids[(x["dataset"], x["identifier"], x["run_id"])][0] for x in lines})
        existing: set[tuple[int, str, datetime]] = rating_sql.rating_keys(conn, touched)
        seen_pairs = {(i, r) for i, r, _ in existing}
        for code in report.details["raters"]:
            ensure_rater(conn, store, code)
        new_rows = []
        for x in lines:
            item_id = ids[(x["dataset"], x["identifier"], x["run_id"])][0]
            if (item_id, x["rater"], x["created_at"]) in existing or x["raw"].get("superseded") is True:
                # a rating a correction replaced (an export's history line) is not a rating in force
                report.skipped += 1
                continue
            existing.add((item_id, x["rater"], x["created_at"]))
            new_rows.append({"item_id": item_id, "rater": x["rater"], "score": x["score"], "notes": x["notes"],
                             "created_at": x["created_at"], "seconds_spent": None,
                             "is_repeat": (item_id, x["rater"]) in seen_pairs, "client_key": None})
            seen_pairs.add((item_id, x["rater"]))
        for start in range(0, len(new_rows), 1000):
            rating_sql.insert_ratings(conn, new_rows[start:start + 1000])
            if progress:
                progress(min(start + 1000, len(new_rows)), len(new_rows), "reviews")
        catalog.recount_items(conn, touched)
        report.added = len(new_rows)
    return report

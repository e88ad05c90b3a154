"""Where labeling items come from: item JSONL (SPEC §6.1), a run's ``results.json`` (SPEC §4.2),
a ``run.jsonl`` / ``run_scored.jsonl`` (SPEC §7), or a dataset's reviews (the ``reviews`` view).

Every parser yields normalised item records ``{dataset, identifier, run_id, prompt_title,
prompt_body, response_text, model_id, metadata, created_at}`` and raises
:class:`core.base.errors.DataError` naming the file, line and field of bad input.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from core.base.errors import DataError
from core.base.files import jsonl_objects, read_json, require_file
from core.datasets.db import Database
from core.workspace import Workspace, check_name

FORMATS = ("items", "results", "run")
DEFAULT_REVIEW_PROMPT = (
    "Read this customer review. How clearly does it report a food-allergy safety problem? "
    "-1 = clearly reports a safe experience, 0 = says nothing either way, +1 = clearly reports a problem."
)
ItemRecord = dict[str, Any]


def _text(value: Any, *, path: Path, line: int | None, field: str, required: bool = True) -> str:
    if value is None and not required:
        return ""
    if not isinstance(value, str):
        raise DataError(f"expected a string, got {type(value).__name__}", path=path, line=line, field=field)
    return value


def _metadata(value: Any, *, path: Path, line: int | None, field: str = "metadata") -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise DataError(f"expected an object, got {type(value).__name__}", path=path, line=line, field=field)
    return value


def parse_timestamp(value: Any, *, path: Path | None = None, line: int | None = None, field: str = "created_at") -> datetime | None:
    """Parse ``YYYY-MM-DD HH:MM:SS[.ffffff]`` or ISO 8601 (``Z`` allowed) into a naive UTC datetime."""
    if value in (None, ""):
        return None
    if not isinstance(value, str):
        raise DataError("expected a timestamp string", path=path, line=line, field=field)
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError as exc:
        raise DataError(f"not a timestamp: {value!r}", path=path, line=line, field=field) from exc
    if parsed.tzinfo is not None:
        parsed = parsed.replace(tzinfo=None) - (parsed.utcoffset() or timedelta(0))  # to naive UTC
    return parsed


def dataset_name(value: Any, *, path: Path | None, line: int | None, field: str = "dataset") -> str:
    """An item's ``dataset``: it becomes a file name on export, so :func:`check_name` applies."""
    try:
        return check_name("dataset", value)
    except ValueError as exc:
        raise DataError(str(exc), path=path, line=line, field=field) from None


def detect_format(path: str | Path) -> str:
    """``results`` for a ``.json`` file, ``run`` for JSONL lines with ``messages``, else ``items``."""
    path = Path(path)
    if path.suffix == ".json":
        return "results"
    for _, obj in jsonl_objects(path):
        return "run" if "messages" in obj and "response_text" in obj else "items"
    return "items"


def parse_items_jsonl(path: str | Path, *, dataset: str) -> Iterator[ItemRecord]:
    """Items in the SPEC §6.1 layout; ``model_response_text`` is accepted for ``response_text``
    (the seeds' name), and ``dataset`` fills records that carry none."""
    path = Path(path)
    for n, obj in jsonl_objects(path):
        response = obj.get("response_text", obj.get("model_response_text"))
        field = "response_text" if "response_text" in obj else "model_response_text"
        identifier = obj.get("identifier")
        if identifier is None or (isinstance(identifier, str) and not identifier.strip()):
            raise DataError("missing item identifier", path=path, line=n, field="identifier")
        if isinstance(identifier, int | float):
            identifier = str(identifier)
        yield {
            "dataset": dataset_name(obj.get("dataset") or dataset, path=path, line=n),
            "identifier": _text(identifier, path=path, line=n, field="identifier"),
            "run_id": str(obj.get("run_id") or ""),
            "prompt_title": _text(obj.get("prompt_title"), path=path, line=n, field="prompt_title", required=False),
            "prompt_body": _text(obj.get("prompt_body"), path=path, line=n, field="prompt_body"),
            "response_text": _text(response, path=path, line=n, field=field),
            "model_id": _text(obj.get("model_id"), path=path, line=n, field="model_id", required=False) or None,
            "metadata": _metadata(obj.get("metadata"), path=path, line=n),
            "created_at": parse_timestamp(obj.get("created_at"), path=path, line=n),
        }


def parse_results_json(path: str | Path, *, dataset: str) -> Iterator[ItemRecord]:
    """The samples of a run's ``results.json``: prompt = restaurant and task, response = the
    sample's response. Verdicts, scores and correctness go to metadata (always hidden from raters)."""
    path = Path(path)
    doc = read_json(path)
    if not isinstance(doc, dict) or not isinstance(doc.get("results"), list):
        raise DataError("expected an object with a 'results' list", path=path, field="results")
    run_id = str(doc.get("run_id") or "")
    task = doc.get("task_id") or "task"
    for i, sample in enumerate(doc["results"]):
        where = f"results[{i}]"
        if not isinstance(sample, dict):
            raise DataError("expected an object", path=path, field=where)
        response = sample.get("response")
        if response is None:
            continue  # a failed sample has nothing to rate
        if not isinstance(response, str):
            response = json.dumps(response, ensure_ascii=False, indent=2)
        business_id = _text(sample.get("business_id"), path=path, line=None, field=f"{where}.business_id")
        name = sample.get("name") or business_id
        yield {
            "dataset": dataset_name((doc.get("config") or {}).get("dataset") or dataset, path=path, line=None,
                                    field="config.dataset"),
            "identifier": business_id,
            "run_id": run_id,
            "prompt_title": f"{name}",
            "prompt_body": (
                f"Task {task} (policy {doc.get('policy_id') or '-'}): method {doc.get('method') or '-'} "
                f"assessed the allergy risk of {name} from its {doc.get('k') or 'K'} most recent reviews."
            ),
            "response_text": response,
            "model_id": doc.get("model"),
            "metadata": {
                "business_id": business_id, "task_id": task, "policy_id": doc.get("policy_id"),
                "method": doc.get("method"), "k": doc.get("k"), "verdict": sample.get("verdict"),
                "risk_score": sample.get("risk_score"), "gt_verdict": sample.get("gt_verdict"),
                "correct": sample.get("correct"),
            },
            "created_at": None,
        }


def parse_run_jsonl(path: str | Path, *, dataset: str) -> Iterator[ItemRecord]:
    """Responses of a ``run.jsonl`` (or ``run_scored.jsonl``): one item per model and prompt.

    identifier = ``{prompt_id}:{perspective}@{model_id}`` (unique within a run of several models);
    the prompt is the last user message. A scorer's ``score`` is kept as hidden metadata.
    """
    path = Path(path)
    for n, obj in jsonl_objects(path):
        messages = obj.get("messages")
        if not isinstance(messages, list):
            raise DataError("expected a list of messages", path=path, line=n, field="messages")
        users = [m.get("content") for m in messages if isinstance(m, dict) and m.get("role") == "user"]
        if not users or not isinstance(users[-1], str):
            raise DataError("no user message", path=path, line=n, field="messages")
        model = _text(obj.get("model_id"), path=path, line=n, field="model_id")
        prompt_id = str(obj.get("prompt_id") or n)
        perspective = str(obj.get("perspective") or (obj.get("factors") or {}).get("perspective") or "")
        meta = {"provider": obj.get("provider"), "perspective": perspective or None, "factors": obj.get("factors")}
        if "score" in obj:
            meta.update({"scorer_model": obj.get("scorer_model"), "score": obj.get("score")})
        yield {
            "dataset": dataset,
            "identifier": f"{prompt_id}:{perspective}@{model}" if perspective else f"{prompt_id}@{model}",
            "run_id": str(obj.get("run_id") or ""),
            "prompt_title": f"Scenario {prompt_id}",  # no perspective: it is the hidden condition
            "prompt_body": users[-1],
            "response_text": _text(obj.get("response_text"), path=path, line=n, field="response_text"),
            "model_id": model,
            "metadata": meta,
            "created_at": parse_timestamp(obj.get("timestamp_iso") or obj.get("run_timestamp_iso"), path=path, line=n),
        }


def parse_items_file(path: str | Path, *, dataset: str, fmt: str = "auto") -> Iterator[ItemRecord]:
    """Dispatch on ``fmt`` (``auto`` detects it); see :data:`FORMATS`."""
    path = Path(path)
    dataset_name(dataset, path=None, line=None)
    require_file(path)  # missing, or a folder / device / pipe named as such
    fmt = detect_format(path) if fmt == "auto" else fmt
    parsers = {"items": parse_items_jsonl, "results": parse_results_json, "run": parse_run_jsonl}
    if fmt not in parsers:
        raise ValueError(f"unknown item format {fmt!r}; valid: auto, {', '.join(FORMATS)}")
    return parsers[fmt](path, dataset=dataset)


def dataset_review_items(
    ws: Workspace,
    dataset: str,
    *,
    prompt: str = DEFAULT_REVIEW_PROMPT,
    limit: int | None = None,
    seed: int = 0,
    contains: str | None = None,
) -> list[ItemRecord]:
    """Reviews of a dataset (the ``reviews`` view) as items: title = restaurant, response = review.

    Args:
        prompt: the question raters answer about every review.
        limit: keep a seeded random sample of this many reviews (all when None).
        contains: keep reviews whose text contains this (case-insensitive) first.
    """
    import polars as pl  # here, not at the top: assignment workers import this module and stay light

    from core.datasets.browse import reviews_with_restaurants


    db = Database(ws.root)
    db.require_dataset(dataset)  # the dataset's tables must still match its lock (SPEC §1.4)
    frame = reviews_with_restaurants(db, dataset)
    if frame.is_empty():
        raise DataError(f"dataset {dataset!r} has no reviews with text in this workspace")
    if contains:
        frame = frame.filter(pl.col("text").str.to_lowercase().str.contains(contains.lower(), literal=True))
    if limit is not None and frame.height > limit:
        frame = frame.sample(n=limit, seed=seed).sort("business_id", "idx")
    return [
        {
            "dataset": dataset, "identifier": row["review_id"], "run_id": "",
            "prompt_title": row["name"] or row["business_id"], "prompt_body": prompt,
            "response_text": row["text"], "model_id": None,
            "metadata": {"business_id": row["business_id"], "idx": row["idx"], "date": row["date"],
                         "stars": row["stars"], "city": row["city"]},
            "created_at": None,
        }
        for row in frame.iter_rows(named=True)
    ]

"""Response collection: run a prompt grid against one or more models, writing ``run.jsonl``.

``plan_collection`` is pure: the (model, prompt) calls a run still needs, given the records
already in its log. ``collect_responses`` does the calls and appends each record with fsync as
soon as it arrives, so a killed process loses at most the calls in flight, and a resumed run
(the same ``run.jsonl``) never repeats a finished call. A failed call is recorded on its record
(``error``, ``response_text`` null) and tried again by the next resume.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from core.base.files import append_jsonl, read_jsonl_log
from core.base.progress import Progress, no_progress
from core.llm import describe_error
from core.study.responders import Responder


@dataclass(frozen=True)
class CollectionPlan:
    """The calls a run still needs and how many it has already."""

    run_id: str
    path: Path
    todo: list[tuple[Responder, dict[str, Any]]]
    done: int
    failed_before: int


def finished_keys(path: Path) -> tuple[set[tuple[str, str]], int]:
    """(model, prompt) pairs with a response in a run log, and how many only have failures."""
    ok: set[tuple[str, str]] = set()
    failed: set[tuple[str, str]] = set()
    for rec in read_jsonl_log(path):
        key = (str(rec.get("model_id")), str(rec.get("prompt_id")))
        (ok if rec.get("response_text") is not None else failed).add(key)
    return ok, len(failed - ok)


def plan_collection(prompts: list[dict[str, Any]], responders: list[Responder], path: str | Path,
                    *, run_id: str) -> CollectionPlan:
    """Every (model, prompt) of the grid without a response in ``path`` yet, models in order."""
    path = Path(path)
    ids = [r.model_id for r in responders]
    if len(set(ids)) != len(ids):
        raise ValueError(f"a model appears twice: {ids}")
    ok, failed = finished_keys(path)
    todo = [(r, p) for r in responders for p in prompts if (r.model_id, p["prompt_id"]) not in ok]
    return CollectionPlan(run_id, path, todo, done=len(ok), failed_before=failed)


def utcnow() -> datetime:
    """The current time (aware, UTC)."""
    return datetime.now(UTC)


def _record(run_id: str, responder: Responder, prompt: dict[str, Any],
            clock: Callable[[], datetime] = utcnow) -> dict[str, Any]:
    started = clock()
    rec: dict[str, Any] = {
        "run_id": run_id, "timestamp_iso": started.isoformat(timespec="seconds").replace("+00:00", "Z"),
        "model_id": responder.model_id, "provider": responder.provider, "prompt_id": prompt["prompt_id"],
        "scenario_id": prompt.get("scenario_id"), "perspective": prompt["perspective"],
        "factors": prompt["factors"], "messages": prompt["messages"], "offline": responder.offline,
    }
    try:
        answer = responder.respond(prompt["messages"])
    except Exception as exc:  # noqa: BLE001 - any failure is recorded on its sample
        return {**rec, "response_text": None, "error": describe_error(exc)}
    latency = (clock() - started).total_seconds() * 1000
    return {**rec, "response_text": answer.text, "error": None, "usage": answer.usage, "cached": answer.cached,
            "latency_ms": round(latency, 1)}


def collect_responses(plan: CollectionPlan, *, concurrency: int = 1, progress: Progress = no_progress,
                      clock: Callable[[], datetime] = utcnow) -> dict[str, Any]:
    """Make the planned calls and append each record to the run log as it arrives.

    ``clock`` gives the timestamps (the demo passes a fake clock so the same seed gives the same bytes).

    Returns counts: ``requested``, ``answered``, ``failed``, ``already_done``.
    """
    if concurrency < 1:
        raise ValueError(f"concurrency must be ≥ 1, got {concurrency}")
    lock = threading.Lock()
    counts = {"answered": 0, "failed": 0}
    total = len(plan.todo)
    progress(0, total, "responses")

    def one(job: tuple[Responder, dict[str, Any]]) -> None:
        rec = _record(plan.run_id, *job, clock=clock)
        with lock:
            append_jsonl(plan.path, [rec])
            counts["failed" if rec["response_text"] is None else "answered"] += 1
            progress(counts["answered"] + counts["failed"], total, rec["model_id"])

    if concurrency == 1:
        for job in plan.todo:
            one(job)
    else:
        with ThreadPoolExecutor(max_workers=concurrency) as pool:
            list(pool.map(one, plan.todo))
    return {"run_id": plan.run_id, "path": str(plan.path), "requested": total, **counts,
            "already_done": plan.done}

"""Batch mode: judge through the OpenAI Batch API (half price, results within 24 h).

``submit_batch`` writes one JSONL request per review (``custom_id`` = the review key
``business_id:idx``), uploads it (``files.create``, purpose ``batch``), starts the batch
(``batches.create``) and records the batch id with its requests in
``judgments/{dataset}/{task}/batches.json`` (atomic). Reviews whose request is already in the
response cache are stored at once and not sent. ``collect_batch`` polls ``batches.retrieve``,
downloads the output (and error) file and stores the same judgment records as on-demand mode,
with ``batch_id`` set; a review that failed in the batch is reported and asked again by a later
``--resume``. Reviews of a batch that is still running are left out of new plans, so nothing is
paid twice.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable
from typing import Any

from core.base.errors import WorkbenchError
from core.base.progress import Progress, no_progress
from core.judgments import append_judgments, judged_keys
from core.judgments.judges.base import make_failure, now_iso
from core.judgments.judges.batch_records import (
    CLOSED_STATUSES,
    OPEN_STATUSES,
    custom_id,
    find_batch,
    is_pending,
    read_batches,
    save_entry,
)
from core.judgments.judges.runner import JudgingReport, plan_judging, write_progress_log
from core.workspace import Workspace
from core.workspace.locks import judge_lock

ENDPOINT = "/v1/chat/completions"
MAX_REQUESTS_PER_BATCH = 50_000  # the Batch API's limit per input file


def submit_batch(plan: Any, judge: Any, *, progress: Progress | None = None) -> Any:
    """Submit the plan's reviews as Batch API jobs; returns a ``JudgingReport`` (mode ``batch``)."""
    with judge_lock(plan.ws, plan.dataset, plan.task, plan.judge_id):  # one run per judge at a time
        return _submit(plan, judge, progress or no_progress)


def _submit(plan: Any, judge: Any, progress: Progress) -> Any:
    report = JudgingReport(plan.dataset, plan.task, plan.judge_id, mode="batch", matched=plan.matched,
                           planned=len(plan.rows), skipped=plan.already_judged)
    started = time.perf_counter()
    lines, requests, from_cache = [], [], []
    for row in plan.rows:
        messages = judge.messages(row)
        key = judge.llm.key(messages, judge.response_format)
        hit = judge.llm.cached(key)
        if hit is not None:
            judge.llm.totals.add(hit)
            from_cache.append(judge.record_from_completion(row, hit))
            continue
        body = judge.llm.request_body(messages, response_format=judge.response_format)
        lines.append({"custom_id": custom_id(row), "method": "POST", "url": ENDPOINT, "body": body})
        requests.append({"custom_id": custom_id(row), "business_id": row["business_id"],
                         "review_id": row.get("review_id"), "idx": int(row["idx"]), "cache_key": key,
                         "text_hash": row.get("text_hash")})
    if from_cache:
        append_judgments(plan.ws, plan.dataset, plan.task, plan.judge_id, from_cache)
        report.judged = len(from_cache)
        report.parse_errors = sum(1 for r in from_cache if r.get("parse_error"))
    submitted = []
    for start in range(0, len(lines), MAX_REQUESTS_PER_BATCH):
        chunk = slice(start, start + MAX_REQUESTS_PER_BATCH)
        entry = _submit_one(plan, judge, lines[chunk], requests[chunk])
        submitted.append({"batch_id": entry["batch_id"], "status": entry["status"], "requests": len(entry["requests"])})
        progress(min(start + MAX_REQUESTS_PER_BATCH, len(lines)), len(lines), f"submitted {entry['batch_id']}")
    done = set(plan.done_keys) | {(r["business_id"], r["idx"]) for r in from_cache}
    write_progress_log(plan, done, started=now_iso())
    report.batch = {"submitted": submitted, "answered_from_cache": len(from_cache),
                    "batch_id": submitted[0]["batch_id"] if len(submitted) == 1 else None,
                    "status": "submitted" if submitted else "nothing to submit"}
    report.usage = judge.usage_totals()
    report.seconds = time.perf_counter() - started
    return report


def _api(judge: Any, call: Callable[[Any], Awaitable[Any]]) -> Any:
    """One Batch API request with the judge's :class:`core.llm.AsyncLLM` client, from synchronous
    code (file and batch operations are retried by the openai client, ``max_retries`` times)."""
    async def request() -> Any:
        return await call(judge.llm.client.with_options(max_retries=judge.llm.max_retries))

    return judge.llm.run_sync(request())


def _submit_one(plan: Any, judge: Any, lines: list[dict], requests: list[dict]) -> dict[str, Any]:
    data = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines).encode("utf-8")
    uploaded = _api(judge, lambda c: c.files.create(file=(f"judge-{plan.dataset}-{plan.task}.jsonl", data),
                                                    purpose="batch"))
    batch = _api(judge, lambda c: c.batches.create(
        input_file_id=uploaded.id, endpoint=ENDPOINT, completion_window="24h",
        metadata={"workbench_dataset": plan.dataset, "workbench_task": plan.task, "workbench_judge": plan.judge_id},
    ))
    entry = {
        "batch_id": batch.id, "dataset": plan.dataset, "task": plan.task, "judge": plan.judge_id,
        "model": judge.model, "temperature": judge.llm.temperature, "seed": judge.llm.seed,
        "prompt_version": plan.prompt_version, "input_file_id": uploaded.id, "created_at": now_iso(),
        "status": batch.status, "collected": False, "requests": requests,
    }
    save_entry(plan.ws, plan.dataset, plan.task, entry)
    return entry


def _wait(judge: Any, batch_id: str, wait_seconds: float, poll_seconds: float, progress: Progress) -> Any:
    deadline = time.monotonic() + wait_seconds
    while True:
        batch = _api(judge, lambda c: c.batches.retrieve(batch_id))
        counts = getattr(batch, "request_counts", None)
        done = getattr(counts, "completed", 0) or 0
        progress(done, getattr(counts, "total", 0) or 0, f"batch {batch.status}")
        if batch.status not in OPEN_STATUSES or time.monotonic() + poll_seconds > deadline:
            return batch
        time.sleep(poll_seconds)


def _file_lines(judge: Any, file_id: str | None) -> list[dict[str, Any]]:
    if not file_id:
        return []
    async def content(client: Any) -> str:
        return str((await client.files.content(file_id)).text)

    text = _api(judge, content)
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def collect_batch(
    ws: Workspace,
    batch_id: str,
    judge_factory: Callable[[str, dict[str, Any]], Any],
    *,
    wait_seconds: float = 0.0,
    poll_seconds: float = 30.0,
    progress: Progress | None = None,
) -> Any:
    """Check a batch (polling up to ``wait_seconds``) and store its results once it completed.

    ``judge_factory(task, entry)`` builds the :class:`OpenAIJudge` the batch was made with
    (same model, seed and judge id). Returns a ``JudgingReport`` (mode ``batch``) whose
    ``batch`` says the status; collecting twice stores nothing twice.
    """
    progress = progress or no_progress
    dataset, task, entry = find_batch(ws, batch_id)
    judge = judge_factory(task, entry)
    report = JudgingReport(dataset, task, entry["judge"], mode="batch", planned=len(entry["requests"]))
    started = time.perf_counter()
    batch = _wait(judge, batch_id, wait_seconds, poll_seconds, progress)
    entry["status"] = batch.status
    if batch.status == "completed" and not entry.get("collected"):
        with judge_lock(ws, dataset, task, entry["judge"]):
            _store_results(ws, dataset, task, entry, judge, batch, report)
        entry.update(collected=True, collected_at=now_iso(), n_stored=report.judged, n_failed=len(report.failures))
    save_entry(ws, dataset, task, entry)
    if entry.get("collected") or batch.status in CLOSED_STATUSES:
        try:
            plan = plan_judging(ws, dataset, task, judge)
            write_progress_log(plan, set(plan.done_keys), started=entry["created_at"])
        except WorkbenchError:
            pass  # results are stored; the extraction log is refreshed by the next judge run
    report.batch = {"batch_id": batch_id, "status": batch.status, "collected": bool(entry.get("collected"))}
    report.usage = judge.usage_totals()
    report.seconds = time.perf_counter() - started
    return report


def _store_results(ws: Workspace, dataset: str, task: str, entry: dict[str, Any], judge: Any, batch: Any,
                   report: Any) -> None:
    requests = {r["custom_id"]: {**r, "dataset": dataset} for r in entry["requests"]}
    stored = judged_keys(ws, dataset, task, entry["judge"])
    seen: set[str] = set()
    records = []
    for line in _file_lines(judge, batch.output_file_id) + _file_lines(judge, batch.error_file_id):
        row = requests.get(line.get("custom_id"))
        if row is None or line["custom_id"] in seen:
            continue
        seen.add(line["custom_id"])
        response = line.get("response") or {}
        if response.get("status_code") != 200:
            error = (line.get("error") or (response.get("body") or {}).get("error") or {})
            report.failures.append(make_failure(row, f"batch request failed ({response.get('status_code')}): "
                                                     f"{error.get('message', error) if isinstance(error, dict) else error}"))
            continue
        completion = judge.llm.completion_from_body(response.get("body") or {}, batch=True)
        judge.llm.record(row["cache_key"], completion, json_expected=True)
        if (row["business_id"], int(row["idx"])) not in stored:
            records.append(judge.record_from_completion(row, completion, batch_id=entry["batch_id"]))
    report.failures.extend(make_failure(r, "no result in the batch output") for cid, r in requests.items()
                           if cid not in seen)
    if records:
        append_judgments(ws, dataset, task, entry["judge"], records)
    report.judged = len(records)
    report.parse_errors = sum(1 for r in records if r.get("parse_error"))


def collect_pending(ws: Workspace, dataset: str, task: str, judge_id: str,
                    judge_factory: Callable[[str, dict[str, Any]], Any], **options: Any) -> list[Any]:
    """Collect every pending batch of this judge (used by ``--resume``); one report per batch."""
    return [
        collect_batch(ws, entry["batch_id"], judge_factory, **options)
        for entry in read_batches(ws, dataset, task)
        if entry.get("judge") == judge_id and is_pending(entry)
    ]

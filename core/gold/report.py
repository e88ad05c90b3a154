"""Score answers and build the report of SPEC §8.

Layout: ``{metadata: {model, eval_files, total_samples, timestamp}, aggregate_metrics:
{overall_score, accuracy, citation_coverage, avg_length_tokens, pass_rate}, by_task: {task:
{count, overall_score, accuracy, pass_rate}}, by_domain: {...}, sample_results: [{sample_id,
domain, task, question, expected, predicted, scores: {accuracy, citation, length, token_count,
keywords, keywords_found, keywords_total, overall, status}}], failed_samples: [...]}``.
Two keys may be added to a sample result, and only when they apply: ``error`` (the answer
could not be had, e.g. a failed model call; the sample is scored as an empty answer) and
``accuracy_reasoning`` (the llm-judge's reasoning). Means are plain sums divided by counts, in
sample order, like the reference harness, so its numbers are reproduced to the last digit.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from core.base.errors import DataError
from core.base.files import read_json, write_json_atomic
from core.gold.accuracy import ACCURACY_METHODS, AccuracyContext
from core.gold.answers import Answer
from core.gold.items import GoldItem
from core.gold.scoring import (
    GoldConfig,
    citation_score,
    keyword_score,
    keywords_found,
    length_score,
    overall_score,
    status_of,
    token_count,
)

REPORT_KEYS = ("metadata", "aggregate_metrics", "by_task", "by_domain", "sample_results", "failed_samples")
METADATA_KEYS = ("model", "eval_files", "total_samples", "timestamp")
AGGREGATE_KEYS = ("overall_score", "accuracy", "citation_coverage", "avg_length_tokens", "pass_rate")
GROUP_KEYS = ("count", "overall_score", "accuracy", "pass_rate")
SAMPLE_KEYS = ("sample_id", "domain", "task", "question", "expected", "predicted", "scores")
SCORE_KEYS = ("accuracy", "citation", "length", "token_count", "keywords", "keywords_found", "keywords_total",
              "overall", "status")


def score_sample(item: GoldItem, predicted: str, accuracy: float, config: GoldConfig,
                 patterns: Sequence[Any] | None = None) -> dict[str, Any]:
    """The ``scores`` of one answer (SPEC §8), given its accuracy."""
    pats = patterns if patterns is not None else config.compiled_patterns()
    citation = citation_score(predicted, required=item.citation_required, patterns=pats)
    n = token_count(predicted)
    length = length_score(n, max_tokens=item.max_tokens, bands=config.length)
    found = len(keywords_found(predicted, item.must_include))
    total = len(item.must_include)
    keywords = keyword_score(found, total)
    overall = overall_score(accuracy, citation, length, keywords, weights=config.weights)
    status = status_of(overall, pass_threshold=config.pass_threshold, acceptable_threshold=config.acceptable_threshold)
    return {"accuracy": accuracy, "citation": citation, "length": length, "token_count": n, "keywords": keywords,
            "keywords_found": found, "keywords_total": total, "overall": overall, "status": status}


def score_answers(items: Sequence[GoldItem], answers: dict[str, Answer], config: GoldConfig, *,
                  method: str | None = None, context: AccuracyContext | None = None) -> list[dict[str, Any]]:
    """Sample results of every item, in item order (accuracy by ``method``, default the config's)."""
    ctx = context or AccuracyContext()
    if not ctx.questions:
        ctx.questions = [item.question for item in items]
    if ctx.reference is None:
        ctx.reference = [item.expected_output for item in items]
    predicted = [answers[item.sample_id].predicted for item in items]
    expected = [item.expected_output for item in items]
    acc = ACCURACY_METHODS[method or config.accuracy].fn(predicted, expected, ctx)
    patterns = config.compiled_patterns()
    results = []
    for i, item in enumerate(items):
        row: dict[str, Any] = {
            "sample_id": item.sample_id, "domain": item.domain, "task": item.task, "question": item.question,
            "expected": item.expected_output, "predicted": predicted[i],
            "scores": score_sample(item, predicted[i], acc.scores[i], config, patterns),
        }
        errors = [e for e in (answers[item.sample_id].error, acc.errors[i]) if e]
        if errors:
            row["error"] = "; ".join(errors)
        if acc.reasoning[i] is not None:
            row["accuracy_reasoning"] = acc.reasoning[i]
        results.append(row)
    return results


def _group(subset: list[dict[str, Any]]) -> dict[str, Any]:
    count = len(subset)
    return {
        "count": count,
        "overall_score": sum(r["scores"]["overall"] for r in subset) / count,
        "accuracy": sum(r["scores"]["accuracy"] for r in subset) / count,
        "pass_rate": sum(1 for r in subset if r["scores"]["status"] == "pass") / count,
    }


def aggregate(results: list[dict[str, Any]]) -> dict[str, Any]:
    """``aggregate_metrics`` of sample results (zeros for no samples)."""
    total = len(results)
    if total == 0:
        return dict.fromkeys(AGGREGATE_KEYS, 0.0)
    return {
        "overall_score": sum(r["scores"]["overall"] for r in results) / total,
        "accuracy": sum(r["scores"]["accuracy"] for r in results) / total,
        "citation_coverage": sum(r["scores"]["citation"] for r in results) / total,
        "avg_length_tokens": sum(r["scores"]["token_count"] for r in results) / total,
        "pass_rate": sum(1 for r in results if r["scores"]["status"] == "pass") / total,
    }


def breakdown(results: list[dict[str, Any]], key: str) -> dict[str, dict[str, Any]]:
    """``by_task`` / ``by_domain``: groups in order of first appearance."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for r in results:
        groups.setdefault(r[key], []).append(r)
    return {name: _group(rows) for name, rows in groups.items()}


def now_timestamp() -> str:
    """UTC now as ISO 8601 with a ``Z`` (the report's timestamp)."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def build_report(results: list[dict[str, Any]], *, model: str, eval_files: Sequence[str | Path],
                 timestamp: str | None = None) -> dict[str, Any]:
    """The SPEC §8 report of scored sample results."""
    return {
        "metadata": {"model": model, "eval_files": [Path(f).name for f in eval_files], "total_samples": len(results),
                     "timestamp": timestamp or now_timestamp()},
        "aggregate_metrics": aggregate(results),
        "by_task": breakdown(results, "task"),
        "by_domain": breakdown(results, "domain"),
        "sample_results": results,
        "failed_samples": [r for r in results if r["scores"]["status"] == "fail"],
    }


def evaluate(items: Sequence[GoldItem], answers: dict[str, Answer], config: GoldConfig, *, model: str,
             eval_files: Sequence[str | Path], method: str | None = None, context: AccuracyContext | None = None,
             timestamp: str | None = None) -> dict[str, Any]:
    """Score ``answers`` of ``items`` and build the report."""
    results = score_answers(items, answers, config, method=method, context=context)
    return build_report(results, model=model, eval_files=eval_files, timestamp=timestamp)


def check_report(report: Any, *, path: str | Path | None = None) -> dict[str, Any]:
    """Validate a report's layout (top-level, metadata, aggregate and sample keys); returns it.

    Raises:
        DataError: a key missing, naming the file and the field.
    """
    if not isinstance(report, dict):
        raise DataError("a gold report must be a JSON object", path=path)
    for key in REPORT_KEYS:
        if key not in report:
            raise DataError("missing", path=path, field=key)
    for section, keys in (("metadata", METADATA_KEYS), ("aggregate_metrics", AGGREGATE_KEYS)):
        for key in keys:
            if key not in report[section]:
                raise DataError("missing", path=path, field=f"{section}.{key}")
    for i, sample in enumerate(report["sample_results"]):
        for key in SAMPLE_KEYS:
            if key not in sample:
                raise DataError("missing", path=path, field=f"sample_results[{i}].{key}")
        for key in ("accuracy", "citation", "length", "token_count", "keywords", "overall", "status"):
            if key not in sample["scores"]:
                raise DataError("missing", path=path, field=f"sample_results[{i}].scores.{key}")
    return report


def write_report(path: str | Path, report: dict[str, Any]) -> Path:
    """Write a report atomically (a reader sees the old file or the new one, never half of one)."""
    write_json_atomic(path, report, indent=2)
    return Path(path)


def read_report(path: str | Path) -> dict[str, Any]:
    """Read and validate a report file."""
    return check_report(read_json(path), path=path)

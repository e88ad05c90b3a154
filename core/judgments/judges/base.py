"""The judge interface, the registry of judge kinds, and the judgment record every judge returns.

A judge turns keyword-matched review rows (dicts with ``business_id, review_id, idx, text`` and,
when known, ``name, categories, date, stars, useful``) into judgment records in the layout of the
judgment log (``core.judgments``): ``{dataset, task, judge, prompt_version, created_at,
business_id, review_id, idx, fields, excerpt, raw, parse_error, confidence, usage, batch_id}``.
A review whose call failed (429/500/timeout after the client's retries) comes back as a
*failure* ``{business_id, review_id, idx, error}`` instead: it is reported, never stored as a
judgment, and a later ``--resume`` asks again.

Judge kinds (STYLE §2) are registered in :data:`JUDGE_KINDS`; ``make_judge("heuristic", task)``
builds one, an unknown kind raises :class:`core.base.errors.UnknownNameError`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from core.base.clock import now_iso
from core.base.errors import UnknownNameError

REVIEW_KEY = ("business_id", "idx")


@runtime_checkable
class Judge(Protocol):
    """What the runner needs from a judge.

    Attributes:
        judge_id: the id stored with every record and used as the log's file name
            (``heuristic-v1``, a model id, ``ensemble-<name>``).
        prompt_version: version of the prompt or rule set the records carry.
        concurrent: True when each review is one slow call (the runner then awaits the judge's
            ``async def ajudge(row) -> list[record]`` for single reviews in an event loop, or calls
            ``judge([row])`` in a thread for a judge without one); False for judges that are fast
            in bulk.
    """

    judge_id: str
    prompt_version: str
    concurrent: bool

    def judge(self, review_rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        """One record (judgment or failure) per review row, in the same order."""
        ...


@dataclass(frozen=True)
class JudgeKind:
    """A registered kind of judge: ``factory(task, **options) -> Judge``."""

    name: str
    description: str
    factory: Callable[..., Judge]


JUDGE_KINDS: dict[str, JudgeKind] = {}


def register_judge_kind(kind: JudgeKind) -> JudgeKind:
    """Add (or replace) a judge kind in the registry."""
    JUDGE_KINDS[kind.name] = kind
    return kind


def get_judge_kind(name: str) -> JudgeKind:
    """The registered kind ``name``; UnknownNameError lists the valid ones."""
    import core.judgments.judges  # noqa: F401 - importing the package registers every kind

    if name not in JUDGE_KINDS:
        raise UnknownNameError("judge", name, list(JUDGE_KINDS))
    return JUDGE_KINDS[name]


def make_judge(name: str, task: Any, **options: Any) -> Judge:
    """Build a judge of kind ``name`` for ``task`` (a ``core.tasks.Task``)."""
    return get_judge_kind(name).factory(task, **options)


def review_key(row: dict[str, Any]) -> tuple[str, int]:
    """The review key ``(business_id, idx)`` of a row or record."""
    return str(row["business_id"]), int(row["idx"])


def make_record(
    row: dict[str, Any],
    *,
    task: str,
    judge: str,
    prompt_version: str,
    fields: dict[str, Any],
    excerpt: str | None,
    raw: Any,
    parse_error: str | None = None,
    confidence: dict[str, float | None] | None = None,
    usage: dict[str, Any] | None = None,
    batch_id: str | None = None,
) -> dict[str, Any]:
    """A judgment record in the judgment-log layout for review ``row``."""
    return {
        "dataset": row.get("dataset"),
        "task": task,
        "judge": judge,
        "prompt_version": prompt_version,
        "created_at": now_iso(),
        "business_id": str(row["business_id"]),
        "review_id": row.get("review_id"),
        "idx": int(row["idx"]),
        "text_hash": row.get("text_hash"),  # of the text that was judged (SPEC §2.3)
        "fields": fields,
        "excerpt": excerpt,
        "raw": raw,
        "parse_error": parse_error,
        "confidence": confidence,
        "usage": usage,
        "batch_id": batch_id,
    }


def make_failure(row: dict[str, Any], error: str) -> dict[str, Any]:
    """A failed review (no judgment): reported and retried by a later run."""
    return {
        "business_id": str(row["business_id"]),
        "review_id": row.get("review_id"),
        "idx": int(row["idx"]),
        "error": error,
    }


def is_failure(record: dict[str, Any]) -> bool:
    """True for :func:`make_failure` records (never stored as judgments)."""
    return "error" in record and "fields" not in record

"""Where answers come from: the expected outputs (a grader check), an answers JSONL, or a model.

An answers file has one ``{sample_id, predicted}`` object per line (``error`` optional: why a
model gave no answer). Every answer is an :class:`Answer`; a sample without one is scored as an
empty answer with the error recorded on it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.base.errors import DataError
from core.base.files import jsonl_objects, write_jsonl_atomic
from core.base.progress import Progress, no_progress
from core.base.settings import require_writable
from core.gold.items import GoldItem
from core.llm import describe_error


@dataclass(frozen=True)
class Answer:
    """One predicted answer, or the error that left it empty."""

    predicted: str
    error: str | None = None


def expected_answers(items: Sequence[GoldItem]) -> dict[str, Answer]:
    """The expected outputs as answers (``--use-expected``: checks the grader, not a model)."""
    return {item.sample_id: Answer(item.expected_output) for item in items}


def read_answers_file(path: str | Path, items: Sequence[GoldItem]) -> dict[str, Answer]:
    """Answers of ``items`` from a JSONL file; samples it lacks get an empty answer with an error.

    Raises:
        DataError: bad JSON, a missing or non-string field, a duplicate or unknown ``sample_id``
            (file, line and field named); nothing is returned then.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"answers file not found: {path}")
    known = {item.sample_id for item in items}
    out: dict[str, Answer] = {}
    for n, obj in jsonl_objects(path):
        sid, predicted, error = obj.get("sample_id"), obj.get("predicted"), obj.get("error")
        if not isinstance(sid, str):
            raise DataError("missing or not a string", path=path, line=n, field="sample_id")
        if sid not in known:
            raise DataError(f"unknown sample id {sid!r} (not in the gold set)", path=path, line=n, field="sample_id")
        if sid in out:
            raise DataError(f"sample id {sid!r} answered twice", path=path, line=n, field="sample_id")
        if not isinstance(predicted, str):
            raise DataError("missing or not a string", path=path, line=n, field="predicted")
        if error is not None and not isinstance(error, str):
            raise DataError("expected a string", path=path, line=n, field="error")
        out[sid] = Answer(predicted, error or None)
    for item in items:
        out.setdefault(item.sample_id, Answer("", f"no answer in {path.name}"))
    return out


def model_answers(items: Sequence[GoldItem], llm: Any, *, progress: Progress = no_progress) -> dict[str, Answer]:
    """Ask ``llm`` (a :class:`core.llm.SyncLLM`) each item's system and user messages.

    Answers come from the LLM's cache when it has them (a rerun after a kill repeats no finished
    call); a call that fails once the client's retries are spent is recorded on its sample.
    """
    out: dict[str, Answer] = {}
    for i, item in enumerate(items):
        try:
            completion = llm.complete(item.prompt_messages)
            out[item.sample_id] = Answer(completion.content)
        except Exception as exc:  # noqa: BLE001 - recorded on the sample, the run goes on
            out[item.sample_id] = Answer("", f"model call failed: {describe_error(exc)}")
        progress(i + 1, len(items), item.sample_id)
    return out


def write_answers_file(path: str | Path, items: Sequence[GoldItem], answers: dict[str, Answer]) -> int:
    """Write answers as JSONL (atomic), in item order; returns the number of lines."""
    require_writable("write an answers file")
    rows: list[dict[str, Any]] = []
    for item in items:
        answer = answers[item.sample_id]
        row: dict[str, Any] = {"sample_id": item.sample_id, "predicted": answer.predicted}
        if answer.error:
            row["error"] = answer.error
        rows.append(row)
    return write_jsonl_atomic(path, rows)

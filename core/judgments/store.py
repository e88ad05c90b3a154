"""The judgment store (SPEC §2.3): one append-only JSONL log per dataset, task and judge.

``judgments/{dataset}/{task}/{judge_file}.jsonl`` holds one JSON object per judgment::

    {dataset, task, judge, prompt_version, created_at, business_id, review_id, idx, text_hash,
     fields: {<schema field>: value}, excerpt, raw, parse_error, confidence, usage, batch_id}

``judge`` is the real judge id (a model id such as ``org/model:tag`` included); the file name is
:func:`judge_file` of it, which maps distinct ids to distinct names (an id that is a valid name is
its own file name, any other id a readable slug plus ``~`` and a hash).

Judgments are never edited: a later record for the same review key ``(business_id, idx)`` wins.
A judgment belongs to a text (SPEC §2.3): ``text_hash`` is the hash of the text that was judged,
and a record whose ``text_hash`` differs from the review's current text is *stale*: GT and a
resumed run treat it as absent (:func:`split_stale` counts them) and ``judgments prune`` moves it
to ``_retired/``. A record without ``text_hash`` (imported from xnot, or written before it was
recorded) cannot be checked and counts as current.
Human corrections live apart, in :mod:`core.judgments.overrides`; :mod:`core.judgments` applies them on top of
this store (GT reads it there).
Records with a ``parse_error`` (a value outside the enum, a missing field, no JSON) are kept and
listed; GT formulas skip them (they filter ``parse_error IS NULL``), so a judge's failure never
turns into an enum value.

``judgments/{dataset}/{task}/_settings.json`` records the dataset/task's GT judge (the judge whose
judgments ground truth uses when no judge is named): :mod:`core.judgments.catalog`, which also lists
a task's judges and loads one judge's judgments as GT reads them.
"""

from __future__ import annotations

import glob
import hashlib
import json
import numbers
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from core.base.clock import now_iso
from core.base.errors import DataError, WorkbenchError
from core.base.files import (
    append_jsonl,
    append_jsonl_bytes,
    read_jsonl_log,
    write_jsonl_atomic,
)
from core.datasets import scan_reviews
from core.judgments.log_cache import read_cached
from core.tasks import Task, get_task
from core.tasks.keyword_index import INDEX_FILE, index_stats, text_hashes
from core.workspace import Workspace, is_valid_name
from core.workspace.locks import judge_lock

SETTINGS_FILE = "_settings.json"
RETIRED_DIR = "_retired"
JUDGE_ID_MAX = 300
_HEX16 = re.compile(r"[0-9a-f]{16}")
KEY = ("business_id", "idx")
META_COLUMNS = ("business_id", "review_id", "idx", "date", "stars", "useful", "name", "categories")
_STR_KEYS = ("dataset", "task", "judge", "prompt_version", "created_at", "business_id", "review_id",
             "excerpt", "raw", "parse_error", "batch_id")




def check_judge_id(judge: object) -> str:
    """A judge id: 1-300 printable characters without surrounding spaces (any model id fits)."""
    if (not isinstance(judge, str) or not judge or len(judge) > JUDGE_ID_MAX or not judge.isprintable()
            or judge != judge.strip()):
        shown = repr(judge[:80] + "…" if isinstance(judge, str) and len(judge) > 80 else judge)
        raise ValueError(f"invalid judge id {shown}: use 1-{JUDGE_ID_MAX} printable characters")
    return judge


def judge_file(judge: str) -> str:
    """The file stem of a judge's log: injective over judge ids.

    >>> judge_file("gpt-4o-mini")
    'gpt-4o-mini'
    >>> judge_file("org/m"), judge_file("org_m"), judge_file("org:m")
    ('org_m~4c1771e122a6', 'org_m', 'org_m~eb9403febade')
    """
    check_judge_id(judge)
    if is_valid_name(judge):
        return judge
    slug = re.sub(r"[^A-Za-z0-9_.-]", "_", judge)[:40].strip("_.-") or "judge"
    return f"{slug}~{hashlib.sha256(judge.encode('utf-8')).hexdigest()[:12]}"


def judgment_path(ws: Workspace, dataset: str, task: str, judge: str) -> Path:
    """Path of one judge's log; validates the names."""
    return ws.judgments_dir(dataset, task) / f"{judge_file(judge)}.jsonl"


def judge_of_file(path: Path) -> str | None:
    """The judge id of a log file: its stem, or for a mapped name the id its records carry."""
    if "~" not in path.stem:
        return path.stem
    try:
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                try:
                    rec = json.loads(line)
                except ValueError:
                    continue
                judge = rec.get("judge") if isinstance(rec, dict) else None
                if isinstance(judge, str) and judge_file(judge) == path.stem:
                    return judge
    except (OSError, ValueError):
        return None
    return None


def log_schema(task: Task) -> dict[str, Any]:
    """The polars schema of a judgment log of ``task`` (used to read the JSONL quickly)."""
    return {
        "dataset": pl.String, "task": pl.String, "judge": pl.String, "prompt_version": pl.String,
        "created_at": pl.String, "business_id": pl.String, "review_id": pl.String, "idx": pl.Int64,
        "text_hash": pl.String, "fields": pl.Struct({f: pl.String for f in task.field_names}),
        "excerpt": pl.String, "raw": pl.String, "parse_error": pl.String,
        "confidence": pl.Struct({f: pl.Float64 for f in task.field_names}),
        "usage": pl.Struct({"prompt_tokens": pl.Int64, "completion_tokens": pl.Int64, "cost_usd": pl.Float64}),
        "batch_id": pl.String,
    }


def _as_text(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def _normalise(rec: dict[str, Any], task: Task, dataset: str, judge: str, n: int) -> dict[str, Any]:
    where = f"records[{n}]"
    if not isinstance(rec, dict):
        raise DataError("expected a dict", field=where)
    if not isinstance(rec.get("business_id"), str) or not rec["business_id"]:
        raise DataError("business_id must be a non-empty string", field=f"{where}.business_id")
    idx = rec.get("idx")
    if isinstance(idx, bool) or not isinstance(idx, numbers.Integral) or idx < 0:
        raise DataError(f"idx must be an int >= 0, got {idx!r}", field=f"{where}.idx")
    idx = int(idx)
    fields = rec.get("fields") or {}
    if not isinstance(fields, dict):
        raise DataError("fields must be a dict", field=f"{where}.fields")
    text_hash = rec.get("text_hash")
    if text_hash is not None and (not isinstance(text_hash, str) or not _HEX16.fullmatch(text_hash)):
        raise DataError(f"text_hash must be 16 lower-case hex characters, got {text_hash!r}", field=f"{where}.text_hash")
    out_fields = {f: _as_text(fields.get(f)) for f in task.field_names}
    parse_error = rec.get("parse_error")
    if parse_error is None:
        bad = [f"{f}={v!r}" for f, v in out_fields.items() if v not in task.field(f).values]
        if bad:
            raise DataError(
                f"values outside the {task.task_id} schema without a parse_error: {', '.join(bad)}",
                field=f"{where}.fields",
            )
    out = {
        "dataset": dataset, "task": task.task_id, "judge": judge,
        "prompt_version": _as_text(rec.get("prompt_version")),
        "created_at": _as_text(rec.get("created_at")) or now_iso(),
        "business_id": rec["business_id"], "review_id": _as_text(rec.get("review_id")), "idx": idx,
        "text_hash": text_hash, "fields": out_fields,
        "excerpt": _as_text(rec.get("excerpt")),
        "raw": _as_text(rec.get("raw")),
        "parse_error": _as_text(parse_error),
        "confidence": rec.get("confidence") if isinstance(rec.get("confidence"), dict) else None,
        "usage": rec.get("usage") if isinstance(rec.get("usage"), dict) else None,
        "batch_id": _as_text(rec.get("batch_id")),
    }
    return out


def append_judgments(ws: Workspace, dataset: str, task: str, judge: str, records: Iterable[dict]) -> int:
    """Append judgments to the judge's log (durably); returns the number appended.

    Each record needs ``business_id`` and ``idx``; ``dataset``, ``task`` and ``judge`` are set
    from the arguments, ``created_at`` defaults to now. Field values are kept as given (non-strings
    are stored as their JSON text); a record without ``parse_error`` must have every field inside
    the task's enums (DataError otherwise), so a bad value can only be stored as a parse error.
    """
    spec = get_task(task, ws)
    path = judgment_path(ws, dataset, task, judge)
    records = list(records)
    append_encoded_judgments(path, encode_judgments(spec, dataset, judge, records))
    return len(records)


def encode_judgments(spec: Task, dataset: str, judge: str, records: Iterable[dict]) -> bytes:
    """The log lines :func:`append_judgments` writes for ``records`` (validated the same way;
    DataError names the bad record). Pure: worker processes encode, the caller appends."""
    rows = [_normalise(r, spec, dataset, judge, n) for n, r in enumerate(records)]
    return "".join(json.dumps(r, ensure_ascii=False, default=str) + "\n" for r in rows).encode("utf-8")


_STR = json.encoder.encode_basestring  # how json.dumps(..., ensure_ascii=False) writes a str
_RAW = json.JSONEncoder(ensure_ascii=False, default=str)  # _as_text of a dict, without a new encoder per call
_EMPTY_TAIL = '"parse_error": null, "confidence": null, "usage": null, "batch_id": null}\n'


class JudgmentLines:
    """The lines :func:`encode_judgments` writes, byte for byte, built from strings rather than
    record dicts: for a bulk judge whose judgments carry no parse error, usage or confidence.

    :meth:`tail` encodes a judgment's ``fields, excerpt, raw`` (reusable: every quiet review of a
    rule judge has the same one); :meth:`line` a whole line. Either returns None for what it cannot
    vouch for (a field outside the task's enums, a malformed key): the caller then encodes records
    with :func:`encode_judgments`, which raises the DataError naming it.
    """

    def __init__(self, spec: Task, dataset: str, judge: str, prompt_version: str) -> None:
        self._fields = [(f, _STR(f), spec.field(f).values) for f in spec.field_names]
        self._head = (f'{{"dataset": {_STR(dataset)}, "task": {_STR(spec.task_id)}, "judge": {_STR(judge)}, '
                      f'"prompt_version": {_STR(prompt_version)}, "created_at": ')

    def tail(self, fields: dict[str, Any], excerpt: str | None, raw: Any) -> str | None:
        """``"fields": …, "excerpt": …, "raw": …`` and the empty rest of a line (None: not vouched for)."""
        if any(type(fields.get(f)) is not str or fields[f] not in values for f, _, values in self._fields):
            return None
        if excerpt is not None and type(excerpt) is not str:
            return None
        raw_text = raw if raw is None or type(raw) is str else _RAW.encode(raw)
        parts = ", ".join(f"{key}: {_STR(fields[f])}" for f, key, _ in self._fields)
        return (f'"fields": {{{parts}}}, "excerpt": {"null" if excerpt is None else _STR(excerpt)}, '
                f'"raw": {"null" if raw_text is None else _STR(raw_text)}, {_EMPTY_TAIL}')

    def line(self, row: dict[str, Any], created_at: str, tail: str) -> str | None:
        """The line of ``row``'s judgment (its ``business_id, review_id, idx, text_hash``) with ``tail``."""
        bid, rid, idx, th = row.get("business_id"), row.get("review_id"), row.get("idx"), row.get("text_hash")
        if type(bid) is not str or not bid or type(idx) is not int or idx < 0 or (rid is not None and type(rid) is not str):
            return None
        if th is not None and (type(th) is not str or not _HEX16.fullmatch(th)):
            return None
        return (f'{self._head}{_STR(created_at)}, "business_id": {_STR(bid)}, '
                f'"review_id": {"null" if rid is None else _STR(rid)}, "idx": {idx}, '
                f'"text_hash": {"null" if th is None else _STR(th)}, {tail}')


def append_encoded_judgments(path: Path, data: bytes) -> tuple[int, int]:
    """Append lines made by :func:`encode_judgments` to the log at ``path`` (:func:`judgment_path`),
    durably, as :func:`append_judgments` does; returns where they start and end in the file."""
    return append_jsonl_bytes(path, data)  # makes the folders, never through a link


def current_text_hashes(ws: Workspace, dataset: str, keys: pl.DataFrame) -> pl.DataFrame:
    """``business_id, idx, current_hash``: the text hash of each review key in ``keys`` as the
    dataset stores it now (null where the review has no text or is gone). Hashes only those rows."""
    wanted = keys.select("business_id", pl.col("idx").cast(pl.Int64)).unique()
    if wanted.height == 0:
        return wanted.with_columns(pl.lit(None, pl.String).alias("current_hash"))
    stats = index_stats(ws, dataset)
    if stats is not None and stats.get("current"):  # the current index holds every review's hash
        return (pl.scan_parquet(ws.index_dir(dataset) / INDEX_FILE, glob=False)
                .select("business_id", pl.col("idx").cast(pl.Int64), pl.col("text_hash").alias("current_hash"))
                .join(wanted.lazy(), on=["business_id", "idx"], how="inner").collect())
    texts = (scan_reviews(ws, dataset).select("business_id", pl.col("idx").cast(pl.Int64), "text")
             .join(wanted.lazy(), on=["business_id", "idx"], how="inner").collect())
    return texts.with_columns(text_hashes(texts["text"]).alias("current_hash")).drop("text")


def split_stale(ws: Workspace, dataset: str, log: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(current, stale) records of a log frame: stale = its ``text_hash`` differs from the hash of
    the review's current text (records without a hash, or reviews without text, count as current)."""
    if log.height == 0 or log["text_hash"].null_count() == log.height:
        return log, log.head(0)
    current = current_text_hashes(ws, dataset, log.filter(pl.col("text_hash").is_not_null()))
    joined = log.join(current, on=["business_id", "idx"], how="left")
    stale = (pl.col("text_hash").is_not_null() & pl.col("current_hash").is_not_null()
             & (pl.col("text_hash") != pl.col("current_hash")))
    joined = joined.with_columns(stale.fill_null(False).alias("_stale"))
    keep = joined.filter(~pl.col("_stale")).drop("current_hash", "_stale")
    return keep, joined.filter(pl.col("_stale")).drop("current_hash", "_stale")


def stale_count(ws: Workspace, dataset: str, task: str, judge: str) -> int:
    """How many review keys have only stale judgments of ``judge`` (what GT and resume skip)."""
    log = read_log(ws, dataset, task, judge, columns=(*KEY, "text_hash"))
    current, stale = split_stale(ws, dataset, log)
    if stale.height == 0:
        return 0
    return stale.select(KEY).unique().join(current.select(KEY).unique(), on=list(KEY), how="anti").height


def prune_stale(ws: Workspace, dataset: str, task: str, judge: str) -> dict[str, Any]:
    """Retire a judge's stale judgments: the log is rewritten (atomically, under the judge's run
    lock) without them and they are appended to ``_retired/{judge_file}.jsonl``. Returns counts."""
    get_task(task, ws)
    path = judgment_path(ws, dataset, task, judge)
    with judge_lock(ws, dataset, task, judge):
        log = read_log(ws, dataset, task, judge)
        current, stale = split_stale(ws, dataset, log)
        if stale.height:
            rows = read_jsonl_log(path)
            stale_seq = set(stale["_seq"].to_list())
            if len(rows) != log.height:
                raise WorkbenchError(f"{path}: the log has unreadable lines; repair it before pruning")
            append_jsonl(path.parent / RETIRED_DIR / path.name, [r for i, r in enumerate(rows) if i in stale_seq])
            write_jsonl_atomic(path, [r for i, r in enumerate(rows) if i not in stale_seq])
    return {"dataset": dataset, "task": task, "judge": judge, "retired": stale.height, "kept": current.height,
            "retired_to": str(path.parent / RETIRED_DIR / path.name) if stale.height else None}


def read_log(ws: Workspace, dataset: str, task: str, judge: str, *,
             columns: Sequence[str] | None = None) -> pl.DataFrame:
    """Every record of a judge's log in file order (duplicates kept), with a ``_seq`` column.

    ``columns`` keeps only those columns of :func:`log_schema` (the reader then skips building
    the others: a large log's ``raw`` texts are most of it).
    """
    spec = get_task(task, ws)
    path = judgment_path(ws, dataset, task, judge)
    schema = log_schema(spec)
    wanted = list(schema) if columns is None else [c for c in schema if c in set(columns)]
    if not path.exists():
        return pl.DataFrame(schema=schema).select(wanted).with_row_index("_seq")
    cached = read_cached(path, schema, wanted)  # a large log: its columnar copy and the lines since
    if cached is not None:
        return cached.with_row_index("_seq")
    try:
        df = pl.scan_ndjson(glob.escape(str(path)), schema=schema).select(wanted).collect()  # a [ in the workspace path is no pattern
    except pl.exceptions.PolarsError:
        # a line torn by a killed writer: fall back to the tolerant reader
        df = pl.DataFrame([{k: r.get(k) for k in schema} for r in read_jsonl_log(path)], schema=schema,
                          strict=False).select(wanted)
    return df.with_row_index("_seq")


def latest(df: pl.DataFrame) -> pl.DataFrame:
    """The latest record per review key ``(business_id, idx)`` (last in log order)."""
    return df.unique(subset=list(KEY), keep="last", maintain_order=True)


def judged_keys(ws: Workspace, dataset: str, task: str, judge: str) -> set[tuple[str, int]]:
    """Review keys ``(business_id, idx)`` the judge has a finished judgment for: the latest current
    record is not a parse error (a parse error may be a transient bad answer: ``--resume`` asks
    again) and a stale judgment of another text does not count."""
    log = read_log(ws, dataset, task, judge, columns=(*KEY, "text_hash", "parse_error"))
    df = latest(split_stale(ws, dataset, log)[0])
    df = df.filter(pl.col("parse_error").is_null()).select(KEY).unique()
    return set(zip(df["business_id"].to_list(), df["idx"].to_list(), strict=True))

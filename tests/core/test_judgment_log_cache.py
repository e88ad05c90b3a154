"""core.judgments.log_cache: a log read through its columnar copy equals the log read line by line,
after appends, torn tails, a replaced or edited log; the judge extends the copy at the end of a run."""

from __future__ import annotations

import os
import shutil

import polars as pl
import pytest

from core.judgments import append_judgments, judgment_path, load_judgments, read_log
from core.judgments import log_cache as cache
from core.judgments.judges import pool
from core.judgments.judges.base import make_judge
from core.judgments.judges.runner import execute_judging, plan_judging
from core.tasks import get_task

FIELDS = {"incident_severity": "none", "account_type": "none", "safety_interaction": "positive"}


def _records(start: int, n: int) -> list[dict]:
    return [{"business_id": f"b{i % 7}", "review_id": f"r{i}", "idx": i, "fields": FIELDS, "excerpt": f"text {i} é",
             "raw": {"fired": [i]}, "created_at": f"2026-01-01T00:00:{i % 60:02d}", "text_hash": None}
            for i in range(start, start + n)]


def _uncached(ws, monkeypatch, **kwargs) -> pl.DataFrame:
    with monkeypatch.context() as m:
        m.setattr(cache, "MIN_BYTES", 1 << 60)
        return read_log(ws, "d", "G1a", "j", **kwargs)


@pytest.fixture()
def log(workspace, monkeypatch):
    monkeypatch.setattr(cache, "MIN_BYTES", 1)
    append_judgments(workspace, "d", "G1a", "j", _records(0, 300))
    return judgment_path(workspace, "d", "G1a", "j")


def test_a_read_through_the_copy_equals_the_log_after_appends(workspace, monkeypatch, log, judging_dataset):
    judging_dataset()
    first = read_log(workspace, "d", "G1a", "j", columns=("business_id", "idx", "fields", "excerpt"))
    rows_path, meta_path = cache.cache_paths(log)
    assert rows_path.exists() and meta_path.exists()
    assert first.equals(_uncached(workspace, monkeypatch, columns=("business_id", "idx", "fields", "excerpt")))
    append_judgments(workspace, "d", "G1a", "j", _records(300, 5))  # fewer than a tenth: read beside the copy
    stamp = rows_path.stat().st_mtime_ns
    assert read_log(workspace, "d", "G1a", "j", columns=("idx", "excerpt")).equals(
        _uncached(workspace, monkeypatch, columns=("idx", "excerpt")))
    assert rows_path.stat().st_mtime_ns == stamp
    append_judgments(workspace, "d", "G1a", "j", _records(305, 100))  # a third more: the copy is rewritten
    got = read_log(workspace, "d", "G1a", "j", columns=("idx", "created_at"))
    assert got.equals(_uncached(workspace, monkeypatch, columns=("idx", "created_at"))) and got.height == 405
    assert cache.read_json(meta_path)["offset"] == log.stat().st_size
    every = [c for c in read_log(workspace, "d", "G1a", "j").columns if c != "raw"]  # the whole log: no copy
    assert read_log(workspace, "d", "G1a", "j").select(every).equals(_uncached(workspace, monkeypatch).select(every))
    assert load_judgments(workspace, "d", "G1a", "j").equals(
        _load_uncached(workspace, monkeypatch))


def _load_uncached(ws, monkeypatch):
    with monkeypatch.context() as m:
        m.setattr(cache, "MIN_BYTES", 1 << 60)
        return load_judgments(ws, "d", "G1a", "j")


def test_a_torn_tail_is_dropped_and_a_whole_last_line_kept(workspace, monkeypatch, log):
    read_log(workspace, "d", "G1a", "j", columns=("idx",))
    with open(log, "ab") as fh:
        fh.write(b'{"business_id": "b1", "idx": 999, "fie')
    assert read_log(workspace, "d", "G1a", "j", columns=("idx",))["idx"].to_list() == list(range(300))
    append_judgments(workspace, "d", "G1a", "j", _records(300, 1))  # cuts the torn line
    with open(log, "ab") as fh:  # a last record without its newline (a hand edit) is read
        fh.write(log.read_bytes().splitlines()[0].replace(b'"idx": 0', b'"idx": 777'))
    got = read_log(workspace, "d", "G1a", "j", columns=("idx",))
    assert got.equals(_uncached(workspace, monkeypatch, columns=("idx",))) and got["idx"][-1] == 777


def test_a_replaced_or_edited_log_is_read_again(workspace, monkeypatch, log):
    read_log(workspace, "d", "G1a", "j", columns=("idx", "excerpt"))
    replacement = log.with_name("other.jsonl")
    shutil.copy(log, replacement)
    data = log.read_bytes().replace(b'"excerpt": "text 1 \xc3\xa9"', b'"excerpt": "TEXT 1 \xc3\xa9"', 1)
    replacement.write_bytes(data)
    os.replace(replacement, log)  # a new file (as prune writes): another inode
    assert read_log(workspace, "d", "G1a", "j", columns=("excerpt",))["excerpt"][1] == "TEXT 1 é"
    with open(log, "r+b") as fh:  # edited in place, same length, same inode: the head digest differs
        edited = fh.read().replace(b'"TEXT 1 \xc3\xa9"', b'"text 1 \xc3\xa9"', 1)
        fh.seek(0)
        fh.write(edited)
    assert read_log(workspace, "d", "G1a", "j", columns=("excerpt",))["excerpt"][1] == "text 1 é"
    cache.cache_paths(log)[0].write_bytes(b"not parquet")  # a damaged copy is not used
    cache.cache_paths(log)[1].write_text("{}")
    assert read_log(workspace, "d", "G1a", "j", columns=("idx",)).equals(_uncached(workspace, monkeypatch, columns=("idx",)))


def test_a_large_judge_run_leaves_a_copy_of_what_it_appended(demo_ws, monkeypatch):
    monkeypatch.setattr(cache, "MIN_BYTES", 1)
    monkeypatch.setattr(pool, "POOL_MIN_ROWS", 1)
    monkeypatch.setattr(pool, "POOL_CHUNK", 50)
    monkeypatch.setattr("core.judgments.judges.runner.POOL_MIN_ROWS", 1)
    monkeypatch.setenv(pool.WORKERS_ENV, "2")
    shutil.rmtree(demo_ws.judgments_dir("demo", "G1a"))
    judge = make_judge("heuristic-v2", get_task("G1a", None))
    report = execute_judging(plan_judging(demo_ws, "demo", "G1a", judge), judge)
    path = judgment_path(demo_ws, "demo", "G1a", "heuristic-v2")
    meta = cache.read_json(cache.cache_paths(path)[1])
    assert meta["offset"] == path.stat().st_size and meta["rows"] == report.judged
    got = read_log(demo_ws, "demo", "G1a", "heuristic-v2", columns=("business_id", "idx", "fields"))
    with monkeypatch.context() as m:
        m.setattr(cache, "MIN_BYTES", 1 << 60)
        want = read_log(demo_ws, "demo", "G1a", "heuristic-v2", columns=("business_id", "idx", "fields"))
    assert got.equals(want)

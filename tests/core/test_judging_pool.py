"""core.judgments.judges.pool: an offline judge in worker processes writes the log one process writes, in the
same order; stops, resumes and errors behave as in one process; the extraction log is kept up to
date from the new judgments alone."""

from __future__ import annotations

import re
import shutil

import pytest

from core.base.errors import DataError
from core.judgments import judged_keys, judgment_path
from core.judgments.judges import pool
from core.judgments.judges.base import make_judge, make_record
from core.judgments.judges.extraction_progress import ExtractionProgress
from core.judgments.judges.runner import execute_judging, plan_judging
from core.judgments.xnot_files import extraction_log_path, read_extraction_log
from core.tasks import get_task

DEMO = ("demo", "G1a")
POOL_CHUNK = 23  # the demo has 446 matched reviews: 20 chunks
_CLOCK = re.compile(rb'"(created_at|started|last_updated)": "[^"]*"')


def _log_bytes(ws, judge: str) -> bytes:
    return _CLOCK.sub(rb'"\1": "*"', judgment_path(ws, *DEMO, judge).read_bytes())


def _extraction_bytes(ws, judge: str) -> bytes:
    return _CLOCK.sub(rb'"\1": "*"', extraction_log_path(ws, *DEMO, judge).read_bytes())


def _judge_all(ws, workers: int, monkeypatch, **kwargs):
    monkeypatch.setenv(pool.WORKERS_ENV, str(workers))
    judge = make_judge("heuristic-v2", get_task("G1a", None))
    return execute_judging(plan_judging(ws, *DEMO, judge, resume=True), judge, **kwargs)


@pytest.fixture()
def small_chunks(monkeypatch):
    monkeypatch.setattr(pool, "CHUNK", 17)
    monkeypatch.setattr(pool, "POOL_CHUNK", POOL_CHUNK)


def test_workers_write_the_bytes_one_process_writes(demo_ws, monkeypatch, small_chunks):
    shutil.rmtree(demo_ws.judgments_dir(*DEMO))
    one = _judge_all(demo_ws, 1, monkeypatch)
    alone, alone_log = _log_bytes(demo_ws, "heuristic-v2"), _extraction_bytes(demo_ws, "heuristic-v2")
    shutil.rmtree(demo_ws.judgments_dir(*DEMO))
    seen: list[int] = []
    two = _judge_all(demo_ws, 2, monkeypatch, progress=lambda done, total, msg: seen.append(done))
    assert one.judged == two.judged > 10 * POOL_CHUNK and two.parse_errors == 0 and not two.failures
    assert _log_bytes(demo_ws, "heuristic-v2") == alone  # same lines, same order (clocks aside)
    assert _extraction_bytes(demo_ws, "heuristic-v2") == alone_log
    assert seen[1:] == sorted(seen[1:]) and seen[-1] == two.judged  # progress in plan order


def test_a_stop_keeps_whole_chunks_and_a_resume_finishes_the_same_log(demo_ws, monkeypatch, small_chunks):
    shutil.rmtree(demo_ws.judgments_dir(*DEMO))
    full = _judge_all(demo_ws, 2, monkeypatch)
    complete = _log_bytes(demo_ws, "heuristic-v2")
    shutil.rmtree(demo_ws.judgments_dir(*DEMO))
    stored: list[int] = []
    first = _judge_all(demo_ws, 2, monkeypatch, progress=lambda done, total, msg: stored.append(done),
                       stop=lambda: len(stored) >= 3)
    assert first.cancelled and first.judged % POOL_CHUNK == 0 and 3 * POOL_CHUNK <= first.judged < full.judged
    assert len(judged_keys(demo_ws, *DEMO, "heuristic-v2")) == first.judged
    log = read_extraction_log(demo_ws, *DEMO, "heuristic-v2")
    assert log["progress"]["reviews_extracted"] == first.judged
    second = _judge_all(demo_ws, 2, monkeypatch)
    assert second.skipped == first.judged and first.judged + second.judged == full.judged
    assert _log_bytes(demo_ws, "heuristic-v2") == complete
    plan = plan_judging(demo_ws, *DEMO, make_judge("heuristic-v2", get_task("G1a", None)))
    want = ExtractionProgress(plan, set(plan.done_keys)).payload(started="*")
    got = read_extraction_log(demo_ws, *DEMO, "heuristic-v2")
    assert {**got, "started": "*", "last_updated": "*"} == {**want, "last_updated": "*"}


class _BadJudge:
    """A bulk judge whose 40th record has a value outside the schema and no parse error."""

    judge_id = prompt_version = "bad-judge"
    concurrent = False

    def judge(self, rows):
        fields = {"incident_severity": "none", "account_type": "none", "safety_interaction": "none"}
        return [make_record(row, task="G1a", judge=self.judge_id, prompt_version="x", excerpt="", raw=None,
                            fields={**fields, "incident_severity": "catastrophic"} if row["idx"] == 39 else fields)
                for row in rows]


def test_a_record_outside_the_schema_fails_in_the_caller_with_its_field(demo_ws, monkeypatch, small_chunks):
    monkeypatch.setenv(pool.WORKERS_ENV, "2")
    judge = _BadJudge()
    plan = plan_judging(demo_ws, *DEMO, judge)  # type: ignore[arg-type]
    assert any(row["idx"] == 39 for row in plan.rows)
    with pytest.raises(DataError, match=r"incident_severity='catastrophic'"):
        execute_judging(plan, judge)  # type: ignore[arg-type]


def test_worker_count(monkeypatch):
    monkeypatch.delenv(pool.WORKERS_ENV, raising=False)
    assert pool.worker_count(pool.POOL_MIN_ROWS - 1) == 1
    assert pool.worker_count(pool.POOL_MIN_ROWS) >= 1
    monkeypatch.setenv(pool.WORKERS_ENV, "3")
    assert pool.worker_count(10) == 3
    monkeypatch.setenv(pool.WORKERS_ENV, "0")
    assert pool.worker_count(10**6) == 1
    monkeypatch.setenv(pool.WORKERS_ENV, "two")
    with pytest.raises(ValueError, match="WORKBENCH_JUDGE_WORKERS must be a whole number, got 'two'"):
        pool.worker_count(10)

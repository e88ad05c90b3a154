"""A large log's raw judgments and stale count kept beside it (issue 27, GT at scale): what is read
back equals what is computed, and an appended judgment or an edited text is never met by an old copy."""

from __future__ import annotations

import polars as pl
import pytest

from core.base import memo
from core.cli import main
from core.datasets import write_dataset
from core.judgments import load_raw_judgments, read_log, split_stale, stale_count, stale_judgments
from core.judgments.catalog import _raw_judgments
from core.judgments.judges import execute_judging, plan_judging
from core.judgments.judges.heuristic import HeuristicJudge
from core.tasks import get_task
from core.tasks.keyword_index import build_index
from tests.helpers.judging_dataset import ALLERGY_TEXTS, PLAIN_TEXTS

EDITED = "Careful: my daughter had an anaphylactic reaction here, we used her EpiPen and went to the hospital."


@pytest.fixture(autouse=True)
def _every_log_is_large(monkeypatch):
    monkeypatch.setattr(memo, "MIN_BYTES", 0)  # keep copies beside the test's small logs too


def _dataset(ws, texts: dict[int, str] | None = None, *, replace: bool = False) -> None:
    texts = texts or {}
    rests = [{"business_id": f"biz{r}", "name": f"R{r}", "categories": "Thai", "city": "X", "stars": 4.0} for r in range(2)]
    reviews = [{"business_id": f"biz{r}", "review_id": f"rev-{r}-{i}", "idx": i, "date": "2020-01-01 12:00:00",
                "stars": 3.0, "text": texts.get(i, text) if r == 0 else text}
               for r in range(2) for i, text in enumerate(ALLERGY_TEXTS + PLAIN_TEXTS)]
    write_dataset(ws, "d", pl.DataFrame(rests), pl.DataFrame(reviews), sources=[], layout="test", replace=replace)
    build_index(ws, "d", tasks=["G1a"])


def _judge(ws) -> str:
    judge = HeuristicJudge(get_task("G1a", None))
    plan = plan_judging(ws, "d", "G1a", judge, resume=True)
    execute_judging(plan, judge, concurrency=1)
    return plan.judge_id


def _fresh(ws, judge: str) -> pl.DataFrame:
    return _raw_judgments(ws, "d", get_task("G1a", ws), judge)[0]


def test_kept_raw_judgments_and_stale_count_follow_the_log_and_the_texts(workspace, capsys):
    _dataset(workspace)
    judge = _judge(workspace)
    first = load_raw_judgments(workspace, "d", "G1a", judge)
    assert list(workspace.judgments_dir("d", "G1a").glob(".*.raw.parquet"))  # kept beside the log
    assert load_raw_judgments(workspace, "d", "G1a", judge).equals(first) and first.equals(_fresh(workspace, judge))
    assert stale_judgments(workspace, "d", "G1a", judge) == stale_count(workspace, "d", "G1a", judge) == 0

    _dataset(workspace, {0: EDITED, 1: EDITED}, replace=True)  # two judged texts edited: a new dataset lock
    log = read_log(workspace, "d", "G1a", judge, columns=("business_id", "idx", "text_hash"))
    assert split_stale(workspace, "d", log)[1].height == 2  # the crafted log: stale and fresh lines
    kept = load_raw_judgments(workspace, "d", "G1a", judge)
    assert kept.height == first.height - 2 and kept.equals(_fresh(workspace, judge))
    assert stale_judgments(workspace, "d", "G1a", judge) == stale_count(workspace, "d", "G1a", judge) == 2
    assert main(["--workspace", str(workspace.root), "gt", "--dataset", "d", "--task", "G1a", "--k", "25"]) == 0
    assert "2 judgments left out as stale" in capsys.readouterr().out

    _judge(workspace)  # --resume appends the two again: the log changes, the kept copy is not used
    again = load_raw_judgments(workspace, "d", "G1a", judge)
    assert again.height == first.height and again.equals(_fresh(workspace, judge))
    assert stale_judgments(workspace, "d", "G1a", judge) == stale_count(workspace, "d", "G1a", judge) == 0


def test_stale_judgments_without_a_kept_copy_counts_from_the_log(workspace):
    _dataset(workspace)
    judge = _judge(workspace)
    _dataset(workspace, {0: EDITED}, replace=True)
    assert stale_judgments(workspace, "d", "G1a", judge) == stale_count(workspace, "d", "G1a", judge) == 1

"""Issue 9, items 3, 9 and 10: judgments belong to a text; one judge run per (dataset, task,
judge) at a time (real processes, kill -9 included); judge ids map to file names injectively."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from core.cli import main
from core.datasets import write_dataset
from core.judgments import (
    append_judgments,
    judge_file,
    judged_keys,
    judgment_path,
    list_judges,
    load_judgments,
    prune_stale,
    read_log,
    stale_count,
)
from core.judgments.judges import execute_judging, plan_judging
from core.judgments.judges.heuristic import HeuristicJudge
from core.tasks import get_task
from core.tasks.keyword_index import build_index, text_hash
from core.workspace.locks import LockBusyError, judge_lock
from tests.helpers.judging_dataset import ALLERGY_TEXTS, PLAIN_TEXTS
from tests.helpers.safety import ROOT, cli

EDITED = "Careful: my daughter had an anaphylactic reaction here, we used her EpiPen and went to the hospital."


def _dataset(ws, texts: dict[int, str] | None = None, *, replace: bool = False, index: bool = True) -> None:
    texts = texts or {}
    rests, reviews = [], []
    for r in range(2):
        rests.append({"business_id": f"biz{r}", "name": f"R{r}", "categories": "Thai", "city": "X", "stars": 4.0})
        for i, text in enumerate(ALLERGY_TEXTS + PLAIN_TEXTS):
            reviews.append({"business_id": f"biz{r}", "review_id": f"rev-{r}-{i}", "idx": i,
                            "date": "2020-01-01 12:00:00", "stars": 3.0,
                            "text": texts.get(i, text) if r == 0 else text})
    write_dataset(ws, "d", pl.DataFrame(rests), pl.DataFrame(reviews), sources=[], layout="test", replace=replace)
    if index:
        build_index(ws, "d", tasks=["G1a"])


def _judge(ws, *, resume: bool = True):
    judge = HeuristicJudge(get_task("G1a", None))
    plan = plan_judging(ws, "d", "G1a", judge, resume=resume)
    return plan, execute_judging(plan, judge, concurrency=1)


def test_item3_a_judgment_of_another_text_is_stale_for_gt_and_resume_and_prune_retires_it(workspace, capsys):
    _dataset(workspace)
    plan, report = _judge(workspace)
    assert report.judged == len(ALLERGY_TEXTS) * 2
    log = read_log(workspace, "d", "G1a", plan.judge_id)
    assert log["text_hash"].null_count() == 0 and text_hash(ALLERGY_TEXTS[0]) in log["text_hash"].to_list()
    before = load_judgments(workspace, "d", "G1a").filter(pl.col("business_id") == "biz0", pl.col("idx") == 0)
    assert before["incident_severity"].item() != "severe"

    _dataset(workspace, {0: EDITED, 1: EDITED}, replace=True, index=False)  # edit two judged texts, re-import
    assert stale_count(workspace, "d", "G1a", plan.judge_id) == 2  # hashed from the texts (index out of date)
    build_index(workspace, "d", tasks=["G1a"])  # re-index
    assert stale_count(workspace, "d", "G1a", plan.judge_id) == 2  # read from the current index
    current = load_judgments(workspace, "d", "G1a")
    assert current.height == len(ALLERGY_TEXTS) * 2 - 2  # the stale two are absent from GT's input
    assert current.filter(pl.col("business_id") == "biz0", pl.col("idx") < 2).height == 0
    assert ("biz0", 0) not in judged_keys(workspace, "d", "G1a", plan.judge_id)

    assert main(["--workspace", str(workspace.root), "gt", "--dataset", "d", "--task", "G1a", "--k", "25"]) == 0
    assert "2 judgments left out as stale" in capsys.readouterr().out

    plan2, report2 = _judge(workspace)  # --resume judges exactly the two changed reviews again
    assert (plan2.stale, len(plan2.rows), report2.judged) == (2, 2, 2)
    after = load_judgments(workspace, "d", "G1a").filter(pl.col("business_id") == "biz0", pl.col("idx") == 0)
    assert after["incident_severity"].item() == "severe"
    assert stale_count(workspace, "d", "G1a", plan.judge_id) == 0

    result = prune_stale(workspace, "d", "G1a", plan.judge_id)
    assert (result["retired"], result["kept"]) == (2, len(ALLERGY_TEXTS) * 2)
    retired = [json.loads(x) for x in Path(result["retired_to"]).read_text().splitlines()]
    assert sorted((r["business_id"], r["idx"]) for r in retired) == [("biz0", 0), ("biz0", 1)]
    assert read_log(workspace, "d", "G1a", plan.judge_id).height == len(ALLERGY_TEXTS) * 2
    assert [j["judge"] for j in list_judges(workspace, "d", "G1a")] == [plan.judge_id]  # _retired/ is not a judge
    assert main(["--workspace", str(workspace.root), "judgments", "prune", "--dataset", "d", "--task", "G1a"]) == 0
    assert "retired 0 stale judgments" in capsys.readouterr().out


def test_item10_judge_ids_that_shared_a_file_get_their_own_logs_and_keep_the_real_id(workspace):
    _dataset(workspace)
    rec = {"business_id": "biz0", "idx": 0, "fields": {"incident_severity": "none", "account_type": "none",
                                                       "safety_interaction": "none"}}
    long_a, long_b = "p/" + "x" * 70 + "a", "p/" + "x" * 70 + "b"
    ids = ["org/m", "org_m", "org:m", long_a, long_b]
    for judge in ids:
        append_judgments(workspace, "d", "G1a", judge, [rec])
    files = {judgment_path(workspace, "d", "G1a", j).name for j in ids}
    assert len(files) == 5 and all(judgment_path(workspace, "d", "G1a", j).parent ==
                                   workspace.judgments_dir("d", "G1a") for j in ids)
    assert sorted(j["judge"] for j in list_judges(workspace, "d", "G1a")) == sorted(ids)
    for judge in ids:
        assert read_log(workspace, "d", "G1a", judge)["judge"].to_list() == [judge]
    # --resume with one judge does not skip reviews judged by another
    assert judged_keys(workspace, "d", "G1a", "org/m") == {("biz0", 0)}
    assert judged_keys(workspace, "d", "G1a", "org-m") == set()
    # an old log named by the former sanitised id keeps working under that id
    old = workspace.judgments_dir("d", "G1a") / "meta-llama_Llama-3.1-8B.jsonl"
    old.write_text(json.dumps({**rec, "judge": "meta-llama_Llama-3.1-8B", "task": "G1a", "dataset": "d"}) + "\n")
    assert "meta-llama_Llama-3.1-8B" in [j["judge"] for j in list_judges(workspace, "d", "G1a")]
    assert judge_file("meta-llama_Llama-3.1-8B") == "meta-llama_Llama-3.1-8B"
    assert load_judgments(workspace, "d", "G1a", "org/m")["judge"].to_list() == ["org/m"]


HOLD = ("import sys, time; from pathlib import Path; from core.workspace import Workspace\n"
        "from core.workspace.locks import judge_lock\n"
        "with judge_lock(Workspace(Path(sys.argv[1])), 'd', 'G1a', sys.argv[2]):\n"
        "    print('held', flush=True); time.sleep(60)\n")


def test_item9_a_second_judge_run_fails_while_one_runs_and_a_killed_run_leaves_no_stuck_lock(workspace, capsys):
    _dataset(workspace)
    judge_id = HeuristicJudge(get_task("G1a", None)).judge_id
    child = subprocess.Popen([sys.executable, "-c", HOLD, str(workspace.root), judge_id], stdout=subprocess.PIPE,
                             text=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        assert child.stdout.readline().strip() == "held"
        args = ["--workspace", str(workspace.root), "--no-progress", "judge", "--dataset", "d", "--resume"]
        assert main(args) == 1
        err = capsys.readouterr().err
        assert err.startswith("error: a judge run of") and f"already running (pid {child.pid})" in err, err
        assert read_log(workspace, "d", "G1a", judge_id).height == 0
        with pytest.raises(LockBusyError):
            _judge(workspace)
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
    assert main(args) == 0  # the killed holder's lock is free
    assert read_log(workspace, "d", "G1a", judge_id).height == len(ALLERGY_TEXTS) * 2


def test_item9_concurrent_openai_judge_processes_never_pay_twice(workspace, llm_server):
    _dataset(workspace)
    llm_server.delay_all = 0.05
    args = ["--workspace", str(workspace.root), "judge", "--dataset", "d", "--judge", "openai", "--model", "m",
            "--base-url", llm_server.base_url, "--resume", "--concurrency", "1", "--no-cache"]
    procs = [cli(*args) for _ in range(2)]
    results = [(p.wait(timeout=60), p.stderr.read()) for p in procs]
    assert any(code == 0 for code, _ in results), results
    for code, err in results:
        assert code == 0 or ("already running" in err and code == 1), err
    n = len(ALLERGY_TEXTS) * 2
    assert sum(llm_server.requests_by_key.values()) == n  # every review paid once
    log = read_log(workspace, "d", "G1a", "m")
    assert log.height == n and log.select("business_id", "idx").is_unique().all()


def test_item9_the_judge_lock_is_reentrant_in_one_thread_only(workspace):
    import threading

    with judge_lock(workspace, "d", "G1a", "j"), judge_lock(workspace, "d", "G1a", "j"):
        errors = []
        t = threading.Thread(target=lambda: errors.append(_try(workspace)))
        t.start()
        t.join()
        assert errors == ["busy"]
    assert _try(workspace) == "free"


def _try(workspace) -> str:
    try:
        with judge_lock(workspace, "d", "G1a", "j"):
            return "free"
    except LockBusyError:
        return "busy"

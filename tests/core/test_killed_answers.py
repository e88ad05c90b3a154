"""A killed LLM run or judging job loses no answer it received (COMMON: "a killed process loses
nothing; a resumed run never repeats a finished call").

The process is killed with SIGKILL at a chosen point: the moment its Nth answer reaches the code
that turns an answer into a record (the judge's ``record_from_completion``, a method's
``contract_answer``), i.e. after the answer was received and paid for and before anything derived
from it was written. The resumed run must take that answer from the response cache
(``cache/llm.jsonl``, appended with fsync inside ``core.llm`` before the answer is returned), so the
local server counts no request twice. With ``--concurrency 1`` nothing else is in flight at the kill.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from core.judgments import judged_keys, read_log
from core.workspace import Workspace
from tests.helpers.llm_server import RUN_KEY_PATTERN, LLMServer, heuristic_responder, offline_responder

ROOT = Path(__file__).resolve().parents[2]
MODEL = "gpt-4o-mini"

# Run the CLI with ``target`` (module:Class.attr or module:attr) wrapped so that its Nth call kills
# the process before it runs: no clean-up, no finally blocks, no flush.
KILL_AT = """
import importlib, os, signal, sys
module_name, _, path = sys.argv[1].partition(":")
owner = importlib.import_module(module_name)
*parents, name = path.split(".")
for part in parents:
    owner = getattr(owner, part)
original, calls, nth = getattr(owner, name), [0], int(sys.argv[2])
def killed_at_nth(*args, **kwargs):
    calls[0] += 1
    if calls[0] == nth:
        os.kill(os.getpid(), signal.SIGKILL)
    return original(*args, **kwargs)
setattr(owner, name, killed_at_nth)
from core.cli import main
sys.exit(main(sys.argv[3:]))
"""


def _env(base_url: str) -> dict[str, str]:
    return {**os.environ, "OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": "test-key", "PYTHONPATH": str(ROOT)}


def _killed(target: str, nth: int, argv: list[str], env: dict[str, str]) -> None:
    proc = subprocess.run([sys.executable, "-c", KILL_AT, target, str(nth), *argv], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == -signal.SIGKILL, proc.stderr[-2000:]


def _cache_keys(ws: Workspace) -> int:
    path = ws.cache_dir / "llm.jsonl"
    return sum(1 for line in path.read_text(encoding="utf-8").splitlines() if line.strip()) if path.exists() else 0


@pytest.mark.heavy  # `make test-all`: minutes of CPU, covered in part by quicker tests
def test_judging_killed_while_using_an_answer_resumes_without_asking_it_again(workspace, judging_dataset, llm_server):
    rows = judging_dataset(restaurants=2)  # 12 matched reviews
    llm_server.responder = heuristic_responder
    env = _env(llm_server.base_url)
    argv = ["--workspace", str(workspace.root), "--no-progress", "judge", "--dataset", "d", "--task", "G1a",
            "--judge", "openai", "--model", MODEL, "--concurrency", "1"]
    _killed("core.judgments.judges.openai_judge:OpenAIJudge.record_from_completion", 5, argv, env)

    asked = dict(llm_server.requests_by_key)
    assert sum(asked.values()) == 5  # the 5th answer was received, then the process died using it
    assert _cache_keys(workspace) == 5  # ... and it was already on disk
    stored = judged_keys(workspace, "d", "G1a", MODEL)
    assert len(stored) < 5  # the judgment of the 5th answer was never written

    resumed = subprocess.run([sys.executable, "-m", "core", *argv[:3], "--json", *argv[3:], "--resume"], cwd=ROOT,
                             env=env, capture_output=True, text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    out = json.loads(resumed.stdout)
    assert out["judged"] + len(stored) == len(rows) == 12 and out["failures"] == 0
    assert llm_server.repeated_keys() == {}  # no request was asked twice, the killed one included
    assert sum(llm_server.requests_by_key.values()) == 12
    log = read_log(workspace, "d", "G1a", MODEL)
    assert log.select("business_id", "idx").unique().height == 12


@pytest.mark.heavy  # `make test-all`: minutes of CPU, covered in part by quicker tests
def test_run_killed_while_using_an_answer_resumes_without_asking_it_again(demo_ws):
    with LLMServer(offline_responder, key_pattern=RUN_KEY_PATTERN) as server:
        env = _env(server.base_url)
        argv = ["--workspace", str(demo_ws.root), "--no-progress", "run", "--dataset", "demo", "--method", "direct",
                "--model", "test-model", "--k", "25", "--concurrency", "1", "--run-id", "killed"]
        _killed("core.methods.direct:contract_answer", 4, argv, env)

        assert sum(server.requests_by_key.values()) == 4 and _cache_keys(demo_ws) == 4
        log = demo_ws.runs_dir / "killed" / "samples.jsonl"
        finished = [json.loads(line) for line in log.read_text().splitlines() if line.strip()] if log.exists() else []
        assert len(finished) < 4  # the 4th restaurant's sample was never written

        resumed = subprocess.run([sys.executable, "-m", "core", *argv[:3], "run", "--resume", "killed"], cwd=ROOT,
                                 env=env, capture_output=True, text=True, timeout=120)
        assert resumed.returncode == 0, resumed.stderr
        assert server.repeated_keys() == {}  # the killed restaurant's answer came from the cache
        assert sum(server.requests_by_key.values()) == 12
        samples = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
        assert len(samples) == len({s["business_id"] for s in samples}) == 12


# Run the CLI with the sample log's Nth append torn (its answer is in the response cache already): the append runs as always (a torn tail left by
# an earlier kill is cut first) but only half of its bytes reach the file, then SIGKILL (a process
# killed in the middle of its write; nothing after it runs).
TORN_AT = """
import json, os, signal, sys
import core.jobs.execution as execution
from core.base.files import append_jsonl_bytes
original, calls, nth = execution.append_jsonl, [0], int(sys.argv[1])
def torn_at_nth(path, rows):
    calls[0] += str(path).endswith("samples.jsonl")  # the response cache appends through here too
    if calls[0] == nth:
        data = "".join(json.dumps(r) + "\\n" for r in rows).encode()
        append_jsonl_bytes(path, data[: len(data) // 2])
        os.kill(os.getpid(), signal.SIGKILL)
    return original(path, rows)
execution.append_jsonl = torn_at_nth
from core.cli import main
sys.exit(main(sys.argv[2:]))
"""


def test_resumed_run_killed_in_its_first_write_twice_repeats_no_call_and_loses_no_sample(demo_ws):
    """Issue 26 (Inspect AI #5213, #4933: paid work lost when a retry crashed during a resume): a run
    is killed in its 3rd sample write, its resume in its first write, the next resume in its first
    write again; the last resume finishes with every sample once and no call asked twice."""
    with LLMServer(offline_responder, key_pattern=RUN_KEY_PATTERN) as server:
        env = _env(server.base_url)
        head = ["--workspace", str(demo_ws.root), "--no-progress", "run"]
        start = [*head, "--dataset", "demo", "--method", "direct", "--model", "test-model", "--k", "25", "-n", "6",
                 "--concurrency", "1", "--run-id", "torn"]
        log = demo_ws.runs_dir / "torn" / "samples.jsonl"
        for argv, nth in ((start, 3), ([*head, "--resume", "torn"], 1), ([*head, "--resume", "torn"], 1)):
            before = log.read_bytes() if log.exists() else b""
            proc = subprocess.run([sys.executable, "-c", TORN_AT, str(nth), *argv], cwd=ROOT, env=env,
                                  capture_output=True, text=True, timeout=120)
            assert proc.returncode == -signal.SIGKILL, proc.stderr[-2000:]
            whole = before[: before.rfind(b"\n") + 1]  # the finished lines: kept as they were, torn tail cut
            assert log.read_bytes().startswith(whole) and len(log.read_bytes()) > len(whole)
            assert not log.read_bytes().endswith(b"\n")  # killed in the middle of a line
        assert server.repeated_keys() == {}  # every answer asked once so far, the killed ones included

        resumed = subprocess.run([sys.executable, "-m", "core", *head, "--resume", "torn"], cwd=ROOT, env=env,
                                 capture_output=True, text=True, timeout=120)
        assert resumed.returncode == 0, resumed.stderr
        assert server.repeated_keys() == {} and sum(server.requests_by_key.values()) == 6
        samples = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
        assert len(samples) == len({s["business_id"] for s in samples}) == 6
        results = json.loads((demo_ws.runs_dir / "torn" / "results.json").read_text())
        assert len(results["results"]) == 6 and results["errors"] == 0

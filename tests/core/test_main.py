"""``python -m core``: after ``run`` the process ends without the interpreter's teardown, with the
same exit code, the whole output and the exit handlers run (issue 27)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

EXIT_SCRIPT = """
import atexit, sys, threading, time
from core.__main__ import exit_now
atexit.register(lambda: print("handler ran", flush=True))
print("x" * 200_000)  # more than a pipe holds: flushed before the process ends
sys.stderr.write("err line")
if sys.argv[1] == "thread":
    threading.Thread(target=time.sleep, args=(0.3,)).start()
exit_now(3)
print("ordinary exit")
sys.exit(4)
"""


def _script(mode: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", EXIT_SCRIPT, mode], cwd=ROOT, capture_output=True, text=True,
                          timeout=60)


def test_exit_now_flushes_runs_the_handlers_once_and_keeps_the_code():
    proc = _script("main")
    assert proc.returncode == 3
    assert proc.stdout.splitlines() == ["x" * 200_000, "handler ran"]
    assert proc.stderr == "err line"


def test_exit_now_leaves_a_live_thread_to_the_ordinary_exit():
    proc = _script("thread")
    assert proc.returncode == 4
    assert proc.stdout.splitlines() == ["x" * 200_000, "ordinary exit", "handler ran"]


def test_a_run_through_python_m_core_exits_with_its_code_output_and_files(small_demo, tmp_path):
    ws = tmp_path / "ws"
    shutil.copytree(small_demo, ws)
    proc = subprocess.run(
        [sys.executable, "-m", "core", "--workspace", str(ws), "--json", "--no-progress", "run", "--dataset", "demo",
         "--method", "keyword", "--run-id", "fast-exit"],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    info = json.loads(proc.stdout)  # the whole JSON reached the pipe
    assert info["status"]["status"] == "finished" and info["status"]["done"] == 12
    results = json.loads((ws / "runs" / "fast-exit" / "results.json").read_text())
    assert len(results["results"]) == 12


def test_a_failed_run_keeps_exit_code_1_and_its_error_line(small_demo, tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "core", "--workspace", str(small_demo), "run", "--dataset", "nope", "--method", "keyword"],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1
    assert [ln for ln in proc.stderr.splitlines() if ln.startswith("error:")] and not proc.stdout

"""Benchmark: a method run against the local OpenAI-compatible server in its 200 ms latency mode.

100 restaurants (demo data, K = 25), method ``direct`` (one call per restaurant), concurrency 16.
Every request waits 200 ms at the server, so the ideal wall time is 100 × 0.2 / 16 = 1.25 s.
Goal: ≤ 3 s. Then the same run again: every answer comes from the response cache, 0 requests
reach the server; goal ≤ 1 s. The server also reports the most requests it saw in flight.

    .venv/bin/python bench/runs.py [--restaurants 100] [--concurrency 16] [--latency 0.2] [--method direct]

``--cli`` measures instead the whole command (issue 27): ``python -m core run`` of 200 samples in
its own process, from spawn to exit, against a fresh server and an empty response cache each
time, with its fixed costs: **before** (spawn to the first request reaching the server: start-up,
parser, imports, planning) and **after** (the last answer sent to the process's exit: storing,
scoring, the summary). Goals: each ≤ 0.5 s, the whole run ≤ 1.3 × the ideal 200 × 0.2 / 16 =
2.5 s. ``--baseline DIR`` runs another checkout on the same workspace in turn (``--passes``).

    .venv/bin/python bench/runs.py --cli [--restaurants 200] [--baseline /tmp/base] [--passes 3]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core.demo import generate_demo  # noqa: E402
from core.llm import workspace_cache  # noqa: E402
from core.methods import make_model  # noqa: E402
from core.runs import RunConfig, execute_run, plan_run  # noqa: E402
from core.workspace import Workspace  # noqa: E402


def _stats(base_url: str) -> dict:
    with urllib.request.urlopen(f"{base_url}/_stats", timeout=5) as response:  # noqa: S310 - our local server
        return json.loads(response.read())


def start_server(latency: float, mode: str = "runs") -> tuple[subprocess.Popen, str]:
    """The local OpenAI-compatible server in its own process, as a real endpoint would be (``mode``:
    ``runs`` answers method prompts, ``judge`` judging prompts)."""
    server = subprocess.Popen([sys.executable, "-m", "tests.helpers.llm_server", str(latency), mode], cwd=ROOT,
                              stdout=subprocess.PIPE, text=True)
    assert server.stdout is not None
    return server, server.stdout.readline().strip()


def timed_process(command: list[str], *, cwd: Path, env: dict[str, str], server: subprocess.Popen,
                  base_url: str) -> tuple[subprocess.CompletedProcess, float, float, dict]:
    """Run ``command`` to its exit against ``server`` (stopped afterwards, whatever happens): the
    process, its spawn and exit times, and the server's counters (``_stats``) with the process's
    CPU seconds (user + system) added as ``process_cpu_s`` (on a shared machine the wall time
    follows the load; the CPU time much less)."""
    try:
        used = resource.getrusage(resource.RUSAGE_CHILDREN)
        spawned = time.time()
        proc = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
        exited = time.time()
        done = resource.getrusage(resource.RUSAGE_CHILDREN)  # the server is still running: not counted
        stats = {**_stats(base_url), "process_cpu_s": done.ru_utime + done.ru_stime - used.ru_utime - used.ru_stime}
    finally:
        server.terminate()
        server.wait()
    return proc, spawned, exited, stats


def cli_against_server(checkout: Path, root: Path, command: list[str], latency: float,
                       mode: str = "runs") -> dict:
    """``python -m core --workspace ROOT --no-progress COMMAND…`` from ``checkout`` against a fresh
    server: wall time from spawn to exit, and the server's first request and last answer times."""
    server, base_url = start_server(latency, mode)
    env = {**os.environ, "PYTHONPATH": str(checkout), "OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": "bench"}
    proc, spawned, exited, stats = timed_process(
        [sys.executable, "-m", "core", "--workspace", str(root), "--no-progress", *command],
        cwd=checkout, env=env, server=server, base_url=base_url)
    if proc.returncode != 0:
        raise SystemExit(f"{command[0]} failed ({checkout}): {proc.stderr[-2000:]}")
    return {"wall": exited - spawned, "before": stats["first_request_at"] - spawned,
            "after": exited - stats["last_answer_at"], "requests_phase": stats["last_answer_at"] - stats["first_request_at"],
            "requests": stats["chat_requests"], "cpu": stats["process_cpu_s"], "load": os.getloadavg()[0]}


def cli_run(checkout: Path, root: Path, args: argparse.Namespace) -> dict:
    """One ``python -m core run`` from ``checkout``: wall time, fixed costs before and after."""
    shutil.rmtree(root / "cache", ignore_errors=True)
    shutil.rmtree(root / "runs" / "bench-cli", ignore_errors=True)
    command = ["run", "--dataset", "demo", "--task", "G1a", "--policy", "G1_allergy_V2", "--method", args.method,
               "--model", "bench-model", "--k", "25", "-n", str(args.restaurants), "--concurrency",
               str(args.concurrency), "--run-id", "bench-cli"]
    return cli_against_server(checkout, root, command, args.latency)


def cli_bench(args: argparse.Namespace) -> None:
    ideal = args.restaurants * args.latency / args.concurrency
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        generate_demo(root, n_restaurants=args.restaurants, reviews_per_restaurant=25, progress=None)
        checkouts = ([("baseline", args.baseline.resolve())] if args.baseline else []) + [("after", ROOT)]
        figures: dict[str, list[dict]] = {label: [] for label, _ in checkouts}
        for _ in range(args.passes):
            for label, checkout in checkouts:
                figures[label].append(cli_run(checkout, root, args))
                f = figures[label][-1]
                print(f"{label:<8} wall {f['wall']:.2f} s  before {f['before']:.2f} s  after {f['after']:.2f} s  "
                      f"{f['requests']} requests  cpu {f['cpu']:.2f} s  load {f['load']:.1f}", flush=True)
    for label, runs in figures.items():
        med = {k: statistics.median(r[k] for r in runs) for k in ("wall", "before", "after", "cpu")}
        print(f"{label}: median wall {med['wall']:.2f} s ({med['wall'] / ideal:.2f}× the ideal {ideal:.2f} s; goal "
              f"≤ 1.3×: {'ok' if med['wall'] <= 1.3 * ideal else 'MISSED'}), before the first request "
              f"{med['before']:.2f} s, after the last {med['after']:.2f} s (goals ≤ 0.5 s: "
              f"{'ok' if max(med['before'], med['after']) <= 0.5 else 'MISSED'}), the process's CPU {med['cpu']:.2f} s")


def timed_run(ws: Workspace, config: RunConfig) -> tuple[float, dict, dict]:
    plan = plan_run(config, ws)
    llm = make_model(config.model, ws, cache=workspace_cache(ws), concurrency=config.concurrency)
    start = time.perf_counter()
    status = execute_run(plan, llm)
    return time.perf_counter() - start, status, plan.preflight


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--restaurants", type=int, default=100)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--method", default="direct")
    parser.add_argument("--n-boot", type=int, default=1000, help="bootstrap resamples of the scoring (part of the run)")
    parser.add_argument("--cli", action="store_true", help="time the whole `python -m core run` (see above)")
    parser.add_argument("--baseline", type=Path, help="with --cli: another checkout measured in turn")
    parser.add_argument("--passes", type=int, default=3, help="with --cli: runs per checkout")
    args = parser.parse_args()
    if args.cli:
        if args.restaurants == 100:
            args.restaurants = 200
        cli_bench(args)
        return
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        generate_demo(root, n_restaurants=args.restaurants, reviews_per_restaurant=25, progress=None)
        ws = Workspace(root)
        # the server runs in its own process, as a real endpoint would: its work does not share our GIL
        server = subprocess.Popen([sys.executable, "-m", "tests.helpers.llm_server", str(args.latency)], cwd=ROOT,
                                  stdout=subprocess.PIPE, text=True)
        try:
            assert server.stdout is not None
            base_url = server.stdout.readline().strip()
            os.environ["OPENAI_BASE_URL"] = base_url
            os.environ["OPENAI_API_KEY"] = "bench"
            config = RunConfig(dataset="demo", task="G1a", policy="G1_allergy_V2", method=args.method,
                               model="bench-model", k=25, concurrency=args.concurrency,
                               options={"n_boot": args.n_boot})
            wall, status, _ = timed_run(ws, config)
            stats = _stats(base_url)
            requests = stats["chat_requests"]
            ideal = requests * args.latency / args.concurrency
            print(f"run:        {status['done']} samples, {requests} requests, {status['errors']} errors, "
                  f"max in flight {stats['max_in_flight']} (limit {args.concurrency})")
            print(f"wall time:  {wall:.2f} s   ideal {ideal:.2f} s   ratio {wall / ideal:.2f}×   goal ≤ 3 s: "
                  f"{'ok' if wall <= 3 else 'MISSED'}")
            again, status2, preflight = timed_run(ws, config)
            new = _stats(base_url)["chat_requests"] - requests
            print(f"cached re-run: {again:.2f} s, {new} requests (pre-flight: {preflight['cached_calls']} cached, "
                  f"{preflight['new_calls']} new)   goal 0 requests ≤ 1 s: "
                  f"{'ok' if new == 0 and again <= 1 else 'MISSED'}")
        finally:
            server.terminate()
            server.wait()


if __name__ == "__main__":
    main()

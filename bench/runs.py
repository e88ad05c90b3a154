"""Benchmark: a method run against the local OpenAI-compatible server in its 200 ms latency mode.

100 restaurants (demo data, K = 25), method ``direct`` (one call per restaurant), concurrency 16.
Every request waits 200 ms at the server, so the ideal wall time is 100 × 0.2 / 16 = 1.25 s.
Goal: ≤ 3 s. Then the same run again: every answer comes from the response cache, 0 requests
reach the server; goal ≤ 1 s. The server also reports the most requests it saw in flight.

    .venv/bin/python bench/runs.py [--restaurants 100] [--concurrency 16] [--latency 0.2] [--method direct]
"""

from __future__ import annotations

import argparse
import json
import os
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
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        generate_demo(root, n_restaurants=args.restaurants, reviews_per_restaurant=25, progress=None)
        ws = Workspace(root)
        # the server runs in its own process, as a real endpoint would: its work does not share our GIL
        server = subprocess.Popen([sys.executable, "-m", "tests.llm_server", str(args.latency)], cwd=ROOT,
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

"""Benchmark: LLM judging through an endpoint against the bare openai client on the same prompts.

The local OpenAI-compatible server runs in its own process with ``--latency`` seconds per answer
(default 50 ms) and answers G1a judging prompts like heuristic-v1. Two timings, taken in turn
``--passes`` times on the same machine load:

* **judge**: ``python -m core judge --judge openai --model bench-model --concurrency C --limit N``
  on a demo workspace from an empty judgment log and an empty response cache (what a user runs),
  timed from the server's first request to its last answer (``request phase``) and from spawn to
  exit (``wall``);
* **bare**: ``openai.AsyncOpenAI`` with C requests in flight on the same N prompts (the judge's own
  messages and response format), nothing stored: the floor the judge's request phase is held to.

Goal (issue 27): the judge's request phase within 1.3× the bare client's.

    .venv/bin/python bench/judge_endpoint.py [--reviews 10000] [--concurrency 64] [--latency 0.05] [--passes 2]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.runs import _stats, cli_against_server, start_server  # noqa: E402
from core.demo import generate_demo  # noqa: E402
from core.judgments.judges.openai_judge import review_messages  # noqa: E402
from core.tasks import get_task  # noqa: E402
from core.tasks.keyword_index import matched_reviews  # noqa: E402
from core.workspace import Workspace  # noqa: E402


def judge_pass(root: Path, args: argparse.Namespace) -> dict[str, float]:
    shutil.rmtree(root / "cache", ignore_errors=True)
    shutil.rmtree(root / "judgments", ignore_errors=True)
    command = ["judge", "--dataset", "demo", "--task", "G1a", "--judge", "openai", "--model", "bench-model",
               "--concurrency", str(args.concurrency), "--limit", str(args.reviews)]
    return cli_against_server(ROOT, root, command, args.latency, mode="judge")


async def _bare(base_url: str, prompts: list[list[dict[str, str]]], response_format: dict, concurrency: int) -> None:
    import openai

    client = openai.AsyncOpenAI(base_url=base_url, api_key="bench", max_retries=0)
    gate = asyncio.Semaphore(concurrency)

    async def one(messages: list[dict[str, str]]) -> None:
        async with gate:
            await client.chat.completions.create(model="bench-model", messages=messages,  # type: ignore[arg-type]
                                                 response_format=response_format)  # type: ignore[arg-type]

    await asyncio.gather(*(one(m) for m in prompts))
    await client.close()


def bare_pass(prompts: list[list[dict[str, str]]], response_format: dict, args: argparse.Namespace) -> dict[str, float]:
    server, base_url = start_server(args.latency, "judge")
    try:
        asyncio.run(_bare(base_url, prompts, response_format, args.concurrency))
        stats = _stats(base_url)
    finally:
        server.terminate()
        server.wait()
    return {"requests_phase": stats["last_answer_at"] - stats["first_request_at"], "requests": stats["chat_requests"],
            "load": os.getloadavg()[0]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reviews", type=int, default=10_000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--passes", type=int, default=2)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-judge-") as tmp:
        root = Path(tmp) / "ws"
        per = max(50, -(-args.reviews * 7 // 100))  # the demo matches about 19 % of its reviews
        generate_demo(root, n_restaurants=100, reviews_per_restaurant=per, progress=None)
        ws = Workspace(root)
        task = get_task("G1a", ws)
        rows = matched_reviews(ws, "demo", "G1a", with_text=True).head(args.reviews).to_dicts()
        if len(rows) < args.reviews:
            raise SystemExit(f"only {len(rows)} matched reviews in the demo; ask for fewer")
        prompts = [review_messages(task, row) for row in rows]
        ideal = args.reviews * args.latency / args.concurrency
        judged, bare = [], []
        for _ in range(args.passes):
            bare.append(bare_pass(prompts, task.response_format(), args))
            print(f"bare   requests {bare[-1]['requests_phase']:.2f} s  ({bare[-1]['requests']} requests, "
                  f"load {bare[-1]['load']:.1f})", flush=True)
            judged.append(judge_pass(root, args))
            print(f"judge  requests {judged[-1]['requests_phase']:.2f} s  wall {judged[-1]['wall']:.2f} s  "
                  f"({judged[-1]['requests']} requests, load {judged[-1]['load']:.1f})", flush=True)
    b = statistics.median(p["requests_phase"] for p in bare)
    j = statistics.median(p["requests_phase"] for p in judged)
    w = statistics.median(p["wall"] for p in judged)
    print(f"{args.reviews} reviews, {args.latency * 1000:.0f} ms latency, concurrency {args.concurrency} "
          f"(ideal {ideal:.2f} s): bare {b:.2f} s ({args.reviews / b:.0f}/s), judge {j:.2f} s "
          f"({args.reviews / j:.0f}/s), {j / b:.2f}× the bare client (goal ≤ 1.3×: {'met' if j / b <= 1.3 else 'MISSED'}); "
          f"judge wall {w:.2f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Benchmark: set-wise GT (``compute_gt_frame``) vs a straightforward per-restaurant Python loop.

1,000,000 synthetic G1a judgments over 150,000 restaurants, GT v1 for K = 25/50/100/200.
The loop is :func:`core.ground_truth.reference.reference_gt` (plain Python, one restaurant and one
K at a time, straight from SPEC §3.1). It runs on a random sample of the restaurants and its time
is extrapolated to all of them (it is linear in the number of restaurants); the output says so.
Both are checked to agree on the sample. Goal: ≤ 2 s and ≥ 20× faster.

A second part does the same for a rule policy (issue 11): ADDM's G1_dietary_V2 (9 count
conditions with per-K thresholds, the relevance filter) over 1,000,000 dietary judgments, set-wise
``compute_policy_gt_frame`` against ``Policy.evaluate`` per restaurant and K. Goal: ≤ 1 s.

    .venv/bin/python bench/gt.py [--restaurants 150000] [--judgments 1000000] [--sample 0.1] [--repeat 3]
                                 [--part formula|policy|both]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.ground_truth import compute_gt_frame, compute_policy_gt_frame  # noqa: E402
from core.ground_truth.policies.loader import load_policy_file  # noqa: E402
from core.ground_truth.reference import reference_gt  # noqa: E402

RULE_POLICY = ("G1_dietary_V2", Path(__file__).resolve().parent.parent / "tests" / "core" / "data" / "policies")
DIETARY = {  # field -> (values, probabilities)
    "is_relevant": (["true", "false"], [0.7, 0.3]),
    "account_type": (["firsthand", "secondhand", "hypothetical"], [0.6, 0.1, 0.3]),
    "incident_severity": (["none", "mild", "moderate", "severe"], [0.9, 0.05, 0.035, 0.015]),
    "staff_knowledge": (["none", "poor", "adequate", "excellent"], [0.05, 0.05, 0.6, 0.3]),
    "accommodation_level": (["none", "poor", "adequate", "excellent"], [0.05, 0.05, 0.6, 0.3]),
    "staff_response": (["accommodated", "refused", "dismissive", "none", "unknown"], [0.3, 0.02, 0.03, 0.6, 0.05]),
}

KS = [25, 50, 100, 200]
CATEGORIES = ["Thai, Restaurants", "Pizza, Italian", "Chinese, Dim Sum", "Bars, American (New)", "Mexican", "Cafes"]


def synthetic(n_restaurants: int, n_judgments: int, seed: int = 7) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(judgments, restaurants): unique (business_id, idx), idx in [0, 300), realistic field mix,
    judgments sorted by (business_id, idx) as ``core.judgments.load_judgments`` returns them."""
    rng = np.random.default_rng(seed)
    n = int(n_judgments * 1.02) + 1000  # a few (business, idx) pairs repeat and are dropped
    keys = pl.DataFrame({"b": rng.integers(0, n_restaurants, n), "idx": rng.integers(0, 300, n)})
    keys = keys.unique(maintain_order=True).head(n_judgments)
    m = keys.height
    ids = pl.Series("business_id", [f"r{i:07d}" for i in range(n_restaurants)])
    years = rng.integers(2008, 2026, m)
    judgments = pl.DataFrame({
        "business_id": ids.gather(keys["b"]),
        "review_id": [f"rv{i:08d}" for i in range(m)],
        "idx": keys["idx"],
        "date": [f"{y}-06-15 12:00:00" for y in years],
        "stars": rng.integers(1, 6, m).astype(float),
        "useful": rng.integers(0, 12, m),
        "incident_severity": rng.choice(["none", "mild", "moderate", "severe"], m, p=[0.9, 0.05, 0.03, 0.02]),
        "account_type": rng.choice(["none", "firsthand", "secondhand", "hypothetical"], m, p=[0.6, 0.3, 0.05, 0.05]),
        "safety_interaction": rng.choice(["none", "positive", "negative", "betrayal"], m, p=[0.85, 0.1, 0.04, 0.01]),
    })
    # load_judgments returns judgments sorted by (business_id, idx); so does the benchmark
    judgments = judgments.sort("business_id", "idx")
    restaurants = pl.DataFrame({
        "business_id": ids,
        "name": [f"Restaurant {i}" for i in range(n_restaurants)],
        "categories": rng.choice(CATEGORIES, n_restaurants),
    })
    return judgments, restaurants


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--restaurants", type=int, default=150_000)
    ap.add_argument("--judgments", type=int, default=1_000_000)
    ap.add_argument("--sample", type=float, default=0.1, help="share of restaurants the Python loop runs on")
    ap.add_argument("--repeat", type=int, default=5, help="runs of each side; the best is compared")
    ap.add_argument("--part", choices=("formula", "policy", "both"), default="both")
    args = ap.parse_args()
    code = 0
    if args.part in ("formula", "both"):
        code |= bench_formula(args)
    if args.part in ("policy", "both"):
        code |= bench_rule_policy(args)
    return code


def bench_rule_policy(args: argparse.Namespace) -> int:
    """Set-wise rule-policy GT against Policy.evaluate per restaurant and K."""
    policy = load_policy_file(Path(RULE_POLICY[1]) / f"{RULE_POLICY[0]}.yaml")
    judgments, restaurants = synthetic(args.restaurants, args.judgments)
    rng = np.random.default_rng(5)
    judgments = judgments.select("business_id", "review_id", "idx", "date").with_columns(
        pl.Series(name, rng.choice(values, judgments.height, p=p)) for name, (values, p) in DIETARY.items())
    print(f"\nrule policy {policy.policy_id}: {judgments.height:,} judgments over {restaurants.height:,} restaurants, "
          f"K = {KS}, {sum(len(r.conditions) for r in policy.rules)} count conditions with per-K thresholds")
    times, cpus = [], []
    for _ in range(args.repeat):
        t, c = time.perf_counter(), time.process_time()
        frame = compute_policy_gt_frame(judgments, restaurants, policy, KS)
        times.append(time.perf_counter() - t)
        cpus.append(time.process_time() - c)
    setwise = min(times)
    print(f"set-wise compute_policy_gt_frame: {frame.height:,} rows; best {setwise:.2f} s, "
          f"median {statistics.median(times):.2f} s of {args.repeat} runs (CPU time, all threads: best {min(cpus):.2f} s)")
    n_sample = max(1, int(restaurants.height * args.sample))
    picked = restaurants[rng.choice(restaurants.height, n_sample, replace=False).tolist()]
    sample_ids = picked["business_id"].to_list()
    by_id: dict[str, list[dict]] = {b: [] for b in sample_ids}
    for row in judgments.filter(pl.col("business_id").is_in(sample_ids)).iter_rows(named=True):
        by_id[row["business_id"]].append(row)
    loop_times, loop_cpus = [], []
    for _ in range(max(1, args.repeat // 2)):
        t, c = time.perf_counter(), time.process_time()
        expected = {(b, k): policy.evaluate([r for r in rows if r["idx"] < k], None, k).verdict
                    for b, rows in by_id.items() for k in KS}
        loop_times.append(time.perf_counter() - t)
        loop_cpus.append(time.process_time() - c)
    scale = restaurants.height / n_sample
    loop_all = min(loop_times) * scale
    print(f"per-restaurant Policy.evaluate loop: best {min(loop_times):.2f} s on {n_sample:,} restaurants "
          f"({args.sample:.0%}), extrapolated to {restaurants.height:,}: {loop_all:.1f} s (CPU {min(loop_cpus) * scale:.1f} s)")
    check = frame.filter(pl.col("business_id").is_in(sample_ids))
    mismatches = sum(1 for r in check.iter_rows(named=True) if r["verdict"] != expected[(r["business_id"], r["k"])])
    print(f"agreement on the sample: {check.height - mismatches:,}/{check.height:,} (restaurant, K) verdicts identical")
    ok = setwise <= 1.0
    print(f"speed-up: {loop_all / setwise:.0f}× wall-clock, {min(loop_cpus) * scale / min(cpus):.0f}× in CPU time; "
          f"set-wise time {setwise:.2f} s (goal ≤ 1 s) → {'OK' if ok else 'MISSED'}")
    return 0 if ok and mismatches == 0 else 1


def bench_formula(args: argparse.Namespace) -> int:
    t0 = time.perf_counter()
    judgments, restaurants = synthetic(args.restaurants, args.judgments)
    print(f"data: {judgments.height:,} judgments over {restaurants.height:,} restaurants "
          f"(built in {time.perf_counter() - t0:.1f} s); K = {KS}, formula v1")

    times, cpus = [], []
    for _ in range(args.repeat):
        t, c = time.perf_counter(), time.process_time()
        frame = compute_gt_frame(judgments, restaurants, "v1", KS)
        times.append(time.perf_counter() - t)
        cpus.append(time.process_time() - c)
    setwise, setwise_cpu = min(times), min(cpus)
    print(f"set-wise compute_gt_frame: {frame.height:,} rows; best {setwise:.2f} s, "
          f"median {statistics.median(times):.2f} s of {args.repeat} runs (CPU time, all threads: best {setwise_cpu:.2f} s)")

    rng = np.random.default_rng(11)
    n_sample = max(1, int(restaurants.height * args.sample))
    picked = restaurants[rng.choice(restaurants.height, n_sample, replace=False).tolist()]
    sample_ids = set(picked["business_id"].to_list())
    rows = judgments.filter(pl.col("business_id").is_in(list(sample_ids))).to_dicts()
    rests = picked.to_dicts()
    loop_times, loop_cpus = [], []
    for _ in range(args.repeat):
        t, c = time.perf_counter(), time.process_time()
        expected = reference_gt(rows, rests, "v1", KS)
        loop_times.append(time.perf_counter() - t)
        loop_cpus.append(time.process_time() - c)
    scale = restaurants.height / n_sample
    loop_all, loop_all_cpu = min(loop_times) * scale, min(loop_cpus) * scale
    print(f"per-restaurant Python loop: best {min(loop_times):.2f} s (median {statistics.median(loop_times):.2f} s) "
          f"on a random sample of {n_sample:,} restaurants ({args.sample:.0%}), "
          f"extrapolated linearly to {restaurants.height:,}: {loop_all:.1f} s (CPU {loop_all_cpu:.1f} s)")

    check = frame.filter(pl.col("business_id").is_in(list(sample_ids)))
    mismatches = sum(
        1 for r in check.iter_rows(named=True)
        if r["verdict"] != expected[(r["business_id"], r["k"])]["verdict"]
        or round(expected[(r["business_id"], r["k"])]["final_risk_score"], 2) != r["final_risk_score"]
    )
    print(f"agreement on the sample: {check.height - mismatches:,}/{check.height:,} (restaurant, K) rows identical")
    ratio = loop_all / setwise  # best against best: both sides suffer the same machine load
    ok = setwise <= 2.0 and ratio >= 20
    print(f"speed-up: {ratio:.0f}× wall-clock (goal ≥ 20×), {loop_all_cpu / setwise_cpu:.0f}× in CPU time; "
          f"set-wise time {setwise:.2f} s (goal ≤ 2 s) → {'OK' if ok else 'MISSED'}")
    return 0 if ok and mismatches == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())

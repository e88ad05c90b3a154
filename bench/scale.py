"""Yelp scale on one machine (issue 27): every CLI step timed as the data grows.

```
python bench/scale.py [--sizes 100,10000,150000] [--root /tmp/scale] [--steps import,index,judge,...]
                      [--baseline /path/to/other/checkout] [--baseline-steps judge,gt-v1] [--json OUT]
```
For each size (restaurants) a workspace ``{root}-{N}`` is built once with the project's own demo
generator (:mod:`core.demo`: the same restaurants, reviews and planted allergy content as
``python -m core demo --restaurants N --reviews M``, written straight to the flat Yelp files
restaurant by restaurant so 2 M reviews never sit in memory) and reused when present. Reviews per
restaurant: 200 at 100 restaurants (20 k reviews), 50 at 10,000 (500 k), 14 at 150,000 (2.1 M);
``--reviews`` sets one figure for every size. Then each step runs as its own
``python -m core`` process, and the bench reports its wall time, CPU time and peak memory
(``os.wait4``: the rusage of that process alone):

``import`` (``datasets import`` of the flat files), ``index``, ``judge`` (``--judge heuristic-v2``,
from an empty judgment log), ``gt-v1`` (``gt --formula v1 --k 25,50,100,200``), ``gt-policy``
(``gt --formula G1_allergy_V2 --k 25,50,100,200``), ``run`` (a 200-sample offline ``direct`` run at
K = 25 against the G1_allergy_V2 GT file).

With ``--baseline DIR`` (a checkout that stays put during the run, e.g. ``git worktree add
/tmp/scale-base main``) every step also runs from that checkout, on the same workspace, just
before ours: both meet the same data and the same machine load (each step rewrites what it
writes, so the order does not matter). ``--baseline-steps`` limits the baseline to some steps (the
baseline judge at 150,000 restaurants took 28 minutes). The load average is printed with every
figure; the growth factor is the wall time over that of the next smaller size.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DATASET = "scale"
REVIEWS_PER_RESTAURANT = {100: 200, 10_000: 50, 150_000: 14}
KS = "25,50,100,200"
RUN_ID = "bench-scale-run"


# -- the workspaces ------------------------------------------------------------------------------

def reviews_per(n_restaurants: int, override: int | None) -> int:
    return override or REVIEWS_PER_RESTAURANT.get(n_restaurants, 50)


def write_sources(folder: Path, n_restaurants: int, per_restaurant: int, seed: int = 7) -> dict[str, int]:
    """``business.json`` and ``review.json`` (Yelp flat layout) in ``folder``, restaurant by restaurant.

    The records are those of :func:`core.demo.generate_records` with the same arguments (the same
    seeded streams in the same order), written as they are made.
    """
    from core.demo import iter_restaurants

    folder.mkdir(parents=True, exist_ok=True)
    counts = {"restaurants": 0, "reviews": 0, "planted": 0}
    tmp_b, tmp_r = folder / "business.json.part", folder / "review.json.part"
    with open(tmp_b, "w", encoding="utf-8") as fb, open(tmp_r, "w", encoding="utf-8") as fr:
        for position, business, made in iter_restaurants(seed, n_restaurants, per_restaurant):
            fb.write(json.dumps(business, ensure_ascii=False) + "\n")
            fr.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in made.reviews)
            counts["restaurants"] += 1
            counts["reviews"] += len(made.reviews)
            counts["planted"] += len(made.truth)
            if position % 10_000 == 9_999:
                print(f"  generated {position + 1:,} of {n_restaurants:,} restaurants", flush=True)
    tmp_b.replace(folder / "business.json")
    tmp_r.replace(folder / "review.json")
    (folder / "counts.json").write_text(json.dumps(counts), encoding="utf-8")
    return counts


def ensure_workspace(root: Path, n_restaurants: int, per_restaurant: int) -> dict[str, int]:
    """The workspace's sources, generated unless a previous bench left them (same size)."""
    sources = root / "sources" / DATASET
    counts_file = sources / "counts.json"
    if counts_file.exists():
        counts = json.loads(counts_file.read_text(encoding="utf-8"))
        if counts.get("restaurants") == n_restaurants and counts.get("reviews") == n_restaurants * per_restaurant:
            return counts
    shutil.rmtree(root, ignore_errors=True)
    started = time.perf_counter()
    counts = write_sources(sources, n_restaurants, per_restaurant)
    print(f"  sources of {n_restaurants:,} restaurants written in {time.perf_counter() - started:.0f} s", flush=True)
    return counts


# -- the steps -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Step:
    """One CLI step: its arguments and what to remove first so that it starts from scratch."""

    name: str
    args: tuple[str, ...]
    prepare: Callable[[Path], None] | None = None


def _clear_judgments(ws: Path) -> None:
    shutil.rmtree(ws / "judgments" / DATASET / "G1a", ignore_errors=True)


def _clear_run(ws: Path) -> None:
    shutil.rmtree(ws / "runs" / RUN_ID, ignore_errors=True)


def steps(ws: Path) -> list[Step]:
    sources = ws / "sources" / DATASET
    gt = ("gt", "--dataset", DATASET, "--task", "G1a", "--k", KS, "--formula")
    return [
        Step("import", ("datasets", "import", str(sources / "review.json"), "--business", str(sources / "business.json"),
                        "--name", DATASET, "--replace")),
        Step("index", ("index", "--dataset", DATASET)),
        Step("judge", ("judge", "--dataset", DATASET, "--task", "G1a", "--judge", "heuristic-v2"), _clear_judgments),
        Step("gt-v1", (*gt, "v1")),
        Step("gt-policy", (*gt, "G1_allergy_V2")),
        Step("run", ("run", "--dataset", DATASET, "--task", "G1a", "--policy", "G1_allergy_V2", "--method", "direct",
                     "--k", "25", "-n", "200", "--run-id", RUN_ID), _clear_run),
    ]


STEP_NAMES = ("import", "index", "judge", "gt-v1", "gt-policy", "run")


def load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def timed(checkout: Path, ws: Path, args: tuple[str, ...], log: Path) -> dict[str, Any]:
    """Run ``python -m core --workspace WS --no-progress ARGS`` from ``checkout`` in its own process:
    wall seconds, CPU seconds and peak resident memory of that process (``os.wait4``)."""
    env = {**os.environ, "PYTHONPATH": str(checkout), "WORKBENCH_WORKSPACE": str(ws)}
    before = load()
    with open(log, "ab") as out:
        out.write(f"\n$ python -m core {' '.join(args)}   (from {checkout})\n".encode())
        out.flush()
        started = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "core", "--workspace", str(ws), "--no-progress", *args],
                                cwd=checkout, env=env, stdout=out, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "peak_mb": usage.ru_maxrss / 1024,
            "exit": proc.returncode, "load": f"{before} → {load()}"}


# -- the report ----------------------------------------------------------------------------------

def _cell(figure: dict[str, Any] | None) -> str:
    if figure is None:
        return "-"
    flag = "" if figure["exit"] == 0 else f" (exit {figure['exit']})"
    return f"{figure['wall']:.2f} s, {figure['peak_mb'] / 1024:.2f} GB{flag}"


def print_table(results: dict[str, Any], sizes: list[int]) -> None:
    labels = [label for label in ("baseline", "after")
              if any(label in figures for size in results.values() for figures in size["steps"].values())]
    for label in labels:
        print(f"\n## {label}: wall, peak memory (growth of the wall time over the next smaller size)")
        print("| step | " + " | ".join(f"{n:,} restaurants, {results[str(n)]['reviews']:,} reviews" for n in sizes) + " |")
        print("|---|" + "---|" * len(sizes))
        for step in STEP_NAMES:
            row, previous = [], None
            for n in sizes:
                figure = results[str(n)]["steps"].get(step, {}).get(label)
                growth = f" ×{figure['wall'] / previous:.1f}" if figure and previous else ""
                row.append(_cell(figure) + growth)
                previous = figure["wall"] if figure else None
            if any(cell != "-" for cell in row):
                print(f"| {step} | " + " | ".join(row) + " |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,10000,150000", help="restaurants per workspace, comma-separated")
    parser.add_argument("--reviews", type=int, help="reviews per restaurant for every size (default: see above)")
    parser.add_argument("--root", default="/tmp/scale", help="workspaces go to ROOT-N (kept and reused)")
    parser.add_argument("--steps", default=",".join(STEP_NAMES), help=f"comma-separated, of {', '.join(STEP_NAMES)}")
    parser.add_argument("--baseline", type=Path, help="another checkout measured on the same workspaces")
    parser.add_argument("--baseline-steps", help="only these steps for the baseline (default: all)")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    wanted = [s.strip() for s in args.steps.split(",") if s.strip()]
    unknown = sorted(set(wanted) - set(STEP_NAMES))
    if unknown:
        parser.error(f"unknown steps {unknown}; valid: {', '.join(STEP_NAMES)}")
    base_steps = set(args.baseline_steps.split(",")) if args.baseline_steps else set(wanted)
    results: dict[str, Any] = {}
    for n in sizes:
        ws = Path(f"{args.root}-{n}")
        per = reviews_per(n, args.reviews)
        print(f"# {n:,} restaurants × {per} reviews in {ws} (load {load()})", flush=True)
        counts = ensure_workspace(ws, n, per)
        results[str(n)] = {"workspace": str(ws), **counts, "steps": {}}
        log = ws.parent / f"{ws.name}.bench.log"
        for step in steps(ws):
            if step.name not in wanted:
                continue
            checkouts = ([("baseline", args.baseline.resolve())] if args.baseline and step.name in base_steps else [])
            for label, checkout in [*checkouts, ("after", ROOT)]:
                if step.prepare:
                    step.prepare(ws)
                figure = timed(checkout, ws, step.args, log)
                results[str(n)]["steps"].setdefault(step.name, {})[label] = figure
                print(f"  {step.name:<10} {label:<8} wall {figure['wall']:8.2f} s  CPU {figure['cpu']:8.2f} s  "
                      f"peak {figure['peak_mb']:8.0f} MB  exit {figure['exit']}  load {figure['load']}", flush=True)
        if args.json:
            args.json.write_text(json.dumps(results, indent=1), encoding="utf-8")
    print_table(results, sizes)
    print(f"\nlog of every command: {args.root}-N.bench.log; max RSS of this process "
          f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

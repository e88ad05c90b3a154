"""Benchmark: `score` and `runs import` of a 1,000,000-sample results.json with 1,000 resamples.

Issue 26, finding 5: both were killed at about 22 GB because the (1,000 × n) resample matrix was
materialised whole. The bootstrap now draws and scores it a block of rows at a time
(:data:`core.metrics.bootstrap.MAX_CELLS` cells), so memory is the results' own plus a bounded
working set. Measured, each in its own process (peak RSS from ``getrusage`` of the child):

* ``python -m core score FILE --n-boot B --json`` (and ``--n-boot 0``, the reference without intervals)
* ``python -m core --workspace WS runs import FILE --n-boot B``

The file is synthetic (labelled so in its run id): SPEC §4.2 samples with a verdict, a risk score
and a GT verdict, no evidence. Goal: peak RSS of the resampling run within 1 GB of the same
command with ``--n-boot 0``.

    .venv/bin/python bench/large_results.py [--samples 1000000] [--boot 1000] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
VERDICTS = ("Low Risk", "High Risk", "Critical Risk")


def write_results(path: Path, n: int, seed: int = 0) -> None:
    """A synthetic SPEC §4.2 results.json of ``n`` samples, written a line at a time."""
    rng = np.random.default_rng(seed)
    gt = rng.choice(3, size=n, p=[0.8, 0.15, 0.05])
    guess = np.where(rng.random(n) < 0.7, gt, rng.integers(0, 3, n))
    score = np.round(guess * 3 + rng.random(n) * 4, 3)
    with path.open("w") as f:
        f.write('{"run_id": "synthetic-1m", "method": "direct", "model": "synthetic", "task_id": "G1", "policy_id": "G1_allergy_V2", '
                '"k": 25, "results": [\n')
        for i in range(n):
            sample = {"business_id": f"syn{i:07d}", "name": f"Synthetic {i}", "verdict": VERDICTS[guess[i]],
                      "risk_score": float(score[i]), "gt_verdict": VERDICTS[gt[i]]}
            f.write(json.dumps(sample) + (",\n" if i < n - 1 else "\n"))
        f.write("]}\n")


WRAPPER = ("import resource, subprocess, sys; rc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode; "
           "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, rc)")


def measure(cmd: list[str]) -> tuple[float, float, int]:
    """(seconds, peak RSS in MB, exit code) of ``cmd``, run under a fresh wrapper process so that
    the peak is this command's own (a process's children maximum covers all its children)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", WRAPPER, *cmd], env=env, capture_output=True, text=True, check=False)
    secs = time.perf_counter() - t0
    if done.stderr.strip():
        print(done.stderr.strip()[-500:], file=sys.stderr)
    peak_kb, rc = done.stdout.split()
    return secs, int(peak_kb) / 1024, int(rc)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=1_000_000)
    ap.add_argument("--boot", type=int, default=1000)
    ap.add_argument("--keep", help="write the file and workspace here (default: a temporary folder)")
    args = ap.parse_args()
    folder = Path(args.keep or tempfile.mkdtemp(prefix="bench-large-"))
    folder.mkdir(parents=True, exist_ok=True)
    source = folder / "results.json"
    t0 = time.perf_counter()
    write_results(source, args.samples)
    print(f"synthetic results.json: {args.samples:,} samples, {source.stat().st_size / 1e6:.0f} MB, "
          f"written in {time.perf_counter() - t0:.1f} s")
    py = sys.executable
    cases = [("score --n-boot 0", [py, "-m", "core", "score", str(source), "--n-boot", "0", "--json"]),
             (f"score --n-boot {args.boot}", [py, "-m", "core", "score", str(source), "--n-boot", str(args.boot), "--json"]),
             (f"runs import --n-boot {args.boot}", [py, "-m", "core", "--workspace", str(folder / "ws"), "runs", "import",
                                                   str(source), "--n-boot", str(args.boot)])]
    for label, cmd in cases:
        secs, peak, rc = measure(cmd)
        print(f"{label:<28} {secs:7.1f} s   peak RSS {peak:7.0f} MB   exit {rc}")


if __name__ == "__main__":
    main()

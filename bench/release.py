"""A release of 10,000 restaurants and 50 runs, opened in Chromium from ``file://`` (issue 29).

```
python bench/release.py [--root /tmp/release-bench-10000] [--restaurants 10000] [--reviews 20] [--runs 50]
                        [--opens 3] [--budget 3.0]
```
The workspace is the project's demo at that size (``python -m core demo --restaurants N --reviews M``:
judgments, GT files and the demo's runs), made once under ``--root`` and reused. Runs are added with
the offline model and the baselines (``execute_run``, as the demo makes its own: amos, keyword and
random at K=25; an offline amos run over 10,000 restaurants takes ~3 minutes), then as copies of
those whose answers are perturbed (2–20 % of the verdicts replaced, seeded) and scored by ``runs
rescore``, until the workspace holds ``--runs``. Then
``release --out`` writes the release (timed), and Chromium opens ``index.html`` from ``file://`` with
every request outside the folder refused, ``--opens`` times in fresh contexts: the figure is the
time from navigation until the Results page is drawn (its table and every chart), and then the
Ground truth page. Exit 1 when the median open exceeds ``--budget`` seconds or a request left the folder.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core.workspace import Workspace  # noqa: E402  (after the path: the checkout's core)

CHROMIUM = os.environ.get("WORKBENCH_CHROMIUM", "/usr/bin/chromium")
READY = ("() => document.body.dataset.ready === '1' && [...document.querySelectorAll('#results .chart')]"
         ".every(c => c.dataset.drawn === '1')")


def ensure_workspace(root: Path, restaurants: int, reviews: int) -> None:
    """The demo workspace at this size (made once; reused when its dataset is there)."""
    if (root / "datasets" / "demo" / "dataset.lock.json").exists() and (root / "judgments").is_dir():
        return
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "core", "--workspace", str(root), "demo", "--restaurants", str(restaurants),
                    "--reviews", str(reviews), "--force"], check=True, cwd=ROOT)
    print(f"demo workspace of {restaurants:,} restaurants made in {time.perf_counter() - started:.0f} s", flush=True)


REAL_RUNS = (("amos", 25), ("keyword", 25), ("random", 25))  # made with the offline model and the baselines


def real_runs(ws: Workspace) -> list[str]:
    """The offline ``amos`` run and the two baselines at K=25 (made once; ~3 min for amos at 10,000 restaurants)."""
    from core.demo.steps import DEMO_RUN_POLICY
    from core.methods import make_model
    from core.runs import RunConfig, execute_run, plan_run

    made = []
    for method, k in REAL_RUNS:
        run_id = f"bench-{method}-K{k}-s1"
        made.append(run_id)
        if (ws.run_dir(run_id) / "results.json").exists():
            continue
        started = time.perf_counter()
        shutil.rmtree(ws.run_dir(run_id), ignore_errors=True)
        config = RunConfig(dataset="demo", task="G1a", policy=DEMO_RUN_POLICY, method=method, k=k, seed=1,
                           run_id=run_id, options={"n_boot": 200})
        execute_run(plan_run(config, ws), make_model(config.model, ws), durable=False)
        print(f"  run {run_id} in {time.perf_counter() - started:.1f} s", flush=True)
    return made


def noisy_copy(ws: Workspace, source: str, run_id: str, share: float, seed: int) -> None:
    """A run whose answers are ``source``'s with ``share`` of its verdicts replaced by another verdict of
    the scale (seeded), scored by ``runs rescore`` against the GT the workspace gives."""
    from core.base.files import write_json_atomic
    from core.runs.records import load_results
    from core.runs.rescore import rescore_run

    target = ws.run_dir(run_id)
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    for name in ("config.json", "spec.json"):
        if (ws.run_dir(source) / name).exists():
            shutil.copyfile(ws.run_dir(source) / name, target / name)
    results = load_results(ws.run_dir(source))
    rng = random.Random(seed)
    scale = list(results.get("verdict_scale") or ["Low Risk", "High Risk", "Critical Risk"])
    for sample in results["results"]:
        if rng.random() < share:
            sample["verdict"] = rng.choice([v for v in scale if v != sample["verdict"]])
    results["run_id"] = run_id
    results["config"] = {**results["config"], "run_id": run_id, "seed": seed}
    write_json_atomic(target / "results.json", results)
    rescore_run(ws, run_id)


def add_runs(root: Path, n_runs: int) -> None:
    """The real runs, then noisy copies of them (answers perturbed, rescored) until the workspace holds ``n_runs``."""
    from core.runs.records import run_dirs

    ws = Workspace(root)
    sources = real_runs(ws)
    have = {p.name for p in run_dirs(ws.runs_dir)}
    i = 0
    while len(have) < n_runs:
        i += 1
        source = sources[i % len(sources)]
        run_id = f"{source}-noisy{i:02d}"
        if run_id not in have:
            started = time.perf_counter()
            noisy_copy(ws, source, run_id, share=0.02 * (i % 10 + 1), seed=i)
            have.add(run_id)
            print(f"  run {run_id} in {time.perf_counter() - started:.1f} s ({len(have)}/{n_runs})", flush=True)


def open_times(out: Path, opens: int) -> tuple[list[float], list[float], list[str]]:
    """Seconds until the Results page is drawn, then the GT page, per open; and any request outside ``out``."""
    from playwright.sync_api import sync_playwright

    inside, outside = out.resolve().as_uri() + "/", []
    results, gt = [], []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--headless", "--no-sandbox", "--disable-gpu"])
        for _ in range(opens):
            context = browser.new_context(viewport={"width": 1400, "height": 1000})
            context.route("**/*", lambda r: r.continue_() if r.request.url.startswith(inside)
                          else (outside.append(r.request.url), r.abort()))
            page = context.new_page()
            page.on("request", lambda r: None if r.url.startswith(inside) else outside.append(r.url))
            started = time.perf_counter()
            page.goto(inside + "index.html")
            page.wait_for_function(READY, timeout=120_000)
            results.append(time.perf_counter() - started)
            started = time.perf_counter()
            page.get_by_role("link", name="Ground truth").click()
            page.locator("#gt .chart[data-drawn='1'] svg").first.wait_for(timeout=120_000)
            gt.append(time.perf_counter() - started)
            context.close()
        browser.close()
    return results, gt, outside


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", type=Path, default=Path("/tmp/release-bench-10000"))
    parser.add_argument("--restaurants", type=int, default=10_000)
    parser.add_argument("--reviews", type=int, default=20)
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--opens", type=int, default=3)
    parser.add_argument("--budget", type=float, default=3.0, help="seconds for the median open (default 3)")
    args = parser.parse_args(argv)
    from core.release.build import build_release

    ensure_workspace(args.root, args.restaurants, args.reviews)
    add_runs(args.root, args.runs)
    out = args.root.parent / f"{args.root.name}.release"
    shutil.rmtree(out, ignore_errors=True)
    made = build_release(Workspace(args.root), out, title=f"Bench: {args.restaurants:,} restaurants, {args.runs} runs")
    data_mb = (out / "release-data.js").stat().st_size / 2**20
    print(f"release: {made['files']} files, {made['bytes'] / 2**20:.1f} MiB (release-data.js {data_mb:.1f} MiB), "
          f"{made['runs']} runs, {made['gts']} ground truths, built in {made['seconds']:.1f} s")
    results, gt, outside = open_times(out, args.opens)
    median = statistics.median(results)
    print(f"open from file:// until Results is drawn: median {median:.2f} s (each: "
          f"{', '.join(f'{t:.2f}' for t in results)}); then Ground truth drawn: median {statistics.median(gt):.2f} s; "
          f"load average {os.getloadavg()[0]:.2f}; budget {args.budget:.1f} s")
    print(f"requests outside the folder: {len(outside)}" + (f" ({outside[:3]})" if outside else ""))
    return 0 if median <= args.budget and not outside else 1


if __name__ == "__main__":
    raise SystemExit(main())

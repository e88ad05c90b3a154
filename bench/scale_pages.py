"""Yelp scale, the pages (issue 27): server time of each page and interaction, and peak server memory, as the data grows.

```
python bench/scale_pages.py [--sizes 100,150000] [--root /tmp/scale] [--pages home,data,gt,...] [--passes 2]
                            [--baseline DIR] [--json OUT]
```
Reads the workspaces ``{root}-{N}`` that ``bench/scale.py`` builds (import, index, ``judge --judge
heuristic-v2`` and the G1_allergy_V2 GT files must be there: ``python bench/scale.py --sizes N
--steps import,index,judge,gt-policy``); a page whose input is missing is reported as skipped.

Each page is played in its own process (``python bench/scale_pages.py --child PAGE``), the way one
server meets its first visitor: the process first imports every page's modules and the libraries
their first computation needs and freezes them out of the garbage collector's sight (what the
app's start-up and warm-up do before a visitor arrives; not timed), then drives ``main.py`` through Streamlit's AppTest, one widget change and one script
run per step. The time of a step is that script run (AppTest runs the script in its own thread, as
the server does; no browser). Pass 1 meets empty caches (the first visitor); later passes the warm
``st.cache_data`` another session gets (``--passes``). The peak is the process's maximum resident
set (``ru_maxrss``) after the page: the imports (about 0.3 GB) plus what the page kept. The growth
factor is the first-open time over that of the next smaller size.

Pages: ``home``; ``data`` (open, search a name, a restaurant's reviews by link, search its review
text); ``gt`` (first open, add a K); ``trace`` (one restaurant by link); ``runs`` (open, K = 50, 1,000
restaurants); ``results`` (the
run with the most samples in the workspace; ``runs import`` of a file made from the GT file when
there is no run over every restaurant: ``--make-run``). ``label_review`` is played only when asked
for (``--pages label_review --rater CODE``): the scale workspaces hold no label store (make one with
``labels import-reviews``, and ``labels role CODE admin``), and without a rater the page is not in
the navigation (AppTest then runs Home).

With ``--baseline DIR`` (another checkout that stays put) each page is played by that checkout
just before ours, on the same workspace and under the same load.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DATASET, TASK, POLICY = "scale", "G1a", "G1_allergy_V2"
PAGES = ("home", "data", "gt", "trace", "runs", "results")  # label_review: see the module docstring
Step = tuple[str, Callable[[Any], Any]]


# -- the child: one page in one process -----------------------------------------------------------

def _warm_imports() -> None:
    import importlib

    from core.ui import warmup

    for name in warmup.modules_to_warm():
        if warmup._importable(name):
            importlib.import_module(name)
    warmup.freeze()  # as the server's preload and warm-up do after their imports (app.py, warmup._run)


def _first_business(ws_root: Path) -> str:
    import duckdb

    path = ws_root / "datasets" / DATASET / "restaurants.parquet"
    row = duckdb.connect().execute("SELECT business_id FROM read_parquet(?) ORDER BY business_id LIMIT 1 OFFSET 7", [str(path)]).fetchone()
    assert row is not None
    return str(row[0])


def _biggest_run(ws_root: Path) -> str | None:
    best: tuple[int, str] | None = None
    for summary in (ws_root / "runs").glob("*/summary.json"):
        total = int(json.loads(summary.read_text(encoding="utf-8")).get("total") or 0)
        if best is None or total > best[0]:
            best = (total, summary.parent.name)
    return best[1] if best else None


def _steps(page: str, ws_root: Path) -> list[Step]:
    bid = _first_business(ws_root)

    def link(script: str, **params: str) -> Callable[[Any], Any]:
        def go(at: Any) -> Any:
            at.query_params.clear()
            at.query_params.update(params)
            return at.switch_page(script)
        return go

    if page == "home":
        return [("Home: open", lambda at: at)]
    if page == "data":
        return [("Data: open (restaurant list)", lambda at: at.switch_page("app_pages/data.py")),
                ("Data: next page of restaurants", lambda at: at.button(key="data.restaurant_page.next").click()),
                ("Data: search a name", lambda at: at.text_input(key="data.name").input("Alder Eatery 1009")),
                ("Data: a restaurant's reviews (link)", link("app_pages/data.py", dataset=DATASET, business_id=bid)),
                ("Data: search its review text", lambda at: at.text_input(key="data.text").input("peanut"))]
    if page == "gt":
        return [("GT: first open", lambda at: at.switch_page("app_pages/ground_truth.py")),
                ("GT: rerun (nothing changed)", lambda at: at),
                ("GT: add K=150", lambda at: at.multiselect(key="gt.ks").set_value(
                    [*at.multiselect(key="gt.ks").value, "150"]))]
    if page == "trace":
        return [("Trace: one restaurant (link)", link("app_pages/trace.py", dataset=DATASET, task=TASK, formula=POLICY,
                                                      k="25", business_id=bid)),
                ("Trace: K = 50", lambda at: at.selectbox(key="trace.k").set_value("50"))]
    if page == "runs":
        return [("Runs: open", lambda at: at.switch_page("app_pages/runs.py")),
                ("Runs: K = 50", lambda at: at.number_input(key="runs.k").set_value(50)),
                ("Runs: 1,000 restaurants", lambda at: at.number_input(key="runs.n").set_value(1000))]
    if page == "results":
        run = _biggest_run(ws_root)
        return [("Results: open (largest run)", link("app_pages/results.py", run=run or "")),
                ("Results: only incorrect", lambda at: at.selectbox(key="results.correct").set_value("incorrect")),
                ("Results: next page of restaurants", lambda at: at.button(key="results.sample_page.next").click()),
                ("Results: another restaurant's drilldown", lambda at: at.selectbox(key="results.business_id").set_value(
                    at.selectbox(key="results.business_id").options[3].rsplit("(", 1)[1][:-1])),  # "name (business_id)"
                ("Results: claim of another metric", lambda at: at.selectbox(key="results.claim.choice").set_value("accuracy")),
                ("Results: compare runs", lambda at: at.radio(key="results.mode").set_value("Compare runs")),
                ("Results: compare, list newly fixed", lambda at: at.selectbox(key="results.bucket").set_value("newly fixed"))]
    if page == "label_review":  # as the rater of --rater (an adjudicator or admin: ``labels role CODE admin``)
        def review(at: Any) -> Any:  # a first run signs the rater in (not timed); AppTest switches pages only after one
            at.query_params.update(rater=os.environ.get("BENCH_RATER", ""))
            at.run()
            return at.switch_page("app_pages/label_review.py")

        def section(name: str) -> Callable[[Any], Any]:
            return lambda at: at.get("button_group")[0].set_value(name)  # the "Section" segmented control

        return [("Label review: open", review), ("Label review: rerun (nothing changed)", lambda at: at),
                *[(f"Label review: {name}", section(name)) for name in ("Disagreements", "Agreement", "Export")]]
    raise SystemExit(f"unknown page {page}")


def child(page: str, ws_root: Path, passes: int, checkout: Path) -> None:
    """Play one page ``passes`` times; print one JSON line of {step: [ms per pass]}, the peak and the load."""
    os.environ["WORKBENCH_WORKSPACE"] = str(ws_root)
    os.environ["WORKBENCH_WARMUP"] = "0"
    _warm_imports()
    from streamlit.testing.v1 import AppTest

    warm = AppTest.from_string("import streamlit as st\nst.write('warm')").run()  # Streamlit's own first-run costs
    # the components every AppTest discovers on its first run (0.5-0.8 s scanning the installed packages'
    # metadata): the server does it once when it starts (Runtime), never in a visitor's page run
    components = getattr(warm, "_bidi_component_manager", None)
    rss_imports = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    times: dict[str, list[float]] = {}
    errors: list[str] = []
    for _ in range(passes):
        at = AppTest.from_file(str(checkout / "main.py"), default_timeout=600)
        if components is not None:
            at._bidi_component_manager = components
        for name, action in _steps(page, ws_root):
            try:
                action(at)
            except Exception as exc:  # a widget missing on this page state
                errors.append(f"{name}: {type(exc).__name__}: {exc}")
                break
            start = time.perf_counter()
            at.run()
            times.setdefault(name, []).append((time.perf_counter() - start) * 1000)
            if at.exception:
                errors.append(f"{name}: {at.exception[0].message[:300]}")
                break
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"times": times, "peak_mb": peak, "imports_mb": rss_imports, "errors": errors,
                      "load": os.getloadavg()[0]}))


# -- the parent -------------------------------------------------------------------------------------

def play(checkout: Path, page: str, ws_root: Path, passes: int) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(checkout), "WORKBENCH_WORKSPACE": str(ws_root)}
    cmd = [sys.executable, str(ROOT / "bench" / "scale_pages.py"), "--child", page, "--workspace", str(ws_root),
           "--passes", str(passes), "--checkout", str(checkout)]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False, cwd=checkout)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode or not lines:
        return {"times": {}, "peak_mb": 0, "errors": [f"exit {done.returncode}: {done.stderr.strip()[-400:]}"]}
    return json.loads(lines[-1])


def make_run(ws_root: Path, run_id: str) -> None:
    """``runs import`` of a results file over every restaurant of the K=25 GT file: a baseline that
    answers the GT verdict for 70 % of the restaurants and a drawn verdict for the others."""
    import random

    gt = json.loads((ws_root / "gt" / DATASET / TASK / f"{POLICY}_K25_groundtruth.json").read_bytes())
    verdicts = ("Low Risk", "High Risk", "Critical Risk")
    rng = random.Random(0)
    results = []
    for bid, entry in gt["restaurants"].items():
        truth = entry["ground_truth"]["verdict"]
        verdict = truth if rng.random() < 0.7 else rng.choice(verdicts)
        results.append({"business_id": bid, "name": entry["name"], "verdict": verdict,
                        "risk_score": float(verdicts.index(verdict) * 4 + rng.randint(0, 3)), "gt_verdict": truth})
    doc = {"run_id": run_id, "method": "direct", "model": "bench-synthetic", "task_id": TASK, "policy_id": POLICY,
           "k": 25, "results": results}
    source = ws_root / f"{run_id}.results.json"
    source.write_text(json.dumps(doc), encoding="utf-8")
    subprocess.run([sys.executable, "-m", "core", "--workspace", str(ws_root), "runs", "import", str(source),
                    "--run-id", run_id, "--n-boot", "1000"], check=True, cwd=ROOT,
                   env={**os.environ, "PYTHONPATH": str(ROOT)})
    source.unlink()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="100,150000")
    parser.add_argument("--root", default="/tmp/scale")
    parser.add_argument("--pages", default=",".join(PAGES))
    parser.add_argument("--passes", type=int, default=2)
    parser.add_argument("--baseline", help="another checkout, played on the same workspace just before ours")
    parser.add_argument("--make-run", action="store_true", help="runs import a run over every restaurant first")
    parser.add_argument("--json", help="write every figure here")
    parser.add_argument("--rater", default="", help="label_review: the rater code the page is opened as (?rater=)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--workspace", help=argparse.SUPPRESS)
    parser.add_argument("--checkout", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.child, Path(args.workspace), args.passes, Path(args.checkout or ROOT))
        return 0
    os.environ["BENCH_RATER"] = args.rater  # the children inherit it
    sizes = [int(s) for s in args.sizes.split(",")]
    checkouts = ([("before", Path(args.baseline))] if args.baseline else []) + [("after", ROOT)]
    figures: dict[str, Any] = {}
    for size in sizes:
        ws_root = Path(f"{args.root}-{size}")
        if args.make_run and not (ws_root / "runs" / "bench-all-restaurants").exists():
            make_run(ws_root, "bench-all-restaurants")
        for page in args.pages.split(","):
            for label, checkout in checkouts:
                out = play(checkout, page, ws_root, args.passes)
                figures[f"{size}|{page}|{label}"] = out
                _print(size, page, label, out)
    _summary(figures, sizes, checkouts)
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=1), encoding="utf-8")
    return 0


def _print(size: int, page: str, label: str, out: dict[str, Any]) -> None:
    for step, values in out["times"].items():
        warm = statistics.median(values[1:]) if len(values) > 1 else float("nan")
        print(f"{size:>7,} {label:<6} {step:<40} first {values[0]:8.0f} ms  warm {warm:8.0f} ms  "
              f"peak {out['peak_mb']:6.0f} MB  load {out.get('load', 0):.1f}", flush=True)
    for error in out["errors"]:
        print(f"{size:>7,} {label:<6} {page}: ERROR {error}", flush=True)


def _summary(figures: dict[str, Any], sizes: list[int], checkouts: list[tuple[str, Path]]) -> None:
    print("\nfirst-visit server time (ms), peak MB; growth = time over that of the next smaller size")
    for label, _ in checkouts:
        steps: dict[str, dict[int, tuple[float, float]]] = {}
        for key, out in figures.items():
            size, _page, who = key.split("|")
            if who == label:
                for step, values in out["times"].items():
                    steps.setdefault(step, {})[int(size)] = (values[0], out["peak_mb"])
        for step, by_size in steps.items():
            cells, prev = [], None
            for size in sizes:
                if size in by_size:
                    ms, mb = by_size[size]
                    growth = f" ×{ms / prev:.0f}" if prev else ""
                    cells.append(f"{size:,}: {ms:,.0f} ms {mb:,.0f} MB{growth}")
                    prev = ms
            print(f"  {label:<6} {step:<40} " + " | ".join(cells))


if __name__ == "__main__":
    raise SystemExit(main())

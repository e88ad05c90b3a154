"""Server time per interaction of the Ground truth, Trace and Results pages, and of the core calls behind them.

```
python bench/pages.py [--workspace DIR] [--passes 3] [--budget-ms 300]
```
Without ``--workspace`` a demo workspace (100 restaurants × 200 reviews) is generated in a temporary
folder, indexed and judged with heuristic-v1. Each interaction is a widget change followed by one
``AppTest.run()`` (the server-side script run a browser would wait for). The scenario is played
``--passes`` times in one process: pass 1 meets cold caches (every GT/trace computed for the first
time), later passes the warm ``st.cache_data`` a returning user gets. Writes (override, revert)
clear the caches by design, so they are always cold. Exit code 1 when a warm median is over budget.

The Results page is played on its own workspace of ``--results-runs`` synthetic scored runs
(``core.metrics.synthetic``, 1,000 bootstrap resamples each, each folder with its results.json and
summary.json as a run leaves them) of ``--results-restaurants`` restaurants; ``--only results``
skips the GT and Trace pages. Pass 1 of the Results page is cold: a fresh process, nothing cached.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

Step = tuple[str, Callable]


def _prepare(workspace: str | None) -> Path:
    from core.demo import generate_demo
    from core.ground_truth import views as gt_views
    from core.workspace import Workspace

    if workspace:
        root = Path(workspace)
    else:
        root = Path(tempfile.mkdtemp(prefix="bench_pages_")) / "ws"
        generate_demo(root, n_restaurants=100, reviews_per_restaurant=200)
    gt_views.run_index_and_judge(Workspace(root), "demo", "G1a")  # resumes: nothing to do when judged
    return root


def _core_timings(root: Path) -> list[tuple[str, float]]:
    from core.ground_truth import explain_k_change, trace_gt
    from core.ground_truth import views as gt_views
    from core.workspace import Workspace

    ws, out = Workspace(root), []

    def timed(name: str, fn: Callable):
        start = time.perf_counter()
        value = fn()
        out.append((name, (time.perf_counter() - start) * 1000))
        return value

    timed("judging_status", lambda: gt_views.judging_status(ws, "demo", "G1a"))
    inputs = timed("load_inputs (judgments + overrides + restaurants)", lambda: gt_views.load_inputs(ws, "demo", "G1a"))
    frame = timed("compute_frame v1, K 25/50/100/200", lambda: gt_views.compute_frame(inputs, "v1", [25, 50, 100, 200]))
    timed("compute_frame what-if", lambda: gt_views.compute_frame(inputs, "v1", [25, 50, 100, 200],
                                                                  changes={"HIGH_THRESHOLD": 3.0}))
    grid = timed("verdict_grid", lambda: gt_views.verdict_grid(frame))
    bid = grid["business_id"][0]
    one = gt_views.restaurant_inputs(inputs, bid)
    texts = timed("review_texts (one restaurant)", lambda: gt_views.review_texts(ws, "demo", bid))
    root_node = timed("trace_gt", lambda: trace_gt(one.judgments, one.restaurants, bid, "v1", 50, texts=texts))
    timed("tree_html + review_cards", lambda: (gt_views.tree_html(root_node), gt_views.review_cards(root_node)))
    timed("explain_k_change 25→50", lambda: explain_k_change(one.judgments, one.restaurants, bid, "v1", 25, 50,
                                                            texts=texts))
    return out


def _gt_steps(at) -> list[Step]:
    return [
        ("GT: open page", lambda: at.switch_page("app_pages/ground_truth.py")),
        ("GT: rerun (nothing changed)", lambda: at),
        ("GT: add K=150", lambda: at.multiselect(key="gt.ks").set_value(["25", "50", "100", "150", "200"])),
        ("GT: flips only", lambda: at.toggle(key="gt.flips_only").set_value(True)),
        ("GT: sort by name", lambda: at.selectbox(key="gt.sort").set_value("Name")),
        ("GT: pick a restaurant", lambda: at.selectbox(key="gt.business_id").set_value(
            at.selectbox(key="gt.business_id").options[-1])),
        ("GT: K for the tables = 100", lambda: at.selectbox(key="gt.k").set_value("100")),
        ("GT: formula v2", lambda: at.selectbox(key="gt.definition").set_value("v2")),
        ("GT: policy G1_allergy_V2", lambda: at.selectbox(key="gt.definition").set_value("G1_allergy_V2")),
        ("GT: export layout ADDM", lambda: at.radio(key="gt.layout").set_value("addm")),
    ]


def _trace_steps(at, business_ids: list[str]) -> tuple[list[Step], list[Step]]:
    """(read-only interactions, writes); the writes run once at the end, since they clear the caches."""
    def tab(label: str):
        at.session_state["trace.tab"] = label
        return at

    def override():
        at.button(key=f"trace.edit.{_first_card(at)}").click().run()
        idx = _first_card(at)
        box = at.selectbox(key=f"trace.ov.{idx}.incident_severity")
        box.set_value(next(v for v in box.options if v != box.value))
        at.text_input(key=f"trace.ov.{idx}.reason").input("bench")
        at.text_input(key="trace.author").input("bench")
        return next(b for b in at.button if b.label.startswith("Save override")).click()

    def revert():
        tab("Overrides").run()
        at.text_input(key="trace.revert_reason").input("bench")
        at.text_input(key="trace.author").input("bench")
        return next(b for b in at.button if b.label.startswith("Revert")).click()

    return [
        ("Trace: open from a link", lambda: at.switch_page("app_pages/trace.py")),
        ("Trace: rerun (nothing changed)", lambda: at),
        ("Trace: K = 100", lambda: at.selectbox(key="trace.k").set_value("100")),
        ("Trace: another restaurant", lambda: at.selectbox(key="trace.business_id").set_value(business_ids[1])),
        ("Trace: back to the first, K = 50", lambda: (at.selectbox(key="trace.business_id").set_value(business_ids[0]),
                                                       at.selectbox(key="trace.k").set_value("50"))[-1]),
        ("Trace: focus N_ALLERGY_REVIEWS", lambda: at.selectbox(key="trace.focus").set_value("n_allergy_reviews")),
        ("Trace: tab 'Why K changes'", lambda: tab("Why K changes the verdict")),
        ("Trace: tab 'Overrides'", lambda: tab("Overrides")),
        ("Trace: tab 'What-if'", lambda: tab("What-if")),
        ("Trace: what-if HIGH_THRESHOLD = 3", lambda: at.number_input(key="trace.whatif.v1.HIGH_THRESHOLD").set_value(3.0)),
        ("Trace: back to the formula tab", lambda: tab("Formula and reviews")),
    ], [
        ("Trace: save an override (write)", override),
        ("Trace: revert it (write)", revert),
    ]


def _first_card(at) -> int:
    import re

    keys = [b.key for b in at.button if b.key and re.fullmatch(r"trace\.edit\.\d+", b.key)]
    return int(keys[0].rsplit(".", 1)[1])


def _results_workspace(n_runs: int, n_restaurants: int) -> Path:
    """A workspace with ``n_runs`` scored synthetic runs: 5 methods × K 25/50/100/200/… × seeds."""
    import json

    from core.metrics import score_results
    from core.metrics.synthetic import synthetic_run
    from core.runs.records import write_run_summary
    from core.workspace import Workspace

    root = Path(tempfile.mkdtemp(prefix="bench_results_")) / "ws"
    Workspace(root).ensure("bench-results")
    methods = {"direct": 0.2, "cot": 0.15, "rag": 0.3, "amos": 0.1, "keyword": 0.5}
    ks = [25, 50, 100, 200, 400]
    for i in range(n_runs):
        method = list(methods)[i % len(methods)]
        k = ks[(i // len(methods)) % len(ks)]
        results, gt, texts = synthetic_run(n_restaurants, seed=0, noise=methods[method] * (1 - k / 1000), method=method,
                                           k=k, run_id=f"{method}_k{k}_{i:02d}")
        scored = score_results(results, gt=gt, review_texts=texts, n_boot=1000)
        folder = root / "runs" / scored["run_id"]
        folder.mkdir(parents=True)
        (folder / "results.json").write_text(json.dumps(scored), encoding="utf-8")
        write_run_summary(folder, scored)  # as `run` and `runs import` leave it beside results.json
    return root


def _results_steps(at, root: Path) -> list[Step]:
    def labels():
        return at.selectbox(key="results.run").options

    def open_page():
        at.session_state["sidebar.workspace"] = str(root)
        return at.switch_page("app_pages/results.py")

    return [
        ("Results: open page (newest run)", open_page),
        ("Results: rerun (nothing changed)", lambda: at),
        ("Results: another run", lambda: at.selectbox(key="results.run").set_value(labels()[3])),
        ("Results: only incorrect", lambda: at.selectbox(key="results.correct").set_value("incorrect")),
        ("Results: GT verdict Critical", lambda: at.multiselect(key="results.gt").set_value(["Critical Risk"])),
        ("Results: another restaurant", lambda: at.selectbox(key="results.business_id").set_value(
            at.selectbox(key="results.business_id").options[-1])),
        ("Results: compare runs (2 newest)", lambda: at.radio(key="results.mode").set_value("Compare runs")),
        ("Results: add a third run", lambda: at.multiselect(key="results.runs").set_value(
            at.multiselect(key="results.runs").value + [at.multiselect(key="results.runs").options[7]])),
        ("Results: change the baseline", lambda: at.selectbox(key="results.baseline").set_value(
            at.selectbox(key="results.baseline").options[-1])),
        ("Results: list newly fixed", lambda: at.selectbox(key="results.bucket").set_value("newly fixed")),
        ("Results: score against K, all runs", lambda: at.checkbox(key="results.k_all_runs").check()),
        ("Results: back to one run", lambda: at.radio(key="results.mode").set_value("One run")),
    ]


def _play(at, steps: list[Step], times: dict[str, list[float]]) -> None:
    for name, action in steps:
        action()
        start = time.perf_counter()
        at.run()
        times[name].append((time.perf_counter() - start) * 1000)
        if at.exception:
            raise RuntimeError(f"{name}: {at.exception}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workspace", help="a workspace with the demo dataset (default: generate one)")
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument("--budget-ms", type=float, default=300.0)
    parser.add_argument("--results-runs", type=int, default=50)
    parser.add_argument("--results-restaurants", type=int, default=1000)
    parser.add_argument("--only", choices=["results"], help="play only the Results page")
    args = parser.parse_args(argv)
    times: dict[str, list[float]] = defaultdict(list)
    from streamlit.testing.v1 import AppTest

    start = time.perf_counter()
    results_root = _results_workspace(args.results_runs, args.results_restaurants)
    print(f"results workspace {results_root}: {args.results_runs} runs × {args.results_restaurants} restaurants "
          f"({time.perf_counter() - start:.0f} s to make)")
    os.environ["WORKBENCH_WORKSPACE"] = str(results_root)
    for _ in range(args.passes):
        at = AppTest.from_file(str(ROOT / "main.py"), default_timeout=120).run()
        _play(at, _results_steps(at, results_root), times)
    if args.only == "results":
        return _report(times, args.budget_ms)
    root = _prepare(args.workspace)
    os.environ["WORKBENCH_WORKSPACE"] = str(root)

    from core.ground_truth import views as gt_views
    from core.workspace import Workspace

    print(f"workspace {root}")
    for name, ms in _core_timings(root):
        print(f"  core  {name:<48} {ms:8.1f} ms")
    frame = gt_views.compute_frame(gt_views.load_inputs(Workspace(root), "demo", "G1a"), "v1", [25, 50, 100, 200])
    ids = gt_views.verdict_grid(frame)["business_id"].to_list()

    def trace_app():
        at = AppTest.from_file(str(ROOT / "main.py"), default_timeout=120).run()
        at.query_params.update({"dataset": "demo", "task": "G1a", "formula": "v1", "k": "50", "business_id": ids[0]})
        return at

    for _ in range(args.passes):
        at = AppTest.from_file(str(ROOT / "main.py"), default_timeout=120).run()
        _play(at, _gt_steps(at), times)
        at = trace_app()
        _play(at, _trace_steps(at, ids)[0], times)
    for _ in range(2):  # writes clear every cache; measured last so the passes above stay comparable
        at = trace_app()
        at.switch_page("app_pages/trace.py").run()
        _play(at, _trace_steps(at, ids)[1], times)
    return _report(times, args.budget_ms)


def _report(times: dict[str, list[float]], budget_ms: float) -> int:
    print(f"\n  {'interaction (AppTest run after the change)':<44} {'pass 1':>8} {'warm med':>9} {'warm max':>9}")
    over = []
    for name, values in times.items():
        warm = values if "(write)" in name else (values[1:] or values)
        median = statistics.median(warm)
        mark = "  (a write: new data stamp; all runs shown)" if "(write)" in name else ""
        print(f"  {name:<44} {values[0]:7.0f}  {median:8.0f}  {max(warm):8.0f}{mark}")
        if median > budget_ms and "(write)" not in name:
            over.append(name)
    every = [v for name, vs in times.items() if "(write)" not in name for v in vs[1:]]
    if every:
        print(f"\n  warm interactions: median {statistics.median(every):.0f} ms, max {max(every):.0f} ms, "
              f"budget {budget_ms:.0f} ms")
    if over:
        print(f"over budget: {', '.join(over)}")
    return 1 if over else 0


if __name__ == "__main__":
    raise SystemExit(main())

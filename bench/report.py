"""The performance report: cold start and every page interaction, server and browser time, against
the targets (issue 17), optionally beside a baseline checkout measured in the same run.

```
python bench/report.py [--baseline /path/to/other/checkout] [--passes 3] [--json OUT]
```
One fresh demo workspace is generated (``python -m core demo``) and copied for each checkout, so
both serve the same data. Each checkout is played by :mod:`bench.browser` (``streamlit run`` +
Chromium): cold start (process spawn to the Home page settled), then every page's main
interactions, ``--passes`` times, each pass in a fresh browser session. Targets: cold start
≤ 3 s; every interaction ≤ 300 ms of server time and ≤ 1 s in the browser (click to settled).
The machine's load average is printed with the figures; on a loaded machine compare the
``after/before`` ratio, measured side by side in this run, rather than the absolute figures.
Per-interaction AppTest server times of the GT, Trace and Results pages: ``python bench/pages.py``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import browser  # noqa: E402 (after the path insert: bench/ is a folder of scripts)

COLD_MS, SERVER_MS, BROWSER_MS = 3000.0, 300.0, 1000.0


def _row(name: str, server: float, browser_ms: float, before: tuple[float, float] | None) -> tuple[str, bool]:
    ok = server <= SERVER_MS and browser_ms <= BROWSER_MS
    if before is None:
        return f"  {name:<42} {server:8.0f} {browser_ms:8.0f}  {'ok' if ok else 'OVER'}", ok
    ratio = browser_ms / before[1] if before[1] else float("nan")
    return (f"  {name:<42} {before[0]:8.0f} {server:8.0f} {before[1]:8.0f} {browser_ms:8.0f} {ratio:6.2f}  "
            f"{'ok' if ok else 'OVER'}"), ok


def print_table(after: dict, before: dict | None) -> int:
    """The one table: cold start, then each interaction (medians), with pass/fail of ``after``."""
    print(f"\nload average (1/5/15 min) at each pass: this checkout {' | '.join(after['load'])}")
    if before:
        print(f"                                         baseline {' | '.join(before['load'])}")
    cold = statistics.median(c[1] for c in after["cold"])
    health = statistics.median(c[0] for c in after["cold"])
    line = f"cold start to the Home page settled: {cold:.0f} ms (health {health:.0f} ms)"
    if before:
        b = statistics.median(c[1] for c in before["cold"])
        line += f"; baseline {b:.0f} ms; after/before {cold / b:.2f}"
    print(f"{line}; target ≤ {COLD_MS:.0f} ms: {'ok' if cold <= COLD_MS else 'OVER'}")
    head = (f"  {'interaction (medians, ms)':<42} {'server':>8} {'browser':>8}" if not before else
            f"  {'interaction (medians, ms)':<42} {'srv bef':>8} {'srv aft':>8} {'brw bef':>8} {'brw aft':>8} "
            f"{'ratio':>6}")
    print(f"{head}  target: server ≤ {SERVER_MS:.0f}, browser ≤ {BROWSER_MS:.0f}")
    base = {name: (s, b) for name, s, b, _ in browser.summary(before)} if before else {}
    failures = 0 if cold <= COLD_MS else 1
    for name, server, browser_ms, _ in browser.summary(after):
        text, ok = _row(name, server, browser_ms, base.get(name) if before else None)
        failures += not ok
        print(text)
    print(f"{failures} figure(s) over target")
    return 1 if failures else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--baseline", type=Path, help="another checkout (e.g. main) measured in the same run")
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument("--workspace", type=Path, help="a demo workspace to copy (default: generate one)")
    parser.add_argument("--json", type=Path, help="also write the raw figures here")
    args = parser.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="bench_report_"))
    demo = args.workspace or browser.make_demo(tmp / "demo")
    figures: dict[str, dict] = {}
    checkouts = ([("baseline", args.baseline.resolve())] if args.baseline else []) + [("after", ROOT)]
    for label, app_dir in checkouts:
        ws = tmp / f"ws-{label}"
        shutil.copytree(demo, ws)
        logs = tmp / f"logs-{label}"
        logs.mkdir()
        print(f"{label}: {app_dir} on {ws}", flush=True)
        figures[label] = browser.run(app_dir, ws, args.passes, logs)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1), encoding="utf-8")
    return print_table(figures["after"], figures.get("baseline"))


if __name__ == "__main__":
    raise SystemExit(main())

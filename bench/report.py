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
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import browser  # noqa: E402 (after the path insert: bench/ is a folder of scripts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--baseline", type=Path, help="another checkout (e.g. main) measured in the same run")
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument("--workspace", type=Path, help="a demo workspace to copy (default: generate one)")
    parser.add_argument("--json", type=Path, help="also write the raw figures here")
    args = parser.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="bench_report_"))
    demo = args.workspace or browser.make_demo(tmp / "demo")
    checkouts = ([("baseline", args.baseline.resolve())] if args.baseline else []) + [("after", ROOT)]
    runs: dict[str, tuple[Path, Path]] = {}
    for label, app_dir in checkouts:
        runs[label] = (app_dir, tmp / f"ws-{label}")
        shutil.copytree(demo, runs[label][1])
        print(f"{label}: {app_dir} on {runs[label][1]}", flush=True)
    figures = browser.run(runs, args.passes, tmp)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1), encoding="utf-8")
    return browser.print_table(figures["after"], figures.get("baseline"), figures[browser.FLOOR])


if __name__ == "__main__":
    raise SystemExit(main())

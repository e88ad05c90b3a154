"""The offline judge's cost per review, split: the vectorised screen, the Python rules, the lines.

```
python bench/offline_judge_speed.py [--fixtures DIR] [--workspace WS --dataset D] [--limit N] [--json OUT]
```
Judges (``heuristic-v2``, G1a) in this process, in chunks of the pool's size, the way a worker
does, two ways, and checks that they write the same bytes (``created_at`` aside):

* **general**: ``judge.judge(rows)`` (``judge_text`` on every review, a record dict each) then
  ``encode_judgments`` (validation and ``json.dumps`` per record): the path before issue 27;
* **screened**: ``judge.screen`` (polars, :mod:`core.judgments.judges.heuristic_screen`) then
  ``judge.encode_lines`` (``judge_text`` only where a rule can fire, lines built from strings).

Inputs: the 2,491 real Yelp reviews of dev-ADDM (``$WORKBENCH_FIXTURES/dev-ADDM/full``; all of
them, and the 405 the G1a keywords match) and, with ``--workspace``/``--dataset``, the keyword
-matched reviews of a workspace (e.g. the 10,000-restaurant one ``bench/scale.py`` builds). CPU
seconds of this process (``time.process_time``) per review, reviews per CPU second, and the share
the screen lets through ("fire"), with ``uptime``'s load average: the machine is shared. No
judgment is memoised: each review is judged from its text.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.judgments.judges.heuristic import HeuristicJudge  # noqa: E402
from core.judgments.judges.pool import POOL_CHUNK  # noqa: E402
from core.judgments.store import encode_judgments  # noqa: E402
from core.tasks import get_task  # noqa: E402

_STAMP = re.compile(rb'"created_at": "[^"]*"')


def fixture_rows(fixtures: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(every dev-ADDM review, the ones a G1a keyword matches) as judge rows."""
    spec = get_task("G1a", None)
    keywords = [k.lower() for k in spec.keywords]
    rows = []
    with open(fixtures / "dev-ADDM/full/dataset_K25.jsonl", encoding="utf-8") as fh:
        for line in fh:
            for idx, review in enumerate(json.loads(line)["reviews"]):
                rows.append({"dataset": "addm", "business_id": review["business_id"], "review_id": review["review_id"],
                             "idx": idx, "text": review["text"], "text_hash": None})
    matched = [r for r in rows if any(k in r["text"].lower() for k in keywords)]
    return rows, matched


def workspace_rows(root: Path, dataset: str) -> list[dict[str, Any]]:
    """The keyword-matched reviews of a workspace's dataset, as the runner's plan holds them."""
    from core.tasks.keyword_index import matched_reviews
    from core.workspace import Workspace

    frame = matched_reviews(Workspace(root), dataset, "G1a", with_text=True).drop_nulls("text")
    return [{**r, "dataset": dataset, "idx": int(r["idx"])} for r in frame.iter_rows(named=True)]


def measure(name: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """CPU per review of the general and the screened path over ``rows``; raises if their bytes differ."""
    spec = get_task("G1a", None)
    judge = HeuristicJudge(spec, "heuristic-v2")
    chunks = [rows[i : i + POOL_CHUNK] for i in range(0, len(rows), POOL_CHUNK)]
    started = time.process_time()
    general = [encode_judgments(spec, "d", judge.judge_id, judge.judge(c)) for c in chunks]
    general_s = time.process_time() - started
    started = time.process_time()
    fires = [judge.screen([r["text"] for r in c]) for c in chunks]
    screen_s = time.process_time() - started
    screened = [judge.encode_lines(spec, "d", c, f) for c, f in zip(chunks, fires, strict=True)]
    screened_s = time.process_time() - started
    if any(s is None or _STAMP.sub(b"*", s) != _STAMP.sub(b"*", g) for s, g in zip(screened, general, strict=True)):
        raise SystemExit(f"{name}: the screened path wrote other bytes than the general one")
    n = max(1, len(rows))
    fire = sum(sum(f) for f in fires) / n
    out = {"set": name, "reviews": len(rows), "fire_share": round(fire, 4),
           "general_us": round(general_s / n * 1e6, 1), "screened_us": round(screened_s / n * 1e6, 1),
           "screen_us": round(screen_s / n * 1e6, 1), "speedup": round(general_s / max(screened_s, 1e-9), 2),
           "screened_reviews_per_cpu_s": round(n / max(screened_s, 1e-9)), "load": os.getloadavg()[0]}
    print(f"{name}: {len(rows):,} reviews, {fire:.1%} reach the rules; general {out['general_us']} µs/review, "
          f"screened {out['screened_us']} µs/review (screen {out['screen_us']}), {out['speedup']}×, "
          f"{out['screened_reviews_per_cpu_s']:,} reviews per CPU second; load {out['load']:.1f}; same bytes")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--fixtures", type=Path, default=os.environ.get("WORKBENCH_FIXTURES"))
    parser.add_argument("--workspace", type=Path)
    parser.add_argument("--dataset", default="scale")
    parser.add_argument("--limit", type=int, help="at most this many workspace reviews")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    results = []
    if args.fixtures:
        every, matched = fixture_rows(Path(args.fixtures))
        results += [measure("dev-ADDM, every review (real)", every), measure("dev-ADDM, G1a matches (real)", matched)]
    if args.workspace:
        rows = workspace_rows(args.workspace, args.dataset)
        results.append(measure(f"{args.workspace} {args.dataset}, G1a matches", rows[: args.limit]))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

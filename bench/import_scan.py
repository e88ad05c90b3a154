"""Import and Data-page queries at scale, next to baselines, in one run.

    .venv/bin/python bench/import_scan.py            # 1,000,000 reviews over 5,000 businesses
    .venv/bin/python bench/import_scan.py --n 200000
    .venv/bin/python bench/import_scan.py --n 5000000 --baseline-n 1000000

Generates synthetic flat Yelp files (``review.json`` + ``business.json``) in a temporary folder
(written a chunk at a time: 5 M reviews are ~3 GB), then times, each import in its own child
process whose peak memory (``ru_maxrss``) is reported:

- import, streaming (the workbench): read and check in chunks, hold them in memory up to
  ``HOLD_BYTES`` (1 GiB, ~1.4 M reviews) or else stage them on disk and sort a bucket at a time,
  store zstd Parquet with text_hash + sha256 lock (at 1 M reviews this is the held path: pass
  ``--n 5000000`` for the staged one);
- import, in memory (the workbench's previous path, the baseline): the whole file read by polars,
  the same checks, one sort, one write; run on the first ``--baseline-n`` reviews when the full
  file would not fit, and the streaming import is then timed on that prefix too;
- page: one restaurant's reviews, 50 per page by idx (median over several restaurants), and
  search: a case-insensitive substring over every review text, against a plain ``json`` loop over
  Python lists (skipped above 2 M reviews, where the Python lists would not fit).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.base.files import atomic_dir, write_json_atomic  # noqa: E402
from core.datasets import flat, lock, store  # noqa: E402
from core.datasets.db import Database  # noqa: E402
from core.datasets.importer import import_dataset  # noqa: E402
from core.datasets.schema import REVIEW_SCHEMA  # noqa: E402
from core.datasets.staging import number_newest_first  # noqa: E402
from core.workspace import Workspace  # noqa: E402
from core.workspace.locks import staging_for  # noqa: E402

PAGE_SQL = """
SELECT idx, date, stars, text FROM reviews
WHERE dataset = $dataset AND business_id = $business_id
ORDER BY idx LIMIT 50 OFFSET $offset
"""
SEARCH_COUNT_SQL = "SELECT count(*) AS n FROM reviews WHERE dataset = $dataset AND text ILIKE $pattern"
SEARCH_PAGE_SQL = """
SELECT business_id, idx, date, text FROM reviews
WHERE dataset = $dataset AND text ILIKE $pattern
ORDER BY business_id, idx LIMIT 50
"""
SEARCH_REGEXP_SQL = "SELECT count(*) AS n FROM reviews WHERE dataset = $dataset AND regexp_matches(text, $regexp, 'i')"
SEARCH_WORD = "epipen"
_SUBJECTS = ["The pad thai", "Our waiter", "The brisket", "This place", "The hostess", "My burger",
             "The dumplings", "Dessert", "The patio", "The kitchen", "Brunch", "The espresso"]
_VERBS = ["was", "seemed", "felt", "turned out", "looked", "tasted"]
_ADJECTIVES = ["amazing", "bland", "overpriced", "perfect", "cold", "spicy", "slow", "friendly",
               "rude", "fresh", "greasy", "forgettable", "careful about my peanut allergy",
               "worth the wait", "a little salty", "safe for my celiac friend"]
_RARE = ["I had to use my EpiPen afterwards.", "The donut was the best part.", "Cash only."]


def _sentence_pool(rng: np.random.Generator, size: int) -> list[str]:
    """Sentences of a fixed frame plus filler from a few thousand made-up words (text-like entropy)."""
    syllables = np.array(["ka", "lo", "mi", "ren", "to", "sha", "vu", "del", "po", "ri", "na", "gus", "te", "bo"])
    parts = rng.choice(syllables, (6000, 3))
    vocab = sorted({"".join(p[:k]) for p, k in zip(parts.tolist(), rng.integers(1, 4, 6000).tolist(), strict=True)})
    words = rng.integers(0, len(vocab), (size, 8)).tolist()
    counts = rng.integers(3, 9, size).tolist()
    frame = zip(rng.integers(0, len(_SUBJECTS), size).tolist(), rng.integers(0, len(_VERBS), size).tolist(),
                rng.integers(0, len(_ADJECTIVES), size).tolist(), strict=True)
    out = [
        f"{_SUBJECTS[s]} {_VERBS[v]} {_ADJECTIVES[a]}, {' '.join(vocab[w] for w in ws[:k])}."
        for (s, v, a), ws, k in zip(frame, words, counts, strict=True)
    ]
    for i in range(0, size, 50):  # 2 % of sentences carry a rare phrase (the search target)
        out[i] += " " + _RARE[(i // 50) % len(_RARE)]
    return out


def generate(folder: Path, n: int, n_businesses: int, seed: int, chunk: int = 250_000) -> tuple[Path, Path]:
    """Write ``review.json`` (n reviews) and ``business.json`` into ``folder``; same seed, same bytes.

    Reviews are made and appended ``chunk`` at a time, so generating 5 M of them stays small."""
    rng = np.random.default_rng(seed)
    pool = _sentence_pool(rng, 50_000)
    review_path, business_path = folder / "review.json", folder / "business.json"
    with open(review_path, "wb") as fh:
        for first in range(0, n, chunk):
            m = min(chunk, n - first)
            picks = rng.integers(0, len(pool), (m, 10))
            lengths = rng.integers(2, 11, m)  # ~6 sentences: ~600 bytes a line, like Yelp's review.json
            texts = [" ".join(pool[p] for p in row[:k]) for row, k in zip(picks.tolist(), lengths.tolist(), strict=True)]
            seconds = rng.integers(1_325_376_000, 1_735_689_600, m)  # 2012-01-01 .. 2025-01-01
            reviews = pl.DataFrame(
                {
                    "review_id": [f"r{i:021d}" for i in range(first, first + m)],
                    "user_id": [f"u{u:021d}" for u in rng.integers(0, n // 5 + 1, m)],
                    "business_id": [f"b{b:021d}" for b in rng.integers(0, n_businesses, m)],
                    "stars": rng.integers(1, 6, m).astype(float),
                    "useful": rng.poisson(1.0, m), "funny": rng.poisson(0.3, m), "cool": rng.poisson(0.5, m),
                    "text": texts,
                    "date": pl.Series(seconds * 1_000_000).cast(pl.Datetime("us")).dt.strftime("%Y-%m-%d %H:%M:%S"),
                }
            )
            reviews.write_ndjson(fh)
    business = pl.DataFrame(
        {
            "business_id": [f"b{b:021d}" for b in range(n_businesses)],
            "name": [f"Restaurant {b}" for b in range(n_businesses)],
            "city": "Philadelphia", "state": "PA",
            "stars": (rng.integers(2, 11, n_businesses) / 2).astype(float),
            "review_count": rng.integers(5, 2000, n_businesses),
            "is_open": rng.integers(0, 2, n_businesses),
            "categories": rng.choice(["Thai, Restaurants", "Pizza, Italian", "Chinese", "Coffee & Tea"], n_businesses),
        }
    )
    business.write_ndjson(business_path)
    return review_path, business_path


def prefix_file(review_path: Path, n: int, out: Path) -> Path:
    """The first ``n`` lines of ``review_path`` as ``out``."""
    with open(review_path, "rb") as src, open(out, "wb") as dst:
        for _, line in zip(range(n), src, strict=False):
            dst.write(line)
    return out


# -- imports, each in a child process (its peak memory is its own) ------------------------------
def inmemory_import(ws: Workspace, name: str, review_path: Path, business_path: Path) -> dict:
    """The previous import of a clean flat JSONL pair: the whole review file in one polars frame."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        sources = pool.submit(lock.hash_sources, [review_path, business_path])
        restaurants = flat.read_businesses(business_path, "jsonl")
        reviews = pl.read_ndjson(review_path, schema=flat.SOURCE_SCHEMA)
        assert not flat._suspicious(reviews) and flat._is_clean(reviews, restaurants["business_id"])
        assert not reviews["review_id"].is_duplicated().any()
        reviews = number_newest_first(reviews)
        reviews = reviews.select(pl.lit(name).alias("dataset"), *[  # the contract before text_hash
            pl.col(c).cast(t) for c, t in REVIEW_SCHEMA.items() if c not in ("dataset", "text_hash")])
        restaurants = store.restaurants_table(restaurants, reviews.group_by("business_id").len("n"), name)
        with atomic_dir(ws.dataset_dir(name), staging=staging_for(ws, "dataset", name)) as tmp:
            restaurants.write_parquet(tmp / "restaurants.parquet", compression="zstd", statistics=True)
            reviews.write_parquet(tmp / "reviews.parquet", compression="zstd", statistics=True,
                                  row_group_size=store.REVIEW_ROW_GROUP)
            made = lock.make_lock(tmp, name, "flat", sources.result(),
                                  {"restaurants": restaurants.height, "reviews": reviews.height})
            write_json_atomic(tmp / "dataset.lock.json", made)
    return made


def child(kind: str, root: Path, review_path: Path, business_path: Path) -> None:
    """Run one import in this process and print ``{seconds, cpu, peak_bytes, reviews}`` as JSON
    (``cpu``: user + system seconds of all its threads, a figure a busy machine distorts less)."""
    ws = Workspace(root).ensure("bench")
    before = resource.getrusage(resource.RUSAGE_SELF)
    cpu_before = before.ru_utime + before.ru_stime
    started = time.perf_counter()
    if kind == "streaming":
        result = import_dataset(ws, "bench", review_path, business_path=business_path)
    else:
        result = inmemory_import(ws, "bench", review_path, business_path)
    seconds = time.perf_counter() - started
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({"seconds": seconds, "cpu": usage.ru_utime + usage.ru_stime - cpu_before,
                      "peak_bytes": usage.ru_maxrss * 1024,  # kB on Linux
                      "reviews": result["counts"]["reviews"]}))


def run_child(kind: str, root: Path, review_path: Path, business_path: Path) -> dict:
    out = subprocess.run(
        [sys.executable, __file__, "--child", kind, "--root", str(root), "--review", str(review_path),
         "--business-file", str(business_path)],
        check=True, capture_output=True, text=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def _timed(fn, *args):
    started = time.perf_counter()
    value = fn(*args)
    return time.perf_counter() - started, value


def workbench_run(root: Path, sample: list[str]) -> dict[str, float]:
    """Query the imported dataset through ``core.datasets.db.Database``."""
    db = Database(root)
    db.query(PAGE_SQL, {"dataset": "bench", "business_id": sample[0], "offset": 0})  # creates the views
    pages = []
    for business_id in sample:
        t, frame = _timed(db.query, PAGE_SQL, {"dataset": "bench", "business_id": business_id, "offset": 0})
        assert frame.height > 0
        pages.append(t)
    params = {"dataset": "bench", "pattern": f"%{SEARCH_WORD}%"}
    t_search, (count, _) = _timed(lambda: (db.scalar(SEARCH_COUNT_SQL, params), db.query(SEARCH_PAGE_SQL, params)))
    t_regexp, count_regexp = _timed(db.scalar, SEARCH_REGEXP_SQL, {"dataset": "bench", "regexp": re.escape(SEARCH_WORD)})
    assert count_regexp == count
    db.close()
    return {"page": statistics.median(pages), "search": t_search, "matches": count, "regexp": t_regexp}


def _python_import(review_path: Path, out: Path) -> dict[str, list[dict]]:
    by_business: dict[str, list[dict]] = defaultdict(list)
    with open(review_path, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                rec = json.loads(line)
                by_business[rec["business_id"]].append(rec)
    with open(out, "w", encoding="utf-8") as fh:
        for business_id in sorted(by_business):
            items = by_business[business_id]
            items.sort(key=lambda r: r["review_id"])
            items.sort(key=lambda r: r["date"], reverse=True)  # stable: ties keep review_id order
            for idx, rec in enumerate(items):
                rec["idx"] = idx
                fh.write(json.dumps(rec) + "\n")
    return by_business


def baseline_run(review_path: Path, out: Path, sample: list[str]) -> dict[str, float]:
    """The same work as plain Python: a json loop, then list scans for the same two queries."""
    t_import, by_business = _timed(_python_import, review_path, out)
    rows = [rec for items in by_business.values() for rec in items]
    pages = []
    for business_id in sample:
        t, page = _timed(lambda b=business_id: sorted((r for r in rows if r["business_id"] == b), key=lambda r: r["idx"])[:50])
        assert page
        pages.append(t)

    def search() -> tuple[int, list[dict]]:
        hits = [r for r in rows if SEARCH_WORD in r["text"].lower()]
        return len(hits), sorted(hits, key=lambda r: (r["business_id"], r["idx"]))[:50]

    t_search, (count, _) = _timed(search)
    t_count, _ = _timed(lambda: sum(SEARCH_WORD in r["text"].lower() for r in rows))
    return {"import": t_import, "page": statistics.median(pages), "search": t_search, "matches": count,
            "regexp": t_count}


def _import_line(label: str, run: dict, n: int) -> str:
    return (f"{label:<40}{run['seconds']:>9.2f}s{run['seconds'] / n * 1e6:>9.2f}{run['cpu'] / n * 1e6:>11.2f}"
            f"{run['peak_bytes'] / 2**30:>9.2f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000, help="number of reviews (default 1,000,000)")
    parser.add_argument("--businesses", type=int, default=5_000, help="number of businesses (default 5,000)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--baseline-n", type=int, default=None,
                        help="reviews for the in-memory import baseline (default: n, at most 1,000,000)")
    parser.add_argument("--no-baseline", action="store_true", help="skip the in-memory and pure-Python baselines")
    parser.add_argument("--child", choices=["streaming", "memory"], help=argparse.SUPPRESS)
    parser.add_argument("--root", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--review", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--business-file", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.child, args.root, args.review, args.business_file)
        return 0
    baseline_n = min(args.n, args.baseline_n or 1_000_000)
    folder = Path(tempfile.mkdtemp(prefix="workbench-bench-"))
    try:
        load_before = os.getloadavg()
        t_gen, (review_path, business_path) = _timed(generate, folder, args.n, args.businesses, args.seed)
        size = review_path.stat().st_size
        print(f"generated {args.n:,} reviews over {args.businesses:,} businesses "
              f"({size / 2**20:,.0f} MiB JSONL) in {t_gen:.1f} s")
        imports = [("streaming import (workbench)", run_child("streaming", folder / "ws", review_path, business_path), args.n)]
        parquet = (folder / "ws" / "datasets" / "bench" / "reviews.parquet").stat().st_size
        print(f"workbench: reviews.parquet {parquet / 2**20:,.0f} MiB ({parquet / size:.0%} of the JSONL)")
        if not args.no_baseline:
            small = review_path if baseline_n == args.n else prefix_file(review_path, baseline_n, folder / "prefix.json")
            if baseline_n != args.n:
                imports.append((f"streaming import, first {baseline_n:,}",
                                run_child("streaming", folder / "ws-prefix", small, business_path), baseline_n))
            imports.append((f"in-memory import (before), {baseline_n:,}",
                            run_child("memory", folder / "ws-memory", small, business_path), baseline_n))
            shutil.rmtree(folder / "ws-prefix", ignore_errors=True)
            shutil.rmtree(folder / "ws-memory", ignore_errors=True)
        print(f"\n{'import (read, check, sort, store)':<40}{'time':>10}{'s/M':>9}{'CPU s/M':>11}{'peak GB':>9}")
        for label, run, n in imports:
            assert run["reviews"] == n, (label, run)
            print(_import_line(label, run, n))
        if len(imports) > 1:
            stream = imports[-2][1]["seconds"] / imports[-2][2]
            memory = imports[-1][1]["seconds"] / imports[-1][2]
            cpu = (imports[-2][1]["cpu"] / imports[-2][2]) / (imports[-1][1]["cpu"] / imports[-1][2])
            print(f"streaming / in-memory per review at {baseline_n:,}: time {stream / memory:.2f}x, CPU {cpu:.2f}x")

        sample = [f"b{b:021d}" for b in range(0, args.businesses, max(1, args.businesses // 7))][:7]
        wb = workbench_run(folder / "ws", sample)
        gc.collect()
        python_ok = not args.no_baseline and args.n <= 2_000_000
        py = baseline_run(review_path, folder / "baseline.jsonl", sample) if python_ok else None
        if py is not None and py["matches"] != wb["matches"]:
            raise SystemExit(f"search disagrees: workbench {wb['matches']} vs python {py['matches']}")
        print(f"\n{'query':<34}{'workbench':>12}{'pure Python':>14}{'speed-up':>10}")
        for key, label in [("page", "page: 50 reviews of 1 restaurant"),
                           ("search", f"search: text ILIKE '%{SEARCH_WORD}%'"),
                           ("regexp", "  same, count via regexp_matches 'i'")]:
            base = f"{py[key]:>13.3f}s{py[key] / wb[key]:>9.1f}x" if py else f"{'-':>14}{'-':>10}"
            print(f"{label:<34}{wb[key]:>11.3f}s{base}")
        print(f"(search matched {wb['matches']:,} reviews; page = median of {len(sample)} restaurants)")
        if py is not None:
            print(f"pure-Python import (json loop, sort, JSONL out; no checks, no Parquet): {py['import']:.2f}s")
        load_after = os.getloadavg()
        print(f"load average (1, 5, 15 min): before {', '.join(f'{x:.2f}' for x in load_before)}; "
              f"after {', '.join(f'{x:.2f}' for x in load_after)} ({os.cpu_count()} CPUs)")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Keyword index over 1 M synthetic reviews, next to a pure-Python loop, in one run.

    .venv/bin/python bench/keyword_index.py              # 1,000,000 reviews over 5,000 restaurants
    .venv/bin/python bench/keyword_index.py --n 200000

Synthesises review texts of realistic length (a log-normal number of short sentences: median
~400, mean ~580 characters, like the real Yelp reviews in the shared fixtures: median 396-400,
mean 588-677), ~16 % of them with a G1a keyword sentence, stores them as a dataset in a
temporary workspace (not timed), then times:

- ``build_index``: read the reviews Parquet, match the 40 G1a keywords in one Aho-Corasick
  pass, take ``text_hash`` from the reviews table (stored at import since issue 10), write the
  index Parquet and stats.json (end to end, the lock already verified);
- the same on a reviews table without the ``text_hash`` column (a dataset imported before
  issue 10): sha256 of every text is computed as well;
- ``match_frame``: the matching and hashing on the frame in memory (no I/O);
- the pure-Python loop the issue names: for each review, for each keyword ``kw in text.lower()``,
  plus the sha256 text hash, over a Python list already in memory (no I/O);
- the same loop lower-casing each text once (a fairer baseline).

The bench writes the reviews table with and without ``text_hash`` itself (not timed), whatever
the import writes. All produce the same keyword lists and hashes (checked). Goal (issue 10):
build_index with the stored hashes ≤ 1.5 s and ≥ 10× the pure-Python loop, wall time.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.base.files import write_json_atomic  # noqa: E402
from core.datasets import LOCK_NAME, TABLES, read_lock, require_verified, write_dataset  # noqa: E402
from core.datasets.lock import make_lock  # noqa: E402
from core.tasks import get_task  # noqa: E402
from core.tasks.keyword_index import build_index, kw_column, load_index, match_frame, text_hashes  # noqa: E402
from core.workspace import Workspace  # noqa: E402

SUBJECTS = ["The pad thai", "Our server", "The brisket", "This place", "The hostess", "My burger", "The dumplings",
            "Dessert", "The patio", "The kitchen", "Brunch", "The espresso", "The fries", "Parking", "The music",
            "The menu", "Our table", "The ramen", "The tacos", "The wine list"]
VERBS = ["was", "seemed", "felt", "looked", "tasted", "is", "was honestly", "always is", "came out"]
ADJECTIVES = ["amazing", "bland", "overpriced", "perfect", "cold", "spicy", "slow", "friendly", "rude", "fresh",
              "greasy", "forgettable", "worth the wait", "a little salty", "crowded", "delicious", "too loud",
              "pretty good", "disappointing", "huge", "tiny", "excellent", "average at best", "very fast"]
KEYWORD_SENTENCES = [
    "I told them about my peanut allergy and they were careful.", "The almond croissant is a must.",
    "My son is allergic to tree nuts so we asked a lot of questions.", "They have a gluten free menu.",
    "I had a reaction after the satay and had to use my EpiPen.", "Great place for dietary restrictions.",
    "The staff accommodated my celiac friend.", "Warning: everything is fried in peanut oil.",
    "Best donut shop in the city.", "The pistachio gelato was incredible.", "My lips started to swell.",
    "They could not guarantee no cross-contamination.", "I felt safe eating here with my allergies.",
    "Lactose intolerant friendly options.", "The walnut salad was fresh.", "Cashew chicken was great.",
]


def _pool(rng: np.random.Generator, keywords: tuple[str, ...]) -> list[str]:
    """Keyword-free sentences (checked) to build the non-matching part of every review."""
    sentences = {f"{s} {v} {a}." for s in SUBJECTS for v in VERBS for a in ADJECTIVES}
    clean = sorted(s for s in sentences if not any(kw in s.lower() for kw in keywords))
    rng.shuffle(clean)
    return clean


def synthesise(n: int, *, hit_rate: float = 0.16, seed: int = 7) -> list[str]:
    """``n`` review texts; a share ``hit_rate`` holds one keyword sentence at a random place."""
    rng = np.random.default_rng(seed)
    keywords = get_task("G1a", None).keywords
    clean = _pool(rng, keywords)
    lengths = np.clip(np.rint(rng.lognormal(np.log(14), 0.9, size=n)), 2, 200).astype(np.int64)
    picks = rng.integers(0, len(clean), size=int(lengths.sum()))
    hits = rng.random(n) < hit_rate
    kw_pick = rng.integers(0, len(KEYWORD_SENTENCES), size=n)
    texts, pos = [], 0
    for i in range(n):
        k = int(lengths[i])
        parts = [clean[j] for j in picks[pos : pos + k]]
        pos += k
        if hits[i]:
            parts.insert(int(kw_pick[i]) % (k + 1), KEYWORD_SENTENCES[kw_pick[i]])
        texts.append(" ".join(parts))
    return texts


def python_loop(texts: list[str], keywords: tuple[str, ...], *, lower_once: bool) -> tuple[list, list]:
    """The straightforward baseline: keyword lists and text hashes review by review."""
    found, hashes = [], []
    for text in texts:
        if lower_once:
            low = text.lower()
            found.append([kw for kw in keywords if kw in low])
        else:
            found.append([kw for kw in keywords if kw in text.lower()])
        hashes.append(hashlib.sha256(text.encode("utf-8")).hexdigest()[:16])
    return found, hashes


def _dataset(ws: Workspace, texts: list[str], per_restaurant: int) -> None:
    n = len(texts)
    bids = [f"B{i // per_restaurant:06d}" for i in range(n)]
    reviews = pl.DataFrame({
        "business_id": bids, "review_id": [f"R{i:08d}" for i in range(n)],
        "idx": [i % per_restaurant for i in range(n)], "date": ["2022-06-01 12:00:00"] * n,
        "stars": [4.0] * n, "text": texts,
    }, schema_overrides={"idx": pl.Int32})
    restaurants = pl.DataFrame({"business_id": sorted(set(bids))}).with_columns(name=pl.col("business_id"))
    write_dataset(ws, "bench", restaurants, reviews, sources=[], layout="bench")


def set_text_hash_column(ws: Workspace, name: str, *, stored: bool) -> None:
    """Rewrite the dataset's reviews table with (``stored``) or without the ``text_hash`` column,
    and its lock, whatever the import wrote (not timed)."""
    folder = ws.dataset_dir(name)
    reviews = pl.read_parquet(folder / TABLES[1])
    if ("text_hash" in reviews.columns) != stored:
        reviews = reviews.with_columns(text_hashes(reviews["text"])) if stored else reviews.drop("text_hash")
        reviews.write_parquet(folder / TABLES[1], compression="zstd")
        lock = read_lock(ws, name)
        write_json_atomic(folder / LOCK_NAME, make_lock(folder, name, lock["layout"], lock["sources"], lock["counts"]))
    shutil.rmtree(ws.index_dir(name), ignore_errors=True)  # no current index whose hashes could be reused
    require_verified(ws, name)  # hash the tables once, as any earlier step would have


def _timed(fn, *args, **kwargs):
    """(wall seconds, CPU seconds of this process, result): CPU time is what a shared machine
    cannot inflate; polars may use several cores, so its CPU time can exceed its wall time."""
    w0, c0 = time.perf_counter(), time.process_time()
    out = fn(*args, **kwargs)
    return (time.perf_counter() - w0, time.process_time() - c0), out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=1_000_000, help="number of reviews")
    parser.add_argument("--per-restaurant", type=int, default=200)
    args = parser.parse_args()
    task = get_task("G1a", None)
    print(f"synthesising {args.n:,} reviews ...", flush=True)
    texts = synthesise(args.n)
    mean_len = sum(map(len, texts)) / len(texts)
    with tempfile.TemporaryDirectory() as tmp:
        ws = Workspace(Path(tmp) / "ws").ensure("bench")
        _dataset(ws, texts, args.per_restaurant)
        set_text_hash_column(ws, "bench", stored=True)
        t_build, stats = _timed(build_index, ws, "bench", tasks=["G1a"])
        indexed = load_index(ws, "bench")
        set_text_hash_column(ws, "bench", stored=False)
        t_build_hashing, _ = _timed(build_index, ws, "bench", tasks=["G1a"])
        assert load_index(ws, "bench").equals(indexed), "the index differs with and without stored text hashes"
        frame = pl.DataFrame({"business_id": ["B"] * len(texts), "idx": range(len(texts)), "text": texts})
        t_frame, matched = _timed(match_frame, frame, [task])
    t_loop, (found, hashes) = _timed(python_loop, texts, task.keywords, lower_once=False)
    t_loop1, _ = _timed(python_loop, texts, task.keywords, lower_once=True)
    assert matched[kw_column("G1a")].to_list() == found, "vectorised and loop keyword lists differ"
    assert matched["text_hash"].to_list() == hashes, "vectorised and loop hashes differ"
    assert indexed[kw_column("G1a")].to_list() == found and indexed["text_hash"].to_list() == hashes
    g = stats["tasks"]["G1a"]
    print(f"{args.n:,} reviews, mean {mean_len:.0f} chars, {len(task.keywords)} keywords; "
          f"{g['matches']:,} matches ({g['match_rate_pct']}), {g['restaurants_with_match']:,} restaurants")
    rows = [
        ("build_index (Parquet in, index + stats out)", t_build),
        ("build_index, table without text_hash", t_build_hashing),
        ("match_frame (in memory, hashing)", t_frame),
        ("pure Python: kw in text.lower() per keyword", t_loop),
        ("pure Python: text.lower() once per review", t_loop1),
    ]
    print(f"  {'':<46} {'wall':>8} {'CPU':>8}")
    for label, (wall, cpu) in rows:
        print(f"  {label:<46} {wall:7.2f}s {cpu:7.2f}s")
    for i, kind in enumerate(("wall", "CPU")):
        print(f"  ratio ({kind}) loop / build_index: {t_loop[i] / t_build[i]:5.1f}x   lower-once loop / build_index: "
              f"{t_loop1[i] / t_build[i]:4.1f}x   loop / build_index without text_hash: "
              f"{t_loop[i] / t_build_hashing[i]:5.1f}x   loop / match_frame: {t_loop[i] / t_frame[i]:5.1f}x")
    met = t_build[0] <= 1.5 and t_loop[0] / t_build[0] >= 10
    print(f"  goal (wall): build_index <= 1.5 s and >= 10x: {'met' if met else 'NOT met'}"
          f"  (load average now {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")


if __name__ == "__main__":
    main()

"""Benchmark: scoring 10,000 gold answers with ``tfidf`` vs a plain Python loop, in the same run.

A synthetic gold set of N items is built from the demo set (expected answers extended with
random glossary sentences, so the texts differ) and N answers from them (words dropped and
shuffled, some answers taken from another item). The fast path is
:func:`core.gold.report.score_answers` with the ``tfidf`` method (scikit-learn char n-grams,
vectorised cosine); the baseline is the same scoring with
:func:`core.gold.accuracy.tfidf_similarity_python` (dicts in a loop). Both are checked to agree.
Goal: ≤ 5 s for 10,000 answers.

    .venv/bin/python bench/gold.py [--n 10000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.gold.accuracy import tfidf_similarity_python  # noqa: E402
from core.gold.answers import Answer  # noqa: E402
from core.gold.demo_set import ITEMS, PASSAGES, SYSTEM  # noqa: E402
from core.gold.items import GoldItem  # noqa: E402
from core.gold.report import score_answers, score_sample  # noqa: E402
from core.gold.scoring import GoldConfig  # noqa: E402


def synthetic(n: int, seed: int = 7) -> tuple[list[GoldItem], dict[str, Answer]]:
    rng = random.Random(seed)
    items, answers = [], {}
    for i in range(n):
        _, task, domain, question, expected, must, cite = ITEMS[i % len(ITEMS)]
        extra = " ".join(rng.choice(PASSAGES)[1] for _ in range(rng.randint(0, 3)))
        text = f"{expected} {extra}".strip()
        sid = f"{task}_{i}"
        items.append(GoldItem(sid, ({"role": "system", "content": SYSTEM}, {"role": "user", "content": question}),
                              domain, task, text, tuple(must), cite))
        words = text.split()
        if rng.random() < 0.2:
            words = ITEMS[rng.randrange(len(ITEMS))][4].split()  # a wrong item's answer
        kept = [w for w in words if rng.random() > 0.2]
        if rng.random() < 0.5:
            rng.shuffle(kept)
        answers[sid] = Answer(" ".join(kept))
    return items, answers


def baseline(items: list[GoldItem], answers: dict[str, Answer], config: GoldConfig) -> list[dict]:
    predicted = [answers[i.sample_id].predicted for i in items]
    expected = [i.expected_output for i in items]
    acc = tfidf_similarity_python(predicted, expected)
    patterns = config.compiled_patterns()
    return [score_sample(item, p, a, config, patterns) for item, p, a in zip(items, predicted, acc, strict=True)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    items, answers = synthetic(args.n)
    config = GoldConfig()
    tokens = sum(len(a.predicted.split()) for a in answers.values()) / len(answers)
    print(f"{args.n:,} answers (mean {tokens:.0f} tokens), accuracy by tfidf, all SPEC §8 scores")
    score_answers(items[:50], answers, config, method="tfidf")  # warm-up: imports scikit-learn
    fast_times, fast_cpu, fast = [], [], []
    for _ in range(args.repeat):
        t, c = time.perf_counter(), time.process_time()
        fast = score_answers(items, answers, config, method="tfidf")
        fast_times.append(time.perf_counter() - t)
        fast_cpu.append(time.process_time() - c)
    t, c = time.perf_counter(), time.process_time()
    slow = baseline(items, answers, config)
    slow_time, slow_cpu = time.perf_counter() - t, time.process_time() - c
    diff = max(abs(f["scores"]["overall"] - s["overall"]) for f, s in zip(fast, slow, strict=True))
    same_status = all(f["scores"]["status"] == s["status"] for f, s in zip(fast, slow, strict=True))
    best = min(fast_times)
    print(f"score_answers (tfidf, numpy n-grams + scikit-learn TF-IDF): best {best:.3f} s wall "
          f"({min(fast_cpu):.3f} s CPU), median {statistics.median(fast_times):.3f} s of {args.repeat}")
    print(f"plain Python loop (dict tf-idf):                           {slow_time:.3f} s wall ({slow_cpu:.3f} s CPU)")
    print(f"speed-up {slow_time / best:.1f}x wall, {slow_cpu / min(fast_cpu):.1f}x CPU; "
          f"max |overall difference| {diff:.2e}; same status everywhere: {same_status}")
    print(f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} cores "
          "(other processes share the cores: compare the two lines, not the absolute seconds)")
    print(f"goal ≤ 5 s for 10,000 answers: {'met' if best <= 5.0 * args.n / 10_000 else 'NOT met'}")


if __name__ == "__main__":
    main()

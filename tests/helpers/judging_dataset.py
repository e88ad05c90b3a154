"""A small dataset written for the judging tests: restaurants whose reviews mention allergies or not."""

from __future__ import annotations

import json

import polars as pl

from tests.helpers.llm_server import llm_server  # noqa: F401 - re-exported as a fixture

ALLERGY_TEXTS = (
    "Great curry. I have a peanut allergy and my lips swelled up, so I took Benadryl.",
    "The server asked about allergies and the chef came out to talk about my nut allergy.",
    "My son has a cashew allergy. They assured us it was nut-free but he broke out in hives.",
    "If you have a gluten allergy, be careful here: the fryer is shared.",
    "I ate the satay, my throat started closing and I had to use my EpiPen. We went to the ER.",
    "The waiter rolled his eyes when I mentioned my celiac disease.",
)


PLAIN_TEXTS = ("Lovely patio and friendly staff.", "The noodles were cold and the room was loud.")


def build_judging_dataset(ws, name: str = "d", *, restaurants: int = 2, tmp_path=None) -> list[dict]:
    """Write a dataset of ``restaurants`` restaurants, each with every ALLERGY_TEXTS and
    PLAIN_TEXTS review, build its keyword index, and return the matched reviews' rows."""
    from core.datasets import write_dataset
    from core.tasks.keyword_index import build_index

    rest_rows, review_rows = [], []
    for r in range(restaurants):
        bid = f"biz{r}"
        rest_rows.append({"business_id": bid, "name": f"Restaurant {r}", "categories": "Thai, Restaurants",
                          "city": "Philadelphia", "stars": 4.0, "review_count": 8})
        for i, text in enumerate(ALLERGY_TEXTS + PLAIN_TEXTS):
            review_rows.append({"business_id": bid, "review_id": f"rev-{r}-{i}", "idx": i,
                                "date": f"202{i % 5}-0{1 + i % 9}-01 12:00:00", "stars": float(1 + i % 5),
                                "useful": i, "funny": 0, "cool": 0, "text": text, "user_id": f"u{i}"})
    source = ws.root / f"{name}_source.json"
    source.write_text(json.dumps({"restaurants": rest_rows, "reviews": review_rows}))
    write_dataset(ws, name, pl.DataFrame(rest_rows), pl.DataFrame(review_rows), sources=[source], layout="test")
    build_index(ws, name, tasks=["G1a"])
    n = len(ALLERGY_TEXTS)
    return [row for row in review_rows if int(row["idx"]) < n]

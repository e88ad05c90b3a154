"""The tiny GT workspace (:func:`build_gt_workspace`) of the GT views', pages' and browser tests.
Expected G1a v1 results (SPEC §3.1; the arithmetic is in the comments):

- Flip Bistro (Italian → CUISINE_MODIFIER 1, CUISINE_IMPACT 0.5): idx 5 positive; idx 30 severe
  firsthand, 2024, 4 stars, 0 useful (weight (5 − 4) + ln 1 = 1).
  K=25: 1 judged review → density 0.1 → confidence 1 − 0.3·0.9 = 0.73; SAFETY_IMPACT 0.73;
        RAW = 2.5 − 0.73 + 0.5 = 2.27 → Low Risk.
  K=50: INCIDENT_IMPACT = 15 · 0.85 (age 1) · 1 = 12.75; confidence 1 − 0.3·0.8 = 0.76;
        RAW = 2.5 + 12.75 − 0.76 + 0.5 = 14.99 → Critical Risk.
        With idx 30 overridden to severity none: RAW = 2.5 − 0.76 + 0.5 = 2.24 → Low Risk.
- Calm Cafe (Cafes): idx 3 positive → RAW 2.27 at every K → Low Risk.
- Mild Diner (Diners): idx 60 mild firsthand, 2023, 4 stars → K ≥ 100: INCIDENT_IMPACT
  2 · 0.7 · 1 = 1.4, confidence 0.73, no safety credit: RAW = 2.5 + 1.4 + 0.5 = 4.4 → High Risk;
  K ≤ 50: RAW 3.0 → Low Risk.

Review idx 30 of Flip Bistro carries HTML/script in its text and excerpt, to prove it is shown inert.
"""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from core.datasets import write_dataset
from core.judgments import append_judgments
from core.workspace import Workspace

DATASET, TASK, JUDGE = "tiny", "G1a", "test-judge"
FLIP, CALM, MILD = "biz-flip", "biz-calm", "biz-mild"
SCRIPT_TEXT = "I had <script>alert('x')</script> anaphylaxis & an <b>EpiPen</b> after the peanut satay."
SCRIPT_EXCERPT = "anaphylaxis & an <b>EpiPen</b>"
N_REVIEWS = 80

RESTAURANTS = [
    {"business_id": FLIP, "name": "Flip Bistro", "categories": "Italian, Restaurants", "city": "Tucson", "stars": 4.0,
     "review_count": N_REVIEWS},
    {"business_id": CALM, "name": "Calm Cafe", "categories": "Cafes", "city": "Tucson", "stars": 4.5,
     "review_count": N_REVIEWS},
    {"business_id": MILD, "name": "Mild Diner", "categories": "Diners", "city": "Reno", "stars": 3.5,
     "review_count": N_REVIEWS},
]
SPECIAL = {  # (business_id, idx) -> (text, date, stars, judgment fields, excerpt)
    (FLIP, 5): ("The server asked about my nut allergy and the chef came out to check.", "2024-02-01 12:00:00", 5.0,
                ("none", "none", "positive"), "asked about my nut allergy"),
    (FLIP, 30): (SCRIPT_TEXT, "2024-05-01 10:00:00", 4.0, ("severe", "firsthand", "none"), SCRIPT_EXCERPT),
    (CALM, 3): ("They were careful with my allergy and changed gloves.", "2024-03-01 12:00:00", 5.0,
                ("none", "none", "positive"), "careful with my allergy"),
    (MILD, 60): ("My stomach was upset after the almond cake.", "2023-06-01 12:00:00", 4.0,
                 ("mild", "firsthand", "none"), "My stomach was upset"),
}


def build_gt_workspace(root: Path) -> Workspace:
    """Write the tiny dataset and its judgments into a new workspace at ``root``."""
    ws = Workspace(root).ensure("gt-tests")
    reviews = []
    for rest in RESTAURANTS:
        bid = rest["business_id"]
        for idx in range(N_REVIEWS):
            text, date, stars, _, _ = SPECIAL.get((bid, idx), ("Nice food and a calm room.", "2022-01-15 12:00:00",
                                                               4.0, None, None))
            reviews.append({"business_id": bid, "review_id": f"{bid}-r{idx}", "idx": idx, "date": date,
                            "stars": stars, "useful": 0, "funny": 0, "cool": 0, "text": text, "user_id": f"u{idx}"})
    source = root / "tiny_source.json"
    source.write_text(json.dumps({"restaurants": RESTAURANTS, "reviews": reviews}))
    write_dataset(ws, DATASET, pl.DataFrame(RESTAURANTS), pl.DataFrame(reviews), sources=[source], layout="test")
    records = [
        {"business_id": bid, "review_id": f"{bid}-r{idx}", "idx": idx, "prompt_version": "test",
         "fields": dict(zip(("incident_severity", "account_type", "safety_interaction"), fields, strict=True)),
         "excerpt": excerpt}
        for (bid, idx), (_, _, _, fields, excerpt) in SPECIAL.items()
    ]
    append_judgments(ws, DATASET, TASK, JUDGE, records)
    return ws

"""Hand-built judgments for policy tests: one restaurant's reviews as a judgment frame, and the
verdict and score of a policy at each K."""

from __future__ import annotations

import polars as pl

from core.ground_truth import compute_policy_gt_frame

HEAD = "dev-ADDM/head"  # ADDM's later policies and term libraries under the fixtures folder
KS = [25, 50, 100, 200, None]
FIELDS = ("account_type", "incident_severity", "staff_knowledge", "accommodation_level", "staff_response",
          "restriction_type", "meeting_outcome", "professionalism", "conversation_suitability", "service_efficiency",
          "privacy_level", "assurance_claim", "illness_reported", "is_relevant")
SCHEMA = {"business_id": pl.Utf8, "review_id": pl.Utf8, "idx": pl.Int64, "date": pl.Utf8,
          **{f: pl.Utf8 for f in FIELDS}}
REST = pl.DataFrame({"business_id": ["a", "b", "c", "d"], "name": ["A", "B", "C", "D"],
                     "categories": ["Thai", "Pizza", None, "Bars"], "n_reviews": [300, 300, 300, 300]})


def judgments(rows: list[dict]) -> pl.DataFrame:
    """Restaurant "a"'s reviews, one per row (relevant unless a row says otherwise, dated 2021-06-01)."""
    out = []
    for n, r in enumerate(rows):
        row = {"business_id": "a", "review_id": f"r{n}", "idx": n, "date": "2021-06-01 10:00:00",
               "is_relevant": "true", **r}
        out.append({k: row.get(k) for k in SCHEMA})
    return pl.DataFrame(out, schema=SCHEMA)


def verdicts_by_k(policy, rows, bid="a") -> dict:
    """{K: (verdict, score)} of ``policy`` on ``rows`` for restaurant ``bid``."""
    frame = compute_policy_gt_frame(judgments(rows), REST, policy, KS).filter(pl.col("business_id") == bid)
    return {r["k"]: (r["verdict"], r["score"]) for r in frame.iter_rows(named=True)}

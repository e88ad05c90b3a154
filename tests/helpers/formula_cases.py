"""Hand-made judgment frames for the GT formulas' tests: one judged review (`j`), a frame of them, and the shared case (SPEC §3.1, §3.2)."""

from __future__ import annotations

import polars as pl

SCHEMA = {
    "business_id": pl.Utf8, "review_id": pl.Utf8, "idx": pl.Int64, "date": pl.Utf8, "stars": pl.Float64,
    "useful": pl.Int64, "incident_severity": pl.Utf8, "account_type": pl.Utf8, "safety_interaction": pl.Utf8,
    "excerpt": pl.Utf8, "parse_error": pl.Utf8,
}


def judgments(rows: list[dict]) -> pl.DataFrame:
    full = [{k: r.get(k) for k in SCHEMA} for r in rows]
    return pl.DataFrame(full, schema=SCHEMA)


def j(bid, idx, sev="none", acc="none", inter="none", date="2024-01-01 00:00:00", stars=4.0, useful=0, **kw):
    return {"business_id": bid, "review_id": f"{bid}-{idx}", "idx": idx, "date": date, "stars": stars,
            "useful": useful, "incident_severity": sev, "account_type": acc, "safety_interaction": inter, **kw}


RESTAURANTS = pl.DataFrame({
    "business_id": ["a", "b", "c"],
    "name": ["Alpha Thai", "Beta Pizza", "Gamma"],
    "categories": ["Thai, Restaurants", "Pizza, Italian, Breakfast & Brunch", None],
})


CASE = judgments([
    j("a", 0, "moderate", "firsthand", "negative", date="2024-06-01 10:00:00", stars=1.0, useful=3),
    j("a", 1, "mild", "firsthand", date="2021-01-01 10:00:00", stars=4.0, useful=0),
    j("a", 2, inter="positive", date="2023-02-02 10:00:00", stars=5.0, useful=1),
    j("a", 3, "severe", "secondhand", "betrayal", date="2019-05-05 10:00:00"),
])



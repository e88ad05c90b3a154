"""G1a's formulas, v1 (SPEC §3.1) and v2 (§3.2): their constants, the three set-wise stages
(per-review columns, per-incident columns, aggregations over the first K reviews) and the
arithmetic from aggregates to score and verdict, in SPEC's left-to-right order."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import polars as pl

from core.ground_truth.formula_base import exact_div, verdict_expr

COMMON_CONSTANTS: dict[str, Any] = {
    "SEVERITY_POINTS": {"mild": 2, "moderate": 5, "severe": 15},
    "INCIDENT_ACCOUNT_TYPE": "firsthand",
    "CUISINE_RISK": {
        "Thai": 2.0, "Vietnamese": 1.8, "Chinese": 1.5, "Asian Fusion": 1.5, "Indian": 1.3,
        "Japanese": 1.2, "Korean": 1.2, "Mexican": 1.0, "Italian": 0.5, "American (Traditional)": 0.5,
        "American (New)": 0.5, "Pizza": 0.5, "Sandwiches": 0.5, "Breakfast & Brunch": 0.6,
    },
    "CUISINE_FLOOR": 1.0,
    "DEFAULT_INCIDENT_YEAR": 2020,
    "REFERENCE_YEAR": 2025,
    "DECAY_PER_YEAR": 0.15,
    "DECAY_FLOOR": 0.3,
    "MAX_STARS": 5.0,
    "DEFAULT_STARS": 3.0,
    "DEFAULT_USEFUL": 0,
    "RECENT_YEAR": 2023,
    "SCORE_MIN": 0.0,
    "SCORE_MAX": 20.0,
    "HIGH_THRESHOLD": 4.0,
    "CRITICAL_THRESHOLD": 8.0,
}

G1A_COUNTS = (
    "n_mild", "n_moderate", "n_severe", "n_positive", "n_negative", "n_betrayal",
    "n_allergy_reviews", "n_recent",
)


def year_expr(date: pl.Expr) -> pl.Expr:
    """The year of "YYYY-…" dates: the first 4 characters as a number ≥ 1000, else null.

    The same rule as :func:`core.ground_truth.policies.review_year` (cheaper than a regex on
    1 M dates: one slice and one cast).
    """
    year = date.cast(pl.Utf8).str.slice(0, 4).cast(pl.Int64, strict=False)
    return pl.when(year >= 1000).then(year)


def g1a_review_columns(c: Mapping[str, Any]) -> list[pl.Expr]:
    """Per judged review (all rows): the incident flag and the safety-interaction flags."""
    severities = list(c["SEVERITY_POINTS"])
    is_incident = (pl.col("account_type") == c["INCIDENT_ACCOUNT_TYPE"]) & pl.col("incident_severity").is_in(severities)
    interaction = pl.col("safety_interaction")
    return [
        is_incident.fill_null(False).alias("is_incident"),
        (interaction == "positive").fill_null(False).alias("is_positive"),
        (interaction == "negative").fill_null(False).alias("is_negative"),
        (interaction == "betrayal").fill_null(False).alias("is_betrayal"),
    ]


def g1a_incident_columns(c: Mapping[str, Any]) -> list[pl.Expr]:
    """Per incident review only (``is_incident``): year and credibility weight.

    An unparsable date (not starting with a 4-digit year) counts as DEFAULT_INCIDENT_YEAR, as in
    the reference implementation; missing stars count as DEFAULT_STARS, missing useful as
    DEFAULT_USEFUL. Computed on incidents only: parsing 1 M dates would cost more than all the
    rest of a GT.
    """
    stars = pl.col("stars").cast(pl.Float64).fill_null(float(c["DEFAULT_STARS"]))
    useful = pl.col("useful").cast(pl.Float64).fill_null(float(c["DEFAULT_USEFUL"]))
    return [
        year_expr(pl.col("date")).fill_null(c["DEFAULT_INCIDENT_YEAR"]).alias("review_year"),
        ((float(c["MAX_STARS"]) - stars) + (useful + 1.0).log()).alias("review_weight"),
    ]


def g1a_aggregations(c: Mapping[str, Any]) -> dict[str, tuple[str, str, pl.Expr]]:
    """Per (restaurant, K): name → (``"sum"`` | ``"max"``, scope, per-review value).

    Aggregates are sums or maxima of per-review values, so the engine aggregates each review once
    and accumulates over K (see :func:`core.ground_truth.compute.aggregate_cumulative`). Scope
    ``"all"`` runs over every judged review, ``"incident"`` over incident reviews only (where the
    incident columns exist).
    """
    sev = pl.col("incident_severity")

    def count(flag: pl.Expr) -> pl.Expr:  # a Boolean sum is a count
        return flag.fill_null(False)

    return {
        "n_mild": ("sum", "incident", count(sev == "mild")),
        "n_moderate": ("sum", "incident", count(sev == "moderate")),
        "n_severe": ("sum", "incident", count(sev == "severe")),
        "n_positive": ("sum", "all", count(pl.col("is_positive"))),
        "n_negative": ("sum", "all", count(pl.col("is_negative"))),
        "n_betrayal": ("sum", "all", count(pl.col("is_betrayal"))),
        "n_allergy_reviews": ("sum", "all", pl.lit(True)),
        "most_recent_incident_year": ("max", "incident", pl.col("review_year")),
        "total_incident_weight": ("sum", "incident", pl.col("review_weight")),
        "n_recent": ("sum", "incident", count(pl.col("review_year") >= c["RECENT_YEAR"])),
    }


def _shared_primitives(df: pl.DataFrame, c: Mapping[str, Any]) -> pl.DataFrame:
    """n_total_incidents, most_recent_incident_year, incident_age, recency_decay, credibility."""
    n_total = pl.col("n_total_incidents")
    return (
        df.with_columns(
            (pl.col("n_mild") + pl.col("n_moderate") + pl.col("n_severe")).alias("n_total_incidents"),
            pl.col("most_recent_incident_year").fill_null(c["DEFAULT_INCIDENT_YEAR"]).cast(pl.Int64),
            pl.col("total_incident_weight").fill_null(0.0).cast(pl.Float64),
        )
        .with_columns(
            (c["REFERENCE_YEAR"] - pl.col("most_recent_incident_year")).alias("incident_age"),
            pl.when(n_total > 0)
            .then(pl.col("total_incident_weight") / n_total.cast(pl.Float64))
            .otherwise(1.0)
            .alias("credibility_factor"),
        )
        .with_columns(
            pl.max_horizontal(pl.lit(c["DECAY_FLOOR"]), 1.0 - pl.col("incident_age") * c["DECAY_PER_YEAR"]).alias(
                "recency_decay"
            )
        )
    )


def _final(df: pl.DataFrame, c: Mapping[str, Any]) -> pl.DataFrame:
    score = pl.col("raw_risk").clip(c["SCORE_MIN"], c["SCORE_MAX"])
    return df.with_columns(score.alias("final_risk_score")).with_columns(
        verdict_expr(pl.col("final_risk_score"), c).alias("verdict")
    )


# ---------------------------------------------------------------------------------------------
# v1 (xnot)
# ---------------------------------------------------------------------------------------------
V1_CONSTANTS: dict[str, Any] = {
    **COMMON_CONSTANTS,
    "POSITIVE_CREDIT": 1.0,
    "NEGATIVE_PENALTY": 0.5,
    "BETRAYAL_PENALTY": 5.0,
    "DENSITY_REVIEWS": 10.0,
    "CONFIDENCE_WEIGHT": 0.3,
    "BASE_RISK": 2.5,
    "CUISINE_IMPACT_WEIGHT": 0.5,
    "BETRAYAL_EXTRA_PENALTY": 3.0,
}


def compute_v1(df: pl.DataFrame, c: Mapping[str, Any]) -> pl.DataFrame:
    """SPEC §3.1, from the aggregates of :func:`g1a_aggregations` (unrounded)."""
    p = c["SEVERITY_POINTS"]
    df = _shared_primitives(df, c).with_columns(
        (pl.col("n_mild") * p["mild"] + pl.col("n_moderate") * p["moderate"] + pl.col("n_severe") * p["severe"])
        .cast(pl.Float64)
        .alias("incident_score"),
        (
            pl.col("n_positive") * c["POSITIVE_CREDIT"]
            - pl.col("n_negative") * c["NEGATIVE_PENALTY"]
            - pl.col("n_betrayal") * c["BETRAYAL_PENALTY"]
        ).alias("safety_credit"),
        pl.min_horizontal(pl.lit(1.0), exact_div(pl.col("n_allergy_reviews"), c["DENSITY_REVIEWS"])).alias(
            "review_density"
        ),
    )
    df = df.with_columns(
        (1.0 - c["CONFIDENCE_WEIGHT"] * (1.0 - pl.col("review_density"))).alias("confidence_penalty"),
        (pl.col("incident_score") * pl.col("recency_decay") * pl.col("credibility_factor")).alias("incident_impact"),
        (pl.col("cuisine_modifier") * c["CUISINE_IMPACT_WEIGHT"]).alias("cuisine_impact"),
    ).with_columns((pl.col("safety_credit") * pl.col("confidence_penalty")).alias("safety_impact"))
    df = df.with_columns(
        (
            c["BASE_RISK"] + pl.col("incident_impact") - pl.col("safety_impact") + pl.col("cuisine_impact")
            - pl.col("n_betrayal") * c["BETRAYAL_EXTRA_PENALTY"]
        ).alias("raw_risk")
    )
    return _final(df, c)


V1_FIELDS = (
    "n_mild", "n_moderate", "n_severe", "n_total_incidents", "n_positive", "n_negative", "n_betrayal",
    "incident_score", "safety_credit", "cuisine_modifier", "n_allergy_reviews", "review_density",
    "confidence_penalty", "most_recent_incident_year", "incident_age", "recency_decay",
    "total_incident_weight", "credibility_factor", "incident_impact", "safety_impact", "cuisine_impact",
    "raw_risk", "final_risk_score", "verdict",
)
V1_ROUNDING = {
    **dict.fromkeys(
        ("confidence_penalty", "recency_decay", "total_incident_weight", "credibility_factor",
         "incident_impact", "safety_impact", "cuisine_impact", "raw_risk"),
        3,
    ),
    "final_risk_score": 2,
}


# ---------------------------------------------------------------------------------------------
# v2 (xnot "G1a-v2")
# ---------------------------------------------------------------------------------------------
V2_CONSTANTS: dict[str, Any] = {
    **COMMON_CONSTANTS,
    "TRUST_BASE": 1.0,
    "TRUST_POSITIVE": 0.1,
    "TRUST_NEGATIVE": 0.2,
    "TRUST_BETRAYAL": 0.5,
    "TRUST_MIN": 0.1,
    "TRUST_MAX": 1.0,
    "MILD_BASE": 2.0,
    "MILD_TRUST_OFFSET": 1.5,
    "MODERATE_BASE": 5.0,
    "MODERATE_TRUST_OFFSET": 1.3,
    "MODERATE_TRUST_SLOPE": 0.3,
    "SEVERE_WEIGHT": 15.0,
    "TRAJECTORY_RISING_RATIO": 0.7,
    "TRAJECTORY_RISING": 1.3,
    "TRAJECTORY_FADING_RATIO": 0.3,
    "TRAJECTORY_FADING": 0.7,
    "SILENCE_WEIGHT": 0.5,
    "CUISINE_IMPACT_WEIGHT": 0.5,
    "TRUST_IMPACT_WEIGHT": 3.0,
    "POSITIVE_CREDIT_WEIGHT": 0.5,
    "BASE_RISK": 2.0,
}


def compute_v2(df: pl.DataFrame, c: Mapping[str, Any]) -> pl.DataFrame:
    """SPEC §3.2, from the aggregates of :func:`g1a_aggregations` (unrounded)."""
    n_total = pl.col("n_total_incidents")
    df = _shared_primitives(df, c).with_columns(
        (
            c["TRUST_BASE"] + pl.col("n_positive") * c["TRUST_POSITIVE"] - pl.col("n_negative") * c["TRUST_NEGATIVE"]
            - pl.col("n_betrayal") * c["TRUST_BETRAYAL"]
        ).alias("trust_raw"),
        (n_total - pl.col("n_recent")).alias("n_old"),
        pl.when(n_total > 0).then(pl.col("n_recent") / n_total.cast(pl.Float64)).otherwise(0.0).alias("recent_ratio"),
    )
    trust = pl.col("trust_score")
    ratio = pl.col("recent_ratio")
    df = df.with_columns(pl.col("trust_raw").clip(c["TRUST_MIN"], c["TRUST_MAX"]).alias("trust_score")).with_columns(
        (c["MILD_BASE"] * (c["MILD_TRUST_OFFSET"] - trust)).alias("mild_weight"),
        (c["MODERATE_BASE"] * (c["MODERATE_TRUST_OFFSET"] - c["MODERATE_TRUST_SLOPE"] * trust)).alias("moderate_weight"),
        pl.lit(float(c["SEVERE_WEIGHT"])).alias("severe_weight"),
        pl.when(ratio > c["TRAJECTORY_RISING_RATIO"]).then(c["TRAJECTORY_RISING"])
        .when((ratio < c["TRAJECTORY_FADING_RATIO"]) & (n_total > 0)).then(c["TRAJECTORY_FADING"])
        .otherwise(1.0)
        .cast(pl.Float64)
        .alias("trajectory_multiplier"),
        pl.when(pl.col("n_allergy_reviews") == 0)
        .then(c["SILENCE_WEIGHT"] * pl.col("cuisine_modifier"))
        .otherwise(0.0)
        .alias("silence_penalty"),
        (c["TRUST_IMPACT_WEIGHT"] * (1.0 - trust)).alias("trust_impact"),
        (c["POSITIVE_CREDIT_WEIGHT"] * pl.col("n_positive") * trust).alias("positive_credit"),
    )
    df = df.with_columns(
        (
            pl.col("n_mild") * pl.col("mild_weight") + pl.col("n_moderate") * pl.col("moderate_weight")
            + pl.col("n_severe") * pl.col("severe_weight")
        ).alias("adjusted_incident_score"),
        (c["CUISINE_IMPACT_WEIGHT"] * pl.col("cuisine_modifier") + pl.col("silence_penalty")).alias("cuisine_impact"),
    ).with_columns(
        (
            pl.col("adjusted_incident_score") * pl.col("trajectory_multiplier") * pl.col("recency_decay")
            * pl.col("credibility_factor")
        ).alias("incident_impact")
    )
    df = df.with_columns(
        (
            c["BASE_RISK"] + pl.col("incident_impact") + pl.col("trust_impact") + pl.col("cuisine_impact")
            - pl.col("positive_credit")
        ).alias("raw_risk")
    )
    return _final(df, c)


V2_FIELDS = (
    "n_mild", "n_moderate", "n_severe", "n_total_incidents", "n_positive", "n_negative", "n_betrayal",
    "n_allergy_reviews", "trust_raw", "trust_score", "mild_weight", "moderate_weight", "severe_weight",
    "adjusted_incident_score", "n_recent", "n_old", "recent_ratio", "trajectory_multiplier",
    "cuisine_modifier", "silence_penalty", "cuisine_impact", "most_recent_incident_year", "incident_age",
    "recency_decay", "total_incident_weight", "credibility_factor", "incident_impact", "trust_impact",
    "positive_credit", "raw_risk", "final_risk_score", "verdict",
)
# "same rounding rule as v1": every derived non-integer value to 3 decimals, the final score to 2.
V2_ROUNDING = {
    **dict.fromkeys(
        ("trust_raw", "trust_score", "mild_weight", "moderate_weight", "adjusted_incident_score",
         "recent_ratio", "silence_penalty", "cuisine_impact", "recency_decay", "total_incident_weight",
         "credibility_factor", "incident_impact", "trust_impact", "positive_credit", "raw_risk"),
        3,
    ),
    "final_risk_score": 2,
}

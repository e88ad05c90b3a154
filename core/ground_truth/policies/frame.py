"""Set-wise policy GT (SPEC §3.3): every restaurant × every K with polars, from a :class:`Policy`.

The expressions are generated from the same definitions the pure :meth:`Policy.evaluate` reads
(matches, signals, points, rules), and the two are tested against each other on random judgments.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

from core.ground_truth.engine import (
    K_ALL_LIMIT,
    aggregate_by_k,
    aggregate_cumulative,
    encode_restaurants,
    k_frame,
    prepare_judgments,
    prepare_restaurants,
    restaurant_k_grid,
    sorted_ks,
)
from core.ground_truth.formulas import year_expr
from core.ground_truth.ks import KSpec, normalize_ks
from core.ground_truth.policies.loader import get_policy

if TYPE_CHECKING:
    from core.ground_truth.policies import ByK, Condition, Match, Policy

INCIDENT_STRUCT = pl.Struct({
    "review_id": pl.Utf8, "idx": pl.Int64, "severity": pl.Utf8, "base_points": pl.Float64,
    "modifiers": pl.List(pl.Utf8), "total_points": pl.Float64,
})


def _norm(name: str) -> pl.Expr:
    return pl.col(name).cast(pl.Utf8).str.strip_chars().str.to_lowercase()


def match_expr(match: Match, columns: list[str]) -> pl.Expr:
    """The polars form of :func:`core.ground_truth.policies.matches` (a missing field never matches)."""
    parts = []
    for name, values in match:
        if name not in columns:
            return pl.lit(False)
        value = pl.col(f"_n_{name}") if f"_n_{name}" in columns else _norm(name)
        parts.append(value.is_in(list(values)).fill_null(False))
    return pl.all_horizontal(parts) if parts else pl.lit(True)


def referenced_fields(policy: Policy) -> list[str]:
    """Every judgment field a policy compares (incident, signals, conditions, severity)."""
    matches = [policy.incident_when, policy.incident_unless, *policy.incident_any,
               *(m for s in policy.signals.values() for m in s.any_of),
               *(c.where for r in policy.rules for c in r.conditions)]
    names = [name for m in matches for name, _ in m]
    extra = [policy.relevance_field] if policy.relevance_field else []
    return list(dict.fromkeys([*names, policy.severity_field, *extra]))


def normalized_columns(policy: Policy, frame: pl.DataFrame) -> pl.DataFrame:
    """The frame plus ``_n_<field>`` (stripped, lower-cased text) of every field the policy
    compares: each string column is normalised once, not once per condition."""
    exprs = []
    for f in (f for f in referenced_fields(policy) if f in frame.columns):
        text = frame[f].cast(pl.Utf8)
        distinct = text.unique()
        normal = distinct.str.strip_chars().str.to_lowercase()
        if (distinct.eq_missing(normal)).all():  # stored judgments are normalised already: no copy
            exprs.append(pl.col(f).cast(pl.Utf8).alias(f"_n_{f}"))
        else:
            exprs.append(_norm(f).alias(f"_n_{f}"))
    return frame.with_columns(exprs)


def _review_columns(policy: Policy, columns: list[str]) -> list[pl.Expr]:
    unless = match_expr(policy.incident_unless, columns) if policy.incident_unless else pl.lit(False)
    inc = match_expr(policy.incident_when, columns) & ~unless
    if policy.incident_any:
        inc = inc & pl.any_horizontal([match_expr(m, columns) for m in policy.incident_any])
    exprs = [inc.alias("_inc")]
    for name, signal in policy.signals.items():
        alts = [match_expr(m, columns) for m in signal.any_of]
        exprs.append((pl.any_horizontal(alts) if alts else pl.lit(False)).alias(f"_sig_{name}"))
    exprs.append(_age_expr(policy).alias("_age"))
    sev = pl.col(f"_n_{policy.severity_field}") if f"_n_{policy.severity_field}" in columns else (
        _norm(policy.severity_field) if policy.severity_field in columns else pl.lit(None, dtype=pl.Utf8))
    exprs.append(sev.alias("_sev"))
    return exprs


def _age_expr(policy: Policy) -> pl.Expr:
    """Age of each review for the recency bands: whole years against the reference year, or
    exact years (days / 365.25) against the policy's reference date; null when unknown."""
    r = policy.recency
    if r is None:
        return pl.lit(None, dtype=pl.Float64)
    if r.reference_date is not None:
        day = pl.col("date").cast(pl.Utf8).str.slice(0, 10).str.to_date("%Y-%m-%d", strict=False)
        return (pl.lit(r.reference_date).str.to_date("%Y-%m-%d") - day).dt.total_days() / 365.25
    if r.reference_year is None:
        return pl.lit(None, dtype=pl.Float64)
    return r.reference_year - year_expr(pl.col("date"))


def by_k_expr(default: float, by_k: ByK) -> pl.Expr:
    """The threshold of every row's K (column ``k``; null = all reviews uses the default)."""
    expr: pl.Expr = pl.lit(default)
    for kk, value in reversed(by_k):
        expr = pl.when(pl.col("k") == kk).then(pl.lit(value)).otherwise(expr)
    return expr


def condition_expr(cond: Condition, column: str) -> pl.Expr:
    """Whether a condition holds on every row (restaurant × K), its value read from ``column``."""
    value = pl.col(column).fill_null(0) if column != "score" else pl.col("score")
    if cond.score_at_most is not None:
        return value <= by_k_expr(cond.score_at_most, cond.score_by_k)
    if cond.score_at_least is not None:
        return value >= by_k_expr(cond.score_at_least, cond.score_by_k)
    return value >= by_k_expr(cond.at_least, cond.at_least_by_k)


def _modifier_labels(policy: Policy) -> pl.Expr:
    """``_modifiers``: the labels of the modifiers that hold on each review (a list column; building
    lists is slow in polars, so the bucketed path makes them for the incident rows only)."""
    labels = [pl.when(pl.col(f"_sig_{m.signal}")).then(pl.lit(m.label)) for m in policy.modifiers]
    modifiers = pl.concat_list(labels).list.drop_nulls() if labels else pl.lit([], dtype=pl.List(pl.Utf8))
    return modifiers.alias("_modifiers")


def _points_columns(policy: Policy, discard: pl.Expr, *, labels: bool = True) -> list[pl.Expr]:
    points = {k: float(v) for k, v in policy.severity_points.items()}
    base = pl.col("_sev").replace_strict(points, default=0.0, return_dtype=pl.Float64) if points else pl.lit(0.0)
    mods = pl.lit(0.0)
    for m in policy.modifiers:
        mods = mods + pl.when(pl.col(f"_sig_{m.signal}")).then(m.points).otherwise(0.0)
    weight = pl.lit(1.0)
    r = policy.recency
    if r is not None:
        age = pl.col("_age")
        banded: pl.Expr = pl.lit(r.bands[-1][1])
        for max_age, w in reversed(r.bands):  # built from the last band, so the first band wins
            banded = pl.when(pl.lit(True) if max_age is None else age <= max_age).then(w).otherwise(banded)
        weight = pl.when(age.is_null()).then(1.0).otherwise(banded)
        if r.discard_older_than is not None:
            old = age.is_not_null() & (age > r.discard_older_than)
            weight = pl.when(discard & old).then(0.0).otherwise(weight)
    return [
        base.alias("_base"),
        *([_modifier_labels(policy)] if labels else []),
        ((base + mods) * weight).alias("_points"),
    ]


def _condition_flags(policy: Policy, columns: list[str]) -> list[tuple[str, pl.Expr]]:
    """(column, per-review flag) of every count condition: the review counts towards it."""
    flags = []
    for i, rule in enumerate(policy.rules):
        for j, cond in enumerate(rule.conditions):
            if cond.is_score:
                continue
            flag = pl.col("_inc") if cond.count == "incidents" else pl.lit(True)
            flag = flag & match_expr(cond.where, columns)
            for s in cond.signals:
                flag = flag & pl.col(f"_sig_{s}")
            flags.append((f"_c{i}_{j}", flag))
    return flags


def _condition_exprs(policy: Policy, columns: list[str]) -> list[pl.Expr]:
    return [flag.sum().alias(name) for name, flag in _condition_flags(policy, columns)]


def _verdict_exprs(policy: Policy) -> tuple[pl.Expr, pl.Expr]:
    pairs = []
    for i, rule in enumerate(policy.rules):
        holds = [condition_expr(c, "score" if c.is_score else f"_c{i}_{j}") for j, c in enumerate(rule.conditions)]
        if rule.logic == "all":
            if holds:
                pairs.append((pl.all_horizontal(holds), rule.verdict, " and ".join(c.text for c in rule.conditions)))
            continue
        pairs.extend((h, rule.verdict, c.text) for h, c in zip(holds, rule.conditions, strict=True))
    verdict: pl.Expr = pl.lit(policy.default_verdict)
    rule_text: pl.Expr = pl.lit(None, dtype=pl.Utf8)
    for held, value, text in reversed(pairs):  # built from the last rule, so the first match wins
        verdict = pl.when(held).then(pl.lit(value)).otherwise(verdict)
        rule_text = pl.when(held).then(pl.lit(text)).otherwise(rule_text)
    return verdict, rule_text


def _discard_flags(policy: Policy, reviews: pl.DataFrame, ks: list[int | None]) -> pl.DataFrame | None:
    r = policy.recency
    if r is None or r.discard_signal is None:
        return None
    improved = pl.col(f"_sig_{r.discard_signal}") & pl.col("_age").is_not_null() & (pl.col("_age") <= r.discard_within)
    counts = aggregate_by_k(reviews, [improved.sum().alias("_improved")], ks)
    return counts.select("business_id", "_limit", (pl.col("_improved") >= r.discard_min_reviews).alias("_discard"))


def compute_policy_gt_frame(
    judgments: pl.DataFrame, restaurants: pl.DataFrame, policy: Policy | str, ks: KSpec,
    *, reference_year: int | None = None,
) -> pl.DataFrame:
    """Policy GT of every restaurant for every K (set-wise; same result as ``Policy.evaluate``).

    Per-K thresholds are whole-column expressions on ``k``; a policy with a relevance field
    looks only at judgments where it is true. ``reference_year`` is the recency reference when
    the policy sets none (default: the newest year among the judgments' dates; the workspace
    wrapper passes the dataset's newest review year); the frame then has a ``reference_year``
    column recording it.

    Returns:
        business_id, name, categories, k, n_reviews, n_judgments, n_incidents, score, verdict,
        triggered_rule, cuisine_modifier, incidents (list of {review_id, idx, severity,
        base_points, modifiers, total_points}), policy_id, formula_version (+ reference_year);
        sorted by (k, name).
    """
    p = get_policy(policy, None) if isinstance(policy, str) else policy  # a name is a built-in's
    klist = normalize_ks(ks)
    valid = prepare_judgments(judgments, (), check_keys=False)  # keys: checked in the aggregation paths
    rest = prepare_restaurants(restaurants)
    used_reference = None
    if p.needs_reference:
        used_reference = reference_year if reference_year is not None else newest_year(valid)
        if used_reference is not None:
            p = p.with_reference_year(used_reference)
    valid = normalized_columns(p, valid)
    if p.relevance_field is not None:
        name = f"_n_{p.relevance_field}"
        relevant = pl.col(name) == "true" if name in valid.columns else pl.lit(False)
        valid = valid.filter(relevant.fill_null(False))
    reviews = valid.with_columns(_review_columns(p, valid.columns))
    cross_join = p.recency is not None and p.recency.discard_signal is not None
    if cross_join:
        frame = _aggregate_cross_join(p, reviews, rest, klist, valid.columns)
    else:  # rows come out in the final order: K ascending (all last), then name, business_id
        frame = _aggregate_bucketed(p, reviews, rest, klist, valid.columns)
    incidents = pl.col("incidents")
    if frame["incidents"].null_count():
        incidents = incidents.fill_null(pl.lit([], dtype=pl.List(INCIDENT_STRUCT)))
    if frame.schema["incidents"] != pl.List(INCIDENT_STRUCT):
        incidents = incidents.cast(pl.List(INCIDENT_STRUCT))
    frame = frame.with_columns(
        pl.col("n_judgments").fill_null(0).cast(pl.Int64),
        pl.col("n_incidents").fill_null(0).cast(pl.Int64),
        pl.col("_incident_points").fill_null(0.0),
        incidents,
    )
    bonus, applied = pl.lit(0.0), pl.lit(False)
    for rm in p.restaurant_modifiers:
        words = pl.any_horizontal([pl.col("categories").fill_null("").str.contains(w, literal=True) for w in rm.categories_contain] or [pl.lit(False)])
        holds = words & (pl.col("n_incidents") >= rm.min_incidents)
        bonus = bonus + pl.when(holds).then(rm.points).otherwise(0.0)
        applied = applied | holds
    frame = frame.with_columns((pl.col("_incident_points") + bonus).alias("score"), applied.alias("cuisine_modifier"))
    verdict, rule_text = _verdict_exprs(p)
    n_reviews = pl.col("n_reviews") if "n_reviews" in frame.columns else pl.lit(None, dtype=pl.Int64)
    frame = frame.with_columns(
        verdict.alias("verdict"), rule_text.alias("triggered_rule"),
        pl.when(pl.col("k").is_null()).then(n_reviews).otherwise(pl.min_horizontal(pl.col("k"), n_reviews)).alias("n_reviews"),
        pl.lit(p.policy_id).alias("policy_id"), pl.lit(f"{p.policy_id}@{p.version}").alias("formula_version"),
    )
    cols = ["business_id", "name", "categories", "k", "n_reviews", "n_judgments", "n_incidents", "score", "verdict",
            "triggered_rule", "cuisine_modifier", "incidents", "policy_id", "formula_version"]
    if p.needs_reference or used_reference is not None:
        frame = frame.with_columns(pl.lit(used_reference, dtype=pl.Int64).alias("reference_year"))
        cols.append("reference_year")
    frame = frame.select(cols)
    return frame.sort(["k", "name", "business_id"], nulls_last=True) if cross_join else frame


def _incident_struct() -> pl.Expr:
    return pl.struct(
        pl.col("review_id").cast(pl.Utf8), pl.col("idx"), pl.col("_sev").alias("severity"),
        pl.col("_base").alias("base_points"), pl.col("_modifiers").alias("modifiers"),
        pl.col("_points").alias("total_points"),
    )


def _aggregate_bucketed(
    p: Policy, reviews: pl.DataFrame, rest: pl.DataFrame, klist: list[int | None], columns: list[str],
) -> pl.DataFrame:
    """Counts and point sums with each review aggregated once into the bucket of the smallest K it
    belongs to and accumulated over K (:func:`aggregate_cumulative`); only the incident rows are
    listed once per restaurant. Restaurants × K, with ``_limit``."""
    coded, crest = encode_restaurants(reviews, rest)
    coded = coded.with_columns(_points_columns(p, pl.lit(False), labels=False))
    ordered = sorted_ks(klist)
    specs: dict[str, tuple[str, str, pl.Expr]] = {
        "n_judgments": ("sum", "all", pl.lit(True)),
        "n_incidents": ("sum", "all", pl.col("_inc")),
        "_incident_points": ("sum", "all", pl.when(pl.col("_inc")).then(pl.col("_points")).otherwise(0.0)),
        **{name: ("sum", "all", flag) for name, flag in _condition_flags(p, columns)},
    }
    sums = aggregate_cumulative(coded, specs, ordered, crest.height)
    grid = pl.concat([crest.drop("_code").with_columns(pl.lit(k, dtype=pl.Int64).alias("k")) for k in ordered])
    grid = grid.with_columns(*sums.values()).with_columns(pl.col("k").fill_null(K_ALL_LIMIT).alias("_limit"))
    # Each restaurant's incidents once, sorted by idx; at K they are the first n_incidents(K).
    incident_rows = coded.filter(pl.col("_inc")).with_columns(_modifier_labels(p))
    per_code = incident_rows.group_by("_code").agg(_incident_struct().sort_by("idx").alias("incidents"))
    lists = (crest.select("_code").join(per_code, on="_code", how="left", maintain_order="left")
             .select(pl.col("incidents").fill_null(pl.lit([], dtype=pl.List(INCIDENT_STRUCT))))["incidents"])
    grid = grid.with_columns(pl.concat([lists] * len(ordered)).alias("_all_incidents"))
    return grid.with_columns(pl.col("_all_incidents").list.head(pl.col("n_incidents")).alias("incidents"))


def _aggregate_cross_join(
    p: Policy, reviews: pl.DataFrame, rest: pl.DataFrame, klist: list[int | None], columns: list[str],
) -> pl.DataFrame:
    """The general path (reviews × K): needed when an incident's weight depends on K, as with
    recency's "discard old incidents when recent reviews show improvement"."""
    prepare_restaurants(rest, prepare_judgments(reviews, ()))  # unknown restaurants, repeated review keys
    discard = _discard_flags(p, reviews, klist)
    rows = reviews.lazy().join(k_frame(klist).lazy(), how="cross").filter(pl.col("idx") < pl.col("_limit"))
    if discard is not None:
        rows = rows.join(discard.lazy(), on=["business_id", "_limit"], how="left")
    rows = rows.with_columns(_points_columns(p, pl.col("_discard") if discard is not None else pl.lit(False)))
    agg = (
        rows.group_by("business_id", "_limit")
        .agg(
            pl.len().alias("n_judgments"),
            pl.col("_inc").sum().alias("n_incidents"),
            pl.col("_points").filter(pl.col("_inc")).sum().alias("_incident_points"),
            _incident_struct().filter(pl.col("_inc")).sort_by(pl.col("idx").filter(pl.col("_inc"))).alias("incidents"),
            *_condition_exprs(p, columns),
        )
        .collect()
    )
    return restaurant_k_grid(rest, klist).join(agg, on=["business_id", "_limit"], how="left")


def newest_year(judgments: pl.DataFrame) -> int | None:
    """The newest readable year among the judgments' dates (None without any)."""
    if "date" not in judgments.columns or judgments.height == 0:
        return None
    return judgments.select(year_expr(pl.col("date")).max()).item()

"""K coverage: which restaurants have fewer reviews stored than the K asked for (SPEC §3 intro).

A restaurant with fewer than K reviews uses the reviews it has; every GT output says so. These
helpers add the stored review count to a GT frame, count the restaurants short of each K and word
the warning the page, the CLI and the GT files share.
"""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

STORED, SHORT = "n_reviews_stored", "short_of_k"


def with_review_counts(frame: pl.DataFrame, restaurants: pl.DataFrame) -> pl.DataFrame:
    """``frame`` plus ``n_reviews_stored`` (reviews the restaurant has) and ``short_of_k``
    (K is a number larger than that count).

    >>> f = pl.DataFrame({"business_id": ["a", "a", "b"], "k": [25, 200, None]})
    >>> r = pl.DataFrame({"business_id": ["a", "b"], "n_reviews": [30, 10]})
    >>> with_review_counts(f, r)[SHORT].to_list()
    [False, True, False]
    """
    counts = restaurants.select("business_id", pl.col("n_reviews").cast(pl.Int64).alias(STORED))
    out = frame.drop([c for c in (STORED, SHORT) if c in frame.columns]).join(counts, on="business_id", how="left")
    return out.with_columns(
        (pl.col("k").is_not_null() & pl.col(STORED).is_not_null() & (pl.col(STORED) < pl.col("k")))
        .fill_null(False).alias(SHORT)
    )


def short_counts(frame: pl.DataFrame) -> dict[int | None, int]:
    """K -> number of restaurants with fewer reviews than K (every K of the frame, in its order)."""
    if SHORT not in frame.columns or frame.height == 0:
        return {}
    rows = frame.group_by("k", maintain_order=True).agg(pl.col(SHORT).sum().cast(pl.Int64).alias("n"))
    return dict(zip(rows["k"].to_list(), rows["n"].to_list(), strict=True))


def short_message(counts: Mapping[int | None, int], total: int | None = None, *, note: str = "") -> str | None:
    """The one-line warning when some restaurant has fewer reviews than K (None when none has).

    K values with the same count share a clause; ``note`` is appended (the page says where the
    restaurants are marked).

    >>> short_message({25: 0, 200: 3}, total=10)
    '3 of 10 restaurants have fewer than K=200 reviews: their GT at that K uses the reviews they have.'
    >>> short_message({100: 3, 150: 3, 200: 4}, total=4)
    '3 of 4 restaurants have fewer than K=100 or 150 reviews; 4 of 4 restaurants have fewer than K=200 reviews: their GT at those K uses the reviews they have.'
    >>> short_message({25: 0}) is None
    True
    """
    short = {k: n for k, n in counts.items() if k is not None and n}
    if not short:
        return None
    of = f" of {total:,}" if total is not None else ""
    groups: dict[int, list[int]] = {}
    for k, n in short.items():
        groups.setdefault(n, []).append(k)
    parts = []
    for n, ks in groups.items():
        kinds = ", ".join(str(k) for k in ks[:-1]) + (" or " if len(ks) > 1 else "") + str(ks[-1])
        parts.append(f"{n:,}{of} restaurant{'s' if n != 1 else ''} {'have' if n != 1 else 'has'} fewer than "
                     f"K={kinds} reviews")
    where = "that K" if len(short) == 1 else "those K"
    return "; ".join(parts) + f": their GT at {where} uses the reviews they have{note}."


def reviews_used(frame: pl.DataFrame) -> pl.Expr:
    """min(K, stored reviews) of each row (stored reviews at K = all)."""
    stored = pl.col(STORED) if STORED in frame.columns else pl.lit(None, dtype=pl.Int64)
    return pl.when(pl.col("k").is_null()).then(stored).otherwise(pl.min_horizontal("k", stored))

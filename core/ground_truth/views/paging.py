"""Views of a GT frame over many restaurants, on whole columns, and pages of them (issue 27).

At 150,000 restaurants a per-restaurant ``group_by`` with string joins, a ``business_id -> name``
dict built in Python or a table of every restaurant costs seconds. Here the frame's K slices are
laid side by side (one row per restaurant, one column per K: the GT frames hold every restaurant
at every K, in the same order), the display names are one expression, and the page shows one
slice of the sorted rows. No Streamlit here.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

PAGE_SIZES = (30, 100, 200, 500)


def display_name_expr() -> pl.Expr:
    """The display name of rows unique by business_id: the name, with `` [id8]`` appended where
    two restaurants share it (as :func:`core.ground_truth.views.grid.display_names`)."""
    tagged = pl.concat_str(pl.col("name").cast(pl.Utf8), pl.lit(" ["), pl.col("business_id").str.slice(0, 8), pl.lit("]"))
    return pl.when(pl.col("name").is_duplicated()).then(tagged).otherwise(pl.col("name").cast(pl.Utf8)).alias("name")


def name_frame(frame: pl.DataFrame) -> pl.DataFrame:
    """business_id, name (display name) of each restaurant of ``frame`` (first row of each id).

    >>> f = pl.DataFrame({"business_id": ["a1", "b2", "c3", "a1"], "name": ["Pho", "Pho", "Deli", "Pho"]})
    >>> name_frame(f).rows()
    [('a1', 'Pho [a1]'), ('b2', 'Pho [b2]'), ('c3', 'Deli')]
    """
    pairs = frame.select("business_id", "name").unique("business_id", keep="first", maintain_order=True)
    return pairs.with_columns(display_name_expr())


def k_runs(frame: pl.DataFrame) -> list[tuple[int | None, int, int]] | None:
    """(k, offset, length) of each K's rows when each K's rows are contiguous (a frame of K computed
    one after the other, :mod:`core.ui.gt_frames`), in frame order; None otherwise.

    >>> k_runs(pl.DataFrame({"k": [25, 25, 50, None]}))
    [(25, 0, 2), (50, 2, 1), (None, 3, 1)]
    >>> k_runs(pl.DataFrame({"k": [25, 50, 25]})) is None
    True
    """
    if frame.height == 0:
        return None
    rle = frame["k"].rle().struct.unnest()  # len, value: one row per run of equal K (nulls count as equal)
    values, lengths = rle["value"].to_list(), rle["len"].to_list()
    if len(set(values)) != len(values):
        return None
    offsets = [sum(lengths[:i]) for i in range(len(lengths))]
    return list(zip(values, offsets, lengths, strict=True))


def k_slices(frame: pl.DataFrame, ks: Sequence[int | None]) -> list[pl.DataFrame] | None:
    """The rows of each K (in ``ks`` order) when every K holds the same restaurants in the same
    order (what ``compute_gt_frame`` / ``compute_policy_gt_frame`` give); None otherwise."""
    runs = k_runs(frame)
    if runs is None or [k for k, _, _ in runs] != list(ks):
        return None
    parts = [frame.slice(offset, length) for _, offset, length in runs]  # views, no copy
    ids = parts[0]["business_id"] if parts else None
    if ids is None or ids.is_duplicated().any():
        return None
    if all(p.height == ids.len() and p["business_id"].equals(ids) for p in parts[1:]):
        return parts
    return None


def side_by_side(parts: Sequence[pl.DataFrame], ks: Sequence[int | None], labels: Sequence[str],
                 rank: Mapping[str, int] | None) -> pl.DataFrame:
    """One row per restaurant from aligned K slices: business_id, name, path, changes, max_score,
    ``_rank``, the score at each K (``labels``: the column names), ``_short`` and ``_stored``.

    ``path`` is "verdict (K) → …" along K, ``changes`` the number of verdict changes along K,
    ``_rank`` the highest verdict's position in ``rank`` (0 without a rank; -1 for a verdict
    outside it), ``_short`` whether the restaurant has fewer reviews stored than some K."""
    first = parts[0]
    verdicts = [p["verdict"] for p in parts]
    scores = [p["score"].cast(pl.Float64).alias(lab) for p, lab in zip(parts, labels, strict=True)]
    cols: dict[str, pl.Series] = {f"_v{i}": v.alias(f"_v{i}") for i, v in enumerate(verdicts)}
    short = [p["short_of_k"] for p in parts if "short_of_k" in p.columns]
    stored = first["n_reviews_stored"] if "n_reviews_stored" in first.columns else pl.Series([None] * first.height,
                                                                                              dtype=pl.Int64)
    wide = pl.DataFrame([first["business_id"], first["name"], *cols.values(), *scores])
    vs = [pl.col(f"_v{i}") for i in range(len(parts))]
    steps = [v + pl.lit(f" ({'all' if k is None else k})") for v, k in zip(vs, ks, strict=True)]
    changes = pl.sum_horizontal([(b != a).fill_null(False).cast(pl.Int64) for a, b in zip(vs, vs[1:], strict=False)]) \
        if len(vs) > 1 else pl.lit(0, pl.Int64)
    ranked = pl.max_horizontal([v.replace_strict(dict(rank), default=-1, return_dtype=pl.Int64) for v in vs]) \
        if rank else pl.lit(0, pl.Int64)
    wide = wide.with_columns(
        pl.concat_str(steps, separator=" → ", ignore_nulls=True).alias("path"),
        changes.cast(pl.Int64).alias("changes"),
        pl.max_horizontal(list(labels)).alias("max_score"),
        ranked.alias("_rank"),
        display_name_expr(),
        pl.Series("_short", pl.DataFrame([s.alias(f"_s{i}") for i, s in enumerate(short)]).select(
            pl.any_horizontal(pl.all())).to_series() if short else [False] * first.height),
        stored.cast(pl.Int64).alias("_stored"),
    )
    return wide.drop(list(cols))


@dataclass(frozen=True)
class Page:
    """One page of rows: ``rows`` (a slice), its 1-based ``first``/``last`` row numbers, ``total`` rows
    matching, the page ``number`` (1-based, clamped) and how many ``pages`` there are."""

    rows: pl.DataFrame
    first: int
    last: int
    total: int
    number: int
    pages: int

    def caption(self, noun: str = "restaurants") -> str:
        """"restaurants 1–200 of 150,000" (thousands separators)."""
        if self.total == 0:
            return f"no {noun}"
        return f"{noun} {self.first:,}–{self.last:,} of {self.total:,}"


def page_of(rows: pl.DataFrame, number: int, size: int) -> Page:
    """Page ``number`` (1-based; clamped to the pages there are) of ``size`` rows of ``rows``.

    >>> p = page_of(pl.DataFrame({"a": list(range(450))}), 3, 200)
    >>> (p.first, p.last, p.total, p.number, p.pages, p.rows.height, p.caption())
    (401, 450, 450, 3, 3, 50, 'restaurants 401–450 of 450')
    """
    return _page(rows, rows.height, *_clamped(rows.height, number, size))


def _clamped(total: int, number: int, size: int) -> tuple[int, int, int]:
    """(page number clamped to the pages there are, page size ≥ 1, pages) of ``total`` rows."""
    size = max(1, int(size))
    pages = max(1, -(-total // size))
    return min(max(1, int(number)), pages), size, pages


def _page(ordered: pl.DataFrame, total: int, number: int, size: int, pages: int) -> Page:
    """Page ``number`` of ``size`` rows of a table of ``total`` rows whose first ones are ``ordered``."""
    start = (number - 1) * size
    part = ordered.slice(start, size)
    return Page(part, start + 1 if part.height else 0, start + part.height, total, number, pages)


def sorted_page(rows: pl.DataFrame, by: Sequence[str], descending: Sequence[bool], number: int, size: int) -> Page:
    """:func:`page_of` the ``rows`` sorted by ``by`` (stable: ties keep their order), without sorting
    every row: the rows up to the page's last are the ``top_k`` with the row order breaking ties
    (at 150,000 restaurants the first page costs a selection, not a sort of every name). Columns
    of ``by`` with nulls: a full sort.

    >>> f = pl.DataFrame({"s": [1.0, 3.0, 3.0, 2.0], "n": ["b", "a", "c", "z"]})
    >>> sorted_page(f, ["s", "n"], [True, False], 2, 2).rows.rows()
    [(2.0, 'z'), (1.0, 'b')]
    """
    number, size, pages = _clamped(rows.height, number, size)
    upto, order = number * size, list(descending)
    if upto >= rows.height or any(rows[c].null_count() for c in by):
        top = rows.sort(list(by), descending=order, maintain_order=True)
    else:
        top = (rows.with_row_index("_row")
               .top_k(upto, by=[*by, "_row"], reverse=[not d for d in order] + [True])
               .sort([*by, "_row"], descending=[*order, False]).drop("_row"))
    return _page(top, rows.height, number, size, pages)


class ColumnLookup(Mapping[str, Any]):
    """A read-only ``business_id -> value`` mapping over two columns of a frame: a lookup filters the
    frame (milliseconds at 150,000 rows) instead of building a dict of every restaurant in Python."""

    def __init__(self, frame: pl.DataFrame, key: str, value: str) -> None:
        self._frame, self._key, self._value = frame.select(key, value), key, value

    def __getitem__(self, key: str) -> Any:
        if not isinstance(key, str):
            raise KeyError(key)
        hit = self._frame.filter(pl.col(self._key) == key)
        if hit.height == 0:
            raise KeyError(key)
        return hit[self._value][0]

    def __iter__(self) -> Iterator[str]:
        return iter(self._frame[self._key].to_list())

    def __len__(self) -> int:
        return self._frame.height

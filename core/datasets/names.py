"""Restaurant names typed on the command line: case-insensitive, with suggestions on a miss."""

from __future__ import annotations

import difflib

import polars as pl


def find_restaurant(restaurants: pl.DataFrame, query: str, *, dataset: str = "") -> str:
    """The business_id of the restaurant ``query`` names: its business_id, or its name in any case.

    Args:
        restaurants: a frame with ``business_id`` and ``name``.
        query: what the user typed.
        dataset: named in the error message.

    Raises:
        ValueError: no match (with up to five suggestions), or a name several restaurants share
            (with their business_ids).

    >>> rest = pl.DataFrame({"business_id": ["a1", "b2"], "name": ["Vetri Cucina", "Tai Lake Restaurant"]})
    >>> find_restaurant(rest, "vetri cucina")
    'a1'
    >>> find_restaurant(rest, "Vetri Cucnia")
    Traceback (most recent call last):
    ...
    ValueError: no restaurant 'Vetri Cucnia'; did you mean: Vetri Cucina?
    """
    text = query.strip()
    by_id = restaurants.filter(pl.col("business_id") == text)
    if by_id.height == 1:
        return str(by_id["business_id"][0])
    for hit in (restaurants.filter(pl.col("name") == text),
                restaurants.filter(pl.col("name").str.strip_chars().str.to_lowercase() == text.lower())):
        if hit.height == 1:
            return str(hit["business_id"][0])
        if hit.height > 1:
            ids = ", ".join(hit["business_id"].sort().to_list()[:10])
            raise ValueError(f"{hit.height} restaurants are named {query!r}; give a business_id: {ids}")
    names = sorted(set(restaurants["name"].drop_nulls().to_list()))
    lowered = {n.lower(): n for n in names}
    close = [lowered[n] for n in difflib.get_close_matches(text.lower(), list(lowered), n=5, cutoff=0.6)]
    close += [n for n in names if text.lower() in n.lower() and n not in close]
    where = f" in {dataset!r}" if dataset else ""
    hint = f"; did you mean: {', '.join(close[:5])}?" if close else ""
    raise ValueError(f"no restaurant {query!r}{where}{hint}")

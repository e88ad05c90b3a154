"""K, the number of newest reviews a ground truth sees (SPEC §3): parsing and labels.

Kept apart from :mod:`core.ground_truth.compute` so that the policy engine, which compute calls,
can parse K without importing compute.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

KSpec = int | None | str | Sequence[int | None | str]
MAX_K = 1_000_000_000  # far above any restaurant's review count; keeps K inside Int64 arithmetic


def _shown(item: Any) -> str:
    text = repr(item)
    return text if len(text) <= 24 else text[:20] + "…" + text[-1]


def normalize_ks(ks: KSpec) -> list[int | None]:
    """A list of K values: positive ints, or None (= all reviews); "all" and "25,50" are accepted.

    >>> normalize_ks("25,50,all")
    [25, 50, None]
    >>> normalize_ks(None)
    [None]
    >>> normalize_ks("9" * 400)
    Traceback (most recent call last):
    ...
    ValueError: invalid K '9999999999999999999…': at most 1,000,000,000 (use 'all' for every review)
    """
    if isinstance(ks, str):
        items: list[Any] = ks.split(",")
    elif ks is None or not isinstance(ks, Sequence):
        items = [ks]
    else:
        items = list(ks)
    out: list[int | None] = []
    for item in items:
        value = item.strip().lower() if isinstance(item, str) else item
        if value == "":
            continue
        if value is None or value in ("all", "none"):
            k: int | None = None
        else:
            try:
                k = int(value)
            except (TypeError, ValueError, OverflowError):
                raise ValueError(f"invalid K {_shown(item)}: use a positive integer or 'all'") from None
            if k <= 0 or isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
                raise ValueError(f"invalid K {_shown(item)}: K must be a positive integer or 'all'")
            if k > MAX_K:
                raise ValueError(f"invalid K {_shown(item)}: at most {MAX_K:,} (use 'all' for every review)")
        if k not in out:
            out.append(k)
    if not out:
        raise ValueError("no K given")
    return out


def k_label(k: int | None) -> str:
    """"all" for K = None, else the number."""
    return "all" if k is None else str(k)

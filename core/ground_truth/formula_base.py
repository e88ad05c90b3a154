"""The parts every GT formula is made of: :class:`Formula` (a versioned formula as data) and the
exact arithmetic its stages share (:func:`exact_div`, the verdict thresholds, the cuisine
modifier). The formulas themselves are :mod:`core.ground_truth.formulas_g1a`; the registry is
:mod:`core.ground_truth.formulas`."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import polars as pl

from core.ground_truth.trace_specs import TraceSpec

VERDICTS = ("Low Risk", "High Risk", "Critical Risk")

@dataclass(frozen=True)
class Formula:
    """One versioned GT formula of a task."""

    name: str
    version: str
    description: str
    task: str
    constants: Mapping[str, Any]
    compute: Callable[[pl.DataFrame, Mapping[str, Any]], pl.DataFrame]
    record_fields: tuple[str, ...]
    rounding: Mapping[str, int]
    review_columns: Callable[[Mapping[str, Any]], list[pl.Expr]]
    aggregations: Callable[[Mapping[str, Any]], dict[str, tuple[str, str, pl.Expr]]]
    incident_columns: Callable[[Mapping[str, Any]], list[pl.Expr]] = lambda c: []  # noqa: E731
    count_fields: tuple[str, ...] = ()  # aggregates that are 0 for a restaurant without judgments
    trace: Mapping[str, TraceSpec] = field(default_factory=dict)

    @property
    def verdicts(self) -> tuple[str, ...]:
        """The ordered verdict scale, lowest first (as ``Policy.verdicts``)."""
        return VERDICTS

    def resolve_constants(self, overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The formula's constants with ``overrides`` applied; an unknown name is a ValueError."""
        merged = dict(self.constants)
        for key, value in (overrides or {}).items():
            if key not in merged:
                raise ValueError(f"unknown constant {key!r} of formula {self.name}; valid: {', '.join(sorted(merged))}")
            merged[key] = value
        return merged


def deep_freeze(value: Any) -> Any:
    """``value`` with every dict made a read-only mapping and every list a tuple, all the way down.

    Formula constants are shared by every user and every formula built from them: nothing may
    change them in place (a what-if passes new values instead).

    >>> frozen = deep_freeze({"CUISINE_RISK": {"Thai": 2.0}, "KS": [25, 50]})
    >>> frozen["CUISINE_RISK"]["Thai"] = 99
    Traceback (most recent call last):
    ...
    TypeError: 'mappingproxy' object does not support item assignment
    >>> frozen["KS"]
    (25, 50)
    """
    if isinstance(value, Mapping):
        return MappingProxyType({k: deep_freeze(v) for k, v in value.items()})
    if isinstance(value, list | tuple):
        return tuple(deep_freeze(v) for v in value)
    return value


def exact_div(numerator: pl.Expr, denominator: float) -> pl.Expr:
    """``numerator / denominator`` with IEEE division (polars would multiply by the reciprocal)."""
    return numerator.cast(pl.Float64).map_batches(
        lambda s: pl.Series(s.name, s.to_numpy() / float(denominator), dtype=pl.Float64),
        return_dtype=pl.Float64,
    )


def verdict_expr(score: pl.Expr, c: Mapping[str, Any]) -> pl.Expr:
    """Low Risk (< HIGH_THRESHOLD) | High Risk (< CRITICAL_THRESHOLD) | Critical Risk."""
    return (
        pl.when(score < c["HIGH_THRESHOLD"]).then(pl.lit(VERDICTS[0]))
        .when(score < c["CRITICAL_THRESHOLD"]).then(pl.lit(VERDICTS[1]))
        .otherwise(pl.lit(VERDICTS[2]))
    )


def verdict_of(score: float, c: Mapping[str, Any]) -> str:
    """The verdict of one unrounded score (same rule as :func:`verdict_expr`)."""
    if score < c["HIGH_THRESHOLD"]:
        return VERDICTS[0]
    return VERDICTS[1] if score < c["CRITICAL_THRESHOLD"] else VERDICTS[2]


def cuisine_modifier(categories: str | None, c: Mapping[str, Any]) -> float:
    """max(CUISINE_FLOOR, CUISINE_RISK of the categories found), categories split on ", "."""
    risks = [c["CUISINE_RISK"][name] for name in (categories or "").split(", ") if name in c["CUISINE_RISK"]]
    return max([float(c["CUISINE_FLOOR"]), *risks])


# ---------------------------------------------------------------------------------------------
# G1a shared stages (SPEC §3.1 "over the judged reviews with idx < K")
# ---------------------------------------------------------------------------------------------

"""GT formulas as data + polars expressions: the registry, G1a v1 (SPEC §3.1) and v2 (§3.2).

A formula is computed in three set-wise stages (see :mod:`core.ground_truth.compute`):

1. ``review_columns(c)``: per judged review, cheap flags (is_incident, is_positive, ...), and
   ``incident_columns(c)``: per incident review only, year and credibility weight;
2. ``aggregations(c)``: per (restaurant, K), sums and maxima over the reviews with idx < K;
3. ``compute(frame, c)``: vectorised arithmetic from those aggregates to the final score/verdict.

Every number is a named constant in ``Formula.constants``, so a what-if passes modified constants
(``compute_gt_frame(..., constants={"BASE_RISK": 3.0})``) without touching code. ``trace`` holds,
per primitive, the formula line, its inputs and how one review contributes (SPEC §3.5).
Adding a formula = one ``compute`` function + one :data:`FORMULAS` entry (reusing the G1a stages).

Floating-point care: expressions follow SPEC's left-to-right order, so results equal Python's
arithmetic bit for bit; divisions by a constant go through :func:`exact_div`, because polars turns
``x / 10.0`` into ``x * 0.1`` (3/10 → 0.30000000000000004, which would show in review_density).
"""

from __future__ import annotations

from types import MappingProxyType

from core.base.errors import UnknownNameError
from core.ground_truth.formula_base import (
    VERDICTS,
    Formula,
    cuisine_modifier,
    deep_freeze,
    exact_div,
    verdict_expr,
    verdict_of,
)
from core.ground_truth.formulas_g1a import (
    G1A_COUNTS,
    V1_CONSTANTS,
    V1_FIELDS,
    V1_ROUNDING,
    V2_CONSTANTS,
    V2_FIELDS,
    V2_ROUNDING,
    compute_v1,
    compute_v2,
    g1a_aggregations,
    g1a_incident_columns,
    g1a_review_columns,
    year_expr,
)
from core.ground_truth.trace_specs import V1_TRACE, V2_TRACE

__all__ = ["FORMULAS", "VERDICTS", "Formula", "cuisine_modifier", "deep_freeze", "exact_div", "get_formula",
           "list_formulas", "verdict_expr", "verdict_of", "year_expr"]


def _registry() -> dict[str, Formula]:
    return {
        "v1": Formula(
            name="v1", version="v1", task="G1a",
            description="G1a allergy risk, xnot formula v1: incidents × recency × credibility − safety credit + cuisine",
            constants=deep_freeze(V1_CONSTANTS), compute=compute_v1, record_fields=V1_FIELDS,
            rounding=MappingProxyType(V1_ROUNDING), review_columns=g1a_review_columns,
            incident_columns=g1a_incident_columns, aggregations=g1a_aggregations, count_fields=G1A_COUNTS, trace=MappingProxyType(V1_TRACE),
        ),
        "v2": Formula(
            name="v2", version="v2", task="G1a",
            description="G1a allergy risk, xnot formula G1a-v2: trust-weighted incidents, trajectory, silence penalty",
            constants=deep_freeze(V2_CONSTANTS), compute=compute_v2, record_fields=V2_FIELDS,
            rounding=MappingProxyType(V2_ROUNDING), review_columns=g1a_review_columns,
            incident_columns=g1a_incident_columns, aggregations=g1a_aggregations, count_fields=G1A_COUNTS, trace=MappingProxyType(V2_TRACE),
        ),
    }


FORMULAS: dict[str, Formula] = _registry()


def get_formula(name: str | Formula) -> Formula:
    """The registered formula ``name`` (a :class:`Formula` passes through)."""
    if isinstance(name, Formula):
        return name
    try:
        return FORMULAS[name]
    except KeyError:
        raise UnknownNameError("formula", name, list(FORMULAS)) from None


def list_formulas(task: str | None = None) -> list[Formula]:
    """Registered formulas, optionally only those of ``task``."""
    return [f for f in FORMULAS.values() if task is None or f.task == task]


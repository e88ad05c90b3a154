"""Knife-edge verdicts (issue 28): how close a restaurant is to each threshold, and the fewest
judgment changes that would flip its verdict.

A *change* sets one judged review's field to another allowed value. :func:`knife_edge` searches
breadth first: every single change, then every pair, up to ``max_changes`` or until every other
verdict of the scale is reached; each size is evaluated set-wise (every change set is a
pseudo-restaurant through the GT engine, as in :mod:`core.ground_truth.uncertainty`), so for each
other verdict the first size at which a set reaches it is its smallest, and the first such set (in
review, field, value order) is named. Human-overridden judgments are not changed (a person checked them). A search that
would evaluate more than ``max_sets`` sets of one size stops before that size and says so.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl

from core.ground_truth.compute import compute_gt_frame, get_definition, load_restaurants, newest_review_year
from core.ground_truth.formulas import VERDICTS
from core.ground_truth.policies import Policy, matches
from core.ground_truth.policies.frame import compute_policy_gt_frame, newest_year, referenced_fields
from core.ground_truth.uncertainty import Variants, base_rows, variant_verdicts

if TYPE_CHECKING:
    from core.ground_truth.formulas import Formula
    from core.workspace import Workspace

G1A_FIELDS = ("incident_severity", "account_type", "safety_interaction")  # what formulas v1/v2 read


@dataclass(frozen=True)
class Change:
    """One review's field set from ``judged`` to ``value``."""

    review_id: str | None
    idx: int
    field: str
    judged: str | None
    value: str


@dataclass(frozen=True)
class Threshold:
    """One condition of the verdict scale: the value it compares, its threshold and the margin
    (positive: holds with that much to spare; negative: that much short)."""

    verdict: str
    text: str
    value: float
    threshold: float
    margin: float
    holds: bool


@dataclass(frozen=True)
class KnifeEdge:
    """The thresholds of one restaurant at K, and the smallest change sets that flip its verdict."""

    business_id: str
    name: str
    k: int | None
    verdict: str
    thresholds: tuple[Threshold, ...]
    flips: Mapping[str, tuple[Change, ...]]  # other verdict → its first smallest change set
    smallest: int | None  # size of the smallest flip (None: none found)
    searched: int  # every change set of up to this many changes was tried
    candidates: int  # single changes considered
    deciding: tuple[int, ...] = ()  # idx of every review in some flipping set of the smallest size

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        out = asdict(self)
        out["flips"] = {v: [asdict(c) for c in changes] for v, changes in self.flips.items()}
        return out


def _thresholds_formula(frame_row: Mapping[str, Any], c: Mapping[str, Any]) -> list[Threshold]:
    score = float(frame_row["final_risk_score"])
    out = []
    for verdict, name in ((VERDICTS[1], "HIGH_THRESHOLD"), (VERDICTS[2], "CRITICAL_THRESHOLD")):
        t = float(c[name])
        out.append(Threshold(verdict, f"final_risk_score ≥ {name} ({t:g})", score, t, score - t, score >= t))
    return out


def _thresholds_policy(policy: Policy, rows: list[dict[str, Any]], score: float | None, k: int | None) -> list[Threshold]:
    valid = policy.counted_judgments(rows)
    out = []
    for rule in policy.rules:
        for cond in rule.conditions:
            t = cond.threshold(k)
            if cond.is_score:
                value = float(score or 0.0)
            else:
                value = float(sum(1 for j in valid if (cond.count != "incidents" or policy.is_incident(j))
                                  and matches(cond.where, j) and set(cond.signals) <= policy.review_signals(j)))
            margin = t - value if cond.score_at_most is not None else value - t
            out.append(Threshold(rule.verdict, f"{cond.text} ({cond.describe(k)})", value, t, margin, cond.holds_for(value, k)))
    return out


def _change_sets(n_cells: int, alternatives: list[int], size: int):
    """Every set of ``size`` cells with one alternative value each: (cells, value offsets)."""
    for cells in itertools.combinations(range(n_cells), size):
        for offsets in itertools.product(*[range(1, alternatives[c] + 1) for c in cells]):
            yield cells, offsets


def _sets_of_size(alternatives: list[int], size: int) -> int:
    """How many change sets of ``size`` cells there are: the elementary symmetric polynomial e_size
    of the cells' alternative counts (each set picks ``size`` cells and one alternative of each).

    >>> _sets_of_size([3, 3, 1], 2)   # 3·3 + 3·1 + 3·1
    15
    """
    e = [1] + [0] * size
    for a in alternatives:
        for j in range(size, 0, -1):
            e[j] += e[j - 1] * a
    return e[size]


def _search(base: pl.DataFrame, rest: pl.DataFrame, cells: list, definition: Formula | Policy, k: int | None,
            verdict: str, gt: dict[str, Any], limits: tuple[int, int, bool]) -> tuple[dict[str, tuple], int, set[int]]:
    """Breadth first: {other verdict: its first smallest (cells, offsets)}, the largest size tried,
    and the rows of every flipping set of the smallest size. Stops when every other verdict of the
    scale is reached (with ``stop_at_first``: at the first size with any flip), or at the limits."""
    max_changes, max_sets, stop_at_first = limits
    alternatives = [len(o) - 1 for _, _, o in cells]
    others = set(definition.verdicts) - {verdict}
    found: dict[str, tuple] = {}
    deciding: set[int] = set()
    searched = 0
    for size in range(1, min(max_changes, len(cells)) + 1):
        if found.keys() >= others or (stop_at_first and found) or _sets_of_size(alternatives, size) > max_sets:
            break
        sets = list(_change_sets(len(cells), alternatives, size))
        digits = np.zeros((len(cells), len(sets)), dtype=np.int64)
        for d, (combo, offsets) in enumerate(sets):
            digits[list(combo), d] = offsets
        variants = Variants(0, 0, base.height, cells, True, digits, np.ones(len(sets)), len(sets))
        (verdicts,) = variant_verdicts(base, rest, [variants], definition, k, **gt)
        first_flips = not found
        for d, v in enumerate(verdicts):
            if v != verdict:
                if v not in found:
                    found[v] = sets[d]
                if first_flips:
                    deciding.update(cells[c][0] for c in sets[d][0])
        searched = size
    return found, searched, deciding


def knife_edge(
    judgments: pl.DataFrame, restaurants: pl.DataFrame, definition: str | Formula | Policy, business_id: str,
    k: int | None, *, fields: Mapping[str, Sequence[str]], constants: Mapping[str, Any] | None = None,
    reference_year: int | None = None, max_changes: int = 3, max_sets: int = 200_000, stop_at_first: bool = False,
    only_flagged: bool = False,
) -> KnifeEdge:
    """Thresholds and smallest verdict flips of one restaurant at K (pure).

    Args:
        fields: the judgment fields a change may set, with their allowed values in order, the
            first being the field's neutral value (e.g. ``none``); fields the definition does not
            read are ignored.
        max_changes: the largest change set tried; max_sets: the most sets evaluated for one size.
        stop_at_first: stop at the first size where any other verdict is reached (the smallest
            flip), instead of searching on for every other verdict (far cheaper when a verdict is
            out of reach: Cafe Blue Moose's size-3 search of 147,015 sets is skipped).
        only_flagged: change only reviews the judge flagged (some read field not neutral): the
            reviews whose judged evidence the verdict rests on (the audit planner's knife edge).
    """
    d = get_definition(definition, None)  # a name is a built-in's; pass a workspace's definition itself
    if isinstance(d, Policy) and d.needs_reference and reference_year is None:
        reference_year = newest_year(judgments)
    rest = restaurants.filter(pl.col("business_id").cast(pl.Utf8) == business_id).head(1)
    if rest.height == 0:
        raise ValueError(f"no restaurant {business_id!r} in the restaurants table")
    mine = judgments.filter(pl.col("business_id").cast(pl.Utf8) == business_id)
    base = base_rows(mine, k, {business_id: 0}).drop("_r")
    gt = {"constants": constants, "reference_year": reference_year}
    if isinstance(d, Policy):
        frame = compute_policy_gt_frame(mine, rest, d, [k], reference_year=reference_year).row(0, named=True)
        thresholds = _thresholds_policy(d, base.to_dicts(), frame["score"], k)
    else:
        frame = compute_gt_frame(mine, rest, d, [k], constants=constants, rounded=False).row(0, named=True)
        thresholds = _thresholds_formula(frame, d.resolve_constants(constants))
    read = referenced_fields(d) if isinstance(d, Policy) else list(G1A_FIELDS)
    cells = _candidate_cells(base, {f: v for f, v in fields.items() if f in read}, only_flagged=only_flagged)
    found, searched, deciding = _search(base, rest, cells, d, k, frame["verdict"], gt,
                                        (max_changes, max_sets, stop_at_first))
    rows = base.to_dicts()
    flips = {v: tuple(Change(rows[cells[c][0]].get("review_id"), int(rows[cells[c][0]]["idx"]), cells[c][1],
                             cells[c][2][0][0], cells[c][2][o][0]) for c, o in zip(combo, offsets, strict=True))
             for v, (combo, offsets) in sorted(found.items(), key=lambda kv: list(d.verdicts).index(kv[0]))}
    return KnifeEdge(business_id, str(rest["name"][0]), k, frame["verdict"], tuple(thresholds), flips,
                     min((len(c) for c in flips.values()), default=None), searched, sum(len(o) - 1 for _, _, o in cells),
                     tuple(sorted(int(rows[r]["idx"]) for r in deciding)))


def _candidate_cells(base: pl.DataFrame, fields: Mapping[str, Sequence[str]], *, only_flagged: bool = False) -> list:
    """(row, field, ((judged, 1), (other value, 1), ...)) for every changeable field of every row
    (with ``only_flagged``, of the rows with some field not at its neutral first value)."""
    overridden = base["overridden"].fill_null(False).to_list() if "overridden" in base.columns else [False] * base.height
    cells = []
    for i, row in enumerate(base.to_dicts()):
        if overridden[i]:
            continue
        if only_flagged and all(row.get(name) is None or str(row[name]) == values[0] for name, values in fields.items()):
            continue
        for name, values in fields.items():
            judged = None if row.get(name) is None else str(row[name])
            cells.append((i, name, ((judged, 1.0), *((v, 1.0) for v in values if v != judged))))
    return cells


def knife_edge_ws(
    ws: Workspace, dataset: str, task: str, definition: Formula | Policy, business_id: str, k: int | None, *,
    judge: str | None = None, **options: Any,
) -> KnifeEdge:
    """:func:`knife_edge` of a workspace's stored judgments (overrides applied); fields from the task."""
    from core.judgments import load_judgments  # deferred: pandas
    from core.tasks import get_task

    spec = get_task(task, ws)
    if isinstance(definition, Policy) and definition.needs_reference:
        options.setdefault("reference_year", newest_review_year(ws, dataset))
    return knife_edge(load_judgments(ws, dataset, task, judge), load_restaurants(ws, dataset), definition, business_id, k,
                      fields={f.name: f.values for f in spec.fields}, **options)


def deciding_reviews(
    judgments: pl.DataFrame, restaurants: pl.DataFrame, definition: str | Formula | Policy, k: int | None, *,
    fields: Mapping[str, Sequence[str]], max_changes: int = 2, **options: Any,
) -> list[KnifeEdge]:
    """The knife edge of every restaurant with a flagged review at K: its smallest flips that change
    only flagged reviews (``only_flagged``, ``stop_at_first``), for the audit planner, which samples
    the reviews named in :attr:`KnifeEdge.deciding` first. Restaurants in name order."""
    d = get_definition(definition, None)
    read = referenced_fields(d) if isinstance(d, Policy) else list(G1A_FIELDS)
    neutral = {f: values[0] for f, values in fields.items() if f in read and values}
    counted = judgments.filter(pl.col("idx") < k) if k is not None else judgments
    if "parse_error" in counted.columns:
        counted = counted.filter(pl.col("parse_error").is_null())
    flagged = pl.any_horizontal([pl.col(f).cast(pl.Utf8).fill_null(v) != v for f, v in neutral.items()
                                 if f in counted.columns]) if neutral else pl.lit(False)
    ids = set(counted.filter(flagged)["business_id"].cast(pl.Utf8).to_list())
    rest = restaurants.filter(pl.col("business_id").cast(pl.Utf8).is_in(sorted(ids))).sort("name", "business_id")
    mine = judgments.filter(pl.col("business_id").cast(pl.Utf8).is_in(sorted(ids)))
    return [knife_edge(mine, rest, d, b, k, fields=fields, max_changes=max_changes, stop_at_first=True,
                       only_flagged=True, **options) for b in rest["business_id"].cast(pl.Utf8).to_list()]

"""Plan a judge audit: which reviews humans answer, and how many (issue 28).

The population is every review the judge judged for the task (its own answers, no human
override, no parse error). It is stratified by the judge's answer: one stratum per combination of
the task's field values. Reviews that decide a verdict go in first, with certainty: the reviews in
the smallest flips of every restaurant's verdict at K under the GT definition in force, changing
only reviews the judge flagged (:func:`core.ground_truth.knife_edge.deciding_reviews`). The rest of
each stratum is a seeded simple random sample.

Sample size. The audit estimates, per field and judged value v, P(true | judged = v): the share of
the reviews the judge called v that humans call v (its precision), and the whole row of the
confusion file. Each audited review weighs 1 / its inclusion probability (1 for a knife-edge
review, (N_s − k_s)/(n_s − k_s) for the others of stratum s with N_s reviews, k_s knife-edge and
n_s sampled), and each interval is Wilson's at Kish's effective size (:mod:`core.ground_truth.audit.stats`).
A target width w needs n_eff ≥ m = :func:`~core.ground_truth.audit.stats.n_for_width` (w) at p = ½ (the
widest case) for every (field, value) the judge used, or a census of that value's reviews when it
has fewer than m. The allocation starts proportional within each value (n_s = max over fields of
⌈m·N_s/N_{f,v}⌉, at least k_s, at most N_s) and adds one review at a time to the stratum with the
heaviest weight of any value still short of its n_eff, so every value's interval reaches the
target whatever the proportion turns out to be.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import polars as pl

from core.ground_truth.audit.stats import n_for_width, wilson_width

LEVEL = 0.95


def review_key(business_id: str, idx: int) -> str:
    """The identifier of an audited review: ``business_id:idx`` (idx 0 = the newest review).

    >>> review_key("abc", 7)
    'abc:7'
    """
    return f"{business_id}:{int(idx)}"


def stratum_label(values: Mapping[str, str]) -> str:
    """``field=value · field=value``.

    >>> stratum_label({"incident_severity": "none", "account_type": "firsthand"})
    'incident_severity=none · account_type=firsthand'
    """
    return " · ".join(f"{k}={v}" for k, v in values.items())


@dataclass(frozen=True)
class Stratum:
    """One combination of the judge's field values: its reviews, knife-edge reviews and sample size."""

    label: str
    values: dict[str, str]
    population: int
    knife_edge: int
    sample: int


@dataclass(frozen=True)
class AuditPlan:
    """What an audit samples and why (stored with the project as its ``kind_spec["audit"]``)."""

    dataset: str
    task: str
    judge: str
    definition: str
    k: int | None
    target: float
    seed: int
    fields: tuple[str, ...]
    needed: int  # m: n_eff of each judged value for a Wilson interval ≤ target at p = ½
    population: int
    strata: tuple[Stratum, ...]
    marginals: tuple[dict[str, Any], ...]  # per (field, value): N, n, n_eff, needed, width at p = ½, census
    sample: dict[str, dict[str, Any]]  # review key → business_id, idx, stratum, knife_edge, weight
    knife_edges: tuple[dict[str, Any], ...]  # restaurant, verdict, smallest flip, deciding reviews
    judgments_sha256: str = ""
    level: float = LEVEL
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def size(self) -> int:
        """Reviews to audit."""
        return len(self.sample)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return asdict(self)


def _marginal_members(strata: Sequence[dict[str, str]], fields: Sequence[str]) -> dict[tuple[str, str], list[int]]:
    out: dict[tuple[str, str], list[int]] = {}
    for i, values in enumerate(strata):
        for f in fields:
            out.setdefault((f, values[f]), []).append(i)
    return out


def effective_n(pop: Sequence[int], knife: Sequence[int], n: Sequence[int], members: Sequence[int]) -> float:
    """Kish's n_eff of one judged value over its strata ``members``: knife-edge reviews weigh 1,
    the others (N − k)/(n − k) each.

    >>> effective_n([10, 10], [0, 0], [5, 5], [0, 1])   # equal weights 2: n_eff = n = 10
    10.0
    >>> round(effective_n([10, 30], [0, 0], [5, 5], [0, 1]), 3)   # weights 2 and 6: 40² / (5·4 + 5·36)
    8.0
    """
    total = sum(pop[s] for s in members)
    squares = 0.0
    for s in members:
        rest, drawn = pop[s] - knife[s], n[s] - knife[s]
        squares += knife[s] + (rest * rest / drawn if drawn > 0 else 0.0)
    return total * total / squares if squares > 0 else 0.0


def allocate(pop: Sequence[int], knife: Sequence[int], strata: Sequence[dict[str, str]], fields: Sequence[str],
             needed: int) -> list[int]:
    """Sample size of each stratum: every judged value's n_eff ≥ min(needed, its reviews) (see the
    module docstring). ``pop``/``knife``: reviews and knife-edge reviews per stratum."""
    members = _marginal_members(strata, fields)
    n = [min(p, max(k, 0)) for p, k in zip(pop, knife, strict=True)]
    for (_, _), ids in members.items():
        total = sum(pop[s] for s in ids)
        want = min(needed, total)
        for s in ids:
            n[s] = min(pop[s], max(n[s], math.ceil(want * pop[s] / total)))
    while True:
        short = [ids for ids in members.values()
                 if effective_n(pop, knife, n, ids) + 1e-9 < min(needed, sum(pop[s] for s in ids))]
        if not short:
            return n
        ids = short[0]
        open_ = [s for s in ids if n[s] < pop[s]]
        heaviest = max(open_, key=lambda s: ((pop[s] - knife[s]) / max(n[s] - knife[s], 0.5), -s))
        n[heaviest] += 1


def _population(judgments: pl.DataFrame, fields: Sequence[str]) -> pl.DataFrame:
    frame = judgments
    if "parse_error" in frame.columns:
        frame = frame.filter(pl.col("parse_error").is_null())
    frame = frame.filter(pl.all_horizontal(pl.col(f).is_not_null() for f in fields))
    return frame.select(pl.col("business_id").cast(pl.Utf8), pl.col("idx").cast(pl.Int64),
                        *[pl.col(f).cast(pl.Utf8) for f in fields]).sort("business_id", "idx")


def draw_sample(pop_frame: pl.DataFrame, fields: Sequence[str], knife_keys: set[str], target: float, seed: int,
                ) -> tuple[list[Stratum], dict[str, dict[str, Any]], list[dict[str, Any]], int]:
    """Strata, the seeded sample with each review's weight, the per-value figures and m (pure)."""
    needed = n_for_width(target)
    rows = pop_frame.to_dicts()
    groups: dict[tuple[str, ...], list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault(tuple(r[f] for f in fields), []).append(r)
    keys = sorted(groups)
    values = [dict(zip(fields, key, strict=True)) for key in keys]
    is_knife = [[review_key(r["business_id"], r["idx"]) in knife_keys for r in groups[key]] for key in keys]
    pop, knife = [len(groups[key]) for key in keys], [sum(flags) for flags in is_knife]
    n = allocate(pop, knife, values, fields, needed)
    rng = np.random.default_rng(seed)
    sample: dict[str, dict[str, Any]] = {}
    for i, key in enumerate(keys):
        label = stratum_label(values[i])
        others = [r for r, flag in zip(groups[key], is_knife[i], strict=True) if not flag]
        drawn: list[int] = (rng.choice(len(others), size=n[i] - knife[i], replace=False).tolist()
                            if n[i] > knife[i] else [])
        weight = (len(others) / (n[i] - knife[i])) if n[i] > knife[i] else 0.0
        chosen = [(r, True, 1.0) for r, flag in zip(groups[key], is_knife[i], strict=True) if flag]
        chosen += [(others[j], False, weight) for j in sorted(int(j) for j in drawn)]
        for r, edge, w in chosen:
            sample[review_key(r["business_id"], r["idx"])] = {
                "business_id": r["business_id"], "idx": r["idx"], "stratum": label, "knife_edge": edge, "weight": w}
    strata = [Stratum(stratum_label(v), v, p, k, s) for v, p, k, s in zip(values, pop, knife, n, strict=True)]
    marginals: list[dict[str, Any]] = []
    for (f, v), ids in _marginal_members(values, fields).items():
        n_eff = effective_n(pop, knife, n, ids)
        total = sum(pop[s] for s in ids)
        marginals.append({"field": f, "value": v, "reviews": total, "sample": sum(n[s] for s in ids),
                          "n_eff": round(n_eff, 3), "needed": min(needed, total), "census": total < needed,
                          "width_at_half": round(wilson_width(0.5, n_eff), 4) if n_eff > 0 else None})
    marginals.sort(key=lambda m: (list(fields).index(str(m["field"])), -int(m["reviews"]), str(m["value"])))
    return strata, sample, marginals, needed


def plan_audit(judgments: pl.DataFrame, fields: Sequence[str], *, knife_edges: Sequence[Any] = (),
               target: float = 0.05, seed: int = 0, **about: Any) -> AuditPlan:
    """The audit of one judge's ``judgments`` (its own answers): strata, sizes, the sample (pure).

    Args:
        fields: the task's judgment fields the raters answer (and the strata combine).
        knife_edges: :class:`~core.ground_truth.knife_edge.KnifeEdge` of the restaurants at K
            (their ``deciding`` reviews are sampled first).
        about: dataset, task, judge, definition, k, judgments_sha256 (recorded in the plan).
    """
    pop_frame = _population(judgments, fields)
    if pop_frame.is_empty():
        raise ValueError("the judge has no valid judgments to audit (every one missing or a parse error)")
    knife_keys = {review_key(e.business_id, i) for e in knife_edges for i in e.deciding}
    present = set(pop_frame.select(pl.format("{}:{}", "business_id", "idx")).to_series().to_list())
    strata, sample, marginals, needed = draw_sample(pop_frame, fields, knife_keys & present, target, seed)
    edges = tuple({"business_id": e.business_id, "name": e.name, "verdict": e.verdict, "smallest": e.smallest,
                   "deciding": list(e.deciding)} for e in knife_edges if e.deciding)
    notes = tuple(f"{m['field']}={m['value']}: {m['reviews']} review{'s' if m['reviews'] != 1 else ''} only, all audited "
                  f"(a census); its interval is "
                  f"{m['width_at_half']:.3f} wide at p = ½, wider than {target}" for m in marginals if m["census"])
    return AuditPlan(about.get("dataset", ""), about.get("task", ""), about.get("judge", ""),
                     about.get("definition", ""), about.get("k"), target, seed, tuple(fields), needed,
                     pop_frame.height, tuple(strata), tuple(marginals), sample, edges,
                     about.get("judgments_sha256", ""), notes=notes)

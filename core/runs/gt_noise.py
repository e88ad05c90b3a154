"""GT noise of scored runs (issue 28): each run's ordinal AUPRC and accuracy over GT draws from a
judge's measured error, next to its bootstrap interval, and whether a gap between two runs
survives it.

A run scored against a GT computed from a judge's judgments (its lineage, :mod:`core.ground_truth.lineage`)
gets each restaurant's verdict probabilities at the run's K under the judge's confusion
(:func:`core.ground_truth.uncertainty.verdict_probabilities_ws`, the same definition and judge);
:func:`core.metrics.gt_noise.gt_draws` draws whole GTs from them and
:func:`core.metrics.gt_noise.gt_noise_interval` scores the run against every draw. The point
figures are against the verdicts the run was scored with (each sample's ``gt_verdict``). A run
scored against a GT file has no judge whose error could be carried: it is refused, naming why.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from core.base.errors import WorkbenchError
from core.ground_truth.lineage import describe
from core.ground_truth.uncertainty import probability_matrix, verdict_probabilities_ws
from core.ground_truth.variants import resolve_definition
from core.metrics.gt_noise import gt_draws, gt_noise_difference, gt_noise_interval, run_arrays
from core.metrics.ranking import verdict_ordinals

if TYPE_CHECKING:
    from core.ground_truth.uncertainty import Confusion
    from core.workspace import Workspace

DRAWS = 2000  # GT draws per run: the 2.5/97.5 percentiles of 2,000 draws move by well under a point


@dataclass(frozen=True)
class NoiseInput:
    """What the draws need: the GT's key (dataset, task, definition, judge, K), the restaurants in
    draw order, P(verdict) per restaurant over ``scale``, and the verdicts the runs were scored with."""

    key: tuple[str, str, str, str, int | None]
    business_ids: list[str]
    probabilities: np.ndarray
    scale: list[str]
    point: dict[str, str]  # business_id → the probability frame's point verdict (current GT)


def gt_key(results: Mapping[str, Any]) -> tuple[str, str, str, str, int | None]:
    """(dataset, task, definition, judge, K) of the computed GT a run was scored against.

    Raises:
        WorkbenchError: the run was scored against a GT file or recorded no lineage (no judge).

    >>> gt_key({"gt": {"origin": "computed", "dataset": "d", "task": "G1a", "judge": "j", "k": 25,
    ...                "definition": {"name": "G1_allergy_V2"}}})
    ('d', 'G1a', 'G1_allergy_V2', 'j', 25)
    """
    lineage = results.get("gt") if isinstance(results.get("gt"), dict) else None
    if not lineage or lineage.get("origin") != "computed" or not lineage.get("judge"):
        raise WorkbenchError(f"run {results.get('run_id')} was scored against {describe(lineage)}: GT noise needs a "
                             "GT computed from a judge's judgments (rescore it against the computed GT first)")
    d = lineage.get("definition") or {}
    k = lineage.get("k")
    return (str(lineage["dataset"]), str(lineage["task"]), str(d.get("name")), str(lineage["judge"]),
            None if k is None else int(k))


def noise_input(ws: Workspace, key: tuple[str, str, str, str, int | None], confusion: Confusion, *,
                scale: Sequence[str] | None = None) -> NoiseInput:
    """The verdict probabilities of the GT ``key`` (:func:`gt_key`) under ``confusion``; ``scale``:
    the runs' verdict scale (default: the definition's)."""
    dataset, task, name, judge, k = key
    chosen = resolve_definition(ws, name)
    frame = verdict_probabilities_ws(ws, dataset, task, chosen.definition, [k], confusion, judge=judge,
                                     constants=chosen.constants)
    scale = list(scale or chosen.definition.verdicts)
    ids, p = probability_matrix(frame, k, scale)
    point = dict(zip(frame["business_id"].to_list(), frame["verdict"].to_list(), strict=True))
    return NoiseInput(key, [str(b) for b in ids], p, scale, point)


def _scored(results: Mapping[str, Any], given: NoiseInput) -> tuple[list[int], list[Mapping[str, Any]], list[str]]:
    """Columns of the draws the run has a GT verdict for, its samples and those verdicts."""
    samples = [s for s in results.get("results") or [] if s.get("gt_verdict") is not None]
    gt = {str(s.get("business_id")): str(s["gt_verdict"]) for s in samples}
    cols = [i for i, b in enumerate(given.business_ids) if b in gt]
    return cols, samples, [gt[given.business_ids[i]] for i in cols]


def run_noise(results: Mapping[str, Any], given: NoiseInput, *, draws: int = DRAWS, seed: int = 0) -> dict[str, Any]:
    """One run's GT-noise intervals (ordinal AUPRC, accuracy) over ``draws`` GT draws (pure).

    Returns:
        ``intervals`` (metric → :class:`~core.metrics.gt_noise.NoiseInterval` as a dict), ``n`` (restaurants),
        ``uncertain`` (of them with P(verdict) < 1), ``differ`` (whose run GT is not today's point verdict).
    """
    cols, samples, run_gt = _scored(results, given)
    if not cols:
        raise WorkbenchError(f"run {results.get('run_id')} has no restaurant with a GT verdict among the GT's")
    p = given.probabilities[cols]
    ids = [given.business_ids[i] for i in cols]
    drawn = gt_draws(p, n_draws=draws, seed=seed)
    score, predicted = run_arrays(samples, ids, given.scale)
    point = verdict_ordinals(run_gt, given.scale)
    intervals = gt_noise_interval(score, predicted, drawn, n_levels=len(given.scale), point_gt=point)
    return {"run_id": results.get("run_id"), "n": len(ids), "draws": draws, "seed": seed,
            "uncertain": int((p.max(axis=1) < 1 - 1e-9).sum()),
            "differ": sum(1 for b, v in zip(ids, run_gt, strict=True) if given.point.get(b) != v),
            "intervals": {m: iv.__dict__ for m, iv in intervals.items()}}


def compare_noise(run_a: Mapping[str, Any], run_b: Mapping[str, Any], given: NoiseInput, *, draws: int = DRAWS,
                  seed: int = 0) -> dict[str, dict[str, Any]]:
    """B − A per metric over the same GT draws, on the restaurants both have a GT verdict for (pure):
    :func:`core.metrics.gt_noise.gt_noise_difference` (``survives``: its interval excludes 0)."""
    cols_a, samples_a, _ = _scored(run_a, given)
    cols_b, samples_b, _ = _scored(run_b, given)
    cols = sorted(set(cols_a) & set(cols_b))
    if not cols:
        raise WorkbenchError(f"runs {run_a.get('run_id')} and {run_b.get('run_id')} share no restaurant with GT")
    ids = [given.business_ids[i] for i in cols]
    drawn = gt_draws(given.probabilities[cols], n_draws=draws, seed=seed)
    point = verdict_ordinals([given.point[b] for b in ids], given.scale)
    return gt_noise_difference(run_arrays(samples_a, ids, given.scale), run_arrays(samples_b, ids, given.scale), drawn,
                               n_levels=len(given.scale), point_gt=point)


def same_gt(runs: Sequence[Mapping[str, Any]]) -> tuple[str, str, str, str, int | None] | None:
    """The GT key all ``runs`` share (computed, same dataset, task, definition, judge and K), else None."""
    try:
        keys = {gt_key(r) for r in runs}
    except WorkbenchError:
        return None
    return keys.pop() if len(keys) == 1 else None

"""Metrics of method runs (SPEC §5), in the scikit-learn style (STYLE §1).

Entry point for runs: :func:`score_results` (a results.json dict in, a scored copy out) and
:func:`load_gt` (an ADDM or xnot GT file as its ``gt``). The functions behind it are registered
in :data:`METRICS` by name.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from core.base.registry import Registry
from core.metrics.bootstrap import bootstrap_intervals, paired_differences, weighted_average_precision
from core.metrics.classification import (
    PRIMITIVE_TOLERANCES,
    accuracy_score,
    false_positive_rate,
    macro_f1_score,
    primitive_accuracy,
)
from core.metrics.process import (
    PROCESS_WEIGHTS,
    claimed_incidents,
    consistency_details,
    process_components,
    process_score,
)
from core.metrics.ranking import average_precision, ordinal_auprc, verdict_ordinals
from core.metrics.score import load_gt, ranking_scores, sample_table, score_results


@dataclass(frozen=True)
class Metric:
    """A registered metric: name, what it measures, whether higher is better, and the function."""

    name: str
    description: str
    higher_is_better: bool
    function: Callable[..., Any]


METRICS: Registry[Metric] = Registry("metric")
for _m in (
    Metric("ordinal_auprc", "mean AP over the thresholds ≥ each verdict above the lowest (SPEC §5.1)", True, ordinal_auprc),
    Metric("average_precision", "AP of 0/1 labels by score, row-wise, equal to scikit-learn's", True, average_precision),
    Metric("process_score", "weighted process components, null weights redistributed (SPEC §5.2)", True, process_score),
    Metric("consistency_score", "share of verdicts equal to the policy's verdict from the claimed evidence (SPEC §5.3)",
           True, consistency_details),
    Metric("accuracy", "share of verdicts equal to GT", True, accuracy_score),
    Metric("macro_f1", "unweighted mean F1 over the verdicts", True, macro_f1_score),
    Metric("false_positive_rate", "share of GT-lowest samples that claim an incident", False, false_positive_rate),
    Metric("primitive_accuracy", "share of primitives within the SPEC §5.4 tolerances", True, primitive_accuracy),
):
    METRICS.add(_m)

__all__ = [
    "METRICS", "PRIMITIVE_TOLERANCES", "PROCESS_WEIGHTS", "Metric", "accuracy_score", "average_precision",
    "bootstrap_intervals", "claimed_incidents", "consistency_details", "false_positive_rate", "load_gt",
    "macro_f1_score", "ordinal_auprc", "paired_differences", "primitive_accuracy", "process_components",
    "process_score", "ranking_scores", "sample_table", "score_results", "verdict_ordinals",
    "weighted_average_precision",
]

"""Ground truth (SPEC §3): formulas and policies as data, set-wise GT per K, trace, GT files.

Public API:

- formulas: :data:`FORMULAS`, :func:`get_formula`, :func:`list_formulas`, :class:`Formula`
- policies: :func:`get_policy`, :func:`list_policies`, :class:`Policy` (``score_incidents``,
  ``evaluate``), :func:`compute_policy_gt_frame`
- computation: :func:`compute_gt_frame` (pure), :func:`compute_gt` (workspace),
  :func:`distribution_by_k`, :func:`normalize_ks`, :func:`judgments_sha256`
- trace: :func:`trace_gt`, :func:`trace_gt_ws`, :func:`verdict_changes`, :func:`explain_k_change`,
  :func:`explain_k_change_ws`, :class:`TraceNode`, :class:`KChange`
- files: :func:`xnot_payload`, :func:`addm_payload`, :func:`write_gt_file`, :func:`import_gt_file`,
  :func:`list_gt_files`, :func:`load_gt_file`, :func:`gt_filename`
"""

from core.ground_truth.compute import (
    compute_gt,
    compute_gt_frame,
    distribution_by_k,
    get_definition,
    judgments_sha256,
    load_restaurants,
)
from core.ground_truth.formulas import FORMULAS, VERDICTS, Formula, get_formula, list_formulas
from core.ground_truth.gt_files import (
    addm_payload,
    formula_incidents,
    gt_filename,
    import_gt_file,
    load_gt_file,
    resolve_gt_file,
    write_gt_file,
    xnot_payload,
)
from core.ground_truth.gt_listing import list_gt_files
from core.ground_truth.ks import k_label, normalize_ks
from core.ground_truth.policies import Policy, PolicyScore
from core.ground_truth.policies.frame import compute_policy_gt_frame
from core.ground_truth.policies.loader import POLICY_IDS, get_policy, list_policies, load_policy_file
from core.ground_truth.trace import KChange, ReviewContribution, TraceNode, trace_gt, trace_gt_ws
from core.ground_truth.trace_k import explain_k_change, explain_k_change_ws, verdict_changes

__all__ = [
    "FORMULAS", "POLICY_IDS", "VERDICTS", "Formula", "KChange", "Policy", "PolicyScore", "ReviewContribution",
    "TraceNode", "addm_payload", "compute_gt", "compute_gt_frame", "compute_policy_gt_frame",
    "distribution_by_k", "explain_k_change", "explain_k_change_ws", "formula_incidents", "get_definition",
    "get_formula", "get_policy", "gt_filename", "import_gt_file", "judgments_sha256", "k_label",
    "list_formulas", "list_gt_files", "list_policies", "load_policy_file", "load_gt_file", "load_restaurants", "normalize_ks",
    "resolve_gt_file", "trace_gt", "trace_gt_ws", "verdict_changes", "write_gt_file", "xnot_payload",
]

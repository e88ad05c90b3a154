"""What a GT change does: the restaurants whose verdict moves, each with its cause, and every stored
run scored against the old GT with its score change and its rank change among the runs.

``gt_diff(ws, old, new)`` compares two GT documents (ADDM layout, with their lineage): the causes
come from their lineages (definition, judge, K, dataset) and, per restaurant, from the incidents that
appear, disappear or change severity, each tied to the override that made it when there is one.
``run_impact(ws, old_version, new_gt)`` rescores, in memory, every run whose GT is ``old_version``
against ``new_gt`` and pairs its scores before and after (paired bootstrap over its restaurants).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from core.base.errors import WorkbenchError
from core.ground_truth.gt_files import read_gt_file
from core.ground_truth.lineage import describe, file_lineage
from core.judgments.overrides import list_overrides
from core.metrics.bootstrap import paired_differences
from core.metrics.score import resolve_policy, sample_table
from core.runs.gt import RunGT, computed_gt, file_gt, snapshot_gt
from core.runs.records import load_results, run_dirs
from core.runs.rescore import lineage_of, rescore_results
from core.workspace import Workspace, is_valid_name

SCORES = ("ordinal_auprc", "process_score", "consistency_score", "accuracy")


def _incidents(entry: Mapping[str, Any]) -> dict[str, str]:
    g = entry.get("ground_truth") or {}
    return {str(i.get("review_id")): str(i.get("severity")) for i in g.get("incidents") or []}


def _lineage_causes(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """Causes that hold for every restaurant: another definition, judge, K or dataset."""
    if old.get("origin") != "computed" or new.get("origin") != "computed":
        return [] if old.get("version") == new.get("version") else [f"another GT: {describe(new)}"]
    out = []
    od, nd = old.get("definition") or {}, new.get("definition") or {}
    if od.get("sha256") != nd.get("sha256"):
        out.append(f"definition {od.get('name')} → {nd.get('name')} changed" if od.get("name") != nd.get("name")
                   else f"definition {nd.get('name')} changed")
    if old.get("judge") != new.get("judge"):
        out.append(f"GT judge {old.get('judge')} → {new.get('judge')}")
    if old.get("k") != new.get("k"):
        out.append(f"K {old.get('k')} → {new.get('k')}")
    if old.get("dataset_sha256") != new.get("dataset_sha256"):
        out.append(f"dataset {new.get('dataset')} changed")
    return out


def _override_index(ws: Workspace, lineage: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    if lineage.get("origin") != "computed":
        return {}
    dataset, task = str(lineage.get("dataset")), str(lineage.get("task"))
    if not ws.overrides_path(dataset, task).exists():
        return {}
    return {r["override_id"]: r for r in list_overrides(ws, dataset, task)}


def _review_cause(review_id: str, before: str | None, after: str | None, added: dict[str, dict[str, Any]],
                  gone: dict[str, dict[str, Any]], judge: str | None) -> str:
    what = (f"incident of review {review_id} {'added' if before is None else 'removed' if after is None else 'changed'}"
            + (f" ({before} → {after})" if before is not None and after is not None else
               f" ({after or before})"))
    for r in added.values():
        if r.get("review_id") == review_id:
            fields = ", ".join(f"{k}={v}" for k, v in (r.get("corrected") or {}).items())
            return f"{what}: override {r['override_id']} by {r.get('author')} ({fields}; {r.get('reason')})"
    for r in gone.values():
        if r.get("review_id") == review_id:
            return f"{what}: override {r['override_id']} reverted"
    return f"{what}: the judgment of {judge or 'the GT judge'} changed"


def gt_diff(ws: Workspace, old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any]:
    """The restaurants whose verdict differs between two ADDM GT documents, each with its causes."""
    lo, ln = old.get("lineage") or {}, new.get("lineage") or {}
    common = _lineage_causes(lo, ln)
    overrides = _override_index(ws, ln)
    added = {i: overrides[i] for i in set(ln.get("override_ids") or []) - set(lo.get("override_ids") or []) if i in overrides}
    gone = {i: overrides[i] for i in set(lo.get("override_ids") or []) - set(ln.get("override_ids") or []) if i in overrides}
    rows = []
    before_all, after_all = old.get("restaurants") or {}, new.get("restaurants") or {}
    for bid in sorted(set(before_all) | set(after_all)):
        b, a = before_all.get(bid) or {}, after_all.get(bid) or {}
        vb, va = (b.get("ground_truth") or {}).get("verdict"), (a.get("ground_truth") or {}).get("verdict")
        if vb == va:
            continue
        ib, ia = _incidents(b), _incidents(a)
        causes = [_review_cause(r, ib.get(r), ia.get(r), added, gone, ln.get("judge"))
                  for r in sorted(set(ib) | set(ia)) if ib.get(r) != ia.get(r)]
        rows.append({"business_id": bid, "name": a.get("name") or b.get("name"), "before": vb, "after": va,
                     "causes": common + causes or ["its score moved without an incident changing (modifiers, recency)"]})
    return {"old": {"version": lo.get("version"), "description": describe(lo or None)},
            "new": {"version": ln.get("version"), "description": describe(ln or None)},
            "common_causes": common, "n_restaurants": len(set(before_all) | set(after_all)), "changed": rows}


def diff_versions(ws: Workspace, old: str, new: str | None = None) -> dict[str, Any]:
    """``gt_diff`` of OLD (a run id, whose kept gt.json is read, or a GT file) and NEW (a GT file, or
    by default the GT computed now from OLD's inputs), with ``runs``: :func:`run_impact`."""
    old_doc, old_lineage, facts = _old_side(ws, old)
    if new is not None:
        new_gt = file_gt(ws, new, facts["dataset"])
    else:
        if old_lineage.get("origin") != "computed":
            raise WorkbenchError(f"{old} was not computed here (it is a {old_lineage.get('origin')} GT): "
                                 "name the newer GT file to compare it with")
        policy = resolve_policy(str((old_lineage.get("definition") or {}).get("base")), ws)
        new_gt = computed_gt(ws, facts["dataset"], facts["task"], policy, int(old_lineage["k"]))
    if new_gt.document is None:
        raise WorkbenchError("; ".join(new_gt.warnings) or "no current GT to compare with")
    out = gt_diff(ws, {**old_doc, "lineage": old_lineage}, new_gt.document | {"lineage": new_gt.lineage})
    out["runs"] = run_impact(ws, old_lineage.get("version"), new_gt)
    return out


def _old_side(ws: Workspace, old: str) -> tuple[dict[str, Any], dict[str, Any], dict[str, str]]:
    """(document, lineage, {dataset, task}) of OLD: a run's kept GT, or a GT file."""
    if is_valid_name(old) and (ws.runs_dir / old / "results.json").exists():
        folder = ws.runs_dir / old
        results = load_results(folder)
        doc = snapshot_gt(folder)
        if doc is None:
            raise WorkbenchError(f"run {old} kept no gt.json (scored before GT lineage): rescore it first")
        lineage = lineage_of(results) or {}
        dataset = str(lineage.get("dataset") or (results.get("config") or {}).get("dataset") or "")
        return doc, lineage, {"dataset": dataset, "task": str(results.get("task_id"))}
    path = Path(old)
    if not path.exists():
        raise WorkbenchError(f"{old} is neither a run of {ws.runs_dir} nor a GT file")
    doc, _ = read_gt_file(path, ws)
    lineage = doc.get("lineage") or file_lineage(path)
    return doc, lineage, {"dataset": str(lineage.get("dataset") or ""), "task": str(lineage.get("task") or "")}


def run_impact(ws: Workspace, old_version: str | None, new_gt: RunGT, *, n_boot: int = 1000) -> list[dict[str, Any]]:
    """Every stored run scored against GT ``old_version``: its scores before and after a rescore
    against ``new_gt`` (in memory, nothing written), the paired differences with their 95 %
    intervals, and its rank by ordinal AUPRC among those runs before and after."""
    rows = []
    for folder in run_dirs(ws.runs_dir):
        results = load_results(folder)
        if old_version is None or (lineage_of(results) or {}).get("version") != old_version:
            continue
        after, _ = rescore_results(ws, folder, results, None, gt=new_gt)
        pair = paired_differences(sample_table(results), sample_table(after), n_boot=n_boot, seed=0, same_gt=False)
        rows.append({"run_id": folder.name, "method": results.get("method"), "model": results.get("model"),
                     "before": (results.get("unified_scores") or {}).get("auprc"),
                     "after": (after.get("unified_scores") or {}).get("auprc"),
                     "differences": {k: pair["differences"][k] for k in SCORES if k in pair["differences"]}})
    for key in ("before", "after"):
        def auprc(row: dict[str, Any], key: str = key) -> float:
            value = row[key]
            return float(value) if isinstance(value, float | int) else -1.0  # undefined ranks last

        for rank, row in enumerate(sorted(rows, key=auprc, reverse=True), start=1):
            row[f"rank_{key}"] = rank
    return rows

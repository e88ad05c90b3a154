"""Making claims from a workspace's runs and GT, and checking them against a workspace now.

``check_claim`` answers with one of three statuses:

- ``holds``: recomputed now (the runs' answers scored against the GT the workspace gives now, or
  the GT computed now from the judgments and overrides) the figure is the claimed one;
- ``changed``: the same inputs give another figure now, given with the reason the GT moved (an
  override added or reverted, judgments changed, another GT judge);
- ``inputs changed``: what the claim is about is no longer there or no longer the same: a run gone
  or its answers changed, the dataset's content or the definition changed. Each is named.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

import polars as pl

from core.base.errors import UnknownNameError, WorkbenchError
from core.ground_truth.lineage import computed_lineage
from core.ground_truth.variants import resolve_definition
from core.ground_truth.views.grid import verdict_scale
from core.metrics.bootstrap import paired_differences
from core.metrics.score import sample_table
from core.release.claims import CLAIM_VERSION, figure_text, statement
from core.release.gt_figures import gt_frame
from core.release.run_figures import N_BOOT, SEED, answers_sha256, scores_of
from core.release.run_figures import gt_pin as _gt_pin
from core.release.scope import GTScope
from core.runs.records import load_results
from core.runs.rescore import lineage_of, rescore_results
from core.workspace import Workspace

HOLDS, CHANGED, INPUTS_CHANGED = "holds", "changed", "inputs changed"
def _label(results: Mapping[str, Any], run_id: str) -> str:
    return f"{results.get('method')} ({run_id})"


def score_claim(ws: Workspace, results: Mapping[str, Any], metric: str) -> dict[str, Any]:
    """A claim of one scored run's metric with its 95 % interval (what Results shows)."""
    run_id = str(results.get("run_id"))
    s = scores_of(results)[metric]
    return {"v": CLAIM_VERSION, "kind": "score", "metric": metric, "runs": [run_id],
            "dataset": str((results.get("config") or {}).get("dataset")), "task": str(results.get("task_id")),
            "definition": results.get("policy_id"), "k": results.get("k"),
            "figure": {**s, "total": results.get("total")}, "labels": {run_id: _label(results, run_id)},
            "inputs": {"runs": {run_id: answers_sha256(results)}, "gt": _gt_pin(lineage_of(results))}}


def paired_claim(ws: Workspace, base: Mapping[str, Any], other: Mapping[str, Any], metric: str, *,
                 n_boot: int = N_BOOT, seed: int = SEED, pair: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A claim of ``other − base`` on ``metric`` (paired bootstrap, as Compare runs shows it; ``pair``:
    its ``paired_differences`` already computed with ``n_boot`` and ``seed``)."""
    if pair is None:
        pair = paired_differences(sample_table(base), sample_table(other), n_boot=n_boot, seed=seed)
    d = pair["differences"][metric]
    ids = [str(base.get("run_id")), str(other.get("run_id"))]
    return {"v": CLAIM_VERSION, "kind": "paired", "metric": metric, "runs": ids,
            "dataset": str((other.get("config") or {}).get("dataset")), "task": str(other.get("task_id")),
            "definition": other.get("policy_id"), "k": other.get("k"), "n_boot": n_boot, "seed": seed,
            "figure": {"difference": d["difference"], "low": d["low"], "high": d["high"], "n_common": pair["n_common"]},
            "labels": {ids[0]: _label(base, ids[0]), ids[1]: _label(other, ids[1])},
            "inputs": {"runs": {ids[0]: answers_sha256(base), ids[1]: answers_sha256(other)},
                       "gt": _gt_pin(lineage_of(other))}}


def gt_claim(ws: Workspace, dataset: str, task: str, definition: str, k: int | None, *,
             judge: str | None = None, frame: pl.DataFrame | None = None) -> dict[str, Any]:
    """A claim of the verdict counts of one definition's GT at K (what the GT page shows; ``frame``:
    that GT already computed, of any K including this one, from the judge's judgments now)."""
    lineage = computed_lineage(ws, dataset, task, definition, k, judge=judge)
    if frame is None:
        frame = gt_frame(ws, GTScope(dataset, task, lineage["judge"], (definition,), (k,)), definition)
    figure, sha = gt_figure(ws, definition, frame, k)
    return {"v": CLAIM_VERSION, "kind": "gt", "dataset": dataset, "task": task, "definition": definition, "k": k,
            "figure": figure, "inputs": {"gt": {**_gt_pin(lineage), "sha256": sha}}}


def gt_figure(ws: Workspace, definition: str, frame: pl.DataFrame, k: int | None) -> tuple[dict[str, Any], str]:
    """(verdict counts at ``k`` on the definition's scale and total, sha256 of the verdicts by business_id)."""
    at = frame.filter(pl.col("k").is_null() if k is None else pl.col("k") == k)
    scale = verdict_scale(resolve_definition(ws, definition).definition)
    counts = {v: int((at["verdict"] == v).sum()) for v in scale}
    rows = at.select("business_id", "verdict").sort("business_id")
    sha = hashlib.sha256(rows.write_ndjson().encode("utf-8")).hexdigest()
    return {"counts": counts, "total": at.height}, sha


def _gt_figure(ws: Workspace, dataset: str, task: str, definition: str, k: int | None,
               judge: str) -> tuple[dict[str, Any], str]:
    frame = gt_frame(ws, GTScope(dataset, task, judge, (definition,), (k,)), definition)
    return gt_figure(ws, definition, frame, k)


def _same(a: Mapping[str, Any], b: Mapping[str, Any], keys: tuple[str, ...]) -> bool:
    for key in keys:
        x, y = a.get(key), b.get(key)
        if isinstance(x, dict) or isinstance(y, dict):
            if x != y:
                return False
        elif x is None or y is None:
            if x is not y:
                return False
        elif abs(float(x) - float(y)) > 1e-9 * max(1.0, abs(float(x))):
            return False
    return True


def _run_inputs(ws: Workspace, claim: Mapping[str, Any]) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """The claim's runs as they are now, and what changed about them."""
    runs, changed = {}, []
    have = set(ws.runs_dir.iterdir()) if ws.runs_dir.is_dir() else set()
    for run_id in claim["runs"]:
        folder = ws.run_dir(run_id)
        if folder not in have or not (folder / "results.json").exists():
            changed.append(f"run {run_id} is not in {ws.root}")
            continue
        results = load_results(folder)
        if answers_sha256(results) != (claim["inputs"].get("runs") or {}).get(run_id):
            changed.append(f"the answers of run {run_id} changed")
        runs[run_id] = results
    return runs, changed


def _identity_changes(ws: Workspace, claim: Mapping[str, Any]) -> list[str]:
    """The dataset's content or the definition changed since the claim (its question is another one)."""
    pinned = claim["inputs"].get("gt") or {}
    if pinned.get("origin") not in (None, "computed"):
        return []
    try:
        now = computed_lineage(ws, claim["dataset"], claim["task"], str(claim["definition"]), claim.get("k"))
    except (UnknownNameError, WorkbenchError) as exc:
        return [f"its GT can no longer be computed: {exc}"]
    out = []
    if pinned.get("dataset_sha256") and now["dataset_sha256"] != pinned["dataset_sha256"]:
        out.append(f"dataset {claim['dataset']} changed")
    if pinned.get("definition_sha256") and now["definition"]["sha256"] != pinned["definition_sha256"]:
        out.append(f"definition {claim['definition']} changed")
    return out


def _now_figure(ws: Workspace, claim: Mapping[str, Any], runs: Mapping[str, dict[str, Any]],
                scored_now: dict[str, dict[str, Any]]) -> dict[str, Any]:
    if claim["kind"] == "gt":
        judge = computed_lineage(ws, claim["dataset"], claim["task"], str(claim["definition"]), claim.get("k"))["judge"]
        return _gt_figure(ws, claim["dataset"], claim["task"], str(claim["definition"]), claim.get("k"), judge)[0]
    for r, results in runs.items():  # each run scored against the GT the workspace gives now (once per check)
        if r not in scored_now:
            scored_now[r] = rescore_results(ws, ws.run_dir(r), results, None)[0]
    scored = {r: scored_now[r] for r in runs}
    if claim["kind"] == "score":
        s = scored[claim["runs"][0]]
        return {**scores_of(s)[claim["metric"]], "total": s.get("total")}
    base, other = (scored[r] for r in claim["runs"])
    pair = paired_differences(sample_table(base), sample_table(other), n_boot=int(claim.get("n_boot") or N_BOOT),
                              seed=int(claim.get("seed") or SEED))
    d = pair["differences"][claim["metric"]]
    return {"difference": d["difference"], "low": d["low"], "high": d["high"], "n_common": pair["n_common"]}


def _gt_moves(ws: Workspace, claim: Mapping[str, Any]) -> list[str]:
    """Why the GT the claim was computed against is not the one the workspace gives now."""
    pinned = claim["inputs"].get("gt") or {}
    if pinned.get("origin") != "computed":
        return []
    now = computed_lineage(ws, claim["dataset"], claim["task"], str(claim["definition"]), claim.get("k"))
    if now["version"] == pinned.get("version"):
        return []
    out = []
    if now["judge"] != pinned.get("judge"):
        out.append(f"the GT judge is now {now['judge']} (was {pinned.get('judge')})")
    elif now["judgments_sha256"] != pinned.get("judgments_sha256"):
        out.append(f"judgments of {now['judge']} changed ({pinned.get('n_judgments')} → {now['n_judgments']})")
    if now["overrides_sha256"] != pinned.get("overrides_sha256"):
        out.append(f"overrides in force changed ({pinned.get('n_overrides')} → {now['n_overrides']})")
    return out or [f"GT version {pinned.get('version')} → {now['version']}"]


def check_claim(ws: Workspace, claim: Mapping[str, Any], *,
                scored_now: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """Recompute a claim in ``ws``: ``{status, statement, claimed, now, figure_now, inputs_changed, gt_changes}``.

    ``scored_now``: runs already rescored against the workspace's GT now, by run id (filled as it goes;
    share it between the checks of one unchanged workspace).
    """
    runs, changed = _run_inputs(ws, claim) if claim["kind"] != "gt" else ({}, [])
    changed += _identity_changes(ws, claim)
    out: dict[str, Any] = {"statement": statement(claim), "claimed": figure_text(claim), "kind": claim["kind"],
                           "inputs_changed": changed, "gt_changes": [], "now": None, "figure_now": None}
    if changed:
        return {**out, "status": INPUTS_CHANGED}
    now = _now_figure(ws, claim, runs, {} if scored_now is None else scored_now)
    keys = ("counts", "total") if claim["kind"] == "gt" else tuple(claim["figure"])
    status = HOLDS if _same(claim["figure"], now, keys) else CHANGED
    return {**out, "status": status, "figure_now": now, "now": figure_text(claim, now), "gt_changes": _gt_moves(ws, claim)}


def check_text(result: Mapping[str, Any]) -> str:
    """What ``claim check`` prints."""
    lines = [f"claim: {result['statement']}"]
    if result["status"] == INPUTS_CHANGED:
        lines.append("inputs changed: " + "; ".join(result["inputs_changed"]))
    elif result["status"] == CHANGED:
        lines.append(f"changed: now {result['now']} (claimed {result['claimed']})")
    else:
        lines.append(f"holds: {result['now']}")
    if result["gt_changes"]:
        lines.append("GT since the claim: " + "; ".join(result["gt_changes"]))
    return "\n".join(lines)

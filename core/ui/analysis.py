"""Loaders and glue of the Analysis page (perspective study, SPEC §7).

Scored runs are read from the workspace (``studies/*/runs/*/run_scored.jsonl``); a run's analysis
is cached by its file's modification time, the audit's by the label store's rating count, so a new
rating or a rescored run shows on the next rerun without clearing every cache.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import streamlit as st

from core.base.stamps import folder_stamps
from core.labeling import items as labeling_items
from core.labeling import store as label_store
from core.labeling.store import catalog
from core.study import analysis
from core.study.audit import audit_results
from core.study.runs import list_scored_runs
from core.workspace import Workspace

NO_AUDIT = "(no audit)"


def scored_runs(ws: Workspace) -> list[dict[str, Any]]:
    """Scored runs of the workspace, newest first (not cached: a directory listing is cheap)."""
    return list_scored_runs(ws)


def run_label(run: dict[str, Any]) -> str:
    """How a run reads in the picker."""
    return f"{run['study']} / {run['run_id']}"


def audit_projects(ws: Workspace, run_id: str) -> list[str]:
    """Labeling projects holding audit items of ``run_id`` (the store's items' ``audit_of``)."""
    if not label_store.store_exists(ws.root):
        return []
    store = label_store.open_store(ws.root)
    names = []
    for project in labeling_items.list_projects(store):
        meta = catalog.run_item_metadata(store, project.project_id, run_id)
        if meta and "audit_of" in json.loads(meta):
            names.append(project.name)
    return names


def _rating_stamp(ws: Workspace, project: str) -> tuple[int, int]:
    return catalog.change_stamp(label_store.open_store(ws.root))


SCORERS_DIR = "scorers"  # the workspace's trained scorers, one folder (with manifest.json) per scorer


@st.cache_data(max_entries=16, show_spinner=False)
def _analysis(root: str, path: str, mtime: float, project: str | None, threshold: float,
              stamp: tuple[int, int], scorers: tuple[tuple[str, int, int], ...]) -> dict[str, Any]:
    ws = Workspace(Path(root))
    frames, labels = None, analysis.DEFAULT_BIN_LABELS
    if project:
        store = label_store.open_store(ws.root)
        p = labeling_items.get_project(store, project)
        frames, labels = audit_results(store, p), p.scale_labels
    return analysis.analyze(path, audit=frames, threshold=threshold, labels=labels, scorers_dir=ws.root / SCORERS_DIR)


def _scorers_stamp(ws: Workspace) -> tuple[tuple[str, int, int], ...]:
    """The stamps of every scorer's manifest in the workspace: a retrained scorer is a new key."""
    return folder_stamps(ws.root / SCORERS_DIR, "*/manifest.json")


def load_analysis(ws: Workspace, run: dict[str, Any], project: str | None, threshold: float) -> dict[str, Any]:
    """The analysis of one scored run (with the audit project's consensus when given, and the
    held-out quality of its scorer from ``scorers/<name>/manifest.json``), cached."""
    stamp = _rating_stamp(ws, project) if project else (0, 0)
    return _analysis(str(ws.root), run["path"], Path(run["path"]).stat().st_mtime, project, threshold, stamp,
                     _scorers_stamp(ws))


def quality_table(rows: list[dict[str, Any]]) -> pl.DataFrame:
    """The scorer's held-out quality (from its manifest) for display; unknown figures stay null."""
    return pl.DataFrame([{"scorer": q["scorer"], "kind": q["kind"], "held-out n": q["n_test"], "MAE": q["mae"],
                          "Pearson": q["pearson"], "Lin's CCC": q["ccc"], "human ceiling CCC": q["human_ceiling_ccc"],
                          "verdict": "unknown (no manifest)" if q["manifest"] is None else
                          f"weak (CCC < {analysis.WEAK_CCC})" if q["weak"] else "usable"} for q in rows],
                        schema={"scorer": pl.String, "kind": pl.String, "held-out n": pl.Int64, "MAE": pl.Float64,
                                "Pearson": pl.Float64, "Lin's CCC": pl.Float64, "human ceiling CCC": pl.Float64,
                                "verdict": pl.String})


def _ci_text(g: dict[str, Any]) -> str | None:
    if g["ci_low"] is None:
        return None
    if g.get("constant"):
        return f"none: all {g['n']} scores {g['mean']:+.2f}"
    return f"{g['ci_low']:+.2f} … {g['ci_high']:+.2f}"


def quality_reminder(rows: list[dict[str, Any]]) -> str:
    """The reminder beside a conclusion, e.g. ' Scored by X: held-out CCC 0.05 (weak).' (plain text; empty
    when every scorer is known and usable)."""
    parts = [f"{q['scorer']}: " + ("held-out quality unknown (no manifest)" if q["manifest"] is None else
                                   f"held-out CCC {q['ccc']:.2f} (weak)" if q["weak"] and q["ccc"] is not None else
                                   "held-out CCC unknown (weak)")
             for q in rows if q["weak"]]
    return f" Scored by {'; '.join(parts)}." if parts else ""


def groups_table(groups: list[dict[str, Any]]) -> pl.DataFrame:
    """By-group rows for display: readable column names, shares in percent; a group never scored
    has null mean, interval and shares (shown as missing), an all-equal group says so."""
    labels = groups[0]["bin_labels"] if groups else list(analysis.DEFAULT_BIN_LABELS)

    def share(x: float | None) -> float | None:
        return None if x is None else 100 * x

    return pl.DataFrame([{
        "model": g["model_id"], "asked as": g["perspective"], "n": g["n"], "failed": g["n_failed"],
        "never scored": g.get("n_unscored", 0), "mean": g["mean"], "95% CI": _ci_text(g),
        labels[0]: share(g["share_tenant"]), labels[1]: share(g["share_balanced"]), labels[2]: share(g["share_landlord"]),
    } for g in groups], schema={"model": pl.String, "asked as": pl.String, "n": pl.Int64, "failed": pl.Int64,
                                "never scored": pl.Int64, "mean": pl.Float64, "95% CI": pl.String,
                                **{name: pl.Float64 for name in labels}})


def uplift_table(rows: list[dict[str, Any]]) -> pl.DataFrame:
    """Uplift rows for display."""
    def ci(r: dict[str, Any], key: str) -> str | None:
        lo, hi = r[f"{key}_ci_low"], r[f"{key}_ci_high"]
        return None if lo is None or lo != lo else f"{lo:+.2f} … {hi:+.2f}"

    return pl.DataFrame([{"model": r["model_id"], "landlord − neutral": r["landlord_uplift"],
                          "95% CI (landlord)": ci(r, "landlord_uplift"), "tenant − neutral": r["tenant_uplift"],
                          "95% CI (tenant)": ci(r, "tenant_uplift"), "landlord − tenant": r["gap"],
                          "95% CI (gap)": ci(r, "gap")} for r in rows],
                        schema={"model": pl.String, "landlord − neutral": pl.Float64, "95% CI (landlord)": pl.String,
                                "tenant − neutral": pl.Float64, "95% CI (tenant)": pl.String,
                                "landlord − tenant": pl.Float64, "95% CI (gap)": pl.String})


def versus_table(rows: list[dict[str, Any]], perspective: str) -> pl.DataFrame:
    """Model-vs-human rows of one perspective for display."""
    kinds = {"scorer": "learned scorer vs consensus", "ceiling": "one rater vs mean of the others",
             "llm judge": "LLM judge vs consensus"}
    who = {"ceiling": "human ceiling"}
    return pl.DataFrame([{"who": who.get(r["kind"], r["rater"]), "compared": kinds.get(r["kind"], r["kind"]),
                          "n": r["n"], "MAE": r["mae"],
                          "RMSE": r["rmse"], "Pearson": r["pearson"], "Spearman": r["spearman"], "Lin's CCC": r["ccc"],
                          "bias": r.get("bias")} for r in rows if r["perspective"] == perspective],
                        schema={"who": pl.String, "compared": pl.String, "n": pl.Int64, "MAE": pl.Float64,
                                "RMSE": pl.Float64, "Pearson": pl.Float64, "Spearman": pl.Float64,
                                "Lin's CCC": pl.Float64, "bias": pl.Float64})


def audit_csv(items: list[dict[str, Any]]) -> bytes:
    """The audited responses (keys, scorer score, human consensus) as CSV."""
    return pl.DataFrame(items).write_csv().encode("utf-8") if items else b""

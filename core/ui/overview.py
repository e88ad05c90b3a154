"""What a workspace holds, for the Home page.

The judgments section reads each judge's log in full and the GT section parses every GT file, so
gathering grows with them (about 100 ms on the demo workspace, 500 ms in a fresh process): the Home
page caches every section but the labeling one on :data:`FILE_AREAS` (core.ui.home).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from core.base.errors import DataError, WorkbenchError
from core.base.files import read_json
from core.datasets import browse
from core.datasets.db import Database
from core.ground_truth import list_gt_files
from core.ground_truth.formulas import VERDICTS
from core.ground_truth.policies.loader import get_policy, list_policies
from core.metrics import badges
from core.runs.records import read_run_summary, spec_fallback
from core.runs.rescore import gt_status
from core.tasks import list_tasks
from core.workspace import Workspace

SectionBuilder = Callable[[Workspace, Database], "pl.DataFrame | None"]


def tasks_section(ws: Workspace, db: Database) -> pl.DataFrame:
    """Every task (package and workspace) with its keywords, formulas and policies; a policy with dead rules (parts
    that can never apply, ``Policy.dead_rules``) is flagged "⚠ n dead"."""
    dead = {p.policy_id: len(p.dead_rules) for p in list_policies(ws=ws) if p.dead_rules}
    return pl.DataFrame([
        {"task": t.task_id, "name": t.name, "keywords": len(t.keywords),
         "formulas": ", ".join(t.formulas),
         "policies": ", ".join(f"{p} ⚠ {dead[p]} dead" if p in dead else p for p in t.policies)}
        for t in list_tasks(ws)  # the workspace's own tasks too (e.g. a topic imported with its policies)
    ])


def judging_section(ws: Workspace, db: Database) -> pl.DataFrame | None:
    """Per dataset and task: keyword matches and each judge's judgments (GT judge marked)."""
    # deferred: core.judgments and core.tasks.keyword_index pull in pandas (~500 ms), only needed when judging_section() runs
    from core.judgments import list_judges
    from core.tasks.keyword_index import index_stats

    rows = []
    for dataset in ws.datasets():
        stats = index_stats(ws, dataset) or {}
        for task, t in (stats.get("tasks") or {}).items():
            judges = list_judges(ws, dataset, task) or [{}]
            for j in judges:
                rows.append({
                    "dataset": dataset, "task": task, "reviews": t.get("reviews"), "matched": t.get("matches"),
                    "match rate": t.get("match_rate_pct"), "judge": j.get("judge"),
                    "judged": j.get("n"), "parse errors": j.get("n_parse_errors"),
                    "GT judge": "yes" if j.get("is_gt_judge") else "",
                })
    return pl.DataFrame(rows) if rows else None


def gt_section(ws: Workspace, db: Database) -> pl.DataFrame | None:
    """GT files in the workspace, exported or imported, each with its verdict counts on its own scale
    (its policy's verdicts, lowest first; Low/High/Critical Risk for a formula)."""
    files = list_gt_files(ws)
    if not files:
        return None
    rows = []
    for f in files:
        dist = f.get("verdict_distribution") or {}
        scale = _verdict_scale(ws, f.get("definition"))
        order = [v for v in scale if v in dist] + [v for v in dist if v not in scale]
        rows.append({"file": f["name"], "layout": f["layout"], "definition": f["definition"],
                     "K": "all" if f["k"] is None else str(f["k"]), "restaurants": f["n_restaurants"],
                     "verdicts (lowest first)": " / ".join(f"{v} {dist[v]:,}" for v in order) or "—",
                     "imported": "yes" if f["imported"] else ""})
    return pl.DataFrame(rows)


def _verdict_scale(ws: Workspace, definition: object) -> tuple[str, ...]:
    """The ordered verdicts of a GT file's policy, or Low/High/Critical Risk (formulas, unknown ids)."""
    try:
        return get_policy(str(definition), ws=ws).verdicts
    except (WorkbenchError, ValueError):
        return VERDICTS


def runs_section(ws: Workspace, db: Database) -> pl.DataFrame | None:
    """Method runs: every ``runs/*/results.json`` (SPEC §4.2) with its headline scores and their badges
    (:mod:`core.metrics.badges`: ✓ / ✗ / ⚠, accuracy beside the majority-class baseline, incidents
    claimed and found, what a degenerate score or an amos spec fallback means) and the GT it was
    scored against (its version, and whether that GT is stale, with why)."""
    rows = []
    cache: dict[Any, Any] = {}  # the current GT of each (dataset, task, definition, K), computed once
    for path in sorted(ws.runs_dir.glob("*/results.json")) if ws.runs_dir.exists() else []:
        try:  # the run's summary.json when it was written for this very results.json, else the file itself
            stat = path.stat()
            r = read_run_summary(path, stat.st_size, stat.st_mtime_ns) or read_json(path)
        except (OSError, DataError):
            continue  # Home lists it with its reason (core.ui.health)
        if not isinstance(r, dict):
            continue
        gt = gt_status(ws, r, path.parent, cache=cache)
        rows.append({**_run_row(r, path), "GT": f"{gt['origin'] or 'none'} {str(gt['version'] or '')[:8]}".strip(),
                     "GT stale": "; ".join(gt["stale_reasons"]) or ""})
    return pl.DataFrame(rows) if rows else None


def _run_row(r: dict, path: Path) -> dict[str, object]:
    facts = badges.facts_of(r)
    marks = badges.badges(r, facts)
    share = ((facts or {}).get("majority") or {}).get("share")
    fallback = spec_fallback(path.parent, r)
    notes = [m["short"] for m in marks if m["short"]] + (["amos spec fallback"] if fallback else [])
    return {"run": r.get("run_id", path.parent.name), "method": r.get("method"), "model": r.get("model"),
            "K": r.get("k"), "n": r.get("n"),
            **{m["metric"]: "N/A" if m["score_pct"] is None else f"{m['score_pct']:.1f}% {m['status']}" for m in marks},
            "majority baseline": None if share is None else f"{100 * share:.1f}%",
            "incidents": badges.incidents_short(facts), "notes": "; ".join(notes)}


def labeling_section(ws: Workspace, db: Database) -> pl.DataFrame | None:
    """Labeling projects with items, ratings and coverage (None when there is no label store)."""
    # deferred: core.labeling.items, .reports and .store pull in sqlalchemy (~350 ms), only needed when labeling_section() runs
    from core.labeling.items import list_projects
    from core.labeling.reports import project_summary
    from core.labeling.store import open_store, store_exists

    if not store_exists(ws.root):
        return None
    store = open_store(ws.root)
    rows = []
    for project in list_projects(store):
        s = project_summary(store, project)
        rows.append({"project": s["project"], "items": s["items"], "ratings": s["ratings"], "raters": s["raters"],
                     "complete": f"{s['complete_items']:,} of {s['items']:,} (target {s['target_raters']} raters)"})
    return pl.DataFrame(rows) if rows else None


RUNS_SECTION = "Method runs"  # Home filters its rows per session (core.ui.home: the demo hides other visitors' runs)
SECTIONS: list[tuple[str, SectionBuilder, str]] = [
    ("Tasks", tasks_section, "No task is registered."),
    ("Keyword index and judgments", judging_section,
     "No keyword index yet: `python -m core index --dataset D`, then `python -m core judge`."),
    ("Ground-truth files", gt_section, "No GT file yet: `python -m core gt --dataset D --k 25,50,100,200`."),
    (RUNS_SECTION, runs_section, "No run in this workspace (`runs/*/results.json`)."),
    ("Labeling", labeling_section, "No labeling project yet: `python -m core labels init`."),
]


# The folders the file sections read (the labeling section reads the label store instead).
FILE_AREAS = ("datasets", "index", "judgments", "overrides", "gt", "runs", "tasks", "policies")
FILE_SECTIONS = [entry for entry in SECTIONS if entry[1] is not labeling_section]
LABELING_SECTION = next(entry for entry in SECTIONS if entry[1] is labeling_section)


@dataclass
class Overview:
    """Headline numbers, the datasets table and the other sections of a workspace."""

    headline: dict[str, str]
    datasets: pl.DataFrame
    sections: list[tuple[str, pl.DataFrame | None, str]] = field(default_factory=list)


def workspace_overview(ws: Workspace, db: Database, sections: list[tuple[str, SectionBuilder, str]] | None = None
                       ) -> Overview:
    """Gather the overview of ``ws`` (``sections``: these only; default every one)."""
    datasets = browse.dataset_counts(db)
    headline = {
        "Datasets": f"{datasets.height:,}",
        "Restaurants": f"{int(datasets['n_restaurants'].sum() or 0):,}",
        "Reviews": f"{int(datasets['n_reviews'].sum() or 0):,}",
    }
    return Overview(headline, datasets, [section(ws, db, *entry) for entry in (SECTIONS if sections is None else sections)])


def section(ws: Workspace, db: Database, title: str, builder: SectionBuilder, empty: str
             ) -> tuple[str, pl.DataFrame | None, str]:
    """One section; a broken file it reads leaves the section out with the reason (Home lists the file)."""
    try:
        return title, builder(ws, db), empty
    except WorkbenchError:  # the message names a file: shown as text in Home's table, not in this markdown
        return title, None, "Not shown: a file this section reads cannot be read (listed at the top of this page)."

"""Gold sets, answers and reports in a workspace, and the history of reports.

```
gold/sets/{set}/*_eval.jsonl        the set's items (SPEC §8), loaded in file-name order
gold/sets/{set}/gold.json           optional: the set's scoring config (core.gold.scoring)
gold/sets/{set}/reference.jsonl     optional: reference text an offline answerer may read
gold/answers/{set}/{name}.jsonl     answers {sample_id, predicted[, error]}
gold/reports/{name}.json            reports (SPEC §8 layout)
gold/history.jsonl                  one line per report saved here: set, model, method, metrics
```
Every name goes through :func:`core.workspace.check_name`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from core.base.files import append_jsonl, read_jsonl_log
from core.base.settings import require_writable
from core.gold.items import EVAL_GLOB, eval_files_in
from core.gold.report import write_report
from core.gold.scoring import CONFIG_NAME, GoldConfig, load_config
from core.workspace import Workspace, check_name


def sets_dir(ws: Workspace) -> Path:
    return ws.gold_dir / "sets"


def set_dir(ws: Workspace, name: str) -> Path:
    return sets_dir(ws) / check_name("gold set", name)


def list_sets(ws: Workspace) -> list[str]:
    """Sets of the workspace: folders under ``gold/sets`` holding ``*_eval.jsonl`` files."""
    base = sets_dir(ws)
    if not base.is_dir():
        return []
    return sorted(p.name for p in base.iterdir() if p.is_dir() and any(p.glob(EVAL_GLOB)))


def set_files(ws: Workspace, name: str) -> list[Path]:
    """The eval files of a set, sorted by name."""
    return eval_files_in(set_dir(ws, name))


def set_config(ws: Workspace, name: str) -> GoldConfig:
    """The set's ``gold.json`` config, or SPEC defaults."""
    return load_config(set_dir(ws, name) / CONFIG_NAME)


def answers_dir(ws: Workspace, set_name: str) -> Path:
    return ws.gold_dir / "answers" / check_name("gold set", set_name)


def answers_path(ws: Workspace, set_name: str, name: str) -> Path:
    return answers_dir(ws, set_name) / f"{check_name('answers', name)}.jsonl"


def list_answers(ws: Workspace, set_name: str) -> list[str]:
    """Names of the answers files of a set."""
    base = answers_dir(ws, set_name)
    return sorted(p.stem for p in base.glob("*.jsonl")) if base.is_dir() else []


def reports_dir(ws: Workspace) -> Path:
    return ws.gold_dir / "reports"


def report_path(ws: Workspace, name: str) -> Path:
    return reports_dir(ws) / f"{check_name('report', name)}.json"


def list_reports(ws: Workspace) -> list[str]:
    """Names of the reports saved in the workspace."""
    base = reports_dir(ws)
    return sorted(p.stem for p in base.glob("*.json")) if base.is_dir() else []


def history_path(ws: Workspace) -> Path:
    return ws.gold_dir / "history.jsonl"


def slug(text: str, *, limit: int = 40) -> str:
    """A name-safe slug of free text.

    >>> slug("gpt-4o mini (v2)/test")
    'gpt-4o-mini-v2-test'
    """
    out = re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-._")[:limit].strip("-._")
    return out or "answers"


def default_report_name(set_name: str, source: str, timestamp: str) -> str:
    """``{set}-{source}-{YYYYmmddTHHMMSS}``, checked as a name.

    >>> default_report_name("demo_glossary", "offline-retrieval-top1", "2026-01-05T09:00:00Z")
    'demo_glossary-offline-retrieval-top1-20260105T090000'
    """
    stamp = re.sub(r"[^0-9T]", "", timestamp)[:15]
    return check_name("report", f"{slug(set_name, limit=24)}-{slug(source, limit=24)}-{stamp}")


def save_report(ws: Workspace, report: dict[str, Any], *, set_name: str, name: str, source: str,
                accuracy: str) -> Path:
    """Write a report under ``gold/reports/`` (atomic) and add it to the history."""
    require_writable("save a gold report")
    path = write_report(report_path(ws, name), report)
    append_jsonl(history_path(ws), [{
        "report": name, "set": set_name, "model": report["metadata"]["model"], "source": source,
        "accuracy_method": accuracy, "timestamp": report["metadata"]["timestamp"],
        "total_samples": report["metadata"]["total_samples"], **report["aggregate_metrics"],
    }])
    return path


def history(ws: Workspace, set_name: str | None = None) -> list[dict[str, Any]]:
    """History lines (latest line per report whose file still exists), oldest first."""
    latest: dict[str, dict[str, Any]] = {}
    for row in read_jsonl_log(history_path(ws)):
        if isinstance(row.get("report"), str):
            latest[row["report"]] = row
    rows = [r for r in latest.values()
            if (set_name is None or r.get("set") == set_name) and report_path(ws, r["report"]).exists()]
    return sorted(rows, key=lambda r: (str(r.get("timestamp")), r["report"]))

"""Send a report's answers to a labeling project for human rating (core.labeling items API)."""

from __future__ import annotations

from typing import Any

from core.base.settings import require_writable
from core.workspace import Workspace, check_name

GUIDELINES = """Rate how well the answer matches the reference answer of the gold set.
-1 = wrong or unrelated, 0 = partly right, +1 = says the same as the reference (any wording).
Ignore style; check facts, numbers and the legal or NS 4102 reference."""
SCALE = ("Wrong", "Partly right", "Same as reference")


def label_records(report: dict[str, Any], *, report_name: str, set_name: str) -> list[dict[str, Any]]:
    """Item records (SPEC §6.1) of a report's answers: question and reference in the prompt, the
    answer as the response; no score travels with them (raters are blinded)."""
    records = []
    for s in report["sample_results"]:
        records.append({
            "dataset": set_name, "identifier": s["sample_id"], "run_id": report_name,
            "prompt_title": s["question"],
            "prompt_body": f"Question:\n{s['question']}\n\nReference answer:\n{s['expected']}",
            "response_text": s["predicted"], "model_id": report["metadata"]["model"],
            "metadata": {"domain": s["domain"], "task": s["task"], "gold_report": report_name},
        })
    return records


def send_to_labeling(ws: Workspace, report: dict[str, Any], *, report_name: str, set_name: str,
                     project: str) -> dict[str, Any]:
    """Add the report's answers as items of ``project`` (created if missing); idempotent per report."""
    require_writable("send answers to a labeling project")
    check_name("project", project)
    # deferred: heavy optional import (sqlalchemy, ~150 ms), only needed when answers are sent
    from core.labeling import items as labeling_items

    # deferred: core.labeling.store pulls in sqlalchemy (~350 ms), only needed when send_to_labeling() runs
    from core.labeling.store import open_store

    store = open_store(ws.root)
    proj = labeling_items.create_project(store, project, guidelines=GUIDELINES, scale_labels=SCALE,
                                         exist_ok=True)
    result = labeling_items.add_items(store, proj, label_records(report, report_name=report_name, set_name=set_name))
    return {"project": project, **result.as_dict()}

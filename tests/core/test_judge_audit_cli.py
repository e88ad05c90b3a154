"""``workbench audit plan`` / ``audit report`` and ``gt uncertainty --audit`` end to end on a copy of
the small demo: the plan becomes a project, answers become a report, and the audit gives the same
verdict probabilities as the confusion file the report exports."""

from __future__ import annotations

import json
import shutil

from core.cli import main
from core.ground_truth.audit.plan import review_key
from core.judgments import load_judgments
from core.labeling import assignment, items
from core.labeling.reports import items_frame
from core.labeling.store import close_stores, open_store
from core.workspace import Workspace

FIELDS = ("incident_severity", "account_type", "safety_interaction")


def run(capsys, root, *argv) -> tuple[int, str]:
    code = main(["--workspace", str(root), "--no-progress", *argv])
    out, _ = capsys.readouterr()
    return code, out


def test_plan_answer_report_and_uncertainty(capsys, small_demo, tmp_path):
    root = tmp_path / "ws"
    shutil.copytree(small_demo, root)
    code, out = run(capsys, root, "audit", "plan", "--dataset", "demo", "--task", "G1a", "--judge", "heuristic-v2",
                    "--target", "0.9", "--project", "aud", "--json")
    plan = json.loads(out)
    assert code == 0 and plan["project"] == "aud" and plan["reviews"] >= plan["knife_edge_reviews"] > 0
    ws = Workspace(root)
    store = open_store(root)
    project = items.get_project(store, "aud")
    own = load_judgments(ws, "demo", "G1a", "heuristic-v2", apply_overrides=False)
    judged = {review_key(r["business_id"], r["idx"]): {f: r[f] for f in FIELDS} for r in own.iter_rows(named=True)}
    keys = dict(items_frame(store, project).select("item_id", "identifier").iter_rows())
    moderate = 0
    for item_id, key in sorted(keys.items()):  # both raters: the judge's answers, every other moderate one is none
        answers = dict(judged[key])
        if answers["incident_severity"] == "moderate":
            moderate += 1
            answers["incident_severity"] = "none" if moderate % 2 else "moderate"
        for rater in ("ana", "ben"):
            assignment.submit_answers(store, project, rater, item_id, answers, take_next=False)
    close_stores()
    out_file = tmp_path / "confusion.json"
    code, out = run(capsys, root, "audit", "report", "--project", "aud", "--judge", "heuristic-v2", "--json",
                    "--confusion-out", str(out_file))
    report = json.loads(out)
    assert code == 0 and report["consensus"]["items"] == len(keys) and report["consensus"]["needs_adjudication"] == 0
    (field,) = [f for f in report["judges"][0]["fields"] if f["field"] == "incident_severity"]
    row = json.loads(out_file.read_text())["incident_severity"]["moderate"]
    assert moderate >= 2 and 0 < row["none"] < 1 and abs(sum(row.values()) - 1) < 1e-9
    assert field["kappa"] is not None and field["kappa"] < 1
    common = ["gt", "uncertainty", "--dataset", "demo", "--task", "G1a", "--formula", "G1_allergy_V2", "--k", "25,50",
              "--judge", "heuristic-v2", "--json"]
    _, by_audit = run(capsys, root, *common, "--audit", "aud")
    _, by_file = run(capsys, root, *common, "--confusion", str(out_file))
    a, f = json.loads(by_audit)["restaurants"], json.loads(by_file)["restaurants"]
    assert [(r["business_id"], r["k"], r["p"]) for r in a] == [(r["business_id"], r["k"], r["p"]) for r in f]

"""A judge audit's consensus and report (issue 28): majority and ties to adjudication on a real
label store, the confusion, precision with Wilson intervals and κ by hand."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from core.base.errors import WorkbenchError
from core.ground_truth.audit.report import audited, field_report, judge_report
from core.labeling import answer_consensus, assignment, items
from core.labeling.answers import AnswerField
from core.labeling.identity import set_role
from core.labeling.reports import items_frame
from core.labeling.store import LabelStore

SEV = AnswerField("incident_severity", "how severe", (("none", ""), ("mild", ""), ("moderate", ""), ("severe", "")))
ACC = AnswerField("account_type", "whose account", (("none", ""), ("firsthand", ""), ("secondhand", "")))


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 3, 1)

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


@pytest.fixture()
def store(tmp_path):
    s = LabelStore(f"sqlite:///{tmp_path / 'labels.sqlite'}", clock=Clock())
    s.ensure_schema()
    yield s
    s.dispose()


@pytest.fixture()
def audit(store):
    sample = {f"b:{i}": {"business_id": "b", "idx": i, "stratum": "s", "knife_edge": i == 0, "weight": 1.0 if i == 0 else 2.0}
              for i in range(3)}
    p = items.create_project(store, "aud", target_raters=2, answer_fields=[SEV, ACC],
                             kind_spec={"audit": {"dataset": "d", "task": "G1a", "judge": "j", "definition": "x",
                                                  "k": 25, "target": 0.2, "sample": sample}})
    items.add_items(store, p, [{"dataset": "d", "identifier": key, "prompt_body": "q", "response_text": f"review {key}"}
                               for key in sample])
    return items.get_project(store, "aud")


def _answer(store, project, rater, by_key):
    ids = {key: item_id for item_id, key in items_frame(store, project).select("item_id", "identifier").iter_rows()}
    for key, (sev, acc) in by_key.items():
        assignment.submit_answers(store, project, rater, ids[key], {"incident_severity": sev, "account_type": acc},
                                  take_next=False)
    return ids


def test_majority_ties_and_adjudication(store, audit):
    _answer(store, audit, "ana", {"b:0": ("moderate", "firsthand"), "b:1": ("none", "none")})
    ids = _answer(store, audit, "ben", {"b:0": ("none", "firsthand"), "b:1": ("none", "none")})
    frame = answer_consensus.compute_answer_consensus(store, audit)
    source = {(r["item_id"], r["field"]): r["source"] for r in frame.iter_rows(named=True)}
    assert source[(ids["b:0"], "incident_severity")] == answer_consensus.NEEDS_ADJUDICATION
    assert source[(ids["b:0"], "account_type")] == "unanimous"
    assert ids["b:2"] not in {r["item_id"] for r in frame.iter_rows(named=True)}  # one rater short
    with pytest.raises(WorkbenchError):
        answer_consensus.adjudicate_field(store, audit, ids["b:0"], "incident_severity", "none", adjudicator="ana",
                                          note="not a reaction")
    set_role(store, "cleo", "adjudicator")
    answer_consensus.adjudicate_field(store, audit, ids["b:0"], "incident_severity", "none", adjudicator="cleo",
                                      note="no reaction described")
    rows, summary = audited(store, audit)
    assert summary[answer_consensus.NEEDS_ADJUDICATION] == 0 and summary["adjudicated"] == 1
    assert {r["key"]: r["consensus"] for r in rows} == {
        "b:0": {"incident_severity": "none", "account_type": "firsthand"},
        "b:1": {"incident_severity": "none", "account_type": "none"}}
    assert {r["key"]: r["weight"] for r in rows} == {"b:0": 1.0, "b:1": 2.0}
    report = judge_report(rows, {"b:0": {"incident_severity": "moderate", "account_type": "firsthand"},
                                 "b:1": {"incident_severity": "none", "account_type": "none"}}, [SEV, ACC], "j")
    assert report["confusion"]["incident_severity"] == {"none": {"none": 1.0}, "moderate": {"none": 1.0}}


def test_field_report_by_hand():
    """Judged/true pairs (weight): moderate→moderate ×3 (1), moderate→none ×1 (3), none→none ×4 (1).
    Precision of moderate: weighted 3/(3+3) = 0.5 at n_eff (6)²/(3+9) = 3; Wilson(0.5, 3): centre 0.5, half-width
    1.96·√(0.25/3 + 3.8415/36)/(1 + 3.8415/3) = 0.3747 → [0.1253, 0.8747].
    Weighted table [[4, 0], [3, 3]] (rows judged none, moderate): p_o = 7/10, p_e = 0.4·0.7 + 0.6·0.3 = 0.46,
    κ = 0.24/0.54 = 0.4444."""
    pairs = [("moderate", "moderate", 1.0)] * 3 + [("moderate", "none", 3.0)] + [("none", "none", 1.0)] * 4
    r = field_report(SEV, pairs)
    assert r["values"] == ["none", "moderate"] and r["matrix"] == [[4, 0], [1, 3]]
    moderate = next(v for v in r["per_value"] if v["value"] == "moderate")
    assert moderate["precision"] == pytest.approx(0.5) and moderate["precision_n_eff"] == pytest.approx(3.0)
    assert (round(moderate["precision_low"], 4), round(moderate["precision_high"], 4)) == (0.1253, 0.8747)
    assert r["kappa"] == pytest.approx(0.24 / 0.54)
    assert r["confusion"] == {"none": {"none": 1.0}, "moderate": {"none": 0.5, "moderate": 0.5}}
    assert r["unaudited"] == ["mild", "severe"]

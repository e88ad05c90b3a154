"""AppTest of the Ground truth page's "Compare judges" section and its offline-judge note."""

from __future__ import annotations

from core.judgments import append_judgments, read_log, set_gt_judge
from tests.helpers.gt_workspace import DATASET, FLIP, JUDGE, TASK, build_gt_workspace

GT = "app_pages/ground_truth.py"


def _second_judge(root, judge: str, *, drop_incidents_of: str) -> None:
    """A copy of the tiny workspace's judgments as ``judge``, with ``drop_incidents_of``'s incidents cleared."""
    ws = build_gt_workspace(root)
    records = []
    for row in read_log(ws, DATASET, TASK, JUDGE).iter_rows(named=True):
        fields = dict(row["fields"])
        if row["business_id"] == drop_incidents_of:
            fields.update(incident_severity="none", account_type="none")
        records.append({"business_id": row["business_id"], "review_id": row["review_id"], "idx": row["idx"],
                        "prompt_version": "test", "fields": fields, "excerpt": row["excerpt"]})
    append_judgments(ws, DATASET, TASK, judge, records)
    return ws


def test_compare_judges_section_shows_agreement_confusions_and_the_restaurant_that_differs(app_factory, tmp_path):
    ws = _second_judge(tmp_path / "ws", "heuristic-v2", drop_incidents_of=FLIP)
    set_gt_judge(ws, DATASET, TASK, "heuristic-v2")
    at = app_factory(ws.root).run()
    at.switch_page(GT).run()
    assert not at.exception, at.exception
    # the GT judge is offline: the page says so, with its agreement with the other (LLM-named) judge
    note = " ".join(i.value for i in at.info)
    assert "offline judge heuristic-v2" in note and f"LLM judge {JUDGE}" in note
    assert "gt.compare.a" not in [s.key for s in at.selectbox]  # the comparison is drawn when its tab opens
    at.session_state["gt.tab"] = "Compare judges"
    at.run()
    at.selectbox(key="gt.compare.a").set_value(JUDGE).run()
    at.selectbox(key="gt.compare.b").set_value("heuristic-v2").run()
    assert not at.exception, at.exception
    differing = next(df.value for df in at.dataframe if "Review idx" in df.value.columns)
    assert set(differing["Restaurant"]) == {"Flip Bistro"}
    assert all("/trace?" in link and f"business_id={FLIP}" in link for link in differing["Trace"])
    assert set(differing["Review idx"]) == {30}  # the severe firsthand incident judge B does not see
    assert set(differing["incident severity"]) == {"severe → none"}
    specs = [c.proto.spec for c in at.get("vega_lite_chart")]
    assert sum("incident severity: " in spec for spec in specs) == 1  # one heatmap per field, titled


def test_compare_judges_needs_two_judges(app_factory, tmp_path):
    ws = build_gt_workspace(tmp_path / "ws")
    at = app_factory(ws.root).run()
    at.switch_page(GT).run()
    assert not at.exception, at.exception
    at.session_state["gt.tab"] = "Compare judges"
    at.run()
    assert any("needs two judgment sets" in c.value for c in at.caption)


def test_trace_link_shows_both_judges_values_on_the_review_cards(app_factory, tmp_path):
    ws = _second_judge(tmp_path / "ws", "heuristic-v2", drop_incidents_of=FLIP)
    at = app_factory(ws.root)
    at.query_params.update({"dataset": DATASET, "task": TASK, "formula": "v1", "k": "50", "business_id": FLIP,
                            "judge": JUDGE, "compare": "heuristic-v2"})
    at.run()
    at.switch_page("app_pages/trace.py").run()
    assert not at.exception, at.exception
    assert at.selectbox(key="trace.compare").value == "heuristic-v2"
    text = "\n".join(m.value for m in at.markdown)
    # idx 30 is the severe firsthand incident judge B cleared: its card shows B's values and the difference
    assert ":gray[heuristic\\-v2:] " in text  # the second judge's line (its name escaped as text)
    assert "differs in incident severity, account type" in text


def test_offline_provenance_names_the_offline_model_and_gt_judge(tmp_path):
    from core.ui.judges import offline_provenance

    ws = _second_judge(tmp_path / "ws", "heuristic-v2", drop_incidents_of=FLIP)
    set_gt_judge(ws, DATASET, TASK, "heuristic-v2")
    run = {"model": "heuristic", "task_id": TASK, "config": {"dataset": DATASET},
           "gt": {"origin": "computed", "judge": "heuristic-v2", "dataset": DATASET, "task": TASK}}
    text = offline_provenance(ws, run)
    assert "offline model heuristic" in text and "offline judge heuristic-v2" in text
    # the run's own GT lineage names its judge: the workspace's current GT judge is never read for it
    set_gt_judge(ws, DATASET, TASK, JUDGE)
    assert "offline judge heuristic-v2" in offline_provenance(ws, {**run, "model": "gpt-4o-mini"})
    llm_gt = {**run, "model": "gpt-4o-mini", "gt": {**run["gt"], "judge": JUDGE}}
    assert offline_provenance(ws, llm_gt) is None
    assert offline_provenance(ws, {**llm_gt, "gt": None}) is None


def test_trace_says_when_its_judge_is_offline(app_factory, tmp_path):
    ws = _second_judge(tmp_path / "ws", "heuristic-v2", drop_incidents_of=FLIP)
    set_gt_judge(ws, DATASET, TASK, "heuristic-v2")
    at = app_factory(ws.root)
    at.query_params.update({"dataset": DATASET, "task": TASK, "formula": "v1", "k": "50", "business_id": FLIP})
    at.run()
    at.switch_page("app_pages/trace.py").run()
    assert not at.exception, at.exception
    assert any("offline judge heuristic\\-v2" in c.value for c in at.caption)  # a name from data, escaped

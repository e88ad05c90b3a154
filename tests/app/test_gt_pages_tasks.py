"""The Ground truth and Trace pages for a task with another verdict scale (issue 11): the demo's
business-dining task, its rule policy's conditions in the trace."""

from __future__ import annotations

import json

from core.ground_truth import compute_gt
from core.workspace import Workspace

GT, TRACE = "app_pages/ground_truth.py", "app_pages/trace.py"


def test_gt_page_of_the_business_task_uses_its_scale(app_factory, small_demo):
    at = app_factory(small_demo).run()
    at.switch_page(GT).run()
    at.selectbox(key="gt.task").set_value("G2_meetings").run()
    assert not at.exception, at.exception
    assert at.selectbox(key="gt.definition").options == ["G2_meetings_V1", "G2_meetings_V2"]
    dist = next(df.value for df in at.dataframe if "Poor fit" in df.value.columns)
    assert list(dist.columns) == ["K", "Poor fit", "Workable", "Great fit", "total"]
    assert set(dist["total"]) == {12}
    from core.ground_truth.views.charts import verdict_palette

    palette = verdict_palette(["Poor fit", "Workable", "Great fit"])  # ordinal colours of the policy's own scale
    specs = [c.proto.spec for c in at.get("vega_lite_chart")]
    assert specs and all("Low Risk" not in s for s in specs)
    assert any(f'"domain": ["Poor fit", "Workable", "Great fit"], "range": {json.dumps(list(palette.values()))}' in s
               for s in specs)


def test_trace_page_shows_rule_conditions_against_thresholds(app_factory, small_demo):
    frame = compute_gt(Workspace(small_demo), "demo", "G2_meetings", "G2_meetings_V1", [25])
    row = frame.sort("n_incidents", descending=True).row(0, named=True)
    at = app_factory(small_demo).run()
    at.query_params.update({"dataset": "demo", "task": "G2_meetings", "formula": "G2_meetings_V1", "k": "25",
                            "business_id": row["business_id"]})
    at.switch_page(TRACE).run()
    assert not at.exception, at.exception
    text = "\n".join(str(m.value) for m in [*at.markdown, *at.caption]) + "\n".join(
        str(h.proto.body) for h in at.get("html"))
    assert "BUSINESS MEALS THAT WENT WELL" in text.upper() and "AT K = 25" in text.upper()
    assert row["verdict"] in text

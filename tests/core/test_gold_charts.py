"""Gold charts are Altair specs with the goal rule and the data the page passes."""

from __future__ import annotations

import json

import altair as alt

from core.gold import charts, store
from core.gold.compare import breakdown_frame, compare_reports, history_frame, samples_frame
from core.gold.demo import DEMO_SET, write_demo_gold
from core.gold.report import read_report


def test_charts_build_from_the_demo_reports(workspace):
    write_demo_gold(workspace)
    hist = store.history(workspace, DEMO_SET)
    a, b = (read_report(store.report_path(workspace, h["report"])) for h in hist[1:])
    for chart in (charts.breakdown_chart(breakdown_frame(b, "task"), goal=0.9, title="task"),
                  charts.status_chart(samples_frame(b)),
                  charts.history_chart(history_frame(hist), goal=0.9),
                  charts.compare_chart(compare_reports(a, b), label_a="A", label_b="B")):
        assert isinstance(chart, (alt.Chart, alt.LayerChart))
        spec = json.dumps(chart.to_dict())
        assert '"$schema"' in spec
    goal = json.dumps(charts.breakdown_chart(breakdown_frame(b, "domain"), goal=0.9, title="domain").to_dict())
    assert "pass-rate goal 90%" in goal

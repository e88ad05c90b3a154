"""Altair charts of the GT pages (core/charts): specs carry the data, encodings, colours and rules."""

from __future__ import annotations

import altair as alt
import polars as pl

from core.ground_truth import VERDICTS
from core.ground_truth.views import charts

DIST = pl.DataFrame({"k": [25, 50, None], "Low": [99, 96, 93], "High": [1, 2, 5], "Critical": [0, 2, 2],
                     "total": [100, 100, 100]})


def _spec(chart: alt.TopLevelMixin) -> dict:
    return chart.to_dict()


def _rows(spec: dict) -> list[dict]:
    return [row for rows in spec["datasets"].values() for row in rows]


def _layers(spec: dict) -> list[dict]:
    return spec.get("layer") or spec.get("spec", {}).get("layer") or [spec]


def test_distribution_chart_has_every_count_and_the_verdict_colours():
    spec = _spec(charts.distribution_chart(DIST))
    rows = _rows(spec)
    assert {(r["k_label"], r["verdict"], r["count"]) for r in rows} >= {("25", "High Risk", 1), ("all", "Low Risk", 93)}
    bars = _layers(spec)[0]
    assert bars["mark"]["type"] == "bar"
    assert bars["encoding"]["x"]["sort"] == ["25", "50", "all"]
    assert bars["encoding"]["color"]["scale"]["range"] == [charts.VERDICT_HEX[v] for v in VERDICTS]
    assert bars["encoding"]["y"]["scale"]["type"] == "sqrt"
    assert _layers(spec)[1]["mark"]["type"] == "text"


def test_verdict_grid_chart_orders_rows_and_offers_a_cell_selection():
    long = pl.DataFrame({"business_id": ["a", "a", "b", "b"], "name": ["Alpha", "Alpha", "Beta", "Beta"],
                         "k_label": ["100", "25", "100", "25"], "verdict": ["High Risk", "Low Risk", "Low Risk",
                                                                             "Critical Risk"],
                         "score": [5.0, 1.0, 2.0, 9.5]})
    spec = _spec(charts.verdict_grid_chart(long, ["Beta", "Alpha"]))
    cells, text = _layers(spec)
    assert cells["encoding"]["y"]["sort"] == ["Beta", "Alpha"]
    assert cells["encoding"]["x"]["sort"] == ["25", "100"]
    assert any(t.get("field") == "score" for t in cells["encoding"]["tooltip"])
    param = (cells.get("params") or spec["params"])[0]  # Altair lifts a layer's params to the top
    assert param["name"] == charts.SELECTION and param["select"]["fields"] == ["business_id", "k_label"]
    assert text["encoding"]["text"]["field"] == "cell"  # the score to 1 decimal, "*" when fewer reviews than K
    assert cells["width"] == "container" if "width" in cells else spec["width"] == "container"
    assert {r["score"] for r in _rows(spec)} == {5.0, 1.0, 2.0, 9.5}


def test_score_chart_draws_the_thresholds():
    series = pl.DataFrame({"k_label": ["25", "50", "all"], "score": [3.0, 6.94, 1.44],
                           "verdict": ["Low Risk", "High Risk", "Low Risk"]})
    spec = _spec(charts.score_chart(series, [("High Risk", 4.0), ("Critical Risk", 8.0)]))
    marks = [layer["mark"]["type"] if isinstance(layer["mark"], dict) else layer["mark"] for layer in _layers(spec)]
    assert marks.count("rule") == 1 and "line" in marks and "circle" in marks
    values = {r.get("y") for r in _rows(spec) if "y" in r}
    assert values == {4.0, 8.0}
    assert any(r.get("text") == "Critical Risk ≥ 8.0" for r in _rows(spec))
    line = next(layer for layer in _layers(spec) if layer["mark"]["type"] == "line")
    assert line["encoding"]["y"]["scale"]["domain"][1] >= 8.0


def test_score_chart_without_thresholds_for_rule_policies():
    series = pl.DataFrame({"k_label": ["25"], "score": [0.0], "verdict": ["Low Risk"]})
    spec = _spec(charts.score_chart(series, []))
    assert all(layer["mark"]["type"] != "rule" for layer in _layers(spec))


def test_whatif_charts_compare_versions():
    compare = pl.DataFrame({"k": [25, 25], "k_label": ["25", "25"], "verdict": ["Low Risk", "Low Risk"],
                            "count": [99, 90], "version": ["committed", "what-if"]})
    spec = _spec(charts.whatif_distribution_chart(compare))
    assert spec["facet"]["column"]["field"] == "verdict" and spec["resolve"]["scale"]["y"] == "independent"
    a = pl.DataFrame({"k_label": ["25", "50"], "score": [3.0, 6.9], "verdict": ["Low Risk", "High Risk"]})
    b = pl.DataFrame({"k_label": ["25", "50"], "score": [3.0, 3.9], "verdict": ["Low Risk", "Low Risk"]})
    spec = _spec(charts.whatif_score_chart(a, b, [("High Risk", 4.0)], [("High Risk", 5.0)]))
    rules = [layer for layer in _layers(spec) if layer["mark"]["type"] == "rule"]
    assert len(rules) == 2 and rules[1]["mark"]["strokeDash"] == [1, 3]
    assert {r["version"] for r in _rows(spec) if "version" in r} == {"committed", "what-if"}
    same = _spec(charts.whatif_score_chart(a, b, [("High Risk", 4.0)], [("High Risk", 4.0)]))
    assert len([layer for layer in _layers(same) if layer["mark"]["type"] == "rule"]) == 1


def test_verdict_palette_is_ordinal_colour_blind_safe_and_generic():
    three = charts.verdict_palette(VERDICTS)
    assert list(three) == list(VERDICTS) and len(set(three.values())) == 3
    for n in range(1, 9):  # any ordered scale gets distinct colours, darker/more saturated as it goes
        pal = charts.verdict_palette([f"v{i}" for i in range(n)])
        assert len(set(pal.values())) == n
    # no green anywhere: the green channel never dominates both red and blue
    for colour in charts.verdict_palette([f"v{i}" for i in range(9)]).values():
        r, g, b = charts._rgb(colour)
        assert not (g > r and g > b), colour
    assert "green" not in charts.verdict_badges(VERDICTS).values()
    assert charts.VERDICT_HEX == three


def test_grid_marks_short_cells_and_outlines_the_selected_row():
    long = pl.DataFrame({"business_id": ["a", "a", "b"], "name": ["Alpha", "Alpha", "Beta"],
                         "k_label": ["25", "200", "25"], "verdict": ["Low Risk", "High Risk", "Low Risk"],
                         "score": [1.0, 5.0, 2.0], "short": [False, True, False]})
    spec = _spec(charts.verdict_grid_chart(long, ["Alpha", "Beta"], selected="b"))
    rows = {(r["business_id"], r["k_label"]): r for r in _rows(spec)}
    assert rows[("a", "200")]["cell"] == "5.0*" and rows[("a", "25")]["cell"] == "1.0"
    assert rows[("b", "25")]["picked"] and not rows[("a", "25")]["picked"]


def test_score_chart_draws_le_rules_and_per_k_thresholds():
    """A policy's "score ≤" rule and per-K thresholds are drawn (gt_views.score_thresholds rows)."""
    thresholds = pl.DataFrame({
        "verdict": ["Great fit"] * 3 + ["Poor fit"] * 3, "op": ["≥"] * 3 + ["≤"] * 3,
        "k_label": ["25", "50", "all"] * 2, "y": [20.0, 35.0, 60.0, -10.0, -10.0, -10.0],
        "constant": [False] * 3 + [True] * 3})
    series = pl.DataFrame({"k_label": ["25", "50", "all"], "score": [3.0, 40.0, -12.0],
                           "verdict": ["Workable", "Great fit", "Poor fit"]})
    spec = _spec(charts.score_chart(series, thresholds, verdicts=["Poor fit", "Workable", "Great fit"]))
    rows = _rows(spec)
    assert any(r.get("text") == "Poor fit ≤ -10.0" for r in rows)  # one rule across the chart
    assert {r["y"] for r in rows if r.get("text") == "Great fit ≥ per K"} == {20.0, 35.0, 60.0}
    marks = [layer["mark"]["type"] for layer in _layers(spec)]
    assert marks.count("rule") == 1 and marks.count("line") == 2  # the per-K threshold line and the score line
    scored = next(layer for layer in _layers(spec) if layer["encoding"].get("y", {}).get("scale"))
    domain = scored["encoding"]["y"]["scale"]["domain"]
    assert domain[0] <= -12.0 and domain[1] >= 60.0


def test_grid_of_a_rule_policy_writes_no_score():
    long = pl.DataFrame({"business_id": ["a", "a"], "name": ["A", "A"], "k_label": ["25", "50"],
                         "verdict": ["Workable", "Great fit"], "score": [0.0, 0.0], "short": [False, True]})
    spec = _spec(charts.verdict_grid_chart(long, ["A"], verdicts=["Poor fit", "Workable", "Great fit"], scored=False))
    assert [r["cell"] for r in _rows(spec)] == ["", "*"]

"""Issue 8: a retired rater code is marked "(retired)" wherever Label review lists a rater code:
raters' progress, the disagreement queue, the item's rater chart, rater pairs, the pair picker,
per-rater bias and test–retest."""

from __future__ import annotations

import json
import re

import pytest

from core.base.settings import labels_url
from core.labeling import assignment, identity, items
from core.labeling.store import LabelStore, close_stores
from core.ui.label_review import mark_retired, marked
from core.workspace import Workspace

REVIEW = "app_pages/label_review.py"


@pytest.fixture()
def ws(tmp_path):
    """Three raters on five items (so every pair shares ≥ 3 items), 'quinn' rated items 1-2 twice
    (repeat audits) and is retired; 'lead' adjudicates."""
    ws = Workspace(tmp_path / "ws").ensure("test")
    store = LabelStore(labels_url(ws.root))
    store.ensure_schema()
    project = items.create_project(store, "study")
    items.add_items(store, project, [{"dataset": "d", "identifier": f"i{k}", "prompt_title": f"Question {k}",
                                      "prompt_body": "Body", "response_text": "Answer"} for k in range(1, 6)])
    for k in range(1, 6):
        assignment.submit(store, project, "zed", k, 0.2 * k - 0.6)
        assignment.submit(store, project, "quinn", k, 0.6 - 0.2 * k)
        assignment.submit(store, project, "lead", k, 0.1 * k)
    for k in (1, 2):
        assignment.submit(store, project, "quinn", k, 0.5 - 0.2 * k)
    identity.set_role(store, "lead", "adjudicator")
    identity.retire_rater(store, "quinn", by="lead", reason="left the study")
    store.dispose()
    yield ws
    close_stores()


def open_section(app_factory, ws, section):
    at = app_factory(ws.root)
    at.query_params["rater"] = "lead"
    at.run()
    at.switch_page(REVIEW).run()
    at.session_state["label_review.section"] = section
    at.run()
    assert not at.exception, at.exception
    return at


def table_with(at, column):
    return next(df.value for df in at.dataframe if column in df.value.columns)


def chart_values(at, field):
    """Every value of ``field`` in the data of the page's Altair charts (inline or sent as Arrow)."""
    from streamlit import dataframe_util

    values = set()
    for chart in at.get("vega_lite_chart"):
        for data in (json.loads(chart.proto.spec).get("datasets") or {}).values():
            values |= {row[field] for row in data if field in row}
        for named in chart.proto.datasets:
            frame = dataframe_util.convert_arrow_bytes_to_pandas_df(named.data.data)
            if field in frame.columns:
                values |= set(frame[field])
    return values


def test_marked_and_mark_retired():
    import polars as pl

    frame = pl.DataFrame({"rater": ["a", "b"], "raters": [["a", "b"], ["b"]]})
    out = mark_retired(frame, ["rater", "raters"], {"b"})
    assert out["rater"].to_list() == ["a", "b (retired)"]
    assert out["raters"].to_list() == [["a", "b (retired)"], ["b (retired)"]]
    assert mark_retired(frame, ["rater"], set()).equals(frame)
    assert marked("b", {"b"}) == "b (retired)" and marked("a", {"b"}) == "a"


def test_agreement_tables_mark_the_retired_code(app_factory, ws):
    at = open_section(app_factory, ws, "Agreement")
    pairs = table_with(at, "rater_a")
    listed = set(pairs["rater_a"]) | set(pairs["rater_b"])
    assert "quinn (retired)" in listed and "quinn" not in listed and {"zed", "lead"} <= listed
    assert all(re.fullmatch(r"-?\d\.\d{3} \[-?\d\.\d{3}, -?\d\.\d{3}\]|n/a", v) for v in pairs["pearson"])
    retest = table_with(at, "n_pairs")
    assert list(retest["rater"]) == ["quinn (retired)", "(all)"]
    picker = at.selectbox(key="label_review.pair")
    assert any("quinn (retired)" in o for o in picker.options)
    bias = chart_values(at, "rater")
    assert "quinn (retired)" in bias and "quinn" not in bias
    quinn_pair = next(o for o in picker.options if "quinn (retired)" in o)
    picker.set_value(quinn_pair).run()  # the scatter of a pair with the retired code still draws its points
    assert not at.exception, at.exception
    assert chart_values(at, "a") and chart_values(at, "b")


def test_coverage_and_queue_mark_the_retired_code(app_factory, ws):
    at = open_section(app_factory, ws, "Coverage")
    assert "quinn (retired)" in set(table_with(at, "rater")["rater"])
    at = open_section(app_factory, ws, "Disagreements")
    queue = table_with(at, "raters")
    assert all("quinn (retired)" in r and "quinn," not in r for r in queue["raters"])
    assert "quinn (retired)" in chart_values(at, "rater")  # the item's rater chart

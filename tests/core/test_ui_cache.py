"""core/ui/cache.py: loaders keyed by data stamps. A write invalidates exactly what it changed
(no cache is ever cleared), and both pages share one loader per thing."""

from __future__ import annotations

from pathlib import Path

import pytest
import streamlit as st

from core.ground_truth import views as gt_views
from core.ground_truth.coverage import short_counts
from core.ground_truth.variants import save_variant
from core.ground_truth.views.paging import page_of
from core.judgments.overrides import add_override
from core.ui import cache
from tests.helpers.gt_workspace import DATASET, FLIP, TASK, build_gt_workspace

KS = [25, 50]
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture()
def counted(tmp_path, monkeypatch):
    st.cache_data.clear()
    st.cache_resource.clear()
    ws = build_gt_workspace(tmp_path / "ws")
    calls: list[str] = []
    real = gt_views.compute_frame

    def counting(inputs, definition, ks, **kw):
        calls.extend([getattr(definition, "name", definition)] * len(ks))  # one per K computed
        return real(inputs, definition, ks, **kw)

    monkeypatch.setattr(gt_views, "compute_frame", counting)
    yield ws, calls
    st.cache_data.clear()
    st.cache_resource.clear()


def test_a_write_recomputes_only_what_depends_on_it(counted):
    ws, calls = counted
    v1 = cache.gt_frame(ws, DATASET, TASK, None, "v1", KS)
    cache.gt_frame(ws, DATASET, TASK, None, "v2", KS)
    cache.gt_frame(ws, DATASET, TASK, None, "v1", KS)
    assert calls == ["v1", "v1", "v2", "v2"]  # each K once; the second v1 is served from the cache
    save_variant(ws, "strict", "v1", {"CRITICAL_THRESHOLD": 30.0})
    cache.gt_frame(ws, DATASET, TASK, None, "v1", KS)
    cache.gt_frame(ws, DATASET, TASK, None, "v2", KS)
    assert calls == ["v1", "v1", "v2", "v2"]  # saving a variant leaves the committed definitions' frames alone
    strict = cache.gt_frame(ws, DATASET, TASK, None, "strict", KS)
    assert calls == ["v1", "v1", "v2", "v2", "v1", "v1"] and strict["variant"][0] == "strict"
    assert strict.filter(strict["business_id"] == FLIP)["verdict"].to_list() == ["Low Risk", "High Risk"]
    add_override(ws, DATASET, TASK, business_id=FLIP, idx=30, corrected={"incident_severity": "none"},
                 reason="no reaction", author="t")
    after = cache.gt_frame(ws, DATASET, TASK, None, "v1", KS)  # the override changed this task's stamp
    assert calls[-1] == "v1" and len(calls) == 8
    assert after.filter(after["business_id"] == FLIP)["verdict"].to_list() == ["Low Risk", "Low Risk"]
    assert v1.filter(v1["business_id"] == FLIP)["verdict"].to_list() == ["Low Risk", "Critical Risk"]


def test_pages_hold_no_loader_sql_or_cache_clear():
    pages = [ROOT / "app_pages" / f"{name}.py" for name in ("home", "data", "ground_truth", "trace")]
    for page in pages:
        text = page.read_text(encoding="utf-8")
        assert len(text.splitlines()) <= 150, page
        assert "st.cache_" not in text and "SELECT " not in text and "json.dumps" not in text, page
    glue = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "core" / "ui").glob("*.py"))
    assert ".clear()" not in glue  # a write invalidates through the stamps, never by clearing


def test_chart_specs_skip_validation_but_are_the_validated_spec(tmp_path):
    """cache.chart_spec exports without Altair's schema validation: the spec is the one a validated
    to_dict gives."""
    import altair as alt

    from core.ground_truth import get_definition
    from core.ground_truth.views import charts

    ws = build_gt_workspace(tmp_path / "ws")
    frame = gt_views.compute_frame(gt_views.load_inputs(ws, DATASET, TASK), "v1", [25, 50, None])
    series = gt_views.score_series(frame, FLIP)
    thresholds = gt_views.score_thresholds(get_definition("v1", None), [25, 50, None])

    def build() -> alt.TopLevelMixin:
        return charts.score_chart(series, thresholds)

    assert cache.unvalidated_spec(build) == build().to_dict(validate=True)


def test_frame_views_are_the_gt_views_and_follow_an_override(counted):
    """The page's per-frame views (keyed by the frame key) equal what gt_views computes from the
    frame, and an override changes the key, so the views of the new frame show it at once."""
    ws, _ = counted

    def views_of(frame):
        key = (cache.frame_key(ws, DATASET, TASK), None, "v1", tuple(KS))
        return key, cache.frame_views(key, frame)

    frame = cache.gt_frame(ws, DATASET, TASK, None, "v1", KS)
    key, views = views_of(frame)
    grid = gt_views.verdict_grid(frame)
    assert views.names == gt_views.display_names(frame)
    assert views.paths == dict(zip(grid["business_id"], grid["path"], strict=True))
    assert views.flips == gt_views.flips(frame).height and views.restaurants == frame["business_id"].n_unique()
    assert views.verdicts == gt_views.verdict_order(frame)
    assert views.grid.sort(gt_views.GRID_ORDERS["Highest score"][0], descending=[True, True, False],
                           maintain_order=True).drop("_rank").equals(grid)  # the rows, sorted by page
    for sort in gt_views.SORTS:
        for flips_only, search in ((False, ""), (True, ""), (False, "a")):
            want = gt_views.verdict_grid(frame, sort=sort, flips_only=flips_only, search=search)
            for number, size in ((1, 1), (1, 7), (2, 7), (99, 7)):
                page = cache.grid_page(key, frame, flips_only=flips_only, sort=sort, search=search, rank_by=None,
                                       number=number, size=size, views=views)
                assert page.rows.equals(page_of(want, number, size).rows) and page.total == want.height
    assert views.short_counts == short_counts(frame) and set(views.short_counts) == set(KS)
    assert gt_views.grid_long(frame, grid["business_id"].to_list(), views.names).equals(
        gt_views.grid_long(frame, grid["business_id"].to_list()))
    assert cache.verdict_grid(key, frame, flips_only=False, sort="Highest score", search="", rank_by=None,
                              views=views).equals(grid)
    shown = cache.verdict_grid(key, frame, flips_only=True, sort="Name", search="", rank_by=None)
    assert shown.equals(gt_views.verdict_grid(frame, flips_only=True, sort="Name"))
    assert cache.score_series(key, frame, FLIP).equals(gt_views.score_series(frame, FLIP))
    assert "Critical Risk (50)" in views.paths[FLIP]
    add_override(ws, DATASET, TASK, business_id=FLIP, idx=30, corrected={"incident_severity": "none"},
                 reason="no reaction", author="t")
    after = cache.gt_frame(ws, DATASET, TASK, None, "v1", KS)
    new_key, new_views = views_of(after)
    assert new_key != key and "Critical Risk (50)" not in new_views.paths[FLIP]


def test_data_stamp_checks_names_and_stats_files_on_every_call(tmp_path):
    """The stamp's folders are worked out once per Workspace object, but a bad name is still refused
    on every call and a file written between two calls changes the stamp."""
    ws = build_gt_workspace(tmp_path / "ws")
    before = gt_views.data_stamp(ws, DATASET, TASK)
    with pytest.raises(ValueError, match="invalid task name"):
        gt_views.data_stamp(ws, DATASET, "../x")
    with pytest.raises(ValueError, match="invalid dataset name"):
        gt_views.data_stamp(ws, "../etc", TASK)
    add_override(ws, DATASET, TASK, business_id=FLIP, idx=30, corrected={"incident_severity": "none"},
                 reason="no reaction", author="t")
    after = gt_views.data_stamp(ws, DATASET, TASK)
    assert after != before and any(name.startswith("overrides/") for name, _, _ in after)
    assert after == gt_views.data_stamp(type(ws)(ws.root), DATASET, TASK)  # a fresh object agrees


def test_cached_tables_and_charts_send_what_streamlit_would(tmp_path):
    """table_data gives st.dataframe the Arrow bytes it would make of the polars frame itself, and
    chart_spec's Arrow datasets are the bytes st.vega_lite_chart would make of the inline rows."""
    import json

    from streamlit import dataframe_util
    from streamlit.elements.vega_charts import _marshall_chart_data
    from streamlit.proto.VegaLiteChart_pb2 import VegaLiteChart

    from core.ground_truth import distribution_by_k
    from core.ground_truth.views import charts

    st.cache_data.clear()
    ws = build_gt_workspace(tmp_path / "ws")
    frame = gt_views.compute_frame(gt_views.load_inputs(ws, DATASET, TASK), "v1", [25, 50, None])
    table = gt_views.primitive_table(frame, 25)
    direct = dataframe_util.convert_pandas_df_to_arrow_bytes(dataframe_util.convert_anything_to_pandas_df(table))
    cached = cache.table_data(("t", 1), lambda: table)
    assert dataframe_util.convert_arrow_table_to_arrow_bytes(cached) == direct

    def build():
        verdicts = gt_views.verdict_order(frame)
        return charts.distribution_chart(distribution_by_k(frame, verdicts), verdicts)

    inline, arrow = VegaLiteChart(), VegaLiteChart()
    plain = cache.unvalidated_spec(build)
    _marshall_chart_data(inline, plain)
    _marshall_chart_data(arrow, cache.chart_spec(("c", 1), build))
    assert list(arrow.datasets) == list(inline.datasets) and len(arrow.datasets) >= 1
    assert json.dumps(plain) == json.dumps({k: v for k, v in cache.chart_spec(("c", 1), build).items() if k != "datasets"})
    st.cache_data.clear()


@pytest.mark.parametrize("scored", [True, False])
def test_grid_spec_re_marked_per_selection_is_the_built_one(tmp_path, scored):
    """grid_chart_spec builds the verdict grid once and re-marks the selected rows: what Streamlit
    sends (stabilized spec and Arrow datasets) is what building the chart for that selection sends."""
    import json

    from streamlit.elements.vega_charts import _marshall_chart_data, _stabilize_vega_json_spec
    from streamlit.proto.VegaLiteChart_pb2 import VegaLiteChart

    from core.ground_truth.views import charts

    st.cache_data.clear()
    ws = build_gt_workspace(tmp_path / "ws")
    frame = gt_views.compute_frame(gt_views.load_inputs(ws, DATASET, TASK), "v1", [25, 50, None])
    grid = gt_views.verdict_grid(frame)
    ids = grid["business_id"].to_list()

    def build(picked):
        return charts.verdict_grid_chart(gt_views.grid_long(frame, ids), grid["name"].to_list(), selected=picked,
                                         verdicts=gt_views.verdict_order(frame), scored=scored)

    def sent(spec):
        proto, spec = VegaLiteChart(), dict(spec)
        _marshall_chart_data(proto, spec)
        return _stabilize_vega_json_spec(json.dumps(spec)), [(d.name, d.data.data) for d in proto.datasets]

    for selected in (ids[0], ids[-1], FLIP, None, ids[0]):
        fresh = sent(cache.chart_spec(("fresh", scored, selected), lambda s=selected: build(s)))
        assert sent(cache.grid_chart_spec(("grid", scored), selected, build)) == fresh
    assert cache.picked_spec({"datasets": {"a": [], "b": []}, "data": {"name": "a"}}, "x") is None  # not a grid
    st.cache_data.clear()


def test_rows_at_one_k_do_not_depend_on_the_other_ks(tmp_path):
    """The primitive table of K is cached without the other K chosen (adding a K keeps it): the GT
    rows of one K are the same whatever other K are computed with it, for every definition."""
    ws = build_gt_workspace(tmp_path / "ws")
    inputs = gt_views.load_inputs(ws, DATASET, TASK)
    names = gt_views.definitions(TASK, ws)
    assert len(names) >= 3  # formulas and policies
    for name in names:
        tables = [gt_views.primitive_table(gt_views.compute_frame(inputs, name, ks), 50)
                  for ks in ([25, 50], [50], [10, 25, 50, 75, None], [50, 200])]
        assert all(t.equals(tables[0]) for t in tables[1:]), name


def test_gt_frame_keyed_is_gt_frame_with_its_key(counted):
    """The page's frame and key come from one reading of the stamps; the frame is gt_frame's (one
    cache entry for both pages) and the key is frame_key's."""
    ws, calls = counted
    frame, key = cache.gt_frame_keyed(ws, DATASET, TASK, None, "v1", KS)
    assert frame.equals(cache.gt_frame(ws, DATASET, TASK, None, "v1", KS)) and calls == ["v1", "v1"]
    assert key == (cache.frame_key(ws, DATASET, TASK), None, "v1", tuple(KS))
    save_variant(ws, "strict", "v1", {"CRITICAL_THRESHOLD": 30.0})
    again, new_key = cache.gt_frame_keyed(ws, DATASET, TASK, None, "v1", KS)
    assert calls == ["v1", "v1"] and new_key != key  # the frame is kept; the key (of charts naming variants) moves
    strict, _ = cache.gt_frame_keyed(ws, DATASET, TASK, None, "strict", KS)
    assert strict["variant"][0] == "strict" and calls == ["v1"] * 4
    wider = cache.gt_frame(ws, DATASET, TASK, None, "v1", [*KS, 100])  # adding a K computes that K only
    assert calls == ["v1"] * 5 and wider.filter(wider["k"] != 100).equals(frame)
    whole = gt_views.compute_frame(gt_views.load_inputs(ws, DATASET, TASK), "v1", [*KS, 100], dataset=DATASET, task=TASK)
    assert wider.drop("n_reviews_stored", "short_of_k").equals(whole)  # K by K is the frame of every K at once


def test_each_k_is_kept_beside_the_log_until_the_data_changes(counted, monkeypatch):
    """A new server process (caches cleared) reads each K's frame from beside the judge's log instead of
    computing it; an override (a new data stamp) computes it again; what-if changes are never kept."""
    from core.base import memo

    ws, calls = counted
    monkeypatch.setattr(memo, "MIN_BYTES", 0)  # the tiny log is kept like a large one
    first = cache.gt_frame(ws, DATASET, TASK, None, "v1", KS)
    assert calls == ["v1", "v1"]
    st.cache_resource.clear()
    st.cache_data.clear()
    again = cache.gt_frame(ws, DATASET, TASK, None, "v1", KS)
    assert again.equals(first) and calls == ["v1", "v1"]  # read, not computed
    assert len(list(ws.judgments_dir(DATASET, TASK).glob(".*.gt-*.parquet"))) == 2
    cache.gt_frame(ws, DATASET, TASK, None, "v1", KS, {"CRITICAL_THRESHOLD": 30.0})
    assert len(calls) == 4 and len(list(ws.judgments_dir(DATASET, TASK).glob(".*.gt-*.parquet"))) == 2
    add_override(ws, DATASET, TASK, business_id=FLIP, idx=30, corrected={"incident_severity": "none"},
                 reason="no reaction", author="t")
    st.cache_resource.clear()
    after = cache.gt_frame(ws, DATASET, TASK, None, "v1", KS)
    assert len(calls) == 6 and after.filter(after["business_id"] == FLIP)["verdict"].to_list() == ["Low Risk"] * 2

"""core/ui/cache.py: loaders keyed by data stamps. A write invalidates exactly what it changed
(no cache is ever cleared), and both pages share one loader per thing."""

from __future__ import annotations

from pathlib import Path

import pytest
import streamlit as st

from core import gt_views
from core.overrides import add_override
from core.ui import cache
from core.variants import save_variant
from tests.core.test_gt_views import DATASET, FLIP, TASK, build_gt_workspace

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
        calls.append(getattr(definition, "name", definition))  # a name or a definition object
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
    assert calls == ["v1", "v2"]  # the second v1 is served from the cache
    save_variant(ws, "strict", "v1", {"CRITICAL_THRESHOLD": 30.0})
    cache.gt_frame(ws, DATASET, TASK, None, "v1", KS)
    cache.gt_frame(ws, DATASET, TASK, None, "v2", KS)
    assert calls == ["v1", "v2"]  # saving a variant leaves the committed definitions' frames alone
    strict = cache.gt_frame(ws, DATASET, TASK, None, "strict", KS)
    assert calls == ["v1", "v2", "v1"] and strict["variant"][0] == "strict"
    assert strict.filter(strict["business_id"] == FLIP)["verdict"].to_list() == ["Low Risk", "High Risk"]
    add_override(ws, DATASET, TASK, business_id=FLIP, idx=30, corrected={"incident_severity": "none"},
                 reason="no reaction", author="t")
    after = cache.gt_frame(ws, DATASET, TASK, None, "v1", KS)  # the override changed this task's stamp
    assert calls[-1] == "v1" and len(calls) == 4
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

    from core import charts
    from core.ground_truth import get_definition

    ws = build_gt_workspace(tmp_path / "ws")
    frame = gt_views.compute_frame(gt_views.load_inputs(ws, DATASET, TASK), "v1", [25, 50, None])
    series = gt_views.score_series(frame, FLIP)
    thresholds = gt_views.score_thresholds(get_definition("v1"), [25, 50, None])

    def build() -> alt.TopLevelMixin:
        return charts.score_chart(series, thresholds)

    assert cache.unvalidated_spec(build) == build().to_dict(validate=True)

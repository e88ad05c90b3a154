"""AppTests of the Ground truth and Trace pages' controls: K coverage, K chips, selection,
saved variants, the paid judge's role check and pre-flight confirmation, URL values as text.

The tiny workspace (tests/helpers/gt_workspace.py) has 80 reviews per restaurant, so K = 100 and
K = 200 are larger than every restaurant's review count.
"""

from __future__ import annotations

import json
import re

import pytest

from core.ground_truth.variants import constants_sha256, load_variant, save_variant
from core.workspace import Workspace
from tests.helpers.gt_pages import GT, TRACE, _df, _distribution, _export_buttons, _gt, _trace
from tests.helpers.gt_workspace import FLIP, MILD, build_gt_workspace
from tests.helpers.jobs import wait_for_job

EIGHT_KS = ["25", "50", "75", "80", "100", "150", "200", "all"]


@pytest.fixture()
def tiny_root(tmp_path):
    build_gt_workspace(tmp_path / "ws")
    return tmp_path / "ws"


def _grid(at):
    return next(c for c in at.get("vega_lite_chart") if "picked" in c.proto.spec)


def _grid_spec(at) -> str:
    return _grid(at).proto.spec


def _grid_rows(at) -> list[dict]:
    """The heat map's data (sent beside the spec as Arrow)."""
    import pyarrow as pa

    return pa.ipc.open_stream(_grid(at).proto.datasets[0].data.data).read_all().to_pylist()


def _texts(at) -> str:
    parts = [e.value for kind in ("markdown", "caption", "warning", "info", "error", "success", "subheader", "title")
             for e in getattr(at, kind)]
    return "\n".join(str(p) for p in parts)


def test_eight_ks_a_bad_chip_and_k_above_the_reviews(app_factory, tiny_root):
    at = _gt(app_factory, tiny_root)
    at.multiselect(key="gt.ks").set_value([*EIGHT_KS, "abc"]).run()
    assert not at.exception, at.exception
    warnings = " ".join(w.value for w in at.warning)
    assert "Dropped K abc" in warnings  # the chip goes, the rest of the page stays
    assert at.multiselect(key="gt.ks").value == EIGHT_KS
    assert [r[0] for r in _distribution(at)] == EIGHT_KS
    assert at.selectbox(key="gt.judge").value == "test-judge"  # the judge selector is still there
    assert "3 of 3 restaurants have fewer than K=100, 150 or 200 reviews: their GT at those K uses" in warnings
    assert json.loads(_grid_spec(at))["width"] == "container"  # the grid takes its column's width, any number of K
    rows = _grid_rows(at)
    assert len(rows) == 3 * 8 and all(r["cell"].endswith("*") == (r["k_label"] in {"100", "150", "200"}) for r in rows)
    # and it stays exact: K = 100..200 equal K = 80 (every review), as the stored numbers say
    assert _distribution(at)[3][1:] == _distribution(at)[6][1:]


def test_huge_or_garbage_k_is_a_clean_message(app_factory, tiny_root):
    at = _gt(app_factory, tiny_root)
    at.multiselect(key="gt.ks").set_value(["25", "9" * 400, "-1"]).run()
    assert not at.exception, at.exception
    assert any("Dropped K" in w.value and "at most 1,000,000,000" in w.value for w in at.warning)
    trace = _trace(app_factory, tiny_root, business_id=FLIP, k="9" * 400)
    text = _texts(trace)
    assert "K from the link: invalid K" in text and "showing K=50" in text
    assert "Traceback" not in text and str(tiny_root) not in text and "/site-packages/" not in text


def test_find_a_restaurant_selects_it_and_the_grid_outlines_it(app_factory, tiny_root):
    at = _gt(app_factory, tiny_root)
    assert at.selectbox(key="gt.business_id").value == FLIP
    at.text_input(key="gt.search").input("mild").run()
    assert not at.exception
    assert at.selectbox(key="gt.business_id").value == MILD  # the panel follows the search
    assert {r["business_id"] for r in _grid_rows(at) if r["picked"]} == {MILD}
    assert any("Selected: Mild Diner" in c.value for c in at.caption)


def test_saved_variant_is_a_definition_on_the_gt_page(app_factory, tiny_root):
    ws = Workspace(tiny_root)
    save_variant(ws, "lenient", "v1", {"CRITICAL_THRESHOLD": 20.0})
    at = _gt(app_factory, tiny_root)
    assert "lenient" in at.selectbox(key="gt.definition").options
    at.selectbox(key="gt.definition").set_value("lenient").run()
    assert not at.exception, at.exception
    # Flip Bistro's 14.99 is High Risk under a Critical threshold of 20 (Critical Risk under v1)
    assert _distribution(at)[1] == ("50", 2, 1, 0, 3)
    sha = constants_sha256(load_variant(ws, "lenient"))
    assert any("saved variant of v1" in c.value and sha[:12] in c.value for c in at.caption)
    assert _export_buttons(at) == ["Download computed_gt_k200_lenient.json"]


def test_verdicts_use_one_colour_blind_safe_palette(app_factory, tiny_root):
    from core.ground_truth.views import charts

    at = _gt(app_factory, tiny_root)
    palette = charts.verdict_palette(["Low Risk", "High Risk", "Critical Risk"])
    for chart in at.get("vega_lite_chart"):
        for colour in ("#2f9e44", "#e03131"):  # the old green/red pair is gone everywhere
            assert colour not in chart.proto.spec
    assert palette["Low Risk"] in _grid_spec(at) and palette["Critical Risk"] in _grid_spec(at)
    trace = _trace(app_factory, tiny_root, business_id=FLIP)
    badges = "\n".join(m.value for m in trace.markdown)
    assert ":red-badge[Critical Risk]" in badges and ":green-badge[" not in badges


@pytest.fixture()
def openai_env(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-never-sent")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # never contacted by these tests
    monkeypatch.setenv("WORKBENCH_JUDGE_MODEL", "gpt-4o-mini")


def test_paid_judge_needs_an_admin_when_sign_in_is_configured(app_factory, workspace, openai_env):
    from tests.helpers.judging_dataset import build_judging_dataset

    build_judging_dataset(workspace, "d", restaurants=2)
    at = app_factory(workspace.root)
    at.secrets["auth"] = {"redirect_uri": "http://localhost:8501/oauth2callback", "cookie_secret": "x"}
    at.run()
    at.switch_page(GT).run()
    at.toggle(key="gt.use_openai").set_value(True).run()
    assert not at.exception, at.exception
    assert at.button(key="gt.run").disabled
    assert any("Sign in as an admin" in w.value for w in at.warning)
    assert not (workspace.root / "judgments" / "d" / "G1a").exists()


def test_paid_judge_shows_the_preflight_cost_and_waits_for_confirmation(app_factory, workspace, openai_env):
    from tests.helpers.judging_dataset import build_judging_dataset

    build_judging_dataset(workspace, "d", restaurants=2)  # 12 keyword-matched reviews
    at = _gt(app_factory, workspace.root)
    at.toggle(key="gt.use_openai").set_value(True).run()
    at.button(key="gt.run").click().run()
    assert not at.exception, at.exception
    confirm = "\n".join(m.value for m in at.markdown)
    assert "Confirm a paid run" in confirm and "12 reviews to judge" in confirm and "estimated $0.00" in confirm
    assert not (workspace.root / "judgments" / "d" / "G1a").exists()  # nothing sent before the confirmation
    at.button(key="gt.run_cancel").click().run()
    assert "Confirm a paid run" not in "\n".join(m.value for m in at.markdown)


def test_confirmed_paid_run_judges_through_the_local_endpoint(app_factory, workspace, monkeypatch):
    from tests.helpers.judging_dataset import build_judging_dataset
    from tests.helpers.llm_server import LLMServer, heuristic_responder

    build_judging_dataset(workspace, "d", restaurants=2)  # 12 keyword-matched reviews
    with LLMServer(heuristic_responder) as server:
        monkeypatch.setenv("OPENAI_API_KEY", "test")
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("WORKBENCH_JUDGE_MODEL", "gpt-4o-mini")
        at = _gt(app_factory, workspace.root)
        at.toggle(key="gt.use_openai").set_value(True).run()
        at.button(key="gt.run").click().run()
        assert sum(server.requests_by_key.values()) == 0  # the pre-flight sends nothing
        at.button(key="gt.run_confirm").click().run()
        assert not at.exception, at.exception
        job = wait_for_job(workspace.root, "judge")  # a background job, in its own process
        assert job["status"] == "finished", job.get("error")
        at.run()
        assert any("gpt-4o-mini: judged 12 reviews" in s.value.replace("\\", "") for s in at.success)  # markdown-escaped
        assert sum(server.requests_by_key.values()) == 12


INJECTIONS = {
    "dataset": "[Session expired, log in again](https://evil.example/login)",
    "business_id": "![pixel](https://evil.example/p.png)",
    "k": "[click](https://evil.example)",
}


def test_url_values_on_the_trace_page_are_shown_as_text(app_factory, tiny_root):
    at = app_factory(tiny_root).run()
    at.query_params.update({"task": "G1a", "formula": "v1", **INJECTIONS})
    at.switch_page(TRACE).run()
    assert not at.exception, at.exception
    rendered = _texts(at)
    assert "Session expired" in rendered and "evil\\.example" in rendered  # shown, escaped ...
    assert "](https://evil" not in rendered and "](http" not in rendered  # ... never as a link or an image
    assert "\\[Session expired" in rendered


def test_why_k_tables_show_after_and_score_effect_whole(app_factory, tiny_root):
    at = _trace(app_factory, tiny_root, business_id=FLIP)
    at.session_state["trace.tab"] = "Why K changes the verdict"
    at.run()
    moved, reviews = _df(at, "trace.k_moved"), _df(at, "trace.k_reviews")
    assert "Critical Risk" in list(moved["after"]) and list(reviews["score_effect"]) == [pytest.approx(12.72, abs=0.01)]
    frames = [d for d in at.dataframe if {"idx", "score_effect"} <= set(d.value.columns)]
    config = frames[0].proto.columns
    assert "score effect" in config and "width" in config  # labelled and sized, not cut off
    assert not any(re.search(r"\bNone\b", str(v)) for v in moved.astype(str).values.ravel())


def test_trace_of_a_saved_variant(app_factory, tiny_root):
    save_variant(Workspace(tiny_root), "lenient", "v1", {"CRITICAL_THRESHOLD": 20.0})
    at = _trace(app_factory, tiny_root, business_id=FLIP, formula="lenient")
    assert at.selectbox(key="trace.definition").value == "lenient" and at.query_params["formula"] == "lenient"
    assert "High Risk] **14.99** at K=50" in "\n".join(m.value for m in at.markdown)
    assert "Critical Risk (≥ 20)" in at.get("html")[0].proto.body  # the tree shows the variant's threshold
    at.session_state["trace.tab"] = "What-if"
    at.run()
    assert at.number_input(key="trace.whatif.v1.CRITICAL_THRESHOLD").value == 20.0  # starts from the variant

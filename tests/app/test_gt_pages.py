"""AppTest of the Ground truth and Trace pages on workspaces built in tmp_path.

The tiny workspace and its hand-computed scores are described in tests/helpers/gt_workspace.py.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

import pytest

from core.ground_truth import FORMULAS
from core.judgments.overrides import list_overrides
from tests.helpers.gt_pages import (
    ALLOWED_TAGS,
    _df,
    _distribution,
    _export_buttons,
    _gt,
    _links,
    _markdown,
    _metrics,
    _trace,
)
from tests.helpers.gt_workspace import CALM, DATASET, FLIP, MILD, TASK, build_gt_workspace
from tests.helpers.jobs import wait_for_job


@pytest.fixture()
def tiny_root(tmp_path):
    build_gt_workspace(tmp_path / "ws")
    return tmp_path / "ws"


# -- Ground truth page ------------------------------------------------------------------------------------
def test_gt_page_shows_distribution_grid_links_and_export(app_factory, tiny_root):
    at = _gt(app_factory, tiny_root)
    assert at.title[0].value == "Ground truth"
    assert _distribution(at) == [("25", 3, 0, 0, 3), ("50", 2, 0, 1, 3), ("100", 1, 1, 1, 3), ("200", 1, 1, 1, 3)]
    assert _metrics(at)["Verdict changes with K"] == "2"
    assert len(at.get("vega_lite_chart")) >= 3
    links = _links(at)  # the restaurant with the highest score is shown first
    assert links["K=50 · 14.99"] == f"dataset={DATASET}&task={TASK}&formula=v1&k=50&business_id={FLIP}"
    table = _df(at, "gt.table")
    assert list(table["name"])[0] == "Flip Bistro" and table["trace"].iloc[0].startswith("trace?dataset=tiny")
    assert not at.get("download_button")  # the Export tab is not shown yet
    assert _export_buttons(at) == ["Download computed_gt_k200.json"]


def test_gt_page_reads_a_workspace_whose_path_has_brackets(app_factory, tmp_path):
    """Issue 26, Low: a `[` or `]` in the workspace path broke every dataset read (a GT page traceback)."""
    root = tmp_path / "team [draft]" / "ws[1]"
    build_gt_workspace(root)
    at = _gt(app_factory, root)
    assert not at.exception, at.exception
    assert _distribution(at) == [("25", 3, 0, 0, 3), ("50", 2, 0, 1, 3), ("100", 1, 1, 1, 3), ("200", 1, 1, 1, 3)]


def test_gt_page_follows_selection_changes(app_factory, tiny_root):
    at = _gt(app_factory, tiny_root)
    at.multiselect(key="gt.ks").set_value(["25", "60", "all"]).run()
    assert not at.exception
    assert [r[0] for r in _distribution(at)] == ["25", "60", "all"]
    at.toggle(key="gt.flips_only").set_value(True).run()
    assert list(_df(at, "gt.grid_table")["name"]) == ["Flip Bistro", "Mild Diner"]
    at.selectbox(key="gt.business_id").set_value(MILD).run()
    assert set(_links(at)) == {"K=25 · 3.00", "K=60 · 3.00", "K=all · 4.40"}
    at.selectbox(key="gt.k").set_value("all").run()
    assert any(s.value == "Every primitive at K=all" for s in at.subheader)
    _export_buttons(at)
    at.radio(key="gt.layout").set_value("addm").run()
    assert [b.proto.label for b in at.get("download_button")] == ["Download v1_Kall_groundtruth.json"]
    at.selectbox(key="gt.definition").set_value("G1_allergy_V2").run()
    assert not at.exception
    # policy points: severe 15 at K ≥ 50 (Critical), mild 2 for Mild Diner (Low)
    assert _distribution(at) == [("25", 3, 0, 0, 3), ("60", 2, 0, 1, 3), ("all", 2, 0, 1, 3)]


def test_gt_page_without_judgments_offers_the_run_button(app_factory, workspace):
    from tests.helpers.judging_dataset import build_judging_dataset

    build_judging_dataset(workspace, "d", restaurants=2)  # 12 keyword-matched reviews, none judged
    at = _gt(app_factory, workspace.root)
    assert any("No judgments for this dataset" in i.value for i in at.info)
    run = next(b for b in at.button if b.key == "gt.run")
    run.click().run()
    assert not at.exception, at.exception
    job = wait_for_job(workspace.root, "judge")  # judging runs as a background job, in its own process
    assert job["status"] == "finished", job.get("error")
    at.run()
    assert any("heuristic-v2: judged 12 reviews" in s.value.replace("\\", "") for s in at.success)  # markdown-escaped
    assert _metrics(at)["Judged (GT judge)"] == "12"
    assert len(_distribution(at)) == 4


# -- Trace page ---------------------------------------------------------------------------------------------
def test_trace_opens_from_query_parameters(app_factory, tiny_root):
    at = _trace(app_factory, tiny_root, business_id=FLIP)
    assert _metrics(at)["K=50 ◀"] == "14.99" and _metrics(at)["K=25"] == "2.27"
    text = _markdown(at)
    assert "Critical Risk] **14.99** at K=50" in text
    assert "`INCIDENT_IMPACT` severe firsthand → \\+15 × 0\\.85 recency × 1 credibility = \\+12\\.75" in text
    assert "**idx 30 · 2024\\-05\\-01 · ★ 4\\.0 · useful 0**" in text and "**idx 5 · " in text
    tree = at.get("html")[0].proto.body
    assert "INCIDENT_IMPACT" in tree and "= 2.5 + 12.75 − 0.76 + 0.5 − 3·0" in tree
    assert at.query_params["business_id"] == FLIP and at.query_params["k"] == "50"


def test_trace_url_follows_the_selection(app_factory, tiny_root):
    at = _trace(app_factory, tiny_root, business_id=FLIP)
    at.selectbox(key="trace.k").set_value("25").run()
    assert at.query_params["k"] == "25" and _metrics(at)["K=25 ◀"] == "2.27"
    at.selectbox(key="trace.business_id").set_value(CALM).run()
    assert at.query_params["business_id"] == CALM
    assert at.subheader[0].value == "Calm Cafe"
    at.selectbox(key="trace.definition").set_value("v2").run()
    assert not at.exception and at.query_params["formula"] == "v2"


def test_trace_with_bad_link_values_warns_and_recovers(app_factory, tiny_root):
    at = _trace(app_factory, tiny_root, business_id="nope", k="zero")
    warnings = " ".join(w.value for w in at.warning)
    assert "K from the link" in warnings and "No restaurant 'nope'" in warnings
    assert at.query_params["k"] == "50" and at.query_params["business_id"] in {FLIP, CALM, MILD}


def test_review_text_with_html_is_shown_inert(app_factory, tiny_root):
    at = _trace(app_factory, tiny_root, business_id=FLIP)
    bodies = [h.proto.body for h in at.get("html")]
    card = next(b for b in bodies if "satay" in b)
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in card
    assert "<mark>anaphylaxis &amp; an &lt;b&gt;EpiPen&lt;/b&gt;</mark>" in card
    for body in bodies:
        assert {t.lower() for t in re.findall(r"<\s*([a-zA-Z]+)", body)} <= ALLOWED_TAGS
    assert not any(m.proto.allow_html for m in at.markdown)  # markdown never renders raw HTML


def test_override_flips_a_verdict_and_revert_restores_it(app_factory, tiny_root):
    at = _trace(app_factory, tiny_root, business_id=FLIP)
    at.button(key="trace.edit.30").click().run()
    at.selectbox(key="trace.ov.30.incident_severity").set_value("none")
    at.text_input(key="trace.ov.30.reason").input("the reviewer exaggerates; no reaction happened")
    at.text_input(key="trace.author").input("alice")
    next(b for b in at.button if b.label.startswith("Save override")).click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    # 14.99 Critical → 2.24 Low at K = 50 (tests/helpers/gt_workspace.py)
    assert _metrics(at)["K=50 ◀"] == "2.24"
    assert "Override" in _markdown(at) and "by alice on idx 30" in _markdown(at)
    before_after = _df(at, "trace.last_verdicts")
    assert list(before_after.loc[before_after["K"] == "50", "after"]) == ["2.24 Low Risk"]
    assert list(before_after.loc[before_after["K"] == "50", "before"]) == ["14.99 Critical Risk"]
    assert "VERDICT" in list(_df(at, "trace.last_values")["primitive"])
    assert "**idx 30" not in _markdown(at)  # no longer an incident: it only counts as a judged review now
    at.toggle(key="trace.include_neutral").set_value(True).run()
    assert "**idx 30 · 2024\\-05\\-01 · ★ 4\\.0 · useful 0** · :violet-badge[overridden]" in _markdown(at)

    at.session_state["trace.tab"] = "Overrides"
    at.run()
    table = _df(at, "trace.ov_table")
    assert list(table["author"]) == ["alice"] and list(table["status"]) == ["active"]
    at.text_input(key="trace.revert_reason").input("judge was right after all")
    at.text_input(key="trace.author").input("bob")
    next(b for b in at.button if b.label.startswith("Revert")).click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert _metrics(at)["K=50 ◀"] == "14.99"
    statuses = [(r["status"], r["author"]) for r in list_overrides(build_ws(tiny_root), DATASET, TASK)]
    assert statuses == [("reverted", "alice"), ("revert", "bob")]  # history kept, revert is a new record

    gt = _gt(app_factory, tiny_root)
    assert _distribution(gt)[1] == ("50", 2, 0, 1, 3)


def build_ws(root):
    from core.workspace import Workspace

    return Workspace(root)


def test_why_k_changes_the_verdict(app_factory, tiny_root):
    at = _trace(app_factory, tiny_root, business_id=FLIP)
    at.session_state["trace.tab"] = "Why K changes the verdict"
    at.run()
    assert not at.exception
    assert (at.selectbox(key="trace.k_from").value, at.selectbox(key="trace.k_to").value) == ("25", "50")
    reviews = _df(at, "trace.k_reviews")
    assert list(reviews["idx"]) == [30] and "N_SEVERE" in reviews["primitives"].iloc[0]
    moved = _df(at, "trace.k_moved")
    assert ("VERDICT", "Low Risk", "Critical Risk") in [tuple(r) for r in moved.itertuples(index=False)]


def test_whatif_moves_this_verdict_and_saves_a_variant_only(app_factory, tiny_root):
    at = _trace(app_factory, tiny_root, business_id=FLIP)
    at.session_state["trace.tab"] = "What-if"
    at.run()
    assert any("Change a constant" in i.value for i in at.info)
    at.number_input(key="trace.whatif.v1.CRITICAL_THRESHOLD").set_value(20.0).run()
    assert not at.exception
    mine = _df(at, "trace.whatif_mine")
    row = mine[mine["K"] == "50"].iloc[0]
    assert (row["committed"], row["what-if"]) == ("14.99 Critical Risk", "14.99 High Risk")
    assert any(c.value.startswith("Changed: CRITICAL_THRESHOLD 8.0 → 20.0") for c in at.caption)
    at.text_input(key="trace.variant_name").input("lenient")
    at.text_input(key="trace.author").input("carol")
    next(b for b in at.button if b.label == "Save as named variant").click().run()
    assert any("Saved variant lenient" in s.value for s in at.success)
    assert (tiny_root / "gt" / "variants" / "lenient.json").exists()
    assert FORMULAS["v1"].constants["CRITICAL_THRESHOLD"] == 8.0
    at.button(key="trace.whatif_reset").click().run()
    assert at.number_input(key="trace.whatif.v1.CRITICAL_THRESHOLD").value == 8.0
    at.selectbox(key="trace.variant").set_value("lenient").run()
    at.button(key="trace.whatif_load").click().run()
    assert at.number_input(key="trace.whatif.v1.CRITICAL_THRESHOLD").value == 20.0


# -- the xnot reference judgments --------------------------------------------------------------------------
@pytest.fixture()
def xnot_root(tmp_path, fixtures_dir):
    from core.judgments.xnot_files import import_xnot_judgments
    from core.workspace import Workspace

    ws = Workspace(tmp_path / "xws").ensure("xnot")
    import_xnot_judgments(ws, fixtures_dir / "xnot/semantic_gt/task_G1a/judgments.json", task="G1a", dataset="xnot")
    return ws.root


def test_xnot_vetri_cucina_on_both_pages(app_factory, xnot_root):
    at = _gt(app_factory, xnot_root)
    assert _distribution(at) == [("25", 99, 1, 0, 100), ("50", 96, 2, 2, 100), ("100", 96, 1, 3, 100),
                                 ("200", 93, 5, 2, 100)]
    table = _df(at, "gt.table")
    vetri = table[table["name"] == "Vetri Cucina"].iloc[0]
    assert (vetri["score"], vetri["verdict"]) == (6.94, "High Risk")
    at.selectbox(key="gt.k").set_value("200").run()
    table = _df(at, "gt.table")
    vetri = table[table["name"] == "Vetri Cucina"].iloc[0]
    assert (vetri["score"], vetri["verdict"]) == (1.44, "Low Risk")
    business_id = unquote(vetri["trace"].split("business_id=")[1])  # synthetic:… ids are URL-encoded

    trace = _trace(app_factory, xnot_root, business_id=business_id)
    trace.query_params["dataset"] = "xnot"
    trace.run()
    metrics = _metrics(trace)
    assert (metrics["K=50 ◀"], metrics["K=200"]) == ("6.94", "1.44")
    assert "High Risk] **6.94** at K=50" in _markdown(trace)
    trace.selectbox(key="trace.k").set_value("200").run()
    trace.selectbox(key="trace.focus").set_value("n_severe").run()
    headers = re.findall(r"\*\*idx (\d+) ·", _markdown(trace))
    assert headers == ["39"] and "severe firsthand" in _markdown(trace)
    trace.selectbox(key="trace.focus").set_value("n_positive").run()
    positives = [int(i) for i in re.findall(r"\*\*idx (\d+) ·", _markdown(trace))]
    assert positives[:5] == [49, 52, 59, 83, 88]
    assert any("No full text stored" in c.value for c in trace.caption)  # the xnot file has excerpts only

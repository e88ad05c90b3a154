"""Page-facing GT views (core/ground_truth/views): grid, flips, series, primitives, export, judging status,
trace rendering model, excerpt highlighting (escaped), on a tiny workspace built from code and on
the xnot reference judgments.

The tiny workspace and its expected results: :mod:`tests.helpers.gt_workspace`.
"""

from __future__ import annotations

import json
import time
from urllib.parse import urlencode

import polars as pl
import pytest

from core.datasets import write_dataset
from core.ground_truth import distribution_by_k, explain_k_change, get_definition, trace_gt
from core.ground_truth import views as gt_views
from core.judgments import append_judgments
from core.judgments.overrides import add_override
from core.workspace import Workspace
from tests.helpers.gt_workspace import (
    CALM,
    DATASET,
    FLIP,
    JUDGE,
    MILD,
    SCRIPT_EXCERPT,
    SCRIPT_TEXT,
    TASK,
    build_gt_workspace,
)

XNOT_JUDGMENTS = "xnot/semantic_gt/task_G1a/judgments.json"
KS = [25, 50, 100, 200]


@pytest.fixture()
def tiny(tmp_path) -> Workspace:
    return build_gt_workspace(tmp_path / "ws")


@pytest.fixture()
def tiny_frame(tiny) -> pl.DataFrame:
    return gt_views.compute_frame(gt_views.load_inputs(tiny, DATASET, TASK), "v1", KS, dataset=DATASET, task=TASK)


def _row(frame: pl.DataFrame, business_id: str, k: int | None) -> dict:
    return frame.filter((pl.col("business_id") == business_id) & (pl.col("k") == k)).row(0, named=True)


# -- loading and computing ---------------------------------------------------------------------------
def test_compute_frame_matches_the_hand_computed_scores(tiny_frame):
    # arithmetic in the module docstring
    assert _row(tiny_frame, FLIP, 25)["score"] == pytest.approx(2.27)
    assert (_row(tiny_frame, FLIP, 50)["score"], _row(tiny_frame, FLIP, 50)["verdict"]) == (14.99, "Critical Risk")
    assert _row(tiny_frame, MILD, 50)["verdict"] == "Low Risk" and _row(tiny_frame, MILD, 100)["score"] == 4.4
    assert set(tiny_frame["judge"]) == {JUDGE} and set(tiny_frame["dataset"]) == {DATASET}
    assert tiny_frame["judgments_sha256"].n_unique() == 1


def test_whatif_changes_move_scores_without_touching_the_formula(tiny):
    from core.ground_truth import FORMULAS

    inputs = gt_views.load_inputs(tiny, DATASET, TASK)
    # severe worth 5 instead of 15: 2.5 + 5·0.85·1 − 0.76 + 0.5 = 6.49 → High
    whatif = gt_views.compute_frame(inputs, "v1", [50], changes={"SEVERITY_POINTS.severe": 5})
    assert (_row(whatif, FLIP, 50)["score"], _row(whatif, FLIP, 50)["verdict"]) == (6.49, "High Risk")
    assert whatif["formula_version"][0].startswith("v1+whatif-")
    assert FORMULAS["v1"].constants["SEVERITY_POINTS"]["severe"] == 15


def test_data_stamp_changes_when_an_override_is_written(tiny):
    before = gt_views.data_stamp(tiny, DATASET, TASK)
    assert before == gt_views.data_stamp(tiny, DATASET, TASK)
    time.sleep(0.01)
    add_override(tiny, DATASET, TASK, business_id=FLIP, idx=30, corrected={"incident_severity": "none"},
                 reason="test", author="t")
    assert gt_views.data_stamp(tiny, DATASET, TASK) != before


def test_parse_ks_sorts_with_all_last_and_rejects_bad_values():
    assert gt_views.parse_ks(["200", "all", "25", 60]) == [25, 60, 200, None]
    with pytest.raises(ValueError, match="invalid K"):
        gt_views.parse_ks(["0"])
    with pytest.raises(ValueError, match="invalid K"):
        gt_views.parse_ks(["ten"])


def test_definitions_list_formulas_then_policies():
    names = gt_views.definitions("G1a", None)
    assert names[:2] == ["v1", "v2"] and "G1_allergy_V2" in names
    assert "v1" in gt_views.describe(get_definition("v1", None)) and "G1_allergy_V2" in gt_views.describe(get_definition("G1_allergy_V2", None))


# -- grid, flips, series, primitives -------------------------------------------------------------------
def test_verdict_grid_sorts_filters_and_reports_flips(tiny_frame):
    grid = gt_views.verdict_grid(tiny_frame)
    assert grid["name"].to_list() == ["Flip Bistro", "Mild Diner", "Calm Cafe"]  # by highest score
    assert grid.columns[-5:] == ["K25", "K50", "K100", "K200", "business_id"]
    flip = grid.row(0, named=True)
    assert flip["path"] == "Low Risk (25) → Critical Risk (50) → Critical Risk (100) → Critical Risk (200)" and flip["changes"] == 1
    assert gt_views.verdict_grid(tiny_frame, sort="Name")["name"].to_list() == ["Calm Cafe", "Flip Bistro", "Mild Diner"]
    assert gt_views.verdict_grid(tiny_frame, flips_only=True)["name"].to_list() == ["Flip Bistro", "Mild Diner"]
    assert gt_views.verdict_grid(tiny_frame, search="diner")["name"].to_list() == ["Mild Diner"]
    assert gt_views.flips(tiny_frame).height == 2
    with pytest.raises(ValueError, match="unknown sort"):
        gt_views.verdict_grid(tiny_frame, sort="random")


def test_grid_long_keeps_the_given_row_order(tiny_frame):
    long = gt_views.grid_long(tiny_frame, [MILD, FLIP])
    assert long["business_id"].unique(maintain_order=True).to_list() == [MILD, FLIP]
    assert long.filter(pl.col("business_id") == MILD)["k_label"].to_list() == ["25", "50", "100", "200"]
    assert set(long.columns) >= {"name", "k_label", "verdict", "score"}


def test_display_names_disambiguate_repeated_names():
    frame = pl.DataFrame({"business_id": ["a1", "b2", "c3"], "name": ["Pho", "Pho", "Deli"]})
    assert gt_views.display_names(frame) == {"a1": "Pho [a1]", "b2": "Pho [b2]", "c3": "Deli"}


def test_score_series_and_primitive_table(tiny_frame):
    series = gt_views.score_series(tiny_frame, FLIP)
    assert series["k_label"].to_list() == ["25", "50", "100", "200"]
    assert series["verdict"].to_list() == ["Low Risk", "Critical Risk", "Critical Risk", "Critical Risk"]
    with pytest.raises(ValueError, match="no restaurant"):
        gt_views.score_series(tiny_frame, "nope")
    table = gt_views.primitive_table(tiny_frame, 50)
    assert table["name"].to_list()[0] == "Flip Bistro" and table.height == 3
    assert {"n_severe", "incident_impact", "raw_risk", "verdict", "score"} <= set(table.columns)
    assert not {"judgments_sha256", "formula_version", "judge"} & set(table.columns)


def test_trace_links_carry_every_selection():
    url = gt_views.trace_url("demo", "G1a", "v1", None, "id&x", judge="j 1")
    assert url == "trace?dataset=demo&task=G1a&formula=v1&k=all&business_id=id%26x&judge=j+1"
    assert "judge" not in gt_views.trace_params("demo", "G1a", "v1", 50, "b")


def test_thresholds_of_formulas_policies_and_whatifs():
    assert gt_views.thresholds("v1") == [("High Risk", 4.0), ("Critical Risk", 8.0)]
    assert gt_views.thresholds("v1", {"HIGH_THRESHOLD": 3.0})[0] == ("High Risk", 3.0)
    assert gt_views.thresholds("G1_allergy_V2") == [("High Risk", 4.0), ("Critical Risk", 8.0)]
    assert gt_views.thresholds("G1_allergy_V0") == []  # a rule policy has no score thresholds


def test_export_documents_in_both_layouts(tiny, tiny_frame):
    name, data = gt_views.export_document(tiny_frame, task=TASK, definition="v1", k=50, layout="xnot")
    doc = json.loads(data)
    assert name == "computed_gt_k50.json" and doc["k"] == 50 and doc["judgments_sha256"]
    assert doc["restaurants"]["Flip Bistro"]["verdict"] == "Critical Risk"
    assert doc["summary"]["verdict_distribution"] == {"Low Risk": 2, "High Risk": 0, "Critical Risk": 1}
    with pytest.raises(ValueError, match="needs the judgments"):
        gt_views.export_document(tiny_frame, task=TASK, definition="v1", k=50, layout="addm")
    inputs = gt_views.load_inputs(tiny, DATASET, TASK)
    with pytest.raises(ValueError, match="needs the judgments"):
        gt_views.export_document(tiny_frame, task=TASK, definition="v1", k=50, layout="addm",
                                 judgments=inputs.judgments)
    name, data = gt_views.export_document(tiny_frame, task=TASK, definition="v1", k=50, layout="addm",
                                          judgments=inputs.judgments, restaurants=inputs.restaurants)
    entry = json.loads(data)["restaurants"][FLIP]
    gt = entry["ground_truth"]
    assert name == "v1_K50_groundtruth.json"
    # the same restaurant fields as `python -m core gt --format addm` writes
    flip = inputs.restaurants.filter(pl.col("business_id") == FLIP).row(0, named=True)
    assert entry["categories"] == flip["categories"] and entry["n_reviews"] == min(50, flip["n_reviews"])
    assert [(i["review_id"], i["severity"], i["total_points"]) for i in gt["incidents"]] == [(f"{FLIP}-r30", "severe", 15)]
    with pytest.raises(ValueError, match="unknown layout"):
        gt_views.export_document(tiny_frame, task=TASK, definition="v1", k=50, layout="csv")
    with pytest.raises(ValueError, match="no GT rows"):
        gt_views.export_document(tiny_frame, task=TASK, definition="v1", k=75, layout="xnot")


def test_whatif_comparison_and_verdict_moves(tiny):
    inputs = gt_views.load_inputs(tiny, DATASET, TASK)
    committed = gt_views.compute_frame(inputs, "v1", KS)
    whatif = gt_views.compute_frame(inputs, "v1", KS, changes={"HIGH_THRESHOLD": 2.0})
    compare = gt_views.compare_distributions(committed, whatif)
    assert compare.height == 4 * 3 * 2
    low_25 = compare.filter((pl.col("k") == 25) & (pl.col("verdict") == "Low Risk"))
    assert dict(zip(low_25["version"], low_25["count"], strict=True)) == {"committed": 3, "what-if": 0}
    moves = gt_views.verdict_moves(committed, whatif)
    # every Low (2.27, 3.0, 2.24…) becomes High with HIGH_THRESHOLD 2; Critical stays Critical
    assert moves.height == 3 + 2 + 1 + 1 and set(moves["what_if"]) == {"High Risk"}
    assert moves.filter(pl.col("business_id") == FLIP)["k_label"].to_list() == ["25"]


# -- judging status and the run button ----------------------------------------------------------------
def test_judging_status_and_run_index_and_judge(workspace, judging_dataset):
    judging_dataset("d", restaurants=2)
    status = gt_views.judging_status(workspace, "d", "G1a")
    assert (status.ready, status.runnable, status.index_current) == (False, True, True)
    assert status.matched == 12 and status.unjudged == 12 and status.judged is None
    seen = []
    report = gt_views.run_index_and_judge(workspace, "d", "G1a", progress=lambda d, t, m: seen.append(m))
    assert report["judge"] == "heuristic-v2" and report["judged"] == 12 and not report["index_built"]
    assert any(m.startswith("judging") for m in seen)
    status = gt_views.judging_status(workspace, "d", "G1a")
    assert (status.ready, status.gt_judge, status.judged, status.unjudged) == (True, "heuristic-v2", 12, 0)
    again = gt_views.run_index_and_judge(workspace, "d", "G1a")
    assert again["judged"] == 0 and again["skipped_already_judged"] == 12


def test_run_builds_a_missing_index(tiny):
    status = gt_views.judging_status(tiny, DATASET, TASK)
    assert status.matched is None and status.index_current is False and status.judged == 4
    report = gt_views.run_index_and_judge(tiny, DATASET, TASK)
    assert report["index_built"] is True


# -- trace rendering model ----------------------------------------------------------------------------
def _tiny_trace(tiny, k=50, business_id=FLIP):
    one = gt_views.restaurant_inputs(gt_views.load_inputs(tiny, DATASET, TASK), business_id)
    texts = gt_views.review_texts(tiny, DATASET, business_id)
    return trace_gt(one.judgments, one.restaurants, business_id, "v1", k, texts=texts)


def test_trace_rows_put_input_values_into_each_formula_line(tiny):
    rows = {r.name: r for r in gt_views.trace_rows(_tiny_trace(tiny))}
    assert rows["verdict"].depth == 0 and rows["verdict"].value == "Critical Risk"
    assert rows["raw_risk"].worked == "= 2.5 + 12.75 − 0.76 + 0.5 − 3·0"
    assert rows["incident_impact"].worked == "= 15 · 0.85 · 1"
    assert rows["incident_impact"].inputs == (("INCIDENT_SCORE", "15"), ("RECENCY_DECAY", "0.85"),
                                              ("CREDIBILITY_FACTOR", "1"))
    assert rows["n_severe"].n_reviews == 1 and rows["n_severe"].worked == ""
    assert gt_views.worked_line("A = B + 1", {}) == "" and gt_views.worked_line("no equation", {"B": "1"}) == ""


def test_review_cards_collect_every_contribution_of_a_review(tiny):
    root = _tiny_trace(tiny)
    cards = gt_views.review_cards(root)
    assert [c.idx for c in cards] == [5, 30]
    severe = cards[1]
    assert severe.fields == {"incident_severity": "severe", "account_type": "firsthand", "safety_interaction": "none"}
    texts = dict((name, text) for name, _, text in severe.contributions)
    assert texts["incident_impact"] == "severe firsthand → +15 × 0.85 recency × 1 credibility = +12.75"
    assert severe.text == SCRIPT_TEXT and severe.excerpt == SCRIPT_EXCERPT and severe.moves_score
    assert severe.header() == "idx 30 · 2024-05-01 · ★ 4.0 · useful 0"
    assert [c.idx for c in gt_views.review_cards(root, primitive="n_positive")] == [5]
    assert gt_views.primitives_with_reviews(root)[0] == "incident_impact"


def test_neutral_reviews_are_hidden_unless_asked(tiny):
    records = [{"business_id": CALM, "review_id": f"{CALM}-r7", "idx": 7, "prompt_version": "test",
                "fields": {"incident_severity": "none", "account_type": "hypothetical", "safety_interaction": "none"},
                "excerpt": ""}]
    append_judgments(tiny, DATASET, TASK, JUDGE, records)
    root = _tiny_trace(tiny, business_id=CALM)
    assert [c.idx for c in gt_views.review_cards(root)] == [3]
    assert [c.idx for c in gt_views.review_cards(root, include_neutral=True)] == [3, 7]


def test_value_changes_and_k_change_frames(tiny):
    before, after = _tiny_trace(tiny, k=25), _tiny_trace(tiny, k=50)
    changes = {c["name"]: (c["before"], c["after"]) for c in gt_views.value_changes(before, after)}
    assert changes["verdict"] == ("Low Risk", "Critical Risk") and changes["n_severe"] == (0, 1)
    assert "cuisine_modifier" not in changes
    frame = gt_views.changes_frame(gt_views.value_changes(before, after))
    assert frame.columns == ["primitive", "before", "after"] and "VERDICT" in frame["primitive"].to_list()
    one = gt_views.restaurant_inputs(gt_views.load_inputs(tiny, DATASET, TASK), FLIP)
    change = explain_k_change(one.judgments, one.restaurants, FLIP, "v1", 25, 50)
    moved, reviews, neutral = gt_views.kchange_frames(change)
    assert reviews["idx"].to_list() == [30] and neutral == 0
    assert reviews["score_effect"][0] == pytest.approx(12.75 + 0.73 - 0.76)  # incident in, confidence 0.73 → 0.76
    assert "N_SEVERE" in reviews["primitives"][0] and "VERDICT" in moved["primitive"].to_list()


# -- escaping and highlighting ------------------------------------------------------------------------
def test_highlight_html_escapes_everything_and_marks_the_excerpt():
    out = gt_views.highlight_html(SCRIPT_TEXT, SCRIPT_EXCERPT)
    assert "<script>" not in out and "<b>" not in out
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in out
    assert "<mark>anaphylaxis &amp; an &lt;b&gt;EpiPen&lt;/b&gt;</mark>" in out


def test_highlight_finds_pieces_case_and_whitespace_insensitively():
    text = "We ordered pad thai.  My LIPS   swelled\nup within minutes. Never again."
    segs = gt_views.highlight_segments(text, '"my lips swelled up" ... never again')
    assert [s for s, hit in segs if hit] == ["My LIPS   swelled\nup", "Never again"]
    assert "".join(s for s, _ in segs) == text  # nothing lost
    assert gt_views.highlight_segments(text, "not in the text") == [(text, False)]
    assert not gt_views.excerpt_found(text, "") and gt_views.highlight_segments(None, "x") == []
    assert gt_views.highlight_spans("abc abc", "abc") == [(0, 3)]


def test_tree_html_escapes_data_and_marks_the_focus(tmp_path):
    ws = Workspace(tmp_path / "ws").ensure("x")
    rest = [{"business_id": "b", "name": "<img src=x onerror=alert(1)>", "categories": "<script>x</script>, Thai"}]
    reviews = [{"business_id": "b", "review_id": "r0", "idx": 0, "date": "2024-01-01 00:00:00", "stars": 1.0,
                "useful": 1, "text": "t"}]  # weight 4 + ln 2: not a round number
    source = tmp_path / "src.json"
    source.write_text("{}")
    write_dataset(ws, "x", pl.DataFrame(rest), pl.DataFrame(reviews), sources=[source], layout="test")
    append_judgments(ws, "x", "G1a", "j", [{"business_id": "b", "idx": 0, "fields": {
        "incident_severity": "mild", "account_type": "firsthand", "safety_interaction": "none"}}])
    one = gt_views.load_inputs(ws, "x", "G1a")
    root = trace_gt(one.judgments, one.restaurants, "b", "v1", None)
    out = gt_views.tree_html(root, focus="n_mild")
    assert "<script>" not in out.split("</style>", 1)[1] and "&lt;script&gt;x&lt;/script&gt;" in out
    assert 'class="gt-node focus"' in out and out.count("gt-node focus") == 1
    assert 'title="raw ' in out  # unrounded value on hover


def test_md_escape_and_fmt_value():
    assert gt_views.md_escape("**x** [y](javascript:z) $a$ :red[b]") == (
        r"\*\*x\*\* \[y\]\(javascript\:z\) \$a\$ \:red\[b\]")
    assert gt_views.fmt_value(True) == "yes" and gt_views.fmt_value(1.23456) == "1.235"


# -- the xnot reference judgments ----------------------------------------------------------------------
def test_xnot_vetri_cucina_and_its_trace(workspace, fixtures_dir):
    from core.judgments.xnot_files import import_xnot_judgments

    import_xnot_judgments(workspace, fixtures_dir / XNOT_JUDGMENTS, task="G1a", dataset="xnot")
    inputs = gt_views.load_inputs(workspace, "xnot", "G1a")
    frame = gt_views.compute_frame(inputs, "v1", KS)
    assert distribution_by_k(frame).rows() == [(25, 99, 1, 0, 100), (50, 96, 2, 2, 100), (100, 96, 1, 3, 100),
                                               (200, 93, 5, 2, 100)]
    vetri = frame.filter(pl.col("name") == "Vetri Cucina")
    assert list(zip(vetri["k"], vetri["score"], vetri["verdict"], strict=True)) == [
        (25, 3.0, "Low Risk"), (50, 6.94, "High Risk"), (100, 3.44, "Low Risk"), (200, 1.44, "Low Risk")]
    bid = vetri["business_id"][0]
    one = gt_views.restaurant_inputs(inputs, bid)
    root = trace_gt(one.judgments, one.restaurants, bid, "v1", 200)
    severe = gt_views.review_cards(root, primitive="n_severe")
    assert [c.idx for c in severe] == [39] and severe[0].fields["incident_severity"] == "severe"
    positives = [c.idx for c in gt_views.review_cards(root, primitive="n_positive")]
    assert positives[:5] == [49, 52, 59, 83, 88]


def test_verdict_grid_ranks_a_rule_policy_by_its_highest_verdict():
    frame = pl.DataFrame({"business_id": ["a", "a", "b", "b", "c", "c"], "name": ["A", "A", "B", "B", "C", "C"],
                          "k": [25, 50] * 3, "score": [0.0] * 6,
                          "verdict": ["Workable", "Workable", "Poor fit", "Great fit", "Poor fit", "Poor fit"]})
    ranked = gt_views.verdict_grid(frame, rank_by=["Poor fit", "Workable", "Great fit"])
    assert ranked["name"].to_list() == ["B", "A", "C"]  # Great fit at some K first, Poor fit only last
    assert gt_views.verdict_grid(frame)["name"].to_list() == ["A", "B", "C"]  # scores all 0: by name


@pytest.mark.parametrize("judge", [None, "heuristic-v1", "a b&c"])
def test_trace_urls_are_trace_url_of_each(judge):
    """The batch links are the query of trace_params (what the page links pass) for each restaurant."""
    ids = ["abc", "a&b=c", "ü ñ", "x+y/z", "%20", ""]
    for k in (25, None):
        expected = ["trace?" + urlencode(gt_views.trace_params("demo", "G1a", "v 2", k, b, judge)) for b in ids]
        assert gt_views.trace_urls("demo", "G1a", "v 2", k, ids, judge) == expected
        assert [gt_views.trace_url("demo", "G1a", "v 2", k, b, judge) for b in ids] == expected

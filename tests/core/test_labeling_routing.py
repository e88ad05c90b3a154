"""Raters where they count: an item whose raters disagree beyond the target spread gets one more
rater, up to the cap, with the reason stored; per-rater leniency and range use with intervals."""

# ruff: noqa: F811  (the imported fixtures are parameters of the tests)
from __future__ import annotations

import math

import polars as pl
import pytest

from core.labeling import assignment, consensus, items, rater_stats, reports, routing
from core.labeling.store import integrity_problems
from tests.helpers.label_assignment import clock, make_project, store  # noqa: F401 - the fixtures


def _rate_round(store, project, raters, scores):
    """Each rater takes their next item and rates it; returns the item ids."""
    got = []
    for rater, score in zip(raters, scores, strict=True):
        view = assignment.next_item(store, project, rater)
        got.append(view.item_id)
        assignment.submit(store, project, rater, view.item_id, score, token=view.token)
    return got


def test_an_item_whose_raters_disagree_gets_one_more_rater_up_to_the_cap(store, clock):
    project = make_project(store, 2, target_raters=2, target_spread=0.5, max_raters=3)
    # item 1: +0.8 and -0.2 → spread 1.0 > 0.5 → a third rater; item 2 is next for nobody yet
    assert _rate_round(store, project, ["a", "b"], [0.8, -0.2]) == [1, 1]
    table = reports.routing_table(store, project)
    assert table.select("item_id", "needs", "raters_now").rows() == [(1, 3, 2)]
    assert table["reason"][0] == "spread 1.00 > target 0.50 after 2 raters: rater 3 added"
    view = assignment.next_item(store, project, "c")
    assert view.item_id == 1  # the routed item comes first (2 → 3 before 0 → 1)
    assignment.submit(store, project, "c", 1, 0.9, token=view.token)
    assert reports.routing_table(store, project).height == 1  # at the cap (3): no fourth rater
    assert assignment.next_item(store, project, "d").item_id == 2
    prog = assignment.rater_progress(store, project, "a")
    assert (prog.complete_items, prog.total_slots, prog.filled_slots) == (1, 5, 3)
    assert reports.project_summary(store, project)["extra_raters_routed"] == 1
    assert integrity_problems(store) == []


def test_agreeing_raters_get_no_extra_rater_and_the_interval_measure_works(store, clock):
    project = make_project(store, 2, target_raters=2, target_spread=0.5, spread_measure="ci_width", max_raters=4)
    _rate_round(store, project, ["a", "b"], [0.5, 0.52])  # width 2·12.706·0.01414/√2 = 0.254 ≤ 0.5
    assert reports.routing_table(store, project).is_empty()
    _rate_round(store, project, ["a", "b"], [0.5, 0.6])  # item 2: width 2·12.706·0.0707/√2 = 1.27 > 0.5
    assert reports.routing_table(store, project)["item_id"].to_list() == [2]


def test_turning_routing_on_checks_the_items_already_full(store, clock):
    project = make_project(store, 2, target_raters=2)
    _rate_round(store, project, ["a", "b"], [1.0, -1.0])
    assert reports.routing_table(store, project).is_empty()
    items.update_project(store, project.name, target_spread=0.5)
    assert reports.routing_table(store, project)["item_id"].to_list() == [1]
    assert assignment.next_item(store, project, "c").item_id == 1


@pytest.mark.parametrize(("scores", "measure", "expected"), [
    ([0.2, -0.4, 0.6], "range", 1.0),  # max − min
    ([0.0, 1.0], "ci_width", 12.706),  # sd = √0.5, 2 · t(0.975, 1) · √0.5 / √2 = t = 12.706
    ([0.1, 0.2, 0.3], "ci_width", 2 * 4.303 * 0.1 / math.sqrt(3)),  # sd 0.1, t(0.975, 2) = 4.303
])
def test_disagreement_measures(scores, measure, expected):
    assert routing.disagreement(scores, measure) == pytest.approx(expected)


def test_disagreement_needs_two_scores_and_a_known_measure():
    with pytest.raises(ValueError, match="at least 2"):
        routing.disagreement([0.1], "range")
    with pytest.raises(ValueError, match="unknown spread measure"):
        routing.disagreement([0.1, 0.2], "iqr")


def test_bad_routing_settings_are_refused(store):
    with pytest.raises(ValueError, match="target_spread"):
        items.create_project(store, "x", target_spread=3.0)
    with pytest.raises(ValueError, match="max_raters"):
        items.create_project(store, "x", target_raters=3, target_spread=0.5, max_raters=2)
    with pytest.raises(ValueError, match="spread_measure"):
        items.create_project(store, "x", spread_measure="iqr")


def test_leniency_and_range_use_by_hand(store, clock):
    project = make_project(store, 3, target_raters=2)
    # item 1: a +0.6, b +0.2 → mean 0.4; item 2: a 0.0, b -0.4 → -0.2; item 3: a +1.0, b -1.0 (mixed: the mean, 0)
    for item_id, (sa, sb) in enumerate([(0.6, 0.2), (0.0, -0.4), (1.0, -1.0)], start=1):
        assignment.submit(store, project, "a", item_id, sa)
        assignment.submit(store, project, "b", item_id, sb)
    latest = reports.latest_ratings(reports.ratings_frame(store, project))
    len_ = rater_stats.leniency(latest, consensus.compute_consensus(store, project))
    a = len_.filter(pl.col("rater") == "a").row(0, named=True)
    # a's offsets: +0.2, +0.2, +1.0 → mean 0.4667, sd 0.4619, t(0.975, 2) = 4.3027 → half 1.1474
    assert a["n"] == 3 and a["leniency"] == pytest.approx(1.4 / 3)
    assert a["ci_hi"] - a["leniency"] == pytest.approx(4.302653 * 0.461880 / math.sqrt(3), rel=1e-5)
    assert len_.filter(pl.col("rater") == "b")["leniency"][0] == pytest.approx(-1.4 / 3)
    use = rater_stats.range_use(latest).filter(pl.col("rater") == "a").row(0, named=True)
    assert use["sd"] == pytest.approx(pl.Series([0.6, 0.0, 1.0]).std())
    assert use["sd_lo"] < use["sd"] < use["sd_hi"]
    assert use["extreme_share"] == pytest.approx(1 / 3)  # only +1.0 is at an end (|s| ≥ 0.8)
    assert (use["extreme_lo"], use["extreme_hi"]) == pytest.approx(rater_stats.wilson_interval(1, 3))
    empty = rater_stats.leniency(latest.clear(), consensus.compute_consensus(store, project))
    assert empty.is_empty() and rater_stats.range_use(latest.clear()).is_empty()

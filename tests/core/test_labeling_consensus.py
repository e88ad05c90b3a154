"""Consensus (SPEC §6.3): same sign → mean, mixed signs → adjudication with provenance."""

from __future__ import annotations

import json
from datetime import datetime

import polars as pl
import pytest
from sqlalchemy import select

from core.base.errors import WorkbenchError
from core.labeling import assignment, consensus, items
from core.labeling.identity import set_role
from core.labeling.store import LabelStore
from core.labeling.store import consensus as consensus_table
from tests.helpers.clock import Clock


@pytest.fixture()
def store(tmp_path):
    s = LabelStore(f"sqlite:///{tmp_path / 'labels.sqlite'}", clock=Clock(datetime(2026, 3, 1), step=1))
    s.ensure_schema()
    yield s
    s.dispose()


@pytest.fixture()
def project(store):
    p = items.create_project(store, "p")
    items.add_items(store, p, [{"dataset": "p", "identifier": f"i{k}", "prompt_body": "q", "response_text": "r"}
                               for k in range(1, 6)])
    scores = {1: {"a": 0.5, "b": 0.25, "c": 0.0},  # same sign (zero is neutral) → mean .25
              2: {"a": -0.5, "b": 0.5},  # mixed → needs discussion
              3: {"a": 0.0, "b": 0.0},  # all zero → 0
              4: {"a": 0.8}}  # one rating: no consensus yet
    for item_id, by_rater in scores.items():
        for rater, score in by_rater.items():
            assignment.submit(store, p, rater, item_id, score)
    return p


@pytest.mark.parametrize(("scores", "expected"), [
    ([0.5, 0.25, 0.0], 0.25), ([-0.2, -0.4], -0.3), ([0.0, 0.0], 0.0), ([0.5, -0.25], None), ([-1.0, 0.0, 1.0], None),
])
def test_the_rule(scores, expected):
    assert consensus.consensus_rule(scores) == (pytest.approx(expected) if expected is not None else None)


def test_the_rule_needs_two_scores():
    with pytest.raises(ValueError, match="at least 2"):
        consensus.consensus_rule([0.5])


def test_consensus_per_item(store, project):
    frame = consensus.compute_consensus(store, project)
    rows = {r["item_id"]: r for r in frame.to_dicts()}
    assert set(rows) == {1, 2, 3}
    assert (rows[1]["consensus"], rows[1]["consensus_source"], rows[1]["raters"]) == (0.25, "calculated", ["a", "b", "c"])
    assert rows[2]["consensus"] is None and rows[2]["consensus_source"] == "needs_discussion"
    assert rows[2]["spread"] == pytest.approx(1.0) and rows[3]["consensus"] == 0.0
    queue = consensus.disagreement_queue(frame)
    assert queue["item_id"].to_list()[0] == 2  # open items first, widest spread first


def test_a_repeat_replaces_the_raters_earlier_score(store, project):
    assignment.submit(store, project, "b", 2, -0.25)  # b re-rates item 2: now both negative
    row = consensus.compute_consensus(store, project).filter(pl.col("item_id") == 2).row(0, named=True)
    assert row["consensus"] == pytest.approx(-0.375) and row["n_ratings"] == 2


def test_only_adjudicators_record_a_consensus_with_a_note(store, project):
    with pytest.raises(WorkbenchError, match="may not adjudicate"):
        consensus.adjudicate(store, project, 2, 0.1, adjudicator="a", note="x")
    set_role(store, "lead", "adjudicator")
    with pytest.raises(ValueError, match="needs a note"):
        consensus.adjudicate(store, project, 2, 0.1, adjudicator="lead", note="  ")
    with pytest.raises(WorkbenchError, match="fewer than 2 ratings"):
        consensus.adjudicate(store, project, 4, 0.1, adjudicator="lead", note="x")
    consensus.adjudicate(store, project, 2, 0.1, adjudicator="lead", note="agreed after discussion")
    row = consensus.compute_consensus(store, project).filter(pl.col("item_id") == 2).row(0, named=True)
    assert (row["consensus"], row["consensus_source"], row["adjudicator"]) == (0.1, "adjudicated", "lead")
    with store.read() as conn:
        rec = conn.execute(select(consensus_table).where(consensus_table.c.source == "adjudicated")).one()
    assert json.loads(rec.raw_scores) == [-0.5, 0.5] and json.loads(rec.raters) == ["a", "b"]
    assert rec.note == "agreed after discussion"


def test_a_newer_rating_makes_an_adjudication_stale(store, project):
    set_role(store, "lead", "admin")
    consensus.adjudicate(store, project, 2, 0.1, adjudicator="lead", note="discussed")
    assignment.submit(store, project, "c", 2, 0.9)
    row = consensus.compute_consensus(store, project).filter(pl.col("item_id") == 2).row(0, named=True)
    assert row["stale"] and row["consensus_source"] == "needs_discussion" and row["adjudicator"] == "lead"


def test_calculated_snapshots_are_recorded_once_per_change(store, project):
    assert consensus.record_calculated(store, project) == 2  # items 1 and 3
    assert consensus.record_calculated(store, project) == 0
    assignment.submit(store, project, "d", 3, 0.4)
    assert consensus.record_calculated(store, project) == 1
    summary = consensus.consensus_summary(consensus.compute_consensus(store, project))
    assert (summary["items"], summary["calculated"], summary["needs_discussion"]) == (3, 2, 1)

"""Nothing lost, nothing claimed falsely: the same round submitted twice (two tabs of one rater)
is a correction that keeps both rows; within 50 ms it stores one row; a rater changes an earlier
rating as a new row; a lowered target never overfills an item. SQLite with a fake clock."""

# ruff: noqa: F811  (the imported fixtures are parameters of the tests)
from __future__ import annotations

import pytest
from sqlalchemy import select

from core.base.errors import WorkbenchError
from core.labeling import assignment, consensus, items, reports
from core.labeling.store import integrity_problems, ratings
from core.labeling.store import items as items_table
from tests.helpers.label_assignment import clock, make_project, store  # noqa: F401 - the fixtures


def _rows(store):
    with store.read() as conn:
        return conn.execute(select(ratings).order_by(ratings.c.rating_id)).all()


def test_two_tabs_of_one_rater_store_the_later_rating_as_a_correction(store, clock):
    project = make_project(store, 3)
    tab_a = assignment.next_item(store, project, "ana")
    tab_b = assignment.next_item(store, project, "ana")  # the same reservation in the second tab
    assert (tab_a.item_id, tab_a.token) == (tab_b.item_id, tab_b.token)
    first = assignment.submit_rating(store, project, "ana", tab_a.item_id, 0.2, token=tab_a.token)
    assert first.status == "saved" and first.next is not None and first.next.item_id != tab_a.item_id
    clock.advance(3)
    second = assignment.submit_rating(store, project, "ana", tab_b.item_id, 0.4, token=tab_b.token)
    assert (second.status, second.replaced, second.score) == ("correction", 0.2, 0.4)
    assert second.next is not None and second.next.token == first.next.token  # both tabs go on to one item
    rows = _rows(store)
    assert [(r.score, r.supersedes, r.is_repeat) for r in rows] == [(0.2, None, False), (0.4, rows[0].rating_id, False)]
    in_force = reports.ratings_frame(store, project)
    assert in_force["score"].to_list() == [0.4]  # the later one is in force
    history = reports.ratings_frame(store, project, include_superseded=True)
    assert history["in_force"].to_list() == [False, True]
    with store.read() as conn:
        n_raters = conn.execute(select(items_table.c.n_raters).where(items_table.c.item_id == tab_a.item_id)).scalar()
    assert n_raters == 1  # still one rater of the item
    assert integrity_problems(store) == []


def test_two_submits_of_one_round_within_50_ms_store_one_row(store, clock):
    project = make_project(store, 2)
    view = assignment.next_item(store, project, "ana")
    first = assignment.submit_rating(store, project, "ana", view.item_id, 0.3, token=view.token)
    clock.advance(0.049)
    again = assignment.submit_rating(store, project, "ana", view.item_id, 0.7, token=view.token)
    assert (again.status, again.rating_id, again.stored) == ("duplicate", first.rating_id, 0.3)
    assert again.ms_apart == pytest.approx(49, abs=0.01)
    assert len(_rows(store)) == 1
    clock.advance(0.002)  # 51 ms after the first: a correction now
    later = assignment.submit_rating(store, project, "ana", view.item_id, 0.7, token=view.token)
    assert later.status == "correction" and len(_rows(store)) == 2
    assert integrity_problems(store) == []


def test_a_rater_changes_their_last_rating_as_a_new_row(store, clock):
    project = make_project(store, 3)
    view = assignment.next_item(store, project, "ana")
    rid = assignment.submit_rating(store, project, "ana", view.item_id, -0.5, notes="first").rating_id
    clock.advance(60)
    recent = assignment.recent_ratings(store, project, "ana")
    assert [(r["rating_id"], r["score"]) for r in recent] == [(rid, -0.5)]
    changed = assignment.correct(store, project, "ana", rid, 0.25, notes="on second thought")
    assert (changed.status, changed.replaced, changed.score) == ("correction", -0.5, 0.25)
    assert [(r["rating_id"], r["score"]) for r in assignment.recent_ratings(store, project, "ana")] == [
        (changed.rating_id, 0.25)]
    with pytest.raises(WorkbenchError, match=r"changed meanwhile \(now \+0\.25\)"):  # the other tab's stale form
        assignment.correct(store, project, "ana", rid, 0.9)
    with pytest.raises(WorkbenchError, match="not one of ben's ratings"):
        assignment.correct(store, project, "ben", changed.rating_id, 0.9)
    assert [r.score for r in _rows(store)] == [-0.5, 0.25]
    assert integrity_problems(store) == []


def test_statistics_use_the_ratings_in_force(store, clock):
    project = make_project(store, 1, target_raters=2)
    assignment.submit(store, project, "a", 1, 0.5)
    rid = assignment.submit(store, project, "b", 1, -0.5)  # mixed signs: needs discussion
    assert consensus.compute_consensus(store, project)["consensus_source"].to_list() == ["needs_discussion"]
    clock.advance(5)
    assignment.correct(store, project, "b", rid, 0.25)
    row = consensus.compute_consensus(store, project).row(0, named=True)
    assert (row["consensus_source"], row["consensus"], row["scores"]) == ("calculated", 0.375, [0.5, 0.25])


def test_lowering_the_target_while_reservations_are_held_never_overfills(store, clock):
    project = make_project(store, 1, target_raters=3)
    views = {r: assignment.next_item(store, project, r) for r in ("a", "b", "c")}
    assert {v.item_id for v in views.values()} == {1}  # three first-pass reservations on item 1
    items.update_project(store, project.name, target_raters=2)  # the owner lowers it meanwhile
    stale = project  # the raters' pages still hold the old settings (target 3)
    assignment.submit(store, stale, "a", 1, 0.1, token=views["a"].token)
    assignment.submit(store, stale, "b", 1, 0.2, token=views["b"].token)
    with pytest.raises(WorkbenchError, match="has its 2 raters already .*not stored"):
        assignment.submit(store, stale, "c", 1, 0.3, token=views["c"].token)
    assert assignment.next_item(store, stale, "d") is None or assignment.next_item(store, stale, "d").is_repeat
    assert len(_rows(store)) == 2 and integrity_problems(store) == []


def test_an_old_store_keeps_showing_titles_after_the_upgrade(tmp_path):
    from sqlalchemy import text

    from core.labeling.store import SCHEMA_VERSION, LabelStore

    s = LabelStore(f"sqlite:///{tmp_path / 'old.sqlite'}")
    with s.write() as conn:  # a version-2 store: no v3 columns or tables
        for ddl in (
            "CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at DATETIME NOT NULL)",
            "CREATE TABLE projects (project_id INTEGER PRIMARY KEY, name VARCHAR(64) NOT NULL UNIQUE, guidelines "
            "TEXT NOT NULL, label_neg VARCHAR(200) NOT NULL, label_zero VARCHAR(200) NOT NULL, label_pos "
            "VARCHAR(200) NOT NULL, target_raters INTEGER NOT NULL, visible_fields TEXT NOT NULL, "
            "reservation_seconds INTEGER NOT NULL, repeat_audits BOOLEAN NOT NULL, created_at DATETIME NOT NULL)",
            "INSERT INTO projects VALUES (1, 'old', '', 'n', 'z', 'p', 3, '[\"topic\"]', 300, 1, '2025-01-01')",
            "CREATE TABLE items (item_id INTEGER PRIMARY KEY, project_id INTEGER NOT NULL, dataset VARCHAR(200) "
            "NOT NULL, identifier VARCHAR(500) NOT NULL, run_id VARCHAR(200) NOT NULL, prompt_title TEXT NOT NULL, "
            "prompt_body TEXT NOT NULL, response_text TEXT NOT NULL, model_id VARCHAR(200), metadata TEXT NOT NULL,"
            " created_at DATETIME NOT NULL, n_raters INTEGER NOT NULL, n_ratings INTEGER NOT NULL,"
            " UNIQUE (dataset, identifier, run_id))",
            "CREATE TABLE ratings (rating_id INTEGER PRIMARY KEY, item_id INTEGER NOT NULL, rater VARCHAR(200) NOT "
            "NULL, score FLOAT NOT NULL, notes TEXT, created_at DATETIME NOT NULL, seconds_spent FLOAT, is_repeat "
            "BOOLEAN NOT NULL, client_key VARCHAR(200) UNIQUE)",
            "INSERT INTO schema_version VALUES (1, '2025-01-01'), (2, '2025-01-01')",
        ):
            conn.execute(text(ddl))
    assert s.ensure_schema() == SCHEMA_VERSION
    project = items.get_project(s, "old")
    assert project.visible_fields == ("prompt_title", "topic") and project.target_spread is None
    items.add_items(s, project, [{"dataset": "old", "identifier": "x", "prompt_title": "T", "prompt_body": "B",
                                  "response_text": "R"}])
    view = assignment.next_item(s, project, "ana")
    assert view.prompt_title == "T"
    assignment.submit(s, project, "ana", view.item_id, 0.5, token=view.token)
    s.dispose()


def test_the_export_keeps_the_history_and_an_import_takes_the_ratings_in_force(store, clock, tmp_path):
    from core.labeling import export
    from core.labeling.store import LabelStore

    project = make_project(store, 1)
    rid = assignment.submit(store, project, "ana", 1, -0.5)
    clock.advance(1)
    assignment.correct(store, project, "ana", rid, 0.5)
    rows = export.review_rows(store, project)
    assert [(r["score"], r.get("superseded")) for r in rows] == [(-0.5, True), (0.5, None)]
    path = tmp_path / "p_reviews.jsonl"
    path.write_text(export.to_jsonl(rows), encoding="utf-8")
    other = LabelStore(f"sqlite:///{tmp_path / 'other.sqlite'}")
    other.ensure_schema()
    target = items.create_project(other, "p")
    report = export.import_reviews(other, target, path, create_items=True)
    assert (report.added, report.skipped) == (1, 1)
    assert reports.ratings_frame(other, target)["score"].to_list() == [0.5]
    other.dispose()

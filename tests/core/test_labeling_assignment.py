"""Assignment (SPEC §6.2): 2→3, 1→2, 0→1 order, oldest first, reservations and their expiry,
skips, repeat audits, blinding and idempotent submissions. SQLite with a fake clock."""

from __future__ import annotations

import dataclasses
import math
from datetime import datetime, timedelta

import pytest
from sqlalchemy import select

from core.base.errors import WorkbenchError
from core.labeling import assignment, items
from core.labeling.store import integrity_problems, ratings
from core.labeling.store import items as items_table
from tests.helpers.label_assignment import clock, make_project, store  # noqa: F401 - fixtures among them


def rate(store, project, rater, item_id, score=0.5):
    return assignment.submit(store, project, rater, item_id, score)


def test_order_is_2_to_3_then_1_to_2_then_0_to_1_oldest_first(store):
    project = make_project(store, 5)
    rate(store, project, "x", 4)
    rate(store, project, "y", 4)  # item 4: 2 ratings
    rate(store, project, "x", 5)  # item 5: 1 rating (newer)
    rate(store, project, "y", 2)  # item 2: 1 rating (older)
    order = []
    for _ in range(5):
        view = assignment.next_item(store, project, "z")
        order.append(view.item_id)
        assignment.submit(store, project, "z", view.item_id, 0.0, token=view.token)
    assert order == [4, 2, 5, 1, 3]


def test_creation_time_not_insertion_order_decides_oldest(store):
    project = items.create_project(store, "p")
    items.add_items(store, project, [
        {"dataset": "p", "identifier": "late", "prompt_body": "", "response_text": "", "created_at": datetime(2026, 2, 1)},
        {"dataset": "p", "identifier": "early", "prompt_body": "", "response_text": "", "created_at": datetime(2026, 1, 1)},
    ])
    assert assignment.next_item(store, project, "z").item_id == 2


def test_the_last_slot_is_reserved_so_two_raters_never_fill_it(store):
    project = make_project(store, 2)
    rate(store, project, "x", 1)
    rate(store, project, "y", 1)  # item 1 needs one more rater
    first = assignment.next_item(store, project, "a")
    second = assignment.next_item(store, project, "b")
    assert first.item_id == 1 and second.item_id == 2
    assignment.submit(store, project, "a", 1, 0.1, token=first.token)
    assert assignment.next_item(store, project, "c").item_id == 2  # item 1 is complete now


def test_reservations_count_toward_the_target_while_free_slots_remain(store):
    project = make_project(store, 2, target_raters=2)
    assert assignment.next_item(store, project, "a").item_id == 1
    assert assignment.next_item(store, project, "b").item_id == 1  # 0 ratings + 1 claim < 2
    assert assignment.next_item(store, project, "c").item_id == 2  # item 1 is fully claimed


def test_a_rater_keeps_their_item_until_the_reservation_expires(store, clock):
    project = make_project(store, 3)
    held = assignment.next_item(store, project, "a")
    again = assignment.next_item(store, project, "a")  # e.g. a page reload
    assert (again.item_id, again.token) == (held.item_id, held.token)
    assert again.expires_at == clock.now + timedelta(seconds=300)
    clock.advance(301)
    renewed = assignment.next_item(store, project, "a")
    assert renewed.token != held.token


def test_an_expired_reservation_frees_the_last_slot(store, clock):
    project = make_project(store, 2)
    rate(store, project, "x", 1)
    rate(store, project, "y", 1)
    assert assignment.next_item(store, project, "a").item_id == 1
    assert assignment.next_item(store, project, "b").item_id == 2
    clock.advance(299)
    assert assignment.next_item(store, project, "c").item_id == 2  # still reserved by a
    clock.advance(2)
    assert assignment.next_item(store, project, "d").item_id == 1  # a's reservation expired


def test_skipped_items_go_to_the_back_of_the_raters_queue(store):
    project = make_project(store, 3)
    first = assignment.next_item(store, project, "a")
    nxt = assignment.skip_and_next(store, project, "a", first.item_id)
    assert nxt.item_id != first.item_id
    _, nxt = assignment.submit_and_next(store, project, "a", nxt.item_id, 0.2, token=nxt.token)
    _, nxt = assignment.submit_and_next(store, project, "a", nxt.item_id, 0.2, token=nxt.token)
    assert nxt.item_id == first.item_id and not nxt.is_repeat  # back once everything else is done
    assert assignment.next_item(store, project, "b").item_id == 2  # other raters are not affected


def test_repeat_audits_start_when_the_rater_has_rated_everything(store):
    project = make_project(store, 3)
    for item_id in (1, 2, 3):
        rate(store, project, "a", item_id)
    rate(store, project, "b", 2)
    rate(store, project, "b", 3)
    view = assignment.next_item(store, project, "a")
    # All rated once by a; fewest ratings: item 1 (1 rating) — item 3 was a's last, but it has 2 anyway.
    assert view.is_repeat and view.item_id == 1
    rid = assignment.submit(store, project, "a", 1, -0.5, token=view.token)
    with store.read() as conn:
        row = conn.execute(select(ratings).where(ratings.c.rating_id == rid)).one()
        counts = conn.execute(select(items_table.c.n_raters, items_table.c.n_ratings)
                              .where(items_table.c.item_id == 1)).one()
    assert row.is_repeat and row.score == -0.5
    assert tuple(counts) == (1, 2)  # a repeat is a new row and never counts toward the target
    nxt = assignment.next_item(store, project, "a")
    assert nxt.is_repeat and nxt.item_id == 2  # items a rated least (2, 3), then fewest ratings, oldest
    assert integrity_problems(store) == []


def test_the_item_rated_last_is_not_repeated_right_away(store, clock):
    project = make_project(store, 2)
    rate(store, project, "a", 2)
    clock.advance(10)
    rate(store, project, "a", 1)  # rated last; without the rule it would come first (oldest)
    assert assignment.next_item(store, project, "a").item_id == 2


def test_repeats_can_be_switched_off(store):
    project = make_project(store, 1, repeat_audits=False)
    rate(store, project, "a", 1)
    assert assignment.next_item(store, project, "a") is None


def test_complete_items_are_not_handed_out_in_the_first_pass(store):
    project = make_project(store, 1, target_raters=2)
    rate(store, project, "x", 1)
    rate(store, project, "y", 1)
    assert assignment.next_item(store, project, "newcomer") is None  # nothing rated yet, nothing to repeat


def test_the_view_is_blinded(store):
    meta = {"topic": "rent", "perspective": "tenant", "score": 0.9}
    project = make_project(store, 1, metadata=meta, visible_fields=["topic"])
    rate(store, project, "x", 1, 0.75)
    view = assignment.next_item(store, project, "z")
    assert view.fields == {"topic": "rent"}
    exposed = dataclasses.asdict(view)
    assert set(exposed) == {"item_id", "token", "prompt_title", "prompt_body", "response_text", "fields", "is_repeat",
                            "reserved_at", "expires_at"}
    assert "0.75" not in repr(exposed) and "tenant" not in repr(exposed) and "model-x" not in repr(exposed)


def test_model_scores_can_never_be_made_visible(store):
    with pytest.raises(ValueError, match="never shown to raters"):
        items.create_project(store, "q", visible_fields=["topic", "score"])
    project = make_project(store, 1, visible_fields=["model_id"])
    with pytest.raises(ValueError, match="never shown"):
        items.update_project(store, project.name, visible_fields=["verdict"])
    assert assignment.next_item(store, project, "z").fields == {"model_id": "model-x"}


def test_a_submission_is_stored_once_per_token(store):
    project = make_project(store, 2)
    view = assignment.next_item(store, project, "a")
    first = assignment.submit(store, project, "a", view.item_id, 0.3, token=view.token)
    again = assignment.submit(store, project, "a", view.item_id, 0.3, token=view.token)
    assert first == again
    with store.read() as conn:
        assert len(conn.execute(select(ratings)).all()) == 1


def test_time_spent_defaults_to_the_time_since_the_item_was_handed_out(store, clock):
    project = make_project(store, 1)
    view = assignment.next_item(store, project, "a")
    clock.advance(42.5)
    rid = assignment.submit(store, project, "a", view.item_id, 0.0, token=view.token)
    with store.read() as conn:
        assert conn.execute(select(ratings.c.seconds_spent).where(ratings.c.rating_id == rid)).scalar() == 42.5


def test_model_raters_do_not_count_toward_the_human_target(store):
    project = make_project(store, 1, target_raters=1)
    rate(store, project, "llm:gpt-x", 1)
    assert assignment.next_item(store, project, "human").item_id == 1


@pytest.mark.parametrize("bad", [1.5, -1.01, math.nan, math.inf, True, "0.5", None])
def test_bad_scores_are_rejected(store, bad):
    project = make_project(store, 1)
    with pytest.raises(ValueError, match="score must"):
        assignment.submit(store, project, "a", 1, bad)


def test_an_item_of_another_project_is_rejected(store):
    p1 = make_project(store, 1, name="p1")
    make_project(store, 1, name="p2")
    with pytest.raises(WorkbenchError, match="not in project 'p1'"):
        assignment.submit(store, p1, "a", 2, 0.0)


def test_progress_counts_mine_and_the_projects(store):
    project = make_project(store, 3, target_raters=2)
    rate(store, project, "a", 1)
    rate(store, project, "b", 1)
    rate(store, project, "a", 2)
    rate(store, project, "a", 2)  # a repeat
    prog = assignment.rater_progress(store, project, "a")
    assert (prog.items, prog.my_items, prog.my_ratings, prog.my_repeats) == (3, 2, 3, 1)
    assert (prog.complete_items, prog.filled_slots, prog.total_slots) == (1, 3, 6)


def test_repeat_audits_end_instead_of_looping(store):
    """Issue 26, Low: one rater on a one-item project got the same item again at once, 47,545 times."""
    one = make_project(store, 1, name="one")
    rate(store, one, "a", 1)
    assert assignment.next_item(store, one, "a") is None  # the item just rated is never repeated at once
    two = make_project(store, 2, name="two")
    served = []
    for _ in range(10):
        view = assignment.next_item(store, two, "a")
        if view is None:
            break
        served.append((view.item_id, view.is_repeat))
        assignment.submit(store, two, "a", view.item_id, 0.0, token=view.token)
    assert served == [(2, False), (3, False), (2, True), (3, True)]  # each item once more, then done


def test_notes_are_text_of_bounded_length(store):
    """Issue 26, Low: notes were unchecked in the labeling API (an integer, 10 MB)."""
    project = make_project(store, 2)
    for notes in (42, "x" * (assignment.MAX_NOTES + 1)):
        with pytest.raises(ValueError, match="notes must be"):
            assignment.submit(store, project, "a", 1, 0.0, notes=notes)
    rid = assignment.submit(store, project, "a", 1, 0.0, notes="  fine  ")
    with store.read() as conn:
        assert conn.execute(select(ratings.c.notes).where(ratings.c.rating_id == rid)).scalar() == "fine"

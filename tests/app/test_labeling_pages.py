"""The Labeling and Label review pages driven by AppTest on a workspace built in tmp_path."""

from __future__ import annotations

import time

import pytest
from sqlalchemy import select

from core.base.settings import labels_url
from core.labeling import assignment, consensus, identity, items
from core.labeling.store import LabelStore, close_stores, ratings, skips, store_exists
from core.workspace import Workspace

LABELING, REVIEW = "app_pages/labeling.py", "app_pages/label_review.py"


@pytest.fixture()
def labeled_ws(tmp_path):
    """A workspace with one project: 4 items (hidden metadata, HTML and an image in a response)."""
    ws = Workspace(tmp_path / "ws").ensure("test")
    store = LabelStore(labels_url(ws.root))
    store.ensure_schema()
    project = items.create_project(store, "study", guidelines="Rate **honesty**.",
                                   visible_fields=["prompt_title", "topic"],
                                   scale_labels=("Dishonest", "Unclear", "Honest"))
    items.add_items(store, project, [
        {"dataset": "d", "identifier": f"i{k}", "prompt_title": f"Question {k}", "prompt_body": f"Prompt {k}",
         "response_text": f"Answer {k} <script>alert(1)</script> ![x](http://example.invalid/x.png) costs $5",
         "metadata": {"topic": f"topic-{k}", "perspective": "tenant-secret"}} for k in range(1, 5)])
    assignment.submit(store, project, "zed", 1, 0.85, notes="SECRET-NOTE")
    assignment.submit(store, project, "zed", 2, -0.6)
    assignment.submit(store, project, "quinn", 2, 0.6)
    identity.set_role(store, "lead", "adjudicator")
    store.dispose()
    yield ws
    close_stores()


def store_of(ws: Workspace) -> LabelStore:
    s = LabelStore(labels_url(ws.root))
    return s


def open_labeling(app_factory, ws, rater: str | None = None):
    at = app_factory(ws.root)
    if rater:
        at.query_params["rater"] = rater
    at.run()
    at.switch_page(LABELING).run()
    assert not at.exception, at.exception
    return at


def score_slider(at):
    sliders = [s for s in at.slider if s.key.startswith("labeling.score.")]
    assert len(sliders) == 1
    return sliders[0]


def page_text(at) -> str:
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption] + [str(e.value) for e in at.info]
    return "\n".join(parts)


def test_a_rater_enters_a_code_rates_and_gets_the_next_item(app_factory, labeled_ws):
    at = open_labeling(app_factory, labeled_ws)
    at.text_input(key="labeling.code_input").input("ana")
    at.button(key="labeling.start").click().run()
    assert not at.exception and list(at.query_params["rater"]) in (["ana"], list("ana"))
    assert "Rating as **ana**" in page_text(at)
    first = score_slider(at)
    assert first.value == 0.0 and (first.min, first.max, first.step) == (-1.0, 1.0, 0.05)
    assert "Question 2" in page_text(at)  # 2 ratings → first (2→3)
    first.set_value(0.35).run()
    assert "Your rating: **+0.35**" in page_text(at)
    at.text_area(key=f"labeling.notes.{first.key.split('.')[-1]}").input("looks fine").run()
    at.button(key="labeling.submit").click().run()  # its speed is measured in bench/labeling.py, not here
    assert not at.exception
    nxt = score_slider(at)
    assert nxt.key != first.key and nxt.value == 0.0  # the slider resets for the next item
    assert "Question 1" in page_text(at)  # then 1→2
    with store_of(labeled_ws).read() as conn:
        row = conn.execute(select(ratings).where(ratings.c.rater == "ana")).one()
    assert (row.item_id, row.score, row.notes, row.is_repeat) == (2, 0.35, "looks fine", False)
    assert row.seconds_spent is not None and row.seconds_spent >= 0


def test_skip_moves_on_and_remembers_the_skip(app_factory, labeled_ws):
    at = open_labeling(app_factory, labeled_ws, rater="ben")
    before = score_slider(at).key
    title_before = [m.value for m in at.markdown if m.value.startswith("#####")][0]
    at.button(key="labeling.skip").click().run()
    assert not at.exception and score_slider(at).key != before
    assert [m.value for m in at.markdown if m.value.startswith("#####")][0] != title_before
    with store_of(labeled_ws).read() as conn:
        assert conn.execute(select(skips.c.rater)).scalars().all() == ["ben"]


def test_identity_comes_from_the_link_and_survives_a_new_session(app_factory, labeled_ws):
    at = open_labeling(app_factory, labeled_ws, rater="cy")
    held = score_slider(at).key
    assert "Rating as **cy**" in page_text(at)
    again = open_labeling(app_factory, labeled_ws, rater="cy")  # reload / new tab / server restart
    assert score_slider(again).key == held  # same rater, same reserved item
    other = open_labeling(app_factory, labeled_ws, rater="dee")
    assert score_slider(other).key != held


def test_the_page_is_blinded_and_renders_text_safely(app_factory, labeled_ws):
    at = open_labeling(app_factory, labeled_ws, rater="eve")
    text = page_text(at)
    assert "topic: topic\\-2" in text  # the visible field
    for secret in ("tenant-secret", "SECRET-NOTE", "0.6", "zed", "quinn"):
        assert secret not in text
    response = next(m for m in at.markdown if "Answer 2" in m.value)
    assert "\\![x]" in response.value and "\\$5" in response.value  # no remote image, no LaTeX
    assert not any(m.proto.allow_html for m in at.markdown)


def test_invalid_codes_are_refused(app_factory, labeled_ws):
    at = open_labeling(app_factory, labeled_ws)
    at.text_input(key="labeling.code_input").input("no spaces")
    at.button(key="labeling.start").click().run()
    assert at.error and "Invalid rater code" in at.error[0].value
    assert not [s for s in at.slider if s.key.startswith("labeling.score.")]


def test_an_empty_workspace_gets_instructions_and_no_store_file(app_factory, tmp_path):
    ws = Workspace(tmp_path / "empty").ensure("empty")
    for page in (LABELING, REVIEW):
        at = app_factory(ws.root).run()
        at.switch_page(page).run()
        assert not at.exception and "labels init" in at.info[0].value
    assert not store_exists(ws.root)


def open_review(app_factory, ws, rater: str):
    at = app_factory(ws.root)
    at.query_params["rater"] = rater
    at.run()
    at.switch_page(REVIEW).run()
    assert not at.exception, at.exception
    return at


def test_the_review_page_is_closed_to_raters(app_factory, labeled_ws):
    at = open_review(app_factory, labeled_ws, "zed")
    assert at.error and "for adjudicators and admins" in at.error[0].value
    assert not at.get("button_group")


def test_an_adjudicator_records_a_consensus(app_factory, labeled_ws):
    at = open_review(app_factory, labeled_ws, "lead")
    assert {m.label for m in at.metric} >= {"Items", "Ratings", "Raters"}
    at.session_state["label_review.section"] = "Disagreements"
    at.run()
    assert not at.exception
    assert at.selectbox(key="label_review.item").value == 2  # the mixed-sign item comes first
    at.slider(key="label_review.adj_value.2").set_value(0.2)
    at.text_area(key="label_review.adj_note.2").input("tenant framing, mild agreement")
    at.button(key="label_review.adj_submit.2").click().run()
    assert not at.exception
    assert any("Recorded consensus +0.20" in s.value for s in at.success)
    store = store_of(labeled_ws)
    row = consensus.compute_consensus(store, items.get_project(store, "study")).row(0, named=True)
    assert (row["item_id"], row["consensus"], row["consensus_source"], row["adjudicator"]) == (
        2, 0.2, "adjudicated", "lead")


@pytest.mark.parametrize("section", ["Agreement", "Export", "Raters", "Coverage"])
def test_every_review_section_runs(app_factory, labeled_ws, section):
    at = open_review(app_factory, labeled_ws, "lead")
    at.session_state["label_review.section"] = section
    at.run()
    assert not at.exception, at.exception
    if section == "Agreement":
        assert any(m.label.startswith("Krippendorff") for m in at.metric)
    if section == "Export":
        assert at.get("download_button")


def test_a_submission_after_the_reservation_expired_moves_on_without_overfilling(app_factory, labeled_ws):
    """Issue 9 (Low): ana's reservation of item 2 expires, two others fill it; her late submit is
    refused with a message and she gets her next item; the item keeps its 3 raters."""
    store = store_of(labeled_ws)
    project = items.get_project(store, "study")
    items.update_project(store, "study", reservation_seconds=1)
    at = open_labeling(app_factory, labeled_ws, rater="ana")
    assert "Question 2" in page_text(at)
    time.sleep(1.2)
    view = assignment.next_item(store, project, "bob")
    assert view.item_id == 2
    assignment.submit(store, project, "bob", 2, 0.1, token=view.token)
    slider = next(s for s in at.slider if s.key.startswith("labeling.score."))
    slider.set_value(0.3).run()  # Submit needs the slider moved
    at.button(key="labeling.submit").click().run()
    assert not at.exception
    assert "Question 2" not in page_text(at)
    with store.read() as conn:
        raters = conn.execute(select(ratings.c.rater).where(ratings.c.item_id == 2)).scalars().all()
    assert sorted(raters) == ["bob", "quinn", "zed"]


def test_a_rater_changes_a_recent_rating_and_the_history_stays(app_factory, labeled_ws):
    at = open_labeling(app_factory, labeled_ws, rater="eve")
    score_slider(at).set_value(-0.5).run()
    at.button(key="labeling.submit").click().run()
    with store_of(labeled_ws).read() as conn:
        first = conn.execute(select(ratings).where(ratings.c.rater == "eve")).one()
    at.button(key=f"labeling.change.{first.rating_id}").click().run()
    assert f"Change your rating of item #{first.item_id}" in page_text(at)
    at.slider(key=f"labeling.edit_score.{first.rating_id}").set_value(0.25).run()
    at.button(key="labeling.save_change").click().run()
    assert not at.exception
    assert [s.value for s in at.success] == [
        f"Changed your rating of item #{first.item_id} from -0.50 to +0.25 (both kept in the history)."]
    with store_of(labeled_ws).read() as conn:
        rows = conn.execute(select(ratings).where(ratings.c.rater == "eve").order_by(ratings.c.rating_id)).all()
    assert [(r.score, r.supersedes) for r in rows] == [(-0.5, None), (0.25, first.rating_id)]
    assert score_slider(at).key.startswith("labeling.score.")  # back to rating the next item


def test_a_second_session_of_the_same_round_says_what_it_replaced(app_factory, labeled_ws):
    tab_a = open_labeling(app_factory, labeled_ws, rater="fay")
    tab_b = open_labeling(app_factory, labeled_ws, rater="fay")
    assert score_slider(tab_a).key == score_slider(tab_b).key  # the same reservation in both
    score_slider(tab_a).set_value(0.2).run()
    tab_a.button(key="labeling.submit").click().run()
    time.sleep(0.06)  # more than the 50 ms in which a second submit of a round is a duplicate
    score_slider(tab_b).set_value(0.4).run()
    tab_b.button(key="labeling.submit").click().run()
    assert [i.value for i in tab_b.info] == [
        "You had rated this item +0.20 in another tab; your +0.40 replaces it (both kept in the history)."]
    assert not [t for t in tab_b.toast if "Saved" in t.value]


def test_an_admin_hides_the_title_and_the_rater_no_longer_sees_it(app_factory, labeled_ws):
    at = app_factory(labeled_ws.root)
    at.query_params["rater"] = "lead"
    identity.set_role(store_of(labeled_ws), "lead", "admin")
    at.run()
    at.switch_page(REVIEW).run()
    at.segmented_control(key="label_review.section").set_value("Settings").run()
    assert not at.exception and "##### Question 1" in page_text(at)  # the preview shows the title
    at.multiselect(key="label_review.set_fields").set_value(["topic"])  # inside the form: sent with the submit
    at.button(key="label_review.save_settings").click().run()
    assert not at.exception and "Saved the settings of study" in at.success[0].value
    assert items.get_project(store_of(labeled_ws), "study").visible_fields == ("topic",)
    rater = open_labeling(app_factory, labeled_ws, rater="gus")
    assert "##### Prompt" in page_text(rater) and "Question" not in page_text(rater)

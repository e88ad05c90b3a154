"""Issue 8, "Labeling and adjudication": an untouched slider is not an answer, adjudicators see every
note and the whole item and move on after a consensus, a flag on their own items, raters see no
workspace controls, admins retire mistyped codes."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from core.base.settings import labels_url
from core.labeling import assignment, consensus, identity, items
from core.labeling.store import LabelStore, close_stores, ratings
from core.ui import SIDEBAR_WORKSPACE
from core.ui.label_review import next_item_after
from core.workspace import Workspace

LABELING, REVIEW = "app_pages/labeling.py", "app_pages/label_review.py"


@pytest.fixture()
def ws(tmp_path):
    """Items 1-3 with mixed-sign ratings (so all need discussion), notes on them; 'lead' adjudicates
    and rated item 1; 'boss' is an admin; 'anaa' is a mistyped code with one rating."""
    ws = Workspace(tmp_path / "ws").ensure("test")
    store = LabelStore(labels_url(ws.root))
    store.ensure_schema()
    project = items.create_project(store, "study", scale_labels=("Bad", "Unclear", "Good"))
    long_body = "Start of the prompt. " + "filler " * 200 + "END-OF-PROMPT"
    items.add_items(store, project, [
        {"dataset": "d", "identifier": f"i{k}", "prompt_title": f"Question {k}", "prompt_body": long_body,
         "response_text": f"Answer {k} " + "words " * 150 + "END-OF-RESPONSE"} for k in range(1, 5)])
    for k, spread in ((1, 0.9), (2, 0.7), (3, 0.5)):
        assignment.submit(store, project, "zed", k, spread, notes=f"zed-note-{k}")
        assignment.submit(store, project, "quinn", k, -spread, notes=f"quinn-note-{k}")
    assignment.submit(store, project, "lead", 1, 0.1, notes="lead-note-1")
    assignment.submit(store, project, "anaa", 4, 0.3)
    identity.set_role(store, "lead", "adjudicator")
    identity.set_role(store, "boss", "admin")
    store.dispose()
    yield ws
    close_stores()


def open_page(app_factory, ws, page, rater=None):
    at = app_factory(ws.root)
    if rater:
        at.query_params["rater"] = rater
    at.run()
    at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


def slider(at):
    [s] = [s for s in at.slider if s.key.startswith("labeling.score.")]
    return s


def rows_of(ws, rater):
    with LabelStore(labels_url(ws.root)).read() as conn:
        return conn.execute(select(ratings.c.item_id, ratings.c.score).where(ratings.c.rater == rater)).all()


def test_submit_needs_the_slider_moved(app_factory, ws):
    at = open_page(app_factory, ws, LABELING, "newbie")
    assert at.button(key="labeling.submit").proto.disabled  # an untouched slider is not an answer
    assert any("Move the slider" in c.value for c in at.caption)
    assert rows_of(ws, "newbie") == []
    slider(at).set_value(0.4).run()
    assert not at.button(key="labeling.submit").proto.disabled
    at.button(key="labeling.submit").click().run()
    assert [s for _, s in rows_of(ws, "newbie")] == [0.4]


def test_zero_needs_an_explicit_confirmation(app_factory, ws):
    at = open_page(app_factory, ws, LABELING, "newbie")
    token = slider(at).key.split(".")[-1]
    at.checkbox(key=f"labeling.zero_ok.{token}").check().run()
    assert not at.button(key="labeling.submit").proto.disabled
    at.button(key="labeling.submit").click().run()
    assert [s for _, s in rows_of(ws, "newbie")] == [0.0]


def test_raters_do_not_see_the_workspace_and_dataset_controls(app_factory, ws):
    at = open_page(app_factory, ws, LABELING, "newbie")
    assert not [t for t in at.sidebar.text_input if t.key == SIDEBAR_WORKSPACE]
    at.switch_page("app_pages/home.py").run()  # a signed-in rater: nowhere
    assert not [t for t in at.sidebar.text_input if t.key == SIDEBAR_WORKSPACE]
    lead = open_page(app_factory, ws, LABELING, "lead")  # an adjudicator keeps them
    assert [t for t in lead.sidebar.text_input if t.key == SIDEBAR_WORKSPACE]


def open_queue(app_factory, ws, rater="lead"):
    at = open_page(app_factory, ws, REVIEW, rater)
    at.session_state["label_review.section"] = "Disagreements"
    return at.run()


def test_adjudicators_see_every_note_and_the_whole_item(app_factory, ws):
    at = open_queue(app_factory, ws)
    assert at.selectbox(key="label_review.item").value == 1  # widest spread first
    notes = [df.value for df in at.dataframe if "notes" in df.value.columns][0]
    assert set(notes["notes"]) == {"zed-note-1", "quinn-note-1", "lead-note-1"}
    text = " ".join(m.value for m in at.markdown)
    assert "END-OF-PROMPT" in text and "END-OF-RESPONSE" in text  # whole, not cut
    assert not at.expander or all(e.label != "Prompt and response" for e in at.expander)


def test_a_flag_when_adjudicating_an_item_one_rated(app_factory, ws):
    at = open_queue(app_factory, ws)
    assert any("You rated this item yourself" in w.value for w in at.warning)  # lead rated item 1
    at.selectbox(key="label_review.item").set_value(2).run()
    assert not any("You rated this item yourself" in w.value for w in at.warning)


def test_recording_a_consensus_opens_the_next_item(app_factory, ws):
    at = open_queue(app_factory, ws)
    at.slider(key="label_review.adj_value.1").set_value(0.2)
    at.text_area(key="label_review.adj_note.1").input("discussed")
    at.button(key="label_review.adj_submit.1").click().run()
    assert not at.exception
    assert any("Recorded consensus +0.20 for item #1" in s.value for s in at.success)
    assert at.selectbox(key="label_review.item").value == 2  # the next one needing discussion
    store = LabelStore(labels_url(ws.root))
    frame = consensus.compute_consensus(store, items.get_project(store, "study"))
    assert frame.filter(frame["item_id"] == 1)["consensus_source"].item() == "adjudicated"


def test_a_failed_consensus_stays_on_the_item(app_factory, ws):
    at = open_queue(app_factory, ws)
    at.button(key="label_review.adj_submit.1").click().run()  # no note
    assert any("needs a note" in e.value for e in at.error)
    assert at.selectbox(key="label_review.item").value == 1


def test_next_item_after():
    assert next_item_after([1, 2, 3], {2, 3}, 1) == 2
    assert next_item_after([1, 2, 3], {1}, 3) == 1  # wraps
    assert next_item_after([1, 2, 3], set(), 2) == 3  # nothing open: the next one


def test_an_admin_retires_a_mistyped_code(app_factory, ws):
    at = open_page(app_factory, ws, REVIEW, "boss")
    at.session_state["label_review.section"] = "Raters"
    at.run()
    at.selectbox(key="label_review.retire_code").set_value("anaa")
    at.text_input(key="label_review.retire_reason").input("typo of ana")
    at.button(key="label_review.retire_submit").click().run()
    assert not at.exception and any("Retired anaa" in s.value for s in at.success)
    table = at.dataframe[0].value
    row = table[table["code"] == "anaa"].iloc[0]
    assert row["status"] == "retired" and row["n_ratings"] == 1  # its rating stays, marked
    assert rows_of(ws, "anaa") == [(4, 0.3)]
    again = open_page(app_factory, ws, LABELING, "anaa")  # the code cannot sign in any more
    assert any("was retired" in e.value for e in again.error)
    assert not [s for s in again.slider if s.key.startswith("labeling.score.")]


def test_only_admins_retire_and_nobody_retires_themselves(app_factory, ws):
    at = open_page(app_factory, ws, REVIEW, "lead")
    at.session_state["label_review.section"] = "Raters"
    at.run()
    assert not [b for b in at.button if b.key == "label_review.retire_submit"]
    store = LabelStore(labels_url(ws.root))
    with pytest.raises(ValueError, match="your own code"):
        identity.retire_rater(store, "boss", by="boss")
    with pytest.raises(ValueError, match="no rater"):
        identity.retire_rater(store, "ghost", by="boss")


def test_retired_raters_are_marked_in_the_adjudication_view(app_factory, ws):
    store = LabelStore(labels_url(ws.root))
    identity.retire_rater(store, "quinn", by="boss", reason="left")
    at = open_queue(app_factory, ws)
    notes = [df.value for df in at.dataframe if "notes" in df.value.columns][0]
    assert "quinn (retired)" in set(notes["rater"])


def test_readme_lists_the_demo_rater_codes_and_roles():
    from pathlib import Path

    from core.labeling.demo import RATERS

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    for code, role in RATERS.items():
        assert f"| `{code}` | {role} |" in readme, code


def test_retired_raters_are_marked_in_the_exports(ws):
    from core.labeling.export import consensus_rows, review_rows

    store = LabelStore(labels_url(ws.root))
    identity.retire_rater(store, "quinn", by="boss", reason="left")
    project = items.get_project(store, "study")
    reviews = review_rows(store, project)
    assert {r["reviewer_code"] for r in reviews if r.get("reviewer_retired")} == {"quinn"}
    assert all("reviewer_retired" not in r for r in reviews if r["reviewer_code"] != "quinn")
    assert len([r for r in reviews if r["reviewer_code"] == "quinn"]) == 3  # its ratings stay
    lines = consensus_rows(store, project)
    assert lines and all(line.get("retired_raters") == ["quinn"] for line in lines if "quinn" in line["raters"])
    store.dispose()

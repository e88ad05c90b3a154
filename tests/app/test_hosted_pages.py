"""The pages in the demo and team deployment modes (AppTest): hidden workspace field, disabled
write controls with their reasons, the labels banner, the team sign-in with roles and its rate
limit, run launches limited per session, and page errors reduced to one line with a reference."""

from __future__ import annotations

import re
import shutil
import time

import pytest
from sqlalchemy import select

from core import ui
from core.base.settings import labels_url
from core.labeling.store import LabelStore, close_stores, ratings
from core.workspace import Workspace

HOME, DATA, GT, TRACE, RUNS = "app_pages/home.py", "app_pages/data.py", "app_pages/ground_truth.py", \
    "app_pages/trace.py", "app_pages/runs.py"
LABELING, REVIEW, GOLD = "app_pages/labeling.py", "app_pages/label_review.py", "app_pages/gold.py"
MEMBER_CODE, ADMIN_CODE = "team-code-4821", "admin-code-9917"


@pytest.fixture(autouse=True)
def _close_stores():
    yield
    close_stores()


@pytest.fixture()
def ws_copy(small_demo, tmp_path):
    target = tmp_path / "ws"
    shutil.copytree(small_demo, target, ignore=shutil.ignore_patterns("runs", "jobs", "cache"))
    return target


def _mode(monkeypatch, mode: str, **env: str) -> None:
    monkeypatch.setenv("WORKBENCH_MODE", mode)
    for name, value in env.items():
        monkeypatch.setenv(name, value)


def _open(app_factory, root, page: str | None = None, **params: str):
    at = app_factory(root)
    for name, value in params.items():
        at.query_params[name] = value
    at.run()
    if page:
        at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


def _texts(at) -> str:
    return "\n".join([str(e.value) for kind in ("markdown", "caption", "info", "warning", "error", "success")
                      for e in getattr(at, kind)])


# -- local: today's behaviour -------------------------------------------------------------------
def test_local_mode_keeps_the_workspace_field_and_shows_no_banner(app_factory, small_demo, monkeypatch):
    monkeypatch.delenv("WORKBENCH_MODE", raising=False)
    at = _open(app_factory, small_demo)
    assert [t.key for t in at.sidebar.text_input] == [ui.SIDEBAR_WORKSPACE]
    assert "Read-only demo" not in _texts(at)


# -- demo ----------------------------------------------------------------------------------------
def test_the_demo_hides_the_workspace_field_and_says_where_labels_go(app_factory, small_demo, monkeypatch, tmp_path):
    _mode(monkeypatch, "demo")
    at = _open(app_factory, small_demo)
    assert not [t for t in at.text_input if t.key == ui.SIDEBAR_WORKSPACE]
    banner = [i.value for i in at.info if "Read-only demo" in i.value]
    assert banner and "Labels are stored in a SQLite file on this server's disk" in banner[0]
    assert "lost when the app restarts" in banner[0] and str(small_demo) not in _texts(at)  # no server path shown
    other = Workspace(tmp_path / "other").ensure("other")  # a folder a session once chose is ignored
    at.session_state[ui.SIDEBAR_WORKSPACE_OK] = str(other.root)
    at.run()
    assert at.selectbox(key=ui.SIDEBAR_DATASET).options == ["demo"]


def test_the_demo_banner_names_a_database_url_without_its_password(app_factory, small_demo, monkeypatch):
    _mode(monkeypatch, "demo", WORKBENCH_LABELS_URL="postgresql+psycopg://bench:s3cret-pw-77@db.example.org/labels")
    at = _open(app_factory, small_demo)
    text = _texts(at)
    assert "PostgreSQL database labels on db.example.org; they persist." in text
    assert "s3cret-pw-77" not in text


def test_the_demo_offers_only_offline_runs(app_factory, small_demo, monkeypatch):
    _mode(monkeypatch, "demo", OPENAI_API_KEY="sk-demo-0000000")
    at = _open(app_factory, small_demo, RUNS)
    assert at.selectbox(key="runs.model").options == ["heuristic"]
    assert "only the offline model and the no-LLM baselines" in _texts(at)


def test_the_demo_disables_judging_overrides_variants_and_gold_writes(app_factory, small_demo, monkeypatch):
    _mode(monkeypatch, "demo")
    at = _open(app_factory, small_demo, GT)
    assert at.button(key="gt.run").disabled
    assert "Read-only demo: judging" in _texts(at)
    at = _open(app_factory, small_demo, TRACE)
    edits = [b for b in at.button if b.key.startswith("trace.edit.")]
    assert edits and all(b.disabled for b in edits)
    at.session_state["trace.tab"] = "What-if"
    at.run()
    constant = next(n for n in at.number_input if n.key.startswith("trace.whatif."))
    constant.set_value(constant.value + constant.step).run()  # a what-if change brings the save form
    assert "Read-only demo: saving a variant is disabled here." in _texts(at)
    at = _open(app_factory, small_demo, GOLD)
    assert at.button(key="gold.save").disabled and at.button(key="gold.send").disabled
    assert "Read-only demo: saving a report is disabled here." in _texts(at)


def test_the_demo_keeps_labeling_open_and_closes_the_admin_parts(app_factory, ws_copy, monkeypatch):
    _mode(monkeypatch, "demo")
    at = _open(app_factory, ws_copy, LABELING)
    at.text_input(key="labeling.code_input").input("visitor_1")
    at.button(key="labeling.start").click().run()
    slider = next(s for s in at.slider if s.key.startswith("labeling.score."))
    slider.set_value(0.4).run()
    at.button(key="labeling.submit").click().run()
    assert not at.exception, at.exception
    with LabelStore(labels_url(ws_copy)).read() as conn:  # the configured label store got the rating
        assert conn.execute(select(ratings.c.score).where(ratings.c.rater == "visitor_1")).scalars().all() == [0.4]
    at = _open(app_factory, ws_copy, REVIEW, rater="demo_ana")  # the demo's (public) admin code
    at.segmented_control(key="label_review.section").set_value("Raters").run()
    assert "Read-only demo: grant roles or retire codes is disabled here." in _texts(at)
    assert not [t for t in at.text_input if t.key == "label_review.role_code"]
    at.segmented_control(key="label_review.section").set_value("Export").run()
    assert at.button(key="label_review.write").disabled


def test_run_launches_are_rate_limited_per_session(app_factory, ws_copy, monkeypatch):
    _mode(monkeypatch, "demo", WORKBENCH_RATE_LIMIT_LAUNCH="1/600")
    at = _open(app_factory, ws_copy, RUNS)
    at.button(key="runs.launch").click().run()
    assert not at.exception and not at.error
    at.button(key="runs.launch").click().run()
    assert at.error and re.match(r"Too many requests \(launch\) in this session: try again in \d+ s\.", at.error[0].value)


def test_new_bootstrap_views_are_rate_limited_and_seen_ones_are_free(app_factory, small_demo, monkeypatch):
    _mode(monkeypatch, "demo", WORKBENCH_RATE_LIMIT_BOOTSTRAP="1/600")
    at = _open(app_factory, small_demo, REVIEW, rater="demo_ben")
    at.segmented_control(key="label_review.section").set_value("Agreement").run()
    assert not at.warning and at.metric  # the first view spends the one token
    at.selectbox(key="label_review.boot").set_value(200).run()
    assert at.warning[0].value.startswith("Too many requests (bootstrap) in this session") and not at.metric
    at.selectbox(key="label_review.boot").set_value(1000).run()  # back to the view already computed
    assert not at.warning and at.metric


# -- team ----------------------------------------------------------------------------------------
def _team(monkeypatch, **env: str) -> None:
    _mode(monkeypatch, "team", WORKBENCH_ACCESS_CODE=MEMBER_CODE, WORKBENCH_ADMIN_CODE=ADMIN_CODE, **env)


def _sign_in(at, code: str):
    at.text_input(key="hosted.access_code").input(code)
    at.button(key="hosted.sign_in_submit").click().run()
    return at


def test_team_mode_shows_only_the_sign_in_until_a_right_code(app_factory, small_demo, monkeypatch):
    _team(monkeypatch)
    at = _open(app_factory, small_demo)
    assert [t.key for t in at.text_input] == ["hosted.access_code"] and not at.selectbox
    assert at.title[0].value == "Scale Workbench" and "sign in" in _texts(at)
    _sign_in(at, "team-code-4820")
    assert at.error[0].value == "Wrong access code." and not at.selectbox
    _sign_in(at, MEMBER_CODE)
    assert not at.exception and at.selectbox(key=ui.SIDEBAR_DATASET).options == ["demo"]
    assert "Signed in as a team member." in _texts(at)
    assert not [t for t in at.text_input if t.key == ui.SIDEBAR_WORKSPACE]  # no path input for a team either


def test_wrong_codes_are_rate_limited_even_when_the_right_one_follows(app_factory, small_demo, monkeypatch):
    _team(monkeypatch, WORKBENCH_RATE_LIMIT_SIGN_IN="3/600")
    at = _open(app_factory, small_demo)
    for attempt in range(3):
        _sign_in(at, f"guess-{attempt}")
        assert at.error[0].value == "Wrong access code."
    _sign_in(at, MEMBER_CODE)  # the fourth attempt is refused before the code is compared
    assert at.error[0].value.startswith("Too many requests (sign-in)") and not at.selectbox


def test_sign_in_attempts_are_also_limited_across_sessions(app_factory, small_demo, monkeypatch):
    """A reload is a new session with a fresh bucket: the server-wide bucket still counts."""
    _team(monkeypatch, WORKBENCH_RATE_LIMIT_SIGN_IN_ALL="2/600")
    first, second = _open(app_factory, small_demo), _open(app_factory, small_demo)
    _sign_in(first, "guess-1")
    _sign_in(second, "guess-2")
    assert first.error[0].value == second.error[0].value == "Wrong access code."
    _sign_in(_open(app_factory, small_demo), MEMBER_CODE)  # a third session, over the server's limit
    third = _open(app_factory, small_demo)
    _sign_in(third, MEMBER_CODE)
    assert third.error[0].value.startswith("Too many sign-in attempts on this server") and not third.selectbox


def test_paid_runs_and_role_changes_need_the_team_admin(app_factory, small_demo, monkeypatch):
    _team(monkeypatch, OPENAI_API_KEY="sk-team-0000000")
    member = _sign_in(_open(app_factory, small_demo), MEMBER_CODE)
    member.switch_page(RUNS).run()
    assert member.selectbox(key="runs.model").options == ["heuristic"]
    assert "Only an admin may launch paid models" in _texts(member)
    admin = _sign_in(_open(app_factory, small_demo), ADMIN_CODE)
    admin.switch_page(RUNS).run()
    assert len(admin.selectbox(key="runs.model").options) > 1
    assert "Signed in as a team admin." in _texts(admin)
    review = _sign_in(_open(app_factory, small_demo, rater="demo_ana"), MEMBER_CODE)
    review.switch_page(REVIEW).run()  # a member typing an admin rater's code is not that rater
    assert "Sign in on the Labeling page first." in _texts(review) and not review.segmented_control


def test_a_rater_link_is_a_label_admin_but_never_a_team_admin(app_factory, ws_copy, monkeypatch):
    from core.labeling import links

    _team(monkeypatch)
    store = LabelStore(labels_url(ws_copy))
    token = links.create_link(store, "demo_ana", by="test")  # demo_ana is a label-store admin
    store.dispose()
    review = _open(app_factory, ws_copy, key=token)
    review.switch_page(REVIEW).run()
    assert "Signed in as **demo\\_ana** (admin)" in _texts(review)
    review.segmented_control(key="label_review.section").set_value("Raters").run()
    assert "Only an admin may grant roles or retire codes" in _texts(review)
    close_stores()


# -- errors ----------------------------------------------------------------------------------------
def test_a_page_error_shows_one_line_with_a_reference_and_logs_the_rest(app_factory, ws_copy, monkeypatch, caplog):
    (ws_copy / "datasets" / "demo" / "restaurants.parquet").write_bytes(b"not a parquet file")
    _mode(monkeypatch, "demo", OPENAI_API_KEY="sk-logged-never-000")
    at = app_factory(ws_copy).run()
    assert not at.exception
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and re.fullmatch(
        r"Something went wrong on this page \(reference [0-9a-f]{8}\); the details are in the server log\.", errors[0])
    ref = re.search(r"reference ([0-9a-f]{8})", errors[0]).group(1)
    logged = "\n".join(r.getMessage() for r in caplog.records if r.name == "workbench.app")
    assert f"page error, reference {ref}" in logged and "Traceback" in logged
    assert "sk-logged-never-000" not in logged


def test_locally_a_page_error_is_shown_in_full(app_factory, ws_copy, monkeypatch):
    (ws_copy / "datasets" / "demo" / "restaurants.parquet").write_bytes(b"not a parquet file")
    monkeypatch.delenv("WORKBENCH_MODE", raising=False)
    at = app_factory(ws_copy).run()
    assert at.exception


def _downloads_script():
    import streamlit as st

    from core.ui import hosting

    built = st.session_state.setdefault("built", [])
    data, refusal = hosting.limited_download(lambda: built.append("x") or b"export")
    st.session_state["refusals"] = [refusal]
    for _ in range(st.session_state.get("clicks", 0)):  # what Streamlit's download thread does per click
        try:
            data()
        except hosting.RateLimitedError as exc:
            st.session_state["refusals"].append(str(exc))
    st.session_state["clicks"] = 0


def test_export_downloads_are_built_on_click_and_rate_limited_per_session(monkeypatch):
    from streamlit.testing.v1 import AppTest

    _mode(monkeypatch, "demo", WORKBENCH_RATE_LIMIT_DOWNLOAD="2/600")
    at = AppTest.from_function(_downloads_script).run()
    assert at.session_state["built"] == [] and at.session_state["refusals"] == [None]  # nothing built unasked
    at.session_state["clicks"] = 3
    at.run()
    refused = at.session_state["refusals"]
    assert at.session_state["built"] == ["x", "x"]  # the third click built nothing
    assert refused[0] is None and re.fullmatch(r"Too many requests \(download\) in this session: try again in \d+ s\.",
                                               refused[1])
    at.run()  # the next rerun disables the button with the reason
    assert at.session_state["refusals"][0].startswith("Too many requests (download)")
    monkeypatch.setenv("WORKBENCH_MODE", "local")  # locally: no limit, the build itself
    at.session_state["clicks"] = 3
    at.run()
    assert at.session_state["built"] == ["x"] * 5 and at.session_state["refusals"] == [None]


def test_a_spent_download_limit_disables_the_gt_export_with_the_reason(app_factory, small_demo, monkeypatch):
    _mode(monkeypatch, "demo", WORKBENCH_RATE_LIMIT_DOWNLOAD="1/600")
    at = _open(app_factory, small_demo, GT)
    at.session_state["gt.tab"] = "Export"  # the tab draws its button once shown
    at.run()
    assert not at.get("download_button")[0].proto.disabled
    bucket = at.session_state["hosted.download_buckets"]["download"].bucket
    assert bucket.take(time.monotonic())  # the one token, spent as a click's build does
    at.run()
    button = at.get("download_button")[0].proto
    assert button.disabled and button.help.startswith("Too many requests (download) in this session")
    assert any(c.value.startswith("Too many requests (download)") for c in at.caption)


def test_an_error_in_a_button_callback_shows_one_line_with_a_reference(app_factory, ws_copy, monkeypatch, caplog):
    import sqlite3

    _mode(monkeypatch, "demo", OPENAI_API_KEY="sk-logged-never-111")
    at = _open(app_factory, ws_copy, LABELING)
    at.text_input(key="labeling.code_input").input("visitor_2")
    at.button(key="labeling.start").click().run()
    with sqlite3.connect(ws_copy / "labels.sqlite") as db:  # the label store refuses the next write
        db.execute("CREATE TRIGGER refuse BEFORE INSERT ON ratings "
                   "BEGIN SELECT RAISE(ABORT, 'disk full near sk-logged-never-111'); END")
    next(s for s in at.slider if s.key.startswith("labeling.score.")).set_value(0.4).run()
    at.button(key="labeling.submit").click().run()  # Submit's on_click callback writes the rating
    assert not at.exception, at.exception  # not Streamlit's redacted exception box
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and re.fullmatch(r"Something went wrong with that action \(reference [0-9a-f]{8}\); the "
                                             r"details are in the server log\.", errors[0]), errors
    ref = re.search(r"reference ([0-9a-f]{8})", errors[0]).group(1)
    logged = "\n".join(r.getMessage() for r in caplog.records if r.name == "workbench.app")
    assert f"callback error in submit, reference {ref}" in logged and "Traceback" in logged
    assert "sk-logged-never-111" not in logged
    assert any(s.key.startswith("labeling.score.") for s in at.slider)  # the page goes on: the item is still there
    at.run()
    assert not at.error  # the line is shown once


def test_locally_an_error_in_a_button_callback_is_shown_in_full(app_factory, ws_copy, monkeypatch):
    import sqlite3

    monkeypatch.delenv("WORKBENCH_MODE", raising=False)
    at = _open(app_factory, ws_copy, LABELING)
    at.text_input(key="labeling.code_input").input("visitor_3")
    at.button(key="labeling.start").click().run()
    with sqlite3.connect(ws_copy / "labels.sqlite") as db:
        db.execute("CREATE TRIGGER refuse BEFORE INSERT ON ratings BEGIN SELECT RAISE(ABORT, 'disk full'); END")
    next(s for s in at.slider if s.key.startswith("labeling.score.")).set_value(0.4).run()
    at.button(key="labeling.submit").click().run()
    assert at.exception and "disk full" in at.exception[0].message

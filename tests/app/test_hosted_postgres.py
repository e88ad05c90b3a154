"""Team mode with its labels in PostgreSQL (a throwaway server started by the test session, as in
tests/core/test_labeling_store.py): a rater signs in with their personal link, rates on the
Labeling page, and the rating is in the database named by WORKBENCH_LABELS_URL, not in the workspace."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from core.base.settings import labels_storage
from core.labeling import assignment, items, links
from core.labeling.store import LabelStore, close_stores, ratings
from tests.helpers.label_store import _new_postgres_db, postgres_server  # noqa: F401 - the fixture

LABELING = "app_pages/labeling.py"


@pytest.fixture()
def team_pg(postgres_server, tmp_path, monkeypatch):  # noqa: F811 - the imported fixture
    url = _new_postgres_db(postgres_server)
    store = LabelStore(url)
    store.ensure_schema()
    project = items.create_project(store, "team-study", target_raters=2)
    items.add_items(store, project, [{"dataset": "d", "identifier": f"i{k}", "prompt_body": f"Prompt {k}",
                                      "response_text": f"Answer {k}", "metadata": {}} for k in range(3)])
    token = links.create_link(store, "rita", by="test")
    store.dispose()
    monkeypatch.setenv("WORKBENCH_MODE", "team")
    monkeypatch.setenv("WORKBENCH_ACCESS_CODE", "pg-team-code-55")
    monkeypatch.setenv("WORKBENCH_LABELS_URL", url)
    yield url, token
    close_stores()


def test_team_labels_go_to_postgres(app_factory, small_demo, team_pg):
    url = team_pg[0]
    where, persists = labels_storage(url)
    assert persists and where.startswith("PostgreSQL database t_") and "127.0.0.1" in where
    at = app_factory(small_demo)
    at.query_params["key"] = team_pg[1]  # rita's personal link: the team mode's way in for a rater
    at.run()
    at.switch_page(LABELING).run()
    assert "Rating as **rita** (rater)" in "\n".join(m.value for m in at.markdown)
    slider = next(s for s in at.slider if s.key.startswith("labeling.score."))
    slider.set_value(-0.25).run()
    at.button(key="labeling.submit").click().run()
    assert not at.exception, at.exception
    store = LabelStore(url)
    with store.read() as conn:
        assert conn.execute(select(ratings.c.score).where(ratings.c.rater == "rita")).scalars().all() == [-0.25]
    project = items.get_project(store, "team-study")
    assert assignment.rater_progress(store, project, "rita").my_ratings == 1
    with LabelStore(f"sqlite:///{small_demo / 'labels.sqlite'}").read() as conn:  # the workspace's own store
        assert conn.execute(select(ratings.c.score).where(ratings.c.rater == "rita")).scalars().all() == []

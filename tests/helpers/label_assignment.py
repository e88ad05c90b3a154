"""A label store on a fake clock and a project of N items, for the assignment, correction and routing tests."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from core.labeling import items
from core.labeling.store import LabelStore
from tests.helpers.clock import Clock


@pytest.fixture()
def clock() -> Clock:
    return Clock()


@pytest.fixture()
def store(tmp_path, clock):
    s = LabelStore(f"sqlite:///{tmp_path / 'labels.sqlite'}", clock=clock)
    s.ensure_schema()
    yield s
    s.dispose()


def make_project(store: LabelStore, n: int, *, name: str = "p", metadata: dict | None = None, **settings):
    project = items.create_project(store, name, **{"reservation_seconds": 300, **settings})
    items.add_items(store, project, [
        {"dataset": name, "identifier": f"i{k}", "prompt_title": f"title {k}", "prompt_body": f"prompt {k}",
         "response_text": f"response {k}", "model_id": "model-x", "metadata": metadata or {},
         "created_at": datetime(2026, 1, 1) + timedelta(minutes=k)} for k in range(1, n + 1)])
    return project

"""Fixtures for tests/core: the local OpenAI-compatible server and small judging datasets."""

from __future__ import annotations

import shutil
from collections.abc import Callable

import pytest

from core.workspace import Workspace
from tests.helpers.judging_dataset import build_judging_dataset
from tests.helpers.llm_server import llm_server  # noqa: F401 - re-exported as a fixture

# Review texts of the judging datasets: the first ones match G1a keywords, the last do not.


@pytest.fixture()
def judging_dataset(workspace) -> Callable[..., list[dict]]:
    """``judging_dataset(name="d", restaurants=2)`` → the keyword-matched review rows."""

    def make(name: str = "d", restaurants: int = 2) -> list[dict]:
        return build_judging_dataset(workspace, name, restaurants=restaurants)

    return make


@pytest.fixture()
def store(tmp_path):
    """An empty SQLite label store in tmp_path (tests that need a clock or Postgres build their own)."""
    from core.labeling.store import LabelStore

    s = LabelStore(f"sqlite:///{tmp_path / 'labels.sqlite'}")
    s.ensure_schema()
    yield s
    s.dispose()


@pytest.fixture()
def demo_ws(small_demo, tmp_path) -> Workspace:
    """A private copy of the small demo (12 restaurants × 200 reviews, GT files for K 25..200), without
    its runs, jobs and response cache."""
    target = tmp_path / "ws"
    shutil.copytree(small_demo, target, ignore=shutil.ignore_patterns("runs", "jobs", "cache"))
    return Workspace(target)

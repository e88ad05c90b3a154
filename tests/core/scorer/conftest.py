"""A labeling project of offline-advisor answers rated by synthetic raters (built from code)."""

from __future__ import annotations

import pytest

from tests.helpers.rated_project import build_rated_project


@pytest.fixture()
def rated_project(store):
    project, records = build_rated_project(store)
    return store, project, records

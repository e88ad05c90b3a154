"""AppTest fixtures: caches are cleared between tests (they persist across AppTest instances)."""

from __future__ import annotations

from pathlib import Path

import pytest
import streamlit as st

APP = str(Path(__file__).resolve().parents[2] / "main.py")  # the script each session runs


@pytest.fixture(autouse=True)
def _clear_streamlit_caches():
    st.cache_data.clear()
    st.cache_resource.clear()
    yield
    st.cache_data.clear()
    st.cache_resource.clear()


@pytest.fixture(autouse=True)
def _no_warmup(monkeypatch):
    """No background imports in the test process (core.ui.warmup; tests/app/test_warmup.py runs it)."""
    monkeypatch.setenv("WORKBENCH_WARMUP", "0")


@pytest.fixture(autouse=True)
def _restore_error_details():
    """The demo and team modes set client.showErrorDetails for the whole process (main.py)."""
    from streamlit import config

    before = config.get_option("client.showErrorDetails")
    yield
    config.set_option("client.showErrorDetails", before)


@pytest.fixture()
def app_factory(monkeypatch):
    """Build an AppTest of main.py on a given workspace folder."""
    from streamlit.testing.v1 import AppTest

    def make(workspace_root, timeout: float = 30):
        monkeypatch.setenv("WORKBENCH_WORKSPACE", str(workspace_root))
        return AppTest.from_file(APP, default_timeout=timeout)

    return make

"""A release of the small demo workspace, built once per module that asks for it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def demo_copy(small_demo, tmp_path_factory) -> Path:
    """A copy of the small demo workspace that tests of this module may change."""
    root = tmp_path_factory.mktemp("release-ws") / "ws"
    shutil.copytree(small_demo, root)
    return root


@pytest.fixture(scope="module")
def release_dir(demo_copy, tmp_path_factory) -> Path:
    """``release --out DIR`` of the small demo (read-only: copy it to change it)."""
    from core.release.build import build_release
    from core.workspace import Workspace

    out = tmp_path_factory.mktemp("release") / "rel"
    build_release(Workspace(demo_copy), out, title="Small demo <release> & co")
    return out

"""Issue 8 / issue 9 item 4: the sidebar's workspace folder opens only folders under the configured
roots; Home shows a workspace built with the CLI in full."""

from __future__ import annotations

import shutil

import pytest

from core.cli import main
from core.ui import SIDEBAR_WORKSPACE, SIDEBAR_WORKSPACE_OK
from tests.helpers.install import small_scale_file


@pytest.fixture()
def two_workspaces(tmp_path, monkeypatch):
    """A root with the started workspace 'a' and another workspace 'b'; 'outside' is a workspace elsewhere."""
    root = tmp_path / "root"
    src = small_scale_file(tmp_path / "scale.jsonl")
    for name, parent in (("a", root), ("b", root), ("outside", tmp_path)):
        assert main(["--workspace", str(parent / name), "--no-progress", "datasets", "import", str(src),
                     "--name", f"ds_{name}"]) == 0
    monkeypatch.setenv("WORKBENCH_WORKSPACE_ROOTS", str(root))
    return root


def sidebar_state(at) -> tuple[str, list[str]]:
    datasets = [s for s in at.sidebar.selectbox if s.label == "Dataset"]
    return at.session_state[SIDEBAR_WORKSPACE], [datasets[0].value] if datasets else []


def errors(at) -> str:
    return " ".join(e.value for e in at.sidebar.error)


def test_sidebar_field_refuses_etc_and_changes_nothing(app_factory, two_workspaces):
    at = app_factory(two_workspaces / "a").run()
    assert sidebar_state(at)[1] == ["ds_a"]
    at.sidebar.text_input(key=SIDEBAR_WORKSPACE).input("/etc").run()
    assert not at.exception
    assert "outside the workspace roots" in errors(at)
    assert sidebar_state(at) == (str((two_workspaces / "a").resolve()), ["ds_a"])


def test_sidebar_field_opens_a_workspace_under_the_roots(app_factory, two_workspaces):
    at = app_factory(two_workspaces / "a").run()
    at.sidebar.text_input(key=SIDEBAR_WORKSPACE).input(str(two_workspaces / "b")).run()
    assert not errors(at) and sidebar_state(at)[1] == ["ds_b"]
    assert at.session_state[SIDEBAR_WORKSPACE_OK] == str((two_workspaces / "b").resolve())


@pytest.mark.parametrize("escape", ["dotdot", "symlink", "symlink_child", "home"])
def test_sidebar_field_refuses_escapes(app_factory, two_workspaces, escape):
    root = two_workspaces
    (root / "link").symlink_to(root.parent / "outside", target_is_directory=True)
    path = {"dotdot": f"{root}/a/../../outside", "symlink": f"{root}/link",
            "symlink_child": f"{root}/link/datasets/..", "home": "~"}[escape]
    at = app_factory(root / "a").run()
    at.sidebar.text_input(key=SIDEBAR_WORKSPACE).input(path).run()
    assert "outside the workspace roots" in errors(at)
    assert sidebar_state(at)[1] == ["ds_a"]


def test_query_parameters_cannot_open_another_folder(app_factory, two_workspaces):
    at = app_factory(two_workspaces / "a")
    for key in ("workspace", SIDEBAR_WORKSPACE, "sidebar.workspace_ok", "root"):
        at.query_params[key] = str(two_workspaces.parent / "outside")
    at.run()
    assert not at.exception and sidebar_state(at)[1] == ["ds_a"]


def test_session_state_set_without_the_field_is_rechecked(app_factory, two_workspaces):
    at = app_factory(two_workspaces / "a")
    at.session_state[SIDEBAR_WORKSPACE_OK] = str(two_workspaces.parent / "outside")
    at.run()
    assert sidebar_state(at)[1] == ["ds_a"]


def test_home_shows_a_cli_built_workspace_in_full(app_factory, two_workspaces):
    root = two_workspaces / "a"
    (root / "workspace.json").unlink()  # even without workspace.json: it holds datasets
    at = app_factory(root).run()
    assert not at.exception
    text = " ".join(w.value for w in at.warning)
    assert "not a workspace" not in text and "make run" not in text
    table = at.dataframe[0].value
    assert table["dataset"].tolist() == ["ds_a"] and table["n_reviews"].tolist() == [6]
    assert {m.label: m.value for m in at.metric}["Datasets"] == "1"


def test_home_on_an_empty_folder_advises_import_not_make_run(app_factory, tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_WORKSPACE_ROOTS", str(tmp_path))
    at = app_factory(tmp_path / "nothing").run()
    text = " ".join(w.value for w in at.warning)
    assert "workbench datasets import" in text and "make run" not in text
    assert not (tmp_path / "nothing").exists()
    shutil.rmtree(tmp_path, ignore_errors=True)

"""Issue 9, item 1 (and the Low line on names): every name that becomes a path goes through
check_name, every write path resolves inside the workspace (symlinks included)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import update

from core.base.errors import DataError
from core.cli import main
from core.labeling import export, items
from core.labeling.store import items as items_table
from core.labeling.store import open_store
from core.workspace import Workspace, check_name
from tests.helpers.safety import snapshot

BAD_NAMES = ["demo\n", "../x", "/abs", "a/b", "", ".hidden", "a" * 65, "x\x00y", "*", "a b", 7, None]


@pytest.mark.parametrize("name", BAD_NAMES)
def test_low_names_check_name_refuses_newline_separators_and_non_strings(name):
    with pytest.raises(ValueError, match="invalid dataset name"):
        check_name("dataset", name)


def test_low_names_a_dataset_name_ending_in_a_newline_is_refused_by_the_cli(tmp_path, capsys):
    ws = tmp_path / "ws"
    assert main(["--workspace", str(ws), "datasets", "import", str(tmp_path / "x.jsonl"), "--name", "demo\n"]) == 1
    assert "invalid dataset name 'demo\\n'" in capsys.readouterr().err


def _item_file(tmp_path: Path, dataset: str) -> Path:
    path = tmp_path / "items.jsonl"
    path.write_text(json.dumps({"dataset": dataset, "identifier": "i1", "prompt_body": "q", "response_text": "a"})
                    + "\n", encoding="utf-8")
    return path


def test_item1_an_item_dataset_that_escapes_is_refused_on_import_with_file_line_field(tmp_path, capsys):
    ws = tmp_path / "ws"
    assert main(["--workspace", str(ws), "labels", "init", "p"]) == 0
    path = _item_file(tmp_path, "../../../x")
    assert main(["--workspace", str(ws), "--no-progress", "labels", "import-items", str(path)]) == 1
    err = capsys.readouterr().err
    assert err.splitlines()[-1].startswith(f"error: {path}:1: field 'dataset': invalid dataset name '../../../x'"), err


def test_item1_a_rating_dataset_that_escapes_is_refused_on_import(tmp_path):
    store = open_store(tmp_path)
    project = items.create_project(store, "p")
    path = tmp_path / "reviews.jsonl"
    path.write_text(json.dumps({"dataset": "../../x", "identifier": "i1", "reviewer_code": "ana", "score": 1,
                                "review_created_at": "2024-01-01 00:00:00"}) + "\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"reviews.jsonl:1: field 'dataset': invalid dataset name"):
        export.import_reviews(store, project, path, create_items=True)
    with pytest.raises(ValueError, match="invalid dataset name"):
        items.add_items(store, project, [{"dataset": "../../x", "identifier": "i"}])


def test_item1_labels_export_never_writes_outside_for_a_stored_hostile_dataset(tmp_path, capsys):
    root = tmp_path / "box"
    ws = root / "ws"
    assert main(["--workspace", str(ws), "labels", "init", "p"]) == 0
    assert main(["--workspace", str(ws), "labels", "import-items", str(_item_file(tmp_path, "ok"))]) == 0
    store = open_store(ws)
    with store.write() as conn:  # a store written before names were checked
        conn.execute(update(items_table).values(dataset="../../../x"))
    from core.labeling import assignment

    assignment.submit(store, items.get_project(store, "p"), "ana", 1, 0.5)
    assignment.submit(store, items.get_project(store, "p"), "bob", 1, 0.5)
    before = snapshot(root)
    assert main(["--workspace", str(ws), "labels", "export"]) == 1
    assert "invalid dataset name '../../../x'" in capsys.readouterr().err
    after = snapshot(root)
    assert not [p for p in after if p not in before and not p.startswith("ws/")]
    assert not (tmp_path / "x_reviews.jsonl").exists() and not list(tmp_path.rglob("x_reviews.jsonl"))


def test_item1_a_symlink_out_of_the_workspace_is_refused(tmp_path, capsys):
    outside = tmp_path / "outside"
    outside.mkdir()
    ws = Workspace(tmp_path / "ws").ensure()
    (ws.root / "labels").symlink_to(outside, target_is_directory=True)
    with pytest.raises(ValueError, match="resolves outside the workspace"):
        ws.labels_export_dir("p")
    (ws.root / "judgments").symlink_to(outside, target_is_directory=True)
    with pytest.raises(ValueError, match="resolves outside the workspace"):
        ws.judgments_dir("d", "G1a")
    assert main(["--workspace", str(ws.root), "labels", "init", "p"]) == 0
    assert main(["--workspace", str(ws.root), "labels", "export"]) == 1
    assert "resolves outside the workspace" in capsys.readouterr().err
    assert list(outside.iterdir()) == []


def test_item1_every_workspace_path_is_inside_the_root(tmp_path):
    ws = Workspace(tmp_path / "ws")
    for path in (ws.dataset_dir("d"), ws.index_dir("d"), ws.sources_dir("d"), ws.judgments_dir("d", "t"),
                 ws.overrides_path("d", "t"), ws.gt_dir, ws.runs_dir, ws.run_dir("r1"), ws.gold_dir, ws.cache_dir,
                 ws.labels_dir, ws.labels_export_dir("p"), ws.staging_dir, ws.locks_dir):
        assert path.resolve().is_relative_to(ws.root.resolve())
    with pytest.raises(ValueError):
        ws.run_dir("../r")
    with pytest.raises(ValueError):
        ws.path_inside("..", "x")

"""Issue 8, "Imports that join up": judgments attach to the dataset with the texts, synthetic ids only
without one, --task/--dataset defaults, restaurant names on the CLI, log-friendly progress, override
topics, and `labels import-reviews` creating its project."""

from __future__ import annotations

import io
import json

import polars as pl
import pytest

from core.base.errors import WorkbenchError
from core.base.progress import cli_progress, log_progress
from core.cli import main
from core.datasets.importer import import_dataset
from core.datasets.names import find_restaurant
from core.judgments import load_judgments
from core.judgments.overrides import active_overrides, import_addm_overrides, task_topics
from core.judgments.xnot_files import import_xnot_judgments
from core.tasks import get_task

XNOT = "xnot/semantic_gt/task_G1a/judgments.json"
K25 = "xnot/dataset_K25_subset.jsonl"
VETRI_REAL_ID = "wUnLSg_GKfEIQ5CQQ770_g"  # Vetri Cucina's Yelp id in the SCALE file


def test_judgments_attach_to_the_dataset_with_texts(workspace, fixtures_dir):
    import_dataset(workspace, "k25", fixtures_dir / K25)
    report = import_xnot_judgments(workspace, fixtures_dir / XNOT)  # --task from the file, --dataset the only one
    assert (report["task"], report["dataset"], report["dataset_created"]) == ("G1a", "k25", False)
    assert workspace.datasets() == ["k25"]  # no second, text-less dataset of the same restaurants
    # the 6 restaurants of the K25 file with idx < 25 are stored; the rest are reported
    assert report["matched"] == report["appended"] == 25
    assert report["unmatched"] == 2173 - 25
    assert report["unmatched_by_reason"] == {"no such idx": 169, "restaurant not in dataset": 1979}
    assert len(report["unmatched_restaurants"]) == 93 and "Vetri Cucina" not in report["unmatched_restaurants"]
    judged = load_judgments(workspace, "k25", "G1a")
    assert judged.height == 25
    rest = pl.read_parquet(workspace.dataset_dir("k25") / "restaurants.parquet")
    vetri = rest.filter(pl.col("name") == "Vetri Cucina")["business_id"].item()
    assert vetri == VETRI_REAL_ID and set(judged["business_id"]) <= set(rest["business_id"])
    assert not any(b.startswith("synthetic:") for b in judged["business_id"])


def test_judgments_match_names_in_any_case_and_check_stars(workspace, fixtures_dir, tmp_path):
    import_dataset(workspace, "k25", fixtures_dir / K25)
    data = json.loads((fixtures_dir / XNOT).read_text())
    entry = data["judgments"]["Vetri Cucina"]
    reviews = [r for r in entry["reviews"] if r["idx"] < 25]
    assert len(reviews) >= 2
    reviews[0] = {**reviews[0], "stars": (reviews[0]["stars"] % 5) + 1}  # stars disagree with the dataset
    data["judgments"] = {"VETRI cucina": {**entry, "reviews": reviews}}
    path = tmp_path / "j.json"
    path.write_text(json.dumps(data))
    report = import_xnot_judgments(workspace, path, dataset="k25")
    assert (report["matched"], report["unmatched_by_reason"]) == (len(reviews) - 1, {"stars differ": 1})
    assert "stars" in report["unmatched_examples"][0]["reason"]


def test_missing_dataset_is_created_only_without_a_dataset_holding_the_restaurants(workspace, fixtures_dir):
    import_dataset(workspace, "k25", fixtures_dir / K25)
    with pytest.raises(WorkbenchError, match=r"dataset 'other' does not exist, but 'k25' holds 6 .* use --dataset k25"):
        import_xnot_judgments(workspace, fixtures_dir / XNOT, dataset="other")
    assert workspace.datasets() == ["k25"]


def test_synthetic_dataset_has_visibly_synthetic_ids(tmp_path, fixtures_dir):
    from core.workspace import Workspace

    ws = Workspace(tmp_path / "fresh")  # no workspace.json yet: the import writes it
    report = import_xnot_judgments(ws, fixtures_dir / XNOT, dataset="xnot")
    assert report["dataset_created"] and ws.exists() and (ws.root / "workspace.json").exists()
    rest = pl.read_parquet(ws.dataset_dir("xnot") / "restaurants.parquet")
    vetri = rest.filter(pl.col("name") == "Vetri Cucina")["business_id"].item()
    assert vetri.startswith("synthetic:") and vetri != VETRI_REAL_ID


def test_dataset_default_needs_exactly_one_dataset(workspace, fixtures_dir):
    with pytest.raises(WorkbenchError, match="no dataset in the workspace"):
        import_xnot_judgments(workspace, fixtures_dir / XNOT)
    import_dataset(workspace, "a", fixtures_dir / K25)
    import_dataset(workspace, "b", fixtures_dir / K25)
    with pytest.raises(WorkbenchError, match=r"several datasets \(a, b\): choose one with --dataset"):
        import_xnot_judgments(workspace, fixtures_dir / XNOT)


def test_task_is_taken_from_the_file_and_must_agree(workspace, fixtures_dir, tmp_path, capsys):
    import_dataset(workspace, "k25", fixtures_dir / K25)
    args = ["--workspace", str(workspace.root), "--no-progress", "judgments", "import", str(fixtures_dir / XNOT)]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "matched 25 of 2,173 judgments" in out and "k25/G1a" in out
    assert "not matched (not stored): 2,148 judgments (no such idx 169, restaurant not in dataset 1,979)" in out
    data = json.loads((fixtures_dir / XNOT).read_text())
    data.pop("task_id")
    nameless = tmp_path / "nameless.json"
    nameless.write_text(json.dumps(data))
    assert main(["--workspace", str(workspace.root), "judgments", "import", str(nameless)]) == 1
    assert "names no task: pass --task" in capsys.readouterr().err


def test_cli_restaurant_names_are_case_insensitive_with_suggestions():
    rest = pl.DataFrame({"business_id": ["a", "b", "c", "d"],
                         "name": ["Vetri Cucina", "Tai Lake Restaurant", "Union Trust", "Union Trust"]})
    assert find_restaurant(rest, "  VETRI CUCINA ") == "a" and find_restaurant(rest, "b") == "b"
    with pytest.raises(ValueError, match=r"no restaurant 'Tai Lak' in 'k25'; did you mean: Tai Lake Restaurant\?"):
        find_restaurant(rest, "Tai Lak", dataset="k25")
    with pytest.raises(ValueError, match="2 restaurants are named 'union trust'; give a business_id: c, d"):
        find_restaurant(rest, "union trust")
    with pytest.raises(ValueError, match=r"no restaurant 'zzz'$"):
        find_restaurant(rest, "zzz")


def test_gt_trace_takes_a_name_in_any_case(workspace, fixtures_dir, capsys):
    import_dataset(workspace, "k25", fixtures_dir / K25)
    import_xnot_judgments(workspace, fixtures_dir / XNOT)
    ws = ["--workspace", str(workspace.root), "--no-progress"]
    assert main([*ws, "gt", "trace", "--dataset", "k25", "--k", "25", "--restaurant", "vetri CUCINA"]) == 0
    assert main([*ws, "gt", "trace", "--dataset", "k25", "--k", "25", "--restaurant", "Vetri Cucnia"]) == 1
    assert "did you mean: Vetri Cucina?" in capsys.readouterr().err


def test_progress_in_a_log_prints_a_line_every_few_seconds():
    clock = iter(range(0, 1000)).__next__  # one "second" per call
    out = io.StringIO()
    with log_progress("demo", stream=out, interval=5, clock=clock) as update:
        for i in range(1, 101):
            update(i, 100, "step")
    lines = out.getvalue().splitlines()
    # 100 updates over ~100 s: a line every 5 s plus the final one, never one per update
    assert 15 <= len(lines) <= 22 and lines[-1] == "demo: 100/100 (100%) step"
    assert all("\r" not in line for line in lines)


def test_cli_progress_without_a_terminal_uses_log_lines():
    out = io.StringIO()  # not a tty
    with cli_progress("import", stream=out) as update:
        for i in range(500):
            update(i + 1, 500, "")
    assert out.getvalue().splitlines() == ["import: 500/500 (100%)"]


def test_overrides_of_another_topic_are_refused(workspace, fixtures_dir, tmp_path, capsys):
    """ADDM's G1_dietary overrides must not import into G1a: Front Street Cafe keeps its incident."""
    import_dataset(workspace, "addm", fixtures_dir / "dev-ADDM/full/dataset_K25.jsonl")
    # Front Street Cafe's review idx 15 reports a mild incident; G1_dietary "corrects" it to none
    judgments = {"task_id": "G1a", "extraction_prompt_version": "t", "judgments": {"Front Street Cafe": {
        "restaurant_meta": {}, "reviews": [{"idx": 15, "date": "2021-09-28 14:53:58", "stars": 5.0, "useful": 0,
                                            "incident_severity": "mild", "account_type": "firsthand",
                                            "safety_interaction": "none", "excerpt": ""}]}}}
    path = tmp_path / "j.json"
    path.write_text(json.dumps(judgments))
    assert import_xnot_judgments(workspace, path)["matched"] == 1
    overrides = fixtures_dir / "dev-ADDM/answers/judgment_overrides.json"
    assert task_topics(get_task("G1a", None)) == ["G1_allergy"]
    with pytest.raises(WorkbenchError, match="topic 'G1_dietary' does not belong to task G1a"):
        import_addm_overrides(workspace, "addm", overrides, topic="G1_dietary", task="G1a")
    ws = ["--workspace", str(workspace.root), "--no-progress"]
    assert main([*ws, "overrides", "import", str(overrides), "--dataset", "addm", "--topic", "G1_dietary"]) == 1
    assert "does not belong to task G1a" in capsys.readouterr().err
    assert active_overrides(workspace, "addm", "G1a") == []
    assert main([*ws, "overrides", "import", str(overrides), "--dataset", "addm"]) == 0  # the task's own topic
    front = load_judgments(workspace, "addm", "G1a").filter(pl.col("idx") == 15)
    assert front["incident_severity"].to_list() == ["mild"]  # the incident stays


def test_labels_import_reviews_creates_the_project_named_by_the_file(workspace, fixtures_dir, capsys):
    reviews = fixtures_dir / "aita/reviews/aita_reviews_slim.jsonl"
    ws = ["--workspace", str(workspace.root), "--no-progress"]
    assert main([*ws, "labels", "import-reviews", str(reviews)]) == 0
    assert "created labeling project aita" in capsys.readouterr().err
    assert main([*ws, "--json", "labels", "status"]) == 0
    [status] = json.loads(capsys.readouterr().out)
    assert (status["project"], status["ratings"]) == ("aita", 514)


def test_labels_import_reviews_project_option_and_bad_file(workspace, fixtures_dir, tmp_path, capsys):
    from core.labeling import items as labeling_items
    from core.labeling.store import open_store

    reviews = fixtures_dir / "aita/reviews/aita_reviews_slim.jsonl"
    ws = ["--workspace", str(workspace.root), "--no-progress"]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"dataset": "x", "identifier": "a", "reviewer_code": "r1", "score": 7}\n')
    assert main([*ws, "labels", "import-reviews", str(bad)]) == 1
    store = open_store(workspace.root)
    assert labeling_items.list_projects(store) == []  # a bad file creates no project
    assert main([*ws, "labels", "import-reviews", str(reviews), "--project", "study"]) == 0
    assert [p.name for p in labeling_items.list_projects(store)] == ["study"]

"""core.base.memo: a fact about a large file is kept beside it and used only while the file (and the
context) are as they were; the listings that use it (GT files, broken logs) report the same."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.base import memo
from core.base.files import append_jsonl
from core.ground_truth.gt_listing import scan_gt_files
from core.ui import health
from core.workspace import Workspace


@pytest.fixture
def small(monkeypatch):
    monkeypatch.setattr(memo, "MIN_BYTES", 0)  # every file counts as large


def test_a_fact_is_kept_until_the_file_or_context_changes(tmp_path, small):
    path = tmp_path / "big.jsonl"
    path.write_text('{"a": 1}\n')
    calls = []

    def count():
        calls.append(1)
        return path.stat().st_size

    assert memo.stamped(path, "size", count) == 9 and memo.stamped(path, "size", count) == 9
    assert len(calls) == 1 and memo.memo_path(path, "size").is_file()
    with open(path, "a") as fh:
        fh.write('{"a": 2}\n')
    assert memo.stamped(path, "size", count) == 18 and len(calls) == 2  # appended: a new stamp
    assert memo.stamped(path, "size", count, context="other") == 18 and len(calls) == 3
    memo.memo_path(path, "size").write_text("not json")
    assert memo.stamped(path, "size", count, context="other") == 18 and len(calls) == 4  # damaged: computed again


def test_small_files_and_read_only_mode_write_nothing(tmp_path, monkeypatch):
    path = tmp_path / "small.json"
    path.write_text("{}")
    assert memo.stamped(path, "x", lambda: 1) == 1 and not memo.memo_path(path, "x").exists()
    monkeypatch.setattr(memo, "MIN_BYTES", 0)
    monkeypatch.setenv("WORKBENCH_MODE", "demo")
    assert memo.stamped(path, "x", lambda: 2) == 2 and not memo.memo_path(path, "x").exists()


def test_listings_say_the_same_from_the_kept_facts(tmp_path, small):
    ws = Workspace(tmp_path)
    folder = ws.gt_dir / "d" / "t"
    folder.mkdir(parents=True)
    (folder / "broken.json").write_text('{"k": 25, "restaurants": ')
    log = ws.root / "judgments" / "d" / "t" / "j.jsonl"
    append_jsonl(log, [{"i": 0}])
    with open(log, "a") as fh:
        fh.write("{oops}\n{\"i\": 1}\n")
    first = (scan_gt_files(ws), health.workspace_problems(ws))
    assert memo.memo_path(folder / "broken.json", "gt-facts").is_file() and memo.memo_path(log, "check").is_file()
    again = (scan_gt_files(ws), health.workspace_problems(ws))
    assert [(p, str(e)) for p, e in first[0][1]] == [(p, str(e)) for p, e in again[0][1]] and first[0][1]
    assert first[1] == again[1] and {p.path.name for p in first[1]} == {"broken.json", "j.jsonl"}
    assert all(not p.name.startswith(".") for p in health._checked_files(ws))  # the memos are not stamped
    assert json.loads(memo.memo_path(log, "check").read_text())["value"][1] == "error"


def test_gt_inputs_and_status_from_the_kept_copies_are_the_computed_ones(demo_ws, small):
    from core.ground_truth import views as gt_views
    from core.ground_truth.compute import judgments_sha256
    from core.judgments import load_judgments

    before = gt_views.data_stamp(demo_ws, "demo", "G1a")
    first = gt_views.load_inputs(demo_ws, "demo", "G1a")
    status = gt_views.judging_status(demo_ws, "demo", "G1a")
    assert gt_views.data_stamp(demo_ws, "demo", "G1a") == before  # the hidden copies are not part of the stamp
    kept = gt_views.load_inputs(demo_ws, "demo", "G1a")  # read from the Parquet copy
    direct = load_judgments(demo_ws, "demo", "G1a", first.judge)
    assert kept.judgments.equals(direct) and kept.judgments.schema == direct.schema
    assert kept.sha256 == first.sha256 == judgments_sha256(direct)
    assert gt_views.judging_status(demo_ws, "demo", "G1a") == status
    assert any(p.name.endswith(".inputs.parquet") for p in demo_ws.judgments_dir("demo", "G1a").iterdir())


def test_dataset_counts_are_kept_beside_the_reviews_and_follow_a_replaced_file(tmp_path, small, small_demo):
    """Home's dataset line: the reviews' count and date range, kept beside reviews.parquet, equal the
    scan over the views, and a rewritten reviews file is counted again."""
    import shutil

    import polars as pl

    from core.datasets import browse
    from core.datasets.db import Database

    root = tmp_path / "ws"
    shutil.copytree(small_demo, root)
    db = Database(root)
    scan = ("SELECT r.dataset, r.n_restaurants, coalesce(v.n_reviews, 0) AS n_reviews, v.first_date, v.last_date "
            "FROM (SELECT dataset, count(*) AS n_restaurants FROM restaurants GROUP BY dataset) r "
            "LEFT JOIN (SELECT dataset, count(*) AS n_reviews, min(date) AS first_date, max(date) AS last_date "
            "FROM reviews GROUP BY dataset) v USING (dataset) ORDER BY r.dataset")
    first = browse.dataset_counts(db)
    assert first.equals(db.query(scan)) and first["n_reviews"].sum() > 0
    reviews = next(root.glob("datasets/*/reviews.parquet"))
    assert memo.memo_path(reviews, "dates").is_file()
    assert browse.dataset_counts(db).equals(first)  # read from the kept fact
    frame = pl.read_parquet(reviews)
    frame.head(frame.height // 2).write_parquet(reviews.with_suffix(".tmp"))
    reviews.with_suffix(".tmp").replace(reviews)  # a rewrite (a new inode), as an import's --replace does
    again = browse.dataset_counts(db)
    assert again.equals(db.query(scan)) and again["n_reviews"].sum() < first["n_reviews"].sum()


def test_one_restaurants_inputs_from_the_kept_row_groups_are_its_rows_of_all(demo_ws, small, monkeypatch):
    """The Trace page reads one restaurant's judgments from the row groups of the kept copy that hold
    them (load_restaurant_inputs): the rows restaurant_inputs cuts from every restaurant's."""
    import polars as pl

    from core.ground_truth import inputs
    from core.ground_truth import views as gt_views

    monkeypatch.setattr(inputs, "INPUTS_ROW_GROUP", 64)  # many row groups in the demo's judgments
    cold = gt_views.load_restaurant_inputs(demo_ws, "demo", "G1a", _first_id(demo_ws))  # computes, keeps
    every = gt_views.load_inputs(demo_ws, "demo", "G1a")
    ids = every.restaurants["business_id"].to_list()
    assert cold.judgments.equals(gt_views.restaurant_inputs(every, ids[0]).judgments)
    for business_id in ids[::3]:
        one = gt_views.load_restaurant_inputs(demo_ws, "demo", "G1a", business_id)
        want = gt_views.restaurant_inputs(every, business_id)
        assert one.judgments.equals(want.judgments) and one.judgments.schema == want.judgments.schema, business_id
        assert one.restaurants.equals(want.restaurants) and (one.judge, one.sha256) == (want.judge, want.sha256)
    kept = pl.read_parquet_schema(memo.frame_path(gt_views_log(demo_ws), "inputs"))
    assert list(kept) == every.judgments.columns
    with pytest.raises(ValueError, match="no restaurant"):
        gt_views.load_restaurant_inputs(demo_ws, "demo", "G1a", "no-such-id")


def _first_id(ws: Workspace) -> str:
    from core.ground_truth.compute import load_restaurants

    return str(load_restaurants(ws, "demo")["business_id"].sort()[0])


def gt_views_log(ws: Workspace):
    from core.judgments import resolve_judge
    from core.judgments.store import judgment_path

    return judgment_path(ws, "demo", "G1a", resolve_judge(ws, "demo", "G1a", None))


def test_the_trace_pickers_names_kept_beside_the_restaurants_are_the_sorted_names(demo_ws, small):
    """Trace's restaurant picker reads the names kept beside restaurants.parquet: the names sorted
    as computed (the memo itself is checked against the file's stamp above)."""
    import polars as pl

    from core.ground_truth.compute import load_restaurants
    from core.ground_truth.views.paging import name_frame
    from core.ui import trace_cache

    table = demo_ws.dataset_dir("demo") / "restaurants.parquet"
    want = name_frame(load_restaurants(demo_ws, "demo").select("business_id", "name"))
    want = want.sort(pl.col("name").str.to_lowercase(), "business_id")
    first = trace_cache._names.__wrapped__(str(demo_ws.root), "demo", "G1a", None, "s")
    assert memo.frame_path(table, "trace-names").is_file()
    kept = trace_cache._names.__wrapped__(str(demo_ws.root), "demo", "G1a", None, "s")
    assert first.equals(want) and kept.equals(want) and kept.schema == want.schema


def test_a_written_gt_files_kept_facts_are_what_reading_it_back_gives(demo_ws, small):
    """``gt`` keeps the listing's facts of each file it writes (Home read 8 files of 150,000 restaurants
    again after a ``gt``: 32 s); they equal what the listing's check reads back from the file, for
    formulas and policies in both layouts, a saved variant and repeated names."""
    from core.ground_truth.export import export_gt
    from core.ground_truth.gt_listing import MEMO_KIND, scan_gt_files

    written = []
    for definition, layout in (("v1", "xnot"), ("v1", "addm"), ("G1_allergy_V2", "addm"), ("G1_allergy_V2", "xnot")):
        got = export_gt(demo_ws, "demo", "G1a", definition, [25, 50], layout=layout, name=f"{definition}-{layout}")
        written.extend(Path(f["path"]) for f in got.files)
    kept = {p: memo.memo_path(p, MEMO_KIND).read_text() for p in written}
    listed, broken = scan_gt_files(demo_ws)
    assert not broken and {Path(e["path"]) for e in listed} >= set(written)
    for path in written:
        memo.memo_path(path, MEMO_KIND).unlink()  # the check reads the file back
    assert scan_gt_files(demo_ws) == (listed, broken)
    for path in written:
        assert json.loads(memo.memo_path(path, MEMO_KIND).read_text()) == json.loads(kept[path]), path.name

"""The DuckDB boundary: views over workspace files, parameters, one cursor per thread."""

from __future__ import annotations

import threading

import polars as pl
import pytest

from core.datasets.db import Database, ViewSpec, register_view


def _write_reviews(root, dataset, n):
    path = root / "datasets" / dataset / "reviews.parquet"
    path.parent.mkdir(parents=True, exist_ok=True)
    pl.DataFrame({
        "dataset": [dataset] * n, "business_id": ["b"] * n, "review_id": [f"r{i}" for i in range(n)],
        "idx": list(range(n)), "date": ["2020-01-01 00:00:00"] * n, "stars": [4.0] * n,
        "useful": [0] * n, "funny": [0] * n, "cool": [0] * n, "text": [f"text {i}" for i in range(n)],
        "user_id": ["u"] * n,
    }, schema_overrides={"idx": pl.Int32}).write_parquet(path)


def test_empty_workspace_has_typed_empty_views(tmp_path):
    db = Database(tmp_path)
    out = db.query("SELECT * FROM reviews")
    assert out.height == 0 and "review_id" in out.columns and "idx" in out.columns


def test_views_pick_up_files_written_later(tmp_path):
    db = Database(tmp_path)
    assert db.scalar("SELECT count(*) FROM reviews") == 0
    _write_reviews(tmp_path, "a", 3)
    assert db.scalar("SELECT count(*) FROM reviews") == 3
    _write_reviews(tmp_path, "b", 2)  # a second dataset appears without a restart
    assert db.query("SELECT dataset, count(*) n FROM reviews GROUP BY 1 ORDER BY 1")["n"].to_list() == [3, 2]


def test_parameters_are_values_not_sql(tmp_path):
    _write_reviews(tmp_path, "a", 3)
    db = Database(tmp_path)
    hostile = "x' OR '1'='1"
    assert db.scalar("SELECT count(*) FROM reviews WHERE review_id = $rid", {"rid": hostile}) == 0
    assert db.scalar("SELECT count(*) FROM reviews WHERE review_id = $rid", {"rid": "r1"}) == 1


def test_threads_get_their_own_cursor(tmp_path):
    _write_reviews(tmp_path, "a", 50)
    db = Database(tmp_path)
    results, errors = [], []

    def work():
        try:
            for _ in range(20):
                results.append(db.scalar("SELECT sum(idx) FROM reviews"))
        except Exception as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and set(results) == {sum(range(50))} and len(results) == 160


def test_registered_json_view(tmp_path):
    register_view(ViewSpec("test_events", "events/*.jsonl", "json", {"a": "BIGINT"}))
    db = Database(tmp_path)
    assert db.query("SELECT * FROM test_events").height == 0
    (tmp_path / "events").mkdir()
    (tmp_path / "events" / "e.jsonl").write_text('{"a": 1}\n{"a": 2}\n')
    assert db.scalar("SELECT sum(a) FROM test_events") == 3


def test_bad_view_format_is_rejected(tmp_path):
    db = Database(tmp_path)
    with pytest.raises(ValueError, match="unknown view format"):
        db._view_sql(ViewSpec("x", "x", "csv"), ("x.csv",))

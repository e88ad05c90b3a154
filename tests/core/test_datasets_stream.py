"""Streaming imports (issue 10): chunks, buckets and the DuckDB sort give the same tables as one
chunk sorted in memory; text_hash is computed at import; staged rows never outlive the import."""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.base.errors import DataError
from core.datasets import scale as scale_module
from core.datasets import scan_restaurants, scan_reviews, verify_dataset
from core.datasets import sources as sources_module
from core.datasets import staging as staging_module
from core.datasets.importer import import_dataset
from core.datasets.staging import Stager, bucket_bounds, text_hashes
from core.tasks.keyword_index import text_hash

DATES = ["2019-01-01 00:00:00", "2020-06-15 12:30:00", "2020-06-15 12:30:01", "2023-02-28 23:59:59"]
TEXTS = ["", "Peanut sauce, no EpiPen needed.", "café — naïve 🥜", "5", "[sic]", "line\nbreak"]


def write_flat(folder: Path, n: int, n_businesses: int, seed: int = 3) -> tuple[Path, Path]:
    rnd = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    ids = [f"r{i:05d}" for i in range(n)]
    rnd.shuffle(ids)
    rows = [{"review_id": rid, "business_id": f"b{rnd.randrange(n_businesses):03d}", "user_id": "u",
             "stars": float(rnd.randint(1, 5)), "useful": rnd.randint(0, 3), "funny": 0, "cool": 1,
             "text": f"{rnd.choice(TEXTS)} {rid}", "date": rnd.choice(DATES)} for rid in ids]
    businesses = [{"business_id": f"b{b:03d}", "name": f"Place {b}", "review_count": rnd.randint(1, 50)}
                  for b in range(n_businesses)]
    (folder / "review.json").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (folder / "business.json").write_text("".join(json.dumps(b) + "\n" for b in businesses), encoding="utf-8")
    return folder / "review.json", folder / "business.json"


def tables(ws, name: str) -> tuple[pl.DataFrame, pl.DataFrame]:
    return (scan_restaurants(ws, name).collect().drop("dataset"), scan_reviews(ws, name).collect().drop("dataset"))


@pytest.fixture
def small_chunks(monkeypatch):
    """Chunks of ~2 KB (a few reviews) staged on disk, buckets of ~20 reviews, row groups of 16 rows."""
    monkeypatch.setattr(sources_module, "BLOCK_BYTES", 2048)
    monkeypatch.setattr(staging_module, "HOLD_BYTES", 0)
    monkeypatch.setattr(sources_module, "BATCH_ROWS", 7)
    monkeypatch.setattr(staging_module, "BUCKET_ROWS", 20)
    monkeypatch.setattr(staging_module, "REVIEW_ROW_GROUP", 16)


def test_chunks_and_buckets_give_the_one_chunk_tables(workspace, tmp_path, monkeypatch):
    review_path, business_path = write_flat(tmp_path / "src", 400, 12)
    import_dataset(workspace, "whole", review_path, business_path=business_path)
    monkeypatch.setattr(sources_module, "BLOCK_BYTES", 2048)
    monkeypatch.setattr(staging_module, "BUCKET_ROWS", 20)
    monkeypatch.setattr(staging_module, "REVIEW_ROW_GROUP", 16)
    monkeypatch.setattr(staging_module, "HOLD_BYTES", 0)  # staged on disk
    calls = []
    real = Stager._write
    monkeypatch.setattr(Stager, "_write", lambda self, frame: calls.append(frame.height) or real(self, frame))
    import_dataset(workspace, "chunked", review_path, business_path=business_path)
    assert len(calls) > 10  # many chunks
    buckets = bucket_bounds(pl.read_ndjson(business_path), 400)
    assert buckets.len() > 3 and buckets.is_sorted()
    whole, chunked = tables(workspace, "whole"), tables(workspace, "chunked")
    assert whole[0].equals(chunked[0]) and whole[1].equals(chunked[1])
    reviews = whole[1]
    assert reviews.height == 400 and reviews["idx"].dtype == pl.Int32
    # newest first per business, ties by review_id; the table sorted by (business_id, idx)
    expected = reviews.sort(["business_id", "date", "review_id"], descending=[False, True, False])
    assert reviews["review_id"].to_list() == expected["review_id"].to_list()
    meta = pq.ParquetFile(workspace.dataset_dir("chunked") / "reviews.parquet").metadata
    sizes = [meta.row_group(i).num_rows for i in range(meta.num_row_groups)]
    assert set(sizes[:-1]) == {16} and 0 < sizes[-1] <= 16  # exact row groups across bucket boundaries


@pytest.mark.fixtures
def test_duckdb_sort_of_an_oversized_bucket_gives_the_same_tables(workspace, tmp_path, monkeypatch, fixtures_dir):
    review_path, business_path = write_flat(tmp_path / "src", 300, 5)
    scale_path = fixtures_dir / "xnot/dataset_K25_subset.jsonl"
    import_dataset(workspace, "mem", review_path, business_path=business_path)
    import_dataset(workspace, "mem-scale", scale_path)
    monkeypatch.setattr(staging_module, "HOLD_BYTES", 0)  # staged on disk
    monkeypatch.setattr(staging_module, "MEMORY_SORT_BYTES", 0)  # every bucket is "too big"
    used = []
    real = Stager._duckdb_sorted
    monkeypatch.setattr(Stager, "_duckdb_sorted",
                        lambda self, path, held, number: used.append(number) or real(self, path, held, number))
    import_dataset(workspace, "duck", review_path, business_path=business_path)
    import_dataset(workspace, "duck-scale", scale_path)
    assert used == [True, False]
    for a, b in (("mem", "duck"), ("mem-scale", "duck-scale")):
        (ra, va), (rb, vb) = tables(workspace, a), tables(workspace, b)
        assert ra.equals(rb) and va.equals(vb)
        assert pq.read_schema(workspace.dataset_dir(a) / "reviews.parquet").equals(
            pq.read_schema(workspace.dataset_dir(b) / "reviews.parquet"))


@pytest.mark.fixtures
@pytest.mark.parametrize("duckdb_sort", [False, True])
def test_held_chunks_and_staged_ones_join_in_their_buckets(workspace, tmp_path, monkeypatch, fixtures_dir, duckdb_sort):
    review_path, business_path = write_flat(tmp_path / "src", 300, 7)
    scale_path = fixtures_dir / "xnot/dataset_K25_subset.jsonl"
    import_dataset(workspace, "mem", review_path, business_path=business_path)
    import_dataset(workspace, "mem-scale", scale_path)
    monkeypatch.setattr(sources_module, "BLOCK_BYTES", 2048)
    monkeypatch.setattr(scale_module, "STAGE_ROWS", 5)
    monkeypatch.setattr(staging_module, "BUCKET_ROWS", 40)
    monkeypatch.setattr(staging_module, "HOLD_BYTES", 8_000)  # the first chunks stay in memory
    if duckdb_sort:
        monkeypatch.setattr(staging_module, "MEMORY_SORT_BYTES", 0)
    spilled = []
    real = Stager._sorted_frames
    monkeypatch.setattr(Stager, "_sorted_frames", lambda self, number: spilled.append(
        (bool(self._held), self.spilled, len(self._buckets()))) or real(self, number))
    import_dataset(workspace, "part", review_path, business_path=business_path)
    monkeypatch.setattr(staging_module, "HOLD_BYTES", 100_000)  # a few restaurants' reviews
    import_dataset(workspace, "part-scale", scale_path)
    assert [(held, spill) for held, spill, _ in spilled] == [(True, True), (True, True)]
    assert spilled[0][2] > 3  # several bucket files
    for a, b in (("mem", "part"), ("mem-scale", "part-scale")):
        (ra, va), (rb, vb) = tables(workspace, a), tables(workspace, b)
        assert ra.equals(rb) and va.equals(vb)


@pytest.mark.fixtures
def test_text_hash_is_sha256_of_the_text(workspace, tmp_path, fixtures_dir):
    review_path, business_path = write_flat(tmp_path / "src", 60, 4)
    import_dataset(workspace, "flat", review_path, business_path=business_path)
    import_dataset(workspace, "scale", fixtures_dir / "xnot/dataset_K25_subset.jsonl")
    for name in ("flat", "scale"):
        reviews = scan_reviews(workspace, name).collect()
        assert reviews.columns[-1] == "text_hash"
        assert reviews["text_hash"].to_list() == [hashlib.sha256(t.encode()).hexdigest()[:16] for t in reviews["text"]]
        assert reviews["text_hash"].to_list() == [text_hash(t) for t in reviews["text"]]
    assert text_hashes(pl.Series(TEXTS + [None])).to_list() == [text_hash(t) for t in TEXTS] + [None]


def test_parquet_source_in_batches_equals_jsonl(workspace, tmp_path, small_chunks):
    review_path, business_path = write_flat(tmp_path / "src", 150, 6)
    pl.read_ndjson(review_path).write_parquet(tmp_path / "src" / "review.parquet", row_group_size=10)
    import_dataset(workspace, "j", review_path, business_path=business_path)
    import_dataset(workspace, "p", tmp_path / "src" / "review.parquet", business_path=business_path)
    assert tables(workspace, "j")[1].equals(tables(workspace, "p")[1])


def snapshot(root: Path) -> list[tuple[str, int]]:
    return sorted((str(p.relative_to(root)), p.stat().st_size if p.is_file() else -1) for p in root.rglob("*"))


@pytest.mark.parametrize(
    ("bad", "line", "field", "pattern"),
    [
        ({"review_id": "r00007"}, 301, "review_id", "duplicate review_id 'r00007': also at line"),
        ({"stars": "five"}, 301, "stars", "expected a number"),
        ({"date": "2021-02-30 00:00:00"}, 301, "date", "bad date"),
    ],
)
def test_a_bad_line_after_many_staged_chunks_names_its_line_and_leaves_nothing(
    workspace, tmp_path, small_chunks, bad, line, field, pattern
):
    review_path, business_path = write_flat(tmp_path / "src", 300, 6)
    row = {"review_id": "late", "business_id": "b001", "text": "x", "date": DATES[0], **bad}
    with open(review_path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(row) + "\n")
    before = snapshot(workspace.root)
    with pytest.raises(DataError) as info:
        import_dataset(workspace, "bad", review_path, business_path=business_path)
    assert (info.value.line, info.value.field) == (line, field), str(info.value)
    assert pattern in info.value.message
    assert snapshot(workspace.root) == before


def test_staged_rows_live_inside_the_atomic_staging_folder_and_go(workspace, tmp_path, small_chunks, monkeypatch):
    review_path, business_path = write_flat(tmp_path / "src", 120, 5)
    seen = []
    real = Stager.finish

    def finish(self, out, dataset, **kw):
        seen.append((self.work, sorted(p.name for p in self.work.iterdir())))
        return real(self, out, dataset, **kw)

    monkeypatch.setattr(Stager, "finish", finish)
    import_dataset(workspace, "d", review_path, business_path=business_path)
    [(work, files)] = seen
    assert work.is_relative_to(workspace.root / ".staging") and files and all(f.startswith("bucket") for f in files)
    assert not (workspace.root / ".staging").exists()
    assert sorted(p.name for p in workspace.dataset_dir("d").iterdir()) == [
        "dataset.lock.json", "restaurants.parquet", "reviews.parquet"]
    assert verify_dataset(workspace, "d")["ok"]


def test_scale_restaurants_without_reviews_give_an_empty_reviews_table(workspace, tmp_path):
    source = tmp_path / "s.jsonl"
    source.write_text(json.dumps({"business_id": "A", "business": {"business_id": "A", "name": "x"}, "reviews": []}) + "\n")
    assert import_dataset(workspace, "e", source)["counts"] == {"restaurants": 1, "reviews": 0}
    restaurants, reviews = tables(workspace, "e")
    assert reviews.height == 0 and reviews.columns[-1] == "text_hash" and restaurants["n_reviews"].to_list() == [0]


@pytest.mark.parametrize("block", [1, 3, 7, 64, 10_000])
@pytest.mark.parametrize("content", [b"", b"{}", b"{}\n", b'{"a": 1}\n\n{"b": "long line ' + b"x" * 50 + b'"}\n{"c": 3}',
                                     b"\n\n\n", b"no newline at all" * 5])
def test_line_blocks_are_whole_lines_that_rebuild_the_file(tmp_path, block, content):
    path = tmp_path / "f.jsonl"
    path.write_bytes(content)
    blocks = list(sources_module.line_blocks(path, block))
    assert b"".join(blocks) == content
    assert all(b and b.endswith(b"\n") for b in blocks[:-1])


_DATES = st.builds("{:04d}-{:02d}-{:02d} {:02d}:{:02d}:{:02d}".format, st.sampled_from([1, 1969, 1970, 2020, 9999]),
                   st.integers(1, 12), st.integers(1, 28), st.integers(0, 23), st.sampled_from([0, 59]), st.just(0))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["b", "a", "c10", "c9", "é"]), st.sampled_from(["r1", "r2", "R", "r10"]), _DATES),
                max_size=40))
def test_number_newest_first_is_the_three_column_sort(rows):
    frame = pl.DataFrame(rows, schema={"business_id": pl.String, "review_id": pl.String, "date": pl.String}, orient="row")
    expected = frame.sort(["business_id", "date", "review_id"], descending=[False, True, False])
    expected = expected.with_columns(idx=pl.int_range(pl.len(), dtype=pl.Int32).over("business_id"))
    assert staging_module.number_newest_first(frame).equals(expected)

"""Streaming import: checked chunks staged on disk, sorted bucket by bucket, written as one table.

An import never holds the whole source. The layouts' readers (:mod:`core.datasets.flat`,
:mod:`core.datasets.scale`) check the source a chunk at a time and hand each chunk of reviews to a
:class:`Stager`, which adds ``text_hash`` and appends the rows to one Parquet file per *bucket*:
a range of business_ids, cut from the business file before the reviews are read (weighted by its
``review_count``) so that each bucket holds about :data:`BUCKET_ROWS` reviews. Buckets follow each
other in business_id order, so :meth:`Stager.finish` sorts one bucket at a time in memory (polars)
and appends it to ``reviews.parquet``: the peak is a chunk or a bucket, not the file. A bucket that
came out too big to sort in memory (a skewed business file, a SCALE file, which cannot be cut in
advance) is sorted by DuckDB with a memory limit, spilling to disk.

Everything staged lives in a work folder inside the import's atomic staging folder, deleted before
the dataset folder is renamed into place (and with it on any failure).
"""

from __future__ import annotations

import binascii
import hashlib
import math
import shutil
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import duckdb
import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from core.datasets.schema import REVIEW_SCHEMA
from core.progress import Progress, no_progress

# Rows per final row group: DuckDB reads one restaurant's reviews from one or two of them.
REVIEW_ROW_GROUP = 32_768
# Reviews per bucket the business file's weights aim at (~200 MB of Yelp-like reviews in memory).
BUCKET_ROWS = 250_000
# A staged bucket bigger than this (bytes on disk, uncompressed) is sorted by DuckDB, not in memory.
MEMORY_SORT_BYTES = 512 << 20
DUCKDB_MEMORY = "1GB"
_HASH_DIGEST = type(hashlib.sha256()).digest
_ARROW_SCHEMA = pl.DataFrame(schema=REVIEW_SCHEMA).to_arrow().schema


def text_hashes(texts: pl.Series) -> pl.Series:
    """First 16 hex characters of sha256 of each UTF-8 text (null for null), SPEC §2.2.

    >>> text_hashes(pl.Series(["", None])).to_list()
    ['e3b0c44298fc1c14', None]
    """
    hashes = pl.from_arrow(arrow_text_hashes(texts.cast(pl.String).to_arrow()))
    assert isinstance(hashes, pl.Series)
    return hashes.cast(pl.String).alias("text_hash")


def arrow_text_hashes(texts: pa.Array | pa.ChunkedArray) -> pa.Array:
    """:func:`text_hashes` of an Arrow string array, as a ``large_string`` array.

    The loop runs in C (``map`` over slices of the Arrow buffer, one hex conversion for all
    digests): Python-level work per review would cost more than sha256 itself.
    """
    arr = texts.combine_chunks() if isinstance(texts, pa.ChunkedArray) else texts
    if arr.type != pa.large_string():
        arr = arr.cast(pa.large_string())
    if len(arr) == 0:
        return pa.array([], type=pa.large_string())
    _validity, offsets_buf, data_buf = arr.buffers()
    offsets = np.frombuffer(offsets_buf, dtype=np.int64)[arr.offset : arr.offset + len(arr) + 1]
    data = memoryview(data_buf) if data_buf is not None else memoryview(b"")
    slices = map(slice, offsets[:-1].tolist(), offsets[1:].tolist())
    digests = b"".join(map(_HASH_DIGEST, map(hashlib.sha256, map(data.__getitem__, slices))))
    firsts = np.frombuffer(digests, dtype=np.uint8).reshape(-1, 32)[:, :8]
    hexes = binascii.hexlify(firsts.tobytes())
    out_offsets = pa.py_buffer(np.arange(0, 16 * len(arr) + 1, 16, dtype=np.int64).tobytes())
    validity = arr.is_valid().buffers()[1] if arr.null_count else None
    return pa.Array.from_buffers(pa.large_string(), len(arr), [validity, out_offsets, pa.py_buffer(hexes)],
                                 null_count=arr.null_count)


def bucket_bounds(restaurants: pl.DataFrame, expected_rows: int) -> pl.Series:
    """The first business_id of each bucket (sorted), so buckets hold ~:data:`BUCKET_ROWS` reviews.

    Businesses are weighted by their ``review_count`` (1 where it is missing): the Yelp files'
    count is close to the number of reviews the review file holds for them.
    """
    n_buckets = max(1, math.ceil(expected_rows / BUCKET_ROWS))
    frame = restaurants.select(
        "business_id", weight=pl.col("review_count").fill_null(1).clip(1, None).cast(pl.Float64)
    ).sort("business_id")
    if n_buckets == 1 or frame.height <= 1:
        return frame["business_id"].head(1)
    before = frame["weight"].cum_sum() - frame["weight"]
    bucket = (before / frame["weight"].sum() * n_buckets).floor().cast(pl.Int64)
    return frame.filter(bucket != bucket.shift(1, fill_value=-1))["business_id"]


class Stager:
    """Reviews staged in business_id buckets; :meth:`finish` writes the sorted table.

    Args:
        work: an empty folder to stage in (deleted by the caller).
        bounds: the first business_id of each bucket (:func:`bucket_bounds`); None: one bucket.
    """

    def __init__(self, work: Path, bounds: pl.Series | None = None) -> None:
        self.work = work
        self.bounds = bounds
        self.rows = 0
        self._writers: dict[int, pq.ParquetWriter] = {}
        self._pool = ThreadPoolExecutor(max_workers=1)
        self._pending: Future[None] | None = None

    # -- staging -------------------------------------------------------------------------------
    def add(self, frame: pl.DataFrame) -> None:
        """Stage checked reviews (columns of the review contract, without ``dataset``).

        The hashing and writing run in a background thread while the caller reads the next
        chunk (one chunk at most in flight).
        """
        if not frame.height:
            return
        self.wait()
        self.rows += frame.height
        self._pending = self._pool.submit(self._write, frame)

    def wait(self) -> None:
        """Wait for the chunk in flight (raising its error, if any)."""
        if self._pending is not None:
            pending, self._pending = self._pending, None
            pending.result()

    def _write(self, frame: pl.DataFrame) -> None:
        # rows are moved in polars (its strings are views: a sort moves 16 bytes a row), then
        # converted to Arrow once; the texts are hashed from that Arrow buffer
        if self.bounds is None or self.bounds.len() <= 1:
            keys = None
        else:
            bucket = (self.bounds.search_sorted(frame["business_id"], side="right").cast(pl.Int64) - 1).clip(0, None)
            frame = frame.with_columns(_bucket=bucket).sort("_bucket")
            keys = frame["_bucket"].to_numpy()
            frame = frame.drop("_bucket")
        table = frame.to_arrow()
        table = table.append_column("text_hash", arrow_text_hashes(table.column("text")))
        if keys is None:
            parts = [(0, table)]
        else:
            starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
            ends = np.r_[starts[1:], len(keys)]
            parts = [(int(keys[a]), table.slice(a, b - a)) for a, b in zip(starts, ends, strict=True)]
        for key, part in parts:
            writer = self._writers.get(key)
            if writer is None:
                self.work.mkdir(parents=True, exist_ok=True)
                # uncompressed, no dictionaries: staging is written once and read once, soon
                writer = pq.ParquetWriter(self.work / f"bucket{key:06d}.parquet", part.schema, compression="none",
                                          use_dictionary=False, write_statistics=False)
                self._writers[key] = writer
            writer.write_table(part.cast(writer.schema))

    def reset(self) -> None:
        """Drop everything staged (a reader that doubted its fast path starts over)."""
        try:
            self.wait()
        finally:
            self._close_writers()
            for path in self.work.glob("bucket*.parquet"):
                path.unlink()
            self.rows = 0

    def _close_writers(self) -> None:
        writers, self._writers = self._writers, {}
        for writer in writers.values():
            writer.close()

    def close(self) -> None:
        """Stop the background thread and close the staged files (after an error too)."""
        try:
            self.wait()
        finally:
            self._close_writers()
            self._pool.shutdown()

    # -- the sorted table ----------------------------------------------------------------------
    def _buckets(self) -> list[Path]:
        return sorted(self.work.glob("bucket*.parquet"))

    def _memory_sorted(self, path: Path, number: bool) -> pl.DataFrame | None:
        """One bucket's reviews in final order, sorted in memory; None when it is too big for that.

        ``number``: sort newest first per business and assign idx (ties by review_id); else
        keep the idx the source gave.
        """
        if path.stat().st_size > MEMORY_SORT_BYTES:
            return None
        frame = pl.read_parquet(path)
        return number_newest_first(frame) if number else frame.sort(["business_id", "idx"])

    def _duckdb_sorted(self, path: Path, number: bool) -> Iterator[pl.DataFrame]:
        spill = self.work / f"duckdb-{path.stem}"
        spill.mkdir()
        out = self.work / f"sorted-{path.name}"
        con = duckdb.connect(":memory:")
        try:
            con.execute(f"SET memory_limit = '{DUCKDB_MEMORY}'")
            con.execute(f"SET temp_directory = '{_sql_path(spill)}'")
            columns = [c for c in _ARROW_SCHEMA.names if c != "dataset"]
            if number:
                idx = ("CAST(row_number() OVER (PARTITION BY business_id ORDER BY date DESC, review_id) - 1 "
                       "AS INTEGER) AS idx")
                select = ", ".join(idx if c == "idx" else c for c in columns)
            else:
                select = ", ".join(columns)
            con.execute(
                f"COPY (SELECT {select} FROM read_parquet('{_sql_path(path)}') ORDER BY business_id, idx) "  # noqa: S608 - our own staged paths
                f"TO '{_sql_path(out)}' (FORMAT parquet, COMPRESSION uncompressed)"
            )
        finally:
            con.close()
            shutil.rmtree(spill, ignore_errors=True)
        try:
            for batch in pq.ParquetFile(out).iter_batches(batch_size=BUCKET_ROWS):
                frame = pl.from_arrow(batch)
                assert isinstance(frame, pl.DataFrame)
                yield frame
        finally:
            out.unlink()

    def finish(self, out: Path, dataset: str, *, number: bool, progress: Progress | None = None) -> pl.DataFrame:
        """Write the staged reviews, sorted by (business_id, idx), as zstd Parquet at ``out``.

        Args:
            number: assign idx newest first (flat layout); else keep the source's idx (SCALE).

        Returns:
            ``(business_id, n)``: the number of reviews of each business.
        """
        progress = progress or no_progress
        self.close()
        counts = []
        buckets = self._buckets()
        # the next bucket is read and sorted (outside the GIL) while this one is written
        with _RowGroupWriter(out) as writer, ThreadPoolExecutor(max_workers=1) as pool:
            ahead = pool.submit(self._memory_sorted, buckets[0], number) if buckets else None
            for done, path in enumerate(buckets):
                progress(done, len(buckets), f"sorting and writing reviews ({done}/{len(buckets)} buckets)")
                assert ahead is not None
                sorted_bucket = ahead.result()
                ahead = pool.submit(self._memory_sorted, buckets[done + 1], number) if done + 1 < len(buckets) else None
                frames = [sorted_bucket] if sorted_bucket is not None else self._duckdb_sorted(path, number)
                for frame in frames:
                    counts.append(frame.group_by("business_id", maintain_order=True).len("n"))
                    writer.write(_final(frame.to_arrow(), dataset))
                del frames, sorted_bucket
                path.unlink()
        if not counts:
            return pl.DataFrame(schema={"business_id": pl.String, "n": pl.UInt32})
        return pl.concat(counts).group_by("business_id").agg(pl.col("n").sum())


def number_newest_first(reviews: pl.DataFrame) -> pl.DataFrame:
    """Sort each business's reviews newest first (ties: review_id) and assign idx from 0."""
    ordered = reviews.sort(["business_id", "date", "review_id"], descending=[False, True, False])
    return ordered.with_columns(idx=pl.int_range(pl.len(), dtype=pl.Int32).over("business_id"))


def _final(table: pa.Table, dataset: str) -> pa.Table:
    """The reviews table's columns, in order and type, with ``dataset`` filled in."""
    name = pa.repeat(pa.scalar(dataset, pa.large_string()), table.num_rows)
    columns = [name if c == "dataset" else table.column(c) for c in _ARROW_SCHEMA.names]
    return pa.Table.from_arrays(columns, names=_ARROW_SCHEMA.names).cast(_ARROW_SCHEMA)


def _sql_path(path: Path) -> str:
    # DDL and COPY take no parameters: only paths we built ourselves are quoted into them.
    return str(path).replace("'", "''")


class _RowGroupWriter:
    """Append frames to one zstd Parquet file in row groups of exactly :data:`REVIEW_ROW_GROUP`
    rows (the last one excepted), whatever the frames' sizes."""

    def __init__(self, path: Path) -> None:
        # dictionaries only where values repeat (a dictionary of unique texts is built, then dropped)
        self._writer = pq.ParquetWriter(path, _ARROW_SCHEMA, compression="zstd", write_statistics=True,
                                        use_dictionary=["dataset", "business_id", "date", "user_id"])
        self._pending: pa.Table | None = None

    def __enter__(self) -> _RowGroupWriter:
        return self

    def write(self, table: pa.Table) -> None:
        pending = table if self._pending is None else pa.concat_tables([self._pending, table])
        while pending.num_rows >= REVIEW_ROW_GROUP:
            self._writer.write_table(pending.slice(0, REVIEW_ROW_GROUP), row_group_size=REVIEW_ROW_GROUP)
            pending = pending.slice(REVIEW_ROW_GROUP)
        self._pending = pending

    def __exit__(self, *exc: object) -> None:
        try:
            if exc[0] is None and self._pending is not None and self._pending.num_rows:
                self._writer.write_table(self._pending, row_group_size=REVIEW_ROW_GROUP)
        finally:
            self._writer.close()

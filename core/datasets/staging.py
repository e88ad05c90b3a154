"""Streaming import: checked chunks held in memory or staged on disk, sorted, written as one table.

An import never holds the whole source. The layouts' readers (:mod:`core.datasets.flat`,
:mod:`core.datasets.scale`) check the source a chunk at a time and hand each chunk of reviews to a
:class:`Stager`, which adds ``text_hash``. While the chunks fit in :data:`HOLD_BYTES` they stay in
memory, and when the whole source did, :meth:`Stager.finish` sorts it at once (a source of up to
~1.4 M Yelp-like reviews is written nowhere but the dataset). The chunks past that are *staged*:
cut by *bucket*, a range of business_ids taken from the business file before the reviews are read
(weighted by its ``review_count``) so that each bucket holds about :data:`BUCKET_ROWS` reviews,
and appended to one Arrow IPC file per bucket. Buckets follow each other in business_id order, so
:meth:`Stager.finish` sorts one bucket at a time in memory (polars): its file plus its rows among
the held chunks. The peak is the held chunks plus a bucket, not the file. A bucket that came out
too big to sort in memory (a skewed business file, a SCALE file, which cannot be cut in advance)
is sorted by DuckDB with a memory limit, spilling to disk.

The sorted frames stream into one polars Parquet sink (zstd, row groups of exactly
:data:`REVIEW_ROW_GROUP` rows), which encodes and compresses on every core while the next bucket
is sorted. Everything staged lives in a work folder inside the import's atomic staging folder,
deleted before the dataset folder is renamed into place (and with it on any failure).
"""

from __future__ import annotations

import math
import shutil
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl
import polars_hash as plh
from polars.io.plugins import register_io_source

from core.base.files import make_dirs
from core.base.progress import Progress, no_progress
from core.datasets.schema import DATE_FORMAT, REVIEW_SCHEMA

if TYPE_CHECKING:  # pyarrow and duckdb load when an import spills (a run, which reads datasets, never does)
    import pyarrow as pa
    import pyarrow.ipc as ipc

# Rows per final row group: DuckDB reads one restaurant's reviews from one or two of them.
REVIEW_ROW_GROUP = 32_768
# Reviews per bucket the business file's weights aim at (~200 MB of Yelp-like reviews in memory).
BUCKET_ROWS = 250_000
# A staged bucket bigger than this (bytes on disk, uncompressed) is sorted by DuckDB, not in memory.
MEMORY_SORT_BYTES = 512 << 20
# Reviews (polars' estimate, text_hash included) held in memory before the stager spills them to
# bucket files: a source below it (~1.4 M Yelp-like reviews) is sorted in memory, never staged.
HOLD_BYTES = 1 << 30
# Rows of a sorted frame handed to the Parquet sink at a time.
WRITE_ROWS = 4 * REVIEW_ROW_GROUP
# zstd level of reviews.parquet (Arrow's default level: fast, about 1/4 of the JSONL's size).
ZSTD_LEVEL = 1
DUCKDB_MEMORY = "1GB"
# number_newest_first's 64-bit sort key: the business's rank, then the date's shifted seconds
_CODE_BITS, _DATE_BITS = 24, 40
_STAGED_SCHEMA = {c: t for c, t in REVIEW_SCHEMA.items() if c != "dataset"}
# sha256 of the UTF-8 text as 64 hex characters (Rust, on every core), cut to the first 16
_TEXT_HASH = plh.col("text").chash.sha2_256().str.slice(0, 16).alias("text_hash")


def text_hashes(texts: pl.Series) -> pl.Series:
    """First 16 hex characters of sha256 of each UTF-8 text (null for null), SPEC §2.2.

    >>> text_hashes(pl.Series(["", None])).to_list()
    ['e3b0c44298fc1c14', None]
    """
    frame = pl.DataFrame({"text": texts.cast(pl.String)})
    return frame.select(_TEXT_HASH).to_series().cast(pl.String)


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
    """Reviews held in memory, or staged in business_id buckets; :meth:`finish` writes the
    sorted table.

    Args:
        work: an empty folder to stage in (deleted by the caller).
        bounds: the first business_id of each bucket (:func:`bucket_bounds`); None: one bucket.
    """

    def __init__(self, work: Path, bounds: pl.Series | None = None) -> None:
        self.work = work
        self.bounds = bounds
        self.rows = 0
        self.spilled = False  # chunks past HOLD_BYTES went to bucket files
        self._held: list[pl.DataFrame] = []  # hashed chunks, while they fit in HOLD_BYTES
        self._held_bytes = 0
        self._writers: dict[int, tuple[ipc.RecordBatchFileWriter, pa.Schema]] = {}
        self._pool = ThreadPoolExecutor(max_workers=1)
        self._pending: Future[None] | None = None

    # -- staging -------------------------------------------------------------------------------
    def add(self, frame: pl.DataFrame) -> None:
        """Stage checked reviews (columns of the review contract, without ``dataset``).

        The hashing (and spilling) runs in a background thread while the caller reads the next
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
        # one chunk per column (a reader's frame has hundreds): gathers on it cost ~20x less, and
        # for polars' string views rechunking copies no text
        frame = frame.rechunk().with_columns(_TEXT_HASH)
        if not self.spilled:
            size = int(frame.estimated_size())
            if self._held_bytes + size <= HOLD_BYTES:
                self._held.append(frame)
                self._held_bytes += size
                return
            self.spilled = True  # the held chunks stay in memory; this one and the rest go to disk
        for key, part in self._parts(frame).items():
            # as large_string: a string-view part would drag its whole chunk's buffers into the file
            table = part.to_arrow()
            if key not in self._writers:
                import pyarrow.ipc as ipc  # deferred: only an import that spills writes bucket files

                make_dirs(self.work)
                self._writers[key] = (ipc.new_file(self.work / f"bucket{key:06d}.arrow", table.schema), table.schema)
            writer, schema = self._writers[key]
            writer.write_table(table.cast(schema))

    def _parts(self, frame: pl.DataFrame) -> dict[int, pl.DataFrame]:
        """The rows of ``frame`` by bucket number."""
        if self.bounds is None or self.bounds.len() <= 1:
            return {0: frame}
        bucket = (self.bounds.search_sorted(frame["business_id"], side="right").cast(pl.Int64) - 1).clip(0, None)
        split = frame.with_columns(_bucket=bucket).partition_by("_bucket", as_dict=True, include_key=False)
        return {int(key[0]): part for key, part in sorted(split.items())}  # type: ignore[call-overload]

    def reset(self) -> None:
        """Drop everything staged (a reader that doubted its fast path starts over)."""
        try:
            self.wait()
        finally:
            self._close_writers()
            for path in self.work.glob("bucket*.arrow"):
                path.unlink()
            self.rows = 0
            self._held, self._held_bytes, self.spilled = [], 0, False

    def _close_writers(self) -> None:
        writers, self._writers = self._writers, {}
        for writer, _schema in writers.values():
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
        return sorted(self.work.glob("bucket*.arrow"))

    def _memory_sorted(self, path: Path | None, held: pl.DataFrame | None, number: bool) -> pl.DataFrame | None:
        """One bucket's reviews (its file's and its held rows) in final order, sorted in memory;
        None when it is too big for that.

        ``number``: sort newest first per business and assign idx (ties by review_id); else
        keep the idx the source gave.
        """
        size = (path.stat().st_size if path is not None else 0) + (int(held.estimated_size()) if held is not None else 0)
        if size > MEMORY_SORT_BYTES:
            return None
        frames = ([held] if held is not None else []) + ([pl.read_ipc(path)] if path is not None else [])
        return _sorted(pl.concat(frames), number)

    def _duckdb_sorted(self, path: Path | None, held: pl.DataFrame | None, number: bool) -> Iterator[pl.DataFrame]:
        name = path.stem if path is not None else f"held-{id(held)}"
        spill = self.work / f"duckdb-{name}"
        make_dirs(spill)
        out = self.work / f"sorted-{name}.parquet"
        import duckdb  # deferred with pyarrow: only a bucket too big for memory is sorted by DuckDB
        import pyarrow.parquet as pq

        con = duckdb.connect(":memory:")
        try:
            con.execute(f"SET memory_limit = '{DUCKDB_MEMORY}'")
            con.execute(f"SET temp_directory = '{_sql_path(spill)}'")
            staged = ", ".join(c for c in _STAGED_SCHEMA if c != "idx" or not number)
            parts = []
            if path is not None:
                # deferred: pyarrow.dataset pulls in pandas (~400 ms); only an import that spilled needs it
                import pyarrow.dataset as pds

                con.register("staged_file", pds.dataset(path, format="ipc"))  # scanned, not loaded
                parts.append(f"SELECT {staged} FROM staged_file")  # noqa: S608 - our own columns
            if held is not None:
                con.register("staged_held", held.to_arrow())
                parts.append(f"SELECT {staged} FROM staged_held")  # noqa: S608 - our own columns
            if number:
                idx = ("CAST(row_number() OVER (PARTITION BY business_id ORDER BY date DESC, review_id) - 1 "
                       "AS INTEGER) AS idx")
                select = ", ".join(idx if c == "idx" else c for c in _STAGED_SCHEMA)
            else:
                select = ", ".join(_STAGED_SCHEMA)
            con.execute(
                f"COPY (SELECT {select} FROM ({' UNION ALL '.join(parts)}) ORDER BY business_id, idx) "  # noqa: S608 - our own columns and paths
                f"TO '{_sql_path(out)}' (FORMAT parquet, COMPRESSION uncompressed)"
            )
        finally:
            con.close()
            shutil.rmtree(spill, ignore_errors=True)
        try:
            for batch in pq.ParquetFile(out).iter_batches(batch_size=WRITE_ROWS):
                frame = pl.from_arrow(batch)
                assert isinstance(frame, pl.DataFrame)
                yield frame
        finally:
            out.unlink()

    def _sorted_frames(self, number: bool) -> Iterator[pl.DataFrame]:
        """The reviews in final order, a frame at a time (the next bucket is read and sorted,
        outside the GIL, while this one is written)."""
        held, self._held, self._held_bytes = self._held, [], 0
        if not self.spilled:
            if held:
                frame = _sorted(pl.concat(held), number)
                del held
                yield frame
            return
        # the held chunks join each bucket's file: only what came after them was staged
        held_parts = self._parts(pl.concat(held)) if held else {}
        del held
        files = {int(path.stem.removeprefix("bucket")): path for path in self._buckets()}
        keys = sorted(set(files) | set(held_parts))
        with ThreadPoolExecutor(max_workers=1) as pool:

            def sort(i: int) -> Future[pl.DataFrame | None] | None:
                if i >= len(keys):
                    return None
                return pool.submit(self._memory_sorted, files.get(keys[i]), held_parts.get(keys[i]), number)

            ahead = sort(0)
            for i, key in enumerate(keys):
                assert ahead is not None
                sorted_bucket = ahead.result()
                ahead = sort(i + 1)
                if sorted_bucket is None:
                    yield from self._duckdb_sorted(files.get(key), held_parts.get(key), number)
                else:
                    yield sorted_bucket
                del sorted_bucket
                held_parts.pop(key, None)
                if key in files:
                    files[key].unlink()

    def finish(self, out: Path, dataset: str, *, number: bool, progress: Progress | None = None) -> pl.DataFrame:
        """Write the staged reviews, sorted by (business_id, idx), as zstd Parquet at ``out``.

        Args:
            number: assign idx newest first (flat layout); else keep the source's idx (SCALE).

        Returns:
            ``(business_id, n)``: the number of reviews of each business.
        """
        progress = progress or no_progress
        self.close()
        progress(0, 1, "sorting and writing reviews" + (f" ({len(self._buckets())} buckets)" if self.spilled else ""))
        counts: list[pl.DataFrame] = []
        final = [pl.lit(dataset, pl.String).alias("dataset") if c == "dataset" else pl.col(c).cast(t)
                 for c, t in REVIEW_SCHEMA.items()]

        def source(with_columns: list[str] | None, predicate: pl.Expr | None, n_rows: int | None,
                   batch_size: int | None) -> Iterator[pl.DataFrame]:
            # called by the sink on one of its threads; the sink asks for every column, all rows
            for frame in self._sorted_frames(number):
                # sorted by business_id: each business is one run
                runs = frame["business_id"].rle().struct.unnest()
                counts.append(runs.select(business_id="value", n=pl.col("len").cast(pl.UInt32)))
                for first in range(0, frame.height, WRITE_ROWS):
                    yield frame.slice(first, WRITE_ROWS).select(final)

        register_io_source(source, schema=REVIEW_SCHEMA).sink_parquet(
            out, compression="zstd", compression_level=ZSTD_LEVEL, statistics=True,
            row_group_size=REVIEW_ROW_GROUP, maintain_order=True)
        if not counts:
            return pl.DataFrame(schema={"business_id": pl.String, "n": pl.UInt32})
        return pl.concat(counts).group_by("business_id").agg(pl.col("n").sum())


def _sorted(frame: pl.DataFrame, number: bool) -> pl.DataFrame:
    return number_newest_first(frame) if number else frame.sort(["business_id", "idx"])


def number_newest_first(reviews: pl.DataFrame) -> pl.DataFrame:
    """Sort each business's reviews newest first (ties: review_id) and assign idx from 0.

    The order is that of sorting by ``(business_id, date descending, review_id)``, computed from
    one 64-bit key (the business's rank among the frame's business_ids, then the date's seconds
    reversed) and review_id for ties: half the work of comparing three strings a row. Dates must
    be checked ``YYYY-MM-DD HH:MM:SS`` (their text order is their time order).

    >>> frame = pl.DataFrame({"business_id": ["b", "a", "b", "b"], "review_id": ["r2", "r1", "r3", "r1"],
    ...                       "date": ["2020-01-01 00:00:00", "2019-05-05 10:00:00", "2021-01-01 00:00:00",
    ...                                "2020-01-01 00:00:00"]})
    >>> number_newest_first(frame).select("business_id", "review_id", "idx").rows()
    [('a', 'r1', 0), ('b', 'r3', 0), ('b', 'r1', 1), ('b', 'r2', 2)]
    """
    businesses = reviews["business_id"].unique().sort()
    if businesses.len() >= 1 << _CODE_BITS or reviews["date"].null_count():
        ordered = reviews.sort(["business_id", "date", "review_id"], descending=[False, True, False])
        return ordered.with_columns(idx=pl.int_range(pl.len(), dtype=pl.Int32).over("business_id"))
    code = businesses.search_sorted(reviews["business_id"]).cast(pl.UInt64)
    # seconds since 1970 of years 0001-9999, shifted to be >= 0, then reversed (newest first)
    seconds = reviews["date"].str.strptime(pl.Datetime("us"), DATE_FORMAT).dt.epoch("s") + (1 << 36)
    key = code * (1 << _DATE_BITS) + (((1 << _DATE_BITS) - 1) - seconds).cast(pl.UInt64)
    ordered = reviews.with_columns(_key=key, _code=code).sort(["_key", "review_id"])
    return ordered.with_columns(idx=pl.int_range(pl.len(), dtype=pl.Int32).over("_code")).drop("_key", "_code")


def _sql_path(path: Path) -> str:
    # DDL and COPY take no parameters: only paths we built ourselves are quoted into them.
    return str(path).replace("'", "''")

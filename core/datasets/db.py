"""The one place DuckDB runs SQL over a workspace's files: in-memory views over its Parquet/JSONL
files (the look-ups the pages and commands need are :mod:`core.datasets.browse`'s; the label
store's SQL is :mod:`core.labeling.store`'s).

``Database(root).query(sql, params)`` returns a polars frame. Parameters are ``$name`` and passed
as a dict, never formatted into the SQL. DuckDB connections are not thread-safe, and Streamlit
runs each session in its own thread, so every thread gets its own cursor on one shared in-memory
database (cursors share its catalog, hence its views).

Views are declared in :data:`VIEWS` (other modules add theirs with :func:`register_view`). A view
reads the files matching a glob, listed by :meth:`Database.refresh` before every query (so files
written by another process, the CLI, show up without a restart). A file under a hidden folder
(a staging or leftover folder, ``.NAME.XXXX.tmp``) is never read. A view whose glob
matches no file yet is an empty relation with the declared columns. A query that fails because its
files were replaced while it ran is re-run on the new files.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from core.workspace import Workspace
from core.workspace.locks import clean_leftovers

if TYPE_CHECKING:  # duckdb loads with the first Database (a run imports this module and never opens one)
    import duckdb

_RETRIES = 3  # re-runs of a query whose files were replaced under it (an import's --replace)


@dataclass(frozen=True)
class ViewSpec:
    """A named view over the files matching ``pattern`` (relative to the workspace root)."""

    name: str
    pattern: str
    format: str  # "parquet" | "json"
    columns: dict[str, str] = field(default_factory=dict)  # name -> DuckDB type, for the empty view
    description: str = ""


VIEWS: dict[str, ViewSpec] = {}


def register_view(spec: ViewSpec) -> ViewSpec:
    """Add (or replace) a view declaration; returns it so modules can keep a handle."""
    VIEWS[spec.name] = spec
    return spec


register_view(
    ViewSpec(
        "restaurants",
        "datasets/*/restaurants.parquet",
        "parquet",
        {
            "dataset": "VARCHAR", "business_id": "VARCHAR", "name": "VARCHAR", "categories": "VARCHAR",
            "city": "VARCHAR", "state": "VARCHAR", "stars": "DOUBLE", "review_count": "BIGINT",
            "n_reviews": "BIGINT", "attributes": "VARCHAR",
        },
        "one row per restaurant of every imported dataset",
    )
)
register_view(
    ViewSpec(
        "reviews",
        "datasets/*/reviews.parquet",
        "parquet",
        {
            "dataset": "VARCHAR", "business_id": "VARCHAR", "review_id": "VARCHAR", "idx": "INTEGER",
            "date": "VARCHAR", "stars": "DOUBLE", "useful": "BIGINT", "funny": "BIGINT", "cool": "BIGINT",
            "text": "VARCHAR", "user_id": "VARCHAR", "text_hash": "VARCHAR",
        },
        "one row per review; idx 0 is the newest review of its restaurant; text_hash: SPEC §2.2",
    )
)


def _quote_literal(text: str) -> str:
    # Only used for file paths we build ourselves (DDL cannot take parameters); never for user values.
    return "'" + text.replace("'", "''") + "'"


def _quote_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


class Database:
    """DuckDB views over the files of one workspace folder."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root).resolve()
        if (self.root / "workspace.json").exists():
            clean_leftovers(Workspace(self.root))  # staging folders of killed imports (the app starts here)
        import duckdb  # deferred (see above)

        self._con = duckdb.connect(":memory:")
        self._lock = threading.Lock()
        self._local = threading.local()
        self._view_state: dict[str, tuple[str, tuple[str, ...]]] = {}

    # -- views -------------------------------------------------------------------------------
    def files(self, spec: ViewSpec) -> tuple[str, ...]:
        """The files a view reads: the pattern's matches, without any under a hidden folder (a
        staging or leftover folder, ``.NAME.XXXX.tmp``: no valid name starts with a dot)."""
        out = []
        for path in self.root.glob(spec.pattern):
            folders = path.relative_to(self.root).parts[:-1]
            if not any(part.startswith(".") for part in folders) and path.is_file():
                out.append(str(path))
        return tuple(sorted(out))

    def _view_sql(self, spec: ViewSpec, files: tuple[str, ...]) -> str:
        if not files:
            cols = ", ".join(f"CAST(NULL AS {t}) AS {_quote_ident(c)}" for c, t in spec.columns.items())
            return f"SELECT {cols or 'NULL AS empty'} LIMIT 0"
        path = "[" + ", ".join(_quote_literal(f) for f in files) + "]"
        if spec.format == "parquet":
            return f"SELECT * FROM read_parquet({path}, union_by_name = true)"  # noqa: S608 - our own path; DDL takes no parameters
        if spec.format == "json":
            return f"SELECT * FROM read_json_auto({path}, format = 'newline_delimited', union_by_name = true)"  # noqa: S608
        raise ValueError(f"unknown view format {spec.format!r}")

    def refresh(self) -> None:
        """(Re)create the views whose files appeared or disappeared since the last call."""
        with self._lock:
            for spec in list(VIEWS.values()):
                files = self.files(spec)
                state = (spec.pattern + spec.format, files)
                if self._view_state.get(spec.name) == state:
                    continue
                self._con.execute(
                    f"CREATE OR REPLACE VIEW {_quote_ident(spec.name)} AS {self._view_sql(spec, files)}"
                )
                self._view_state[spec.name] = state

    def require_dataset(self, dataset: str) -> str:
        """``dataset`` after checking its tables still match its lock (SPEC §1.4); every read of one
        dataset's rows calls this first. Raises UnknownNameError or LockError."""
        from core.datasets.lock import require_verified  # core.datasets sits above this module

        require_verified(Workspace(self.root), dataset)
        return dataset

    def _cursor(self) -> duckdb.DuckDBPyConnection:
        cur = getattr(self._local, "cursor", None)
        if cur is None:
            with self._lock:
                cur = self._con.cursor()
            self._local.cursor = cur
        return cur

    # -- queries -----------------------------------------------------------------------------
    def query(self, sql: str, params: dict[str, Any] | None = None) -> pl.DataFrame:
        """Run ``sql`` with ``$name`` parameters and return the result as a polars frame."""
        return self._run(lambda cur: cur.sql(sql, params=params or None).pl())

    def execute(self, sql: str, params: dict[str, Any] | list[Any] | None = None) -> list[tuple]:
        """Run ``sql`` and return all rows as tuples (for statements and scalar look-ups)."""
        return self._run(lambda cur: cur.execute(sql, params or None).fetchall())

    def _run(self, call: Any) -> Any:
        # A query runs on the files as they were when it started and finished: if another process
        # replaced one meanwhile (an import's --replace swaps a dataset folder), DuckDB may have read
        # parts of both or failed, so the query runs again on the new files.
        import duckdb  # loaded by __init__ already

        for attempt in range(_RETRIES + 1):
            self.refresh()
            before = self._file_states()
            try:
                result = call(self._cursor())
            except duckdb.Error:
                if attempt == _RETRIES or self._file_states() == before:
                    raise
            else:
                if attempt == _RETRIES or self._file_states() == before:
                    return result
            time.sleep(0.02 * (attempt + 1))
        raise AssertionError("unreachable")

    def _file_states(self) -> tuple[tuple[str, int, int, int], ...]:
        out = []
        for _pattern, files in self._view_state.values():
            for f in files:
                try:
                    st = os.stat(f)
                except OSError:
                    out.append((f, -1, -1, -1))
                else:
                    out.append((f, st.st_ino, st.st_mtime_ns, st.st_size))
        return tuple(out)

    def scalar(self, sql: str, params: dict[str, Any] | None = None) -> Any:
        """The first column of the first row, or None."""
        rows = self.execute(sql, params)
        return rows[0][0] if rows else None

    def close(self) -> None:
        """Close the underlying connection (cursors of other threads become invalid)."""
        self._con.close()


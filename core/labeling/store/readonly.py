"""Reading a SQLite label store that this user may not write (a read-only folder or file).

SQLite in WAL mode writes beside the database even to read (the ``-shm`` index), so a read-only
workspace cannot be opened the usual way. Commands that only read (``labels status``, ``export``,
``agreement``, ``consensus``) open such a store with SQLite's ``mode=ro`` URI instead; when even
that needs a ``-shm`` it cannot create (no ``-wal`` beside it: every commit is in the file), with
``immutable=1``. Such a store refuses every write with a one-line reason (:func:`write_refused`).
"""

from __future__ import annotations

import os
import sqlite3
import urllib.parse
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.engine import make_url


def sqlite_path(url: str) -> Path | None:
    """The file of a SQLite URL (None for another backend or an in-memory database)."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or not parsed.database or parsed.database == ":memory:":
        return None
    return Path(parsed.database)


def not_writable(url: str) -> str | None:
    """Why this user cannot write the SQLite store of ``url`` (its file or folder is read-only, or
    on a read-only file system), or None (writable, missing, or not SQLite)."""
    path = sqlite_path(url)
    if path is None or not path.is_file():
        return None
    if not os.access(path, os.W_OK):
        return "the file is read-only for this user"
    if not os.access(path.parent, os.W_OK):
        return "its folder is read-only for this user"
    return None


def write_refused(path: Path | str, why: str) -> str:
    """The one line a write to a store opened read-only says."""
    return (f"the label store {path} cannot be written ({why}): this command writes to it; make the store "
            "and its folder writable, or work on a writable copy")


def connector(path: Path, timeout_s: float) -> Any:
    """A DBAPI ``creator`` opening ``path`` read-only: ``mode=ro``, else ``immutable=1`` when no
    ``-wal`` holds commits the file does not (SQLite cannot make the ``-shm`` it needs to read one)."""
    quoted = urllib.parse.quote(str(path.resolve()))

    def connect() -> sqlite3.Connection:
        conn = sqlite3.connect(f"file:{quoted}?mode=ro", uri=True, timeout=timeout_s, check_same_thread=False)
        try:
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()  # reads the WAL index, if it can
            return conn
        except sqlite3.OperationalError:
            conn.close()
            wal = Path(f"{path}-wal")
            if wal.exists() and wal.stat().st_size > 0:
                raise
        return sqlite3.connect(f"file:{quoted}?immutable=1", uri=True, check_same_thread=False)

    return connect


def read_engine(path: Path, busy_timeout_ms: int) -> Engine:
    """An engine that only reads ``path`` (through :func:`connector`)."""
    engine = create_engine(f"sqlite:///{path}", creator=connector(path, busy_timeout_ms / 1000),
                           pool_size=10, max_overflow=30)

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection, _record) -> None:  # noqa: ANN001 - DBAPI types
        dbapi_connection.isolation_level = None  # BEGIN below, as for a writable store

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        conn.exec_driver_sql("BEGIN")

    return engine

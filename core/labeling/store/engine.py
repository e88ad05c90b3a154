"""Engine set-up, transactions and schema upgrades of the label store.

The URL comes from :func:`core.base.settings.labels_url` (default: SQLite in the workspace,
``labels.sqlite``); a PostgreSQL URL (``postgresql+psycopg://…``) works unchanged.

Transaction isolation. SQLite runs in WAL mode with foreign keys on and a busy timeout; every
write transaction starts with ``BEGIN IMMEDIATE``, so writers are serialised from their first
statement: each write transaction is SERIALIZABLE (it reads only what committed before it took
the lock), and reads are snapshots that never block writers. PostgreSQL runs at READ COMMITTED
(set explicitly on the engine), and every write that decides an assignment, a submission, an
adjudication claim or a project setting first locks its project row (``SELECT … FOR UPDATE``): the
decisions of one project are serialised, and each statement after the lock sees every commit
before it. A killed process leaves either its whole transaction or none of it.

Schema creation is idempotent and versioned: ``schema_version`` holds one row per applied step;
:meth:`LabelStore.ensure_schema` applies the missing steps in order inside one write transaction.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event, func, inspect, select, text, update
from sqlalchemy.engine import Row, make_url
from sqlalchemy.exc import DBAPIError
from sqlalchemy.schema import CreateTable

from core.base.errors import WorkbenchError
from core.base.files import writable_file
from core.base.settings import labels_url
from core.labeling.store import readonly
from core.labeling.store.tables import (
    SCHEMA_VERSION,
    items,
    metadata,
    projects,
    rater_retirements,
    ratings,
    schema_version,
)


def utcnow() -> datetime:
    """The current UTC time as a naive datetime (how every timestamp is stored)."""
    return datetime.now(UTC).replace(tzinfo=None)


SQLITE_COMPANIONS = ("-wal", "-shm", "-journal")  # the files SQLite keeps beside a database

def normalize_url(url: str) -> str:
    """Make a plain ``postgresql://`` URL use psycopg 3 (the driver this project installs)."""
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix):]
    return url


def _sqlite_engine(url: str, busy_timeout_ms: int, synchronous: str) -> Engine:
    parsed = make_url(url)
    database = parsed.database if parsed.database and parsed.database != ":memory:" else None
    if database:  # its folders made, and it and its journals never a link (core.base.files)
        writable_file(database, companions=SQLITE_COMPANIONS)
    engine = create_engine(
        url, connect_args={"timeout": busy_timeout_ms / 1000, "check_same_thread": False},
        pool_size=10, max_overflow=30,
    )

    @event.listens_for(engine, "do_connect")
    def _before_connect(*_args: Any) -> None:
        if database:  # checked again at every connection: SQLite opens the file by name
            writable_file(database, companions=SQLITE_COMPANIONS)

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection, _record) -> None:  # noqa: ANN001 - DBAPI types
        dbapi_connection.isolation_level = None  # we emit BEGIN ourselves (below)
        cur = dbapi_connection.cursor()
        cur.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
        cur.execute("PRAGMA journal_mode = WAL")
        cur.execute("PRAGMA foreign_keys = ON")
        cur.execute(f"PRAGMA synchronous = {synchronous}")
        cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        # IMMEDIATE takes the write lock at BEGIN, so two writers never interleave their reads.
        conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get("write") else "BEGIN")

    return engine


class LabelStore:
    """One label store (SQLite file or PostgreSQL database).

    Args:
        url: SQLAlchemy URL.
        busy_timeout_ms: how long a SQLite writer waits for the lock before failing.
        synchronous: SQLite ``PRAGMA synchronous`` (FULL: a commit survives power loss).
        clock: returns "now" as a naive UTC datetime (tests pass a fake clock).
        read_only: why this SQLite store is opened only to read (this user cannot write it), or None;
            such a store's :meth:`write` refuses with that reason.
    """

    def __init__(
        self,
        url: str,
        *,
        busy_timeout_ms: int = 30_000,
        synchronous: str = "FULL",
        clock: Callable[[], datetime] = utcnow,
        read_only: str | None = None,
    ) -> None:
        self.url = normalize_url(url)
        self.clock = clock
        self.read_only = read_only
        self.known_raters: set[str] = set()  # rater codes known to exist (they are never deleted)
        backend = make_url(self.url).get_backend_name()
        if backend == "sqlite":
            if synchronous.upper() not in ("OFF", "NORMAL", "FULL", "EXTRA"):
                raise ValueError(f"invalid synchronous mode {synchronous!r}")
            path = readonly.sqlite_path(self.url)
            self.engine = (readonly.read_engine(path, busy_timeout_ms) if read_only and path is not None
                           else _sqlite_engine(self.url, busy_timeout_ms, synchronous.upper()))
            # Threads of one process queue here instead of in SQLite's sleep-and-retry busy handler,
            # which is unfair under load; other processes still wait through busy_timeout.
            self._write_lock: threading.RLock | contextlib.nullcontext = threading.RLock()
        elif backend == "postgresql":
            self.engine = create_engine(self.url, pool_pre_ping=True, pool_size=10, max_overflow=30,
                                        isolation_level="READ COMMITTED")
            self._write_lock = contextlib.nullcontext()
        else:
            raise WorkbenchError(f"unsupported label store backend {backend!r}: use sqlite or postgresql")
        self.dialect = backend

    def __repr__(self) -> str:
        return f"LabelStore({self.engine.url.render_as_string(hide_password=True)!r})"

    @contextlib.contextmanager
    def read(self) -> Iterator[Connection]:
        """A read transaction (a consistent snapshot on SQLite WAL; never blocks writers)."""
        with self.engine.connect() as conn, conn.begin():
            yield conn

    @contextlib.contextmanager
    def write(self) -> Iterator[Connection]:
        """A write transaction: committed at the end of the block, rolled back on any error."""
        if self.read_only:
            raise WorkbenchError(readonly.write_refused(make_url(self.url).database or self.url, self.read_only))
        with self._write_lock, self.engine.connect() as conn:
            conn.execution_options(write=True)
            with conn.begin():
                yield conn

    def lock_project(self, conn: Connection, project_id: int) -> Row:
        """Serialise the decisions of one project and return its settings as they are now.

        PostgreSQL locks the project row (``SELECT … FOR UPDATE``); on SQLite ``BEGIN IMMEDIATE``
        did it already. The row is read inside the lock, so a setting changed by another process
        (a lowered target, say) counts from the next decision on.
        """
        stmt = select(projects).where(projects.c.project_id == project_id)
        if self.dialect == "postgresql":
            stmt = stmt.with_for_update()
        row = conn.execute(stmt).first()
        if row is None:
            raise WorkbenchError(f"no labeling project with id {project_id}")
        return row

    def schema_version(self) -> int:
        """The applied schema version (0 for an empty database)."""
        with self.read() as conn:
            if not inspect(conn).has_table("schema_version"):
                return 0
            return int(conn.execute(select(func.max(schema_version.c.version))).scalar() or 0)

    def ensure_schema(self) -> int:
        """Create or upgrade the schema (idempotent, safe when several processes call it at once).

        Returns:
            The schema version after the call.

        Raises:
            WorkbenchError: the store was written by a newer version of the workbench.
        """
        with self.write() as conn:
            if self.dialect == "postgresql":
                conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": 7_301_906})
            if not inspect(conn).has_table("schema_version"):
                schema_version.create(conn)
            current = int(conn.execute(select(func.max(schema_version.c.version))).scalar() or 0)
            if current > SCHEMA_VERSION:
                raise WorkbenchError(
                    f"the label store has schema version {current}, newer than this workbench's "
                    f"{SCHEMA_VERSION}; upgrade the workbench"
                )
            for version in range(current + 1, SCHEMA_VERSION + 1):
                MIGRATIONS[version](conn)
                conn.execute(schema_version.insert().values(version=version, applied_at=self.clock()))
        return SCHEMA_VERSION

    def check_schema(self) -> int:
        """The schema version of a store opened read-only, which must be this workbench's (an older
        one is upgraded by its first writer; a read-only store cannot be)."""
        current = self.schema_version()
        if current != SCHEMA_VERSION:
            raise WorkbenchError(f"the label store {self!r} has schema version {current} and this workbench "
                                 f"reads version {SCHEMA_VERSION}; it is read-only ({self.read_only}), so it "
                                 "cannot be upgraded here: open it once where it is writable")
        return current

    def dispose(self) -> None:
        """Close every pooled connection."""
        self.engine.dispose()


def _migration_1(conn: Connection) -> None:
    # The base schema: on an empty database it creates every table of the current metadata, so
    # the later steps check what exists before they add it.
    metadata.create_all(conn, checkfirst=True)


def _migration_2(conn: Connection) -> None:
    # Version 2 adds rater_retirements (a store created at version 1 lacks it).
    rater_retirements.create(conn, checkfirst=True)


_V3_COLUMNS = {  # table → (column, DDL type and default) added by version 3
    "projects": [("target_spread", "FLOAT"), ("spread_measure", "VARCHAR(20) NOT NULL DEFAULT 'range'"),
                 ("max_raters", "INTEGER")],
    "items": [("extra_raters", "INTEGER NOT NULL DEFAULT 0")],
    "ratings": [("round_key", "VARCHAR(64)"), ("supersedes", "INTEGER")],
}


def _migration_3(conn: Connection) -> None:
    # Version 3: corrections, rater links, adjudication claims and extra raters. A store from
    # before it always showed the item title, so its projects keep showing it (prompt_title).
    upgraded = False
    for table, columns in _V3_COLUMNS.items():
        have = {c["name"] for c in inspect(conn).get_columns(table)}
        for name, ddl in columns:
            if name not in have:
                conn.execute(text(f"ALTER TABLE {table} ADD COLUMN {name} {ddl}"))  # fixed names only
                upgraded = True
    metadata.create_all(conn, checkfirst=True)
    if upgraded:  # the assignment index now carries extra_raters (index-only scans)
        conn.execute(text("DROP INDEX IF EXISTS ix_items_assign"))
    for index in [*ratings.indexes, *items.indexes]:  # create_all adds no index to a table that exists
        index.create(conn, checkfirst=True)
    if upgraded:
        for pid, fields in conn.execute(select(projects.c.project_id, projects.c.visible_fields)).all():
            shown = json.loads(fields or "[]")
            if "prompt_title" not in shown:
                conn.execute(update(projects).where(projects.c.project_id == pid)
                             .values(visible_fields=json.dumps(["prompt_title", *shown])))


_V4_PROJECT_COLUMNS = [  # (column, DDL type, default and check) added by version 4
    ("kind", "VARCHAR(20) NOT NULL DEFAULT 'rating' CONSTRAINT ck_projects_kind CHECK (kind IN ('rating', 'judgment_audit'))"),
    ("answer_fields", "TEXT NOT NULL DEFAULT '[]'"),
    ("kind_spec", "TEXT NOT NULL DEFAULT '{}'"),
]
_RATING_COLUMNS = ("rating_id", "item_id", "rater", "score", "notes", "created_at", "seconds_spent", "is_repeat",
                   "client_key", "round_key", "supersedes")  # every column of ratings before version 4


def _migration_4(conn: Connection) -> None:
    # Version 4: judgment audits. Projects get a kind, the fields an audit's raters answer and the
    # kind's plan; a rating carries either a score or answers ({field: value}), so ``score`` may be
    # null. SQLite cannot drop a NOT NULL: ratings is rebuilt (no table references it) and its rows
    # copied with their ids; PostgreSQL alters the column in place.
    have = {c["name"] for c in inspect(conn).get_columns("projects")}
    for name, ddl in _V4_PROJECT_COLUMNS:
        if name not in have:
            conn.execute(text(f"ALTER TABLE projects ADD COLUMN {name} {ddl}"))  # fixed names only
    if "answers" not in {c["name"] for c in inspect(conn).get_columns("ratings")}:
        if conn.dialect.name == "sqlite":
            _rebuild_sqlite_ratings(conn)
        else:
            conn.execute(text("ALTER TABLE ratings ALTER COLUMN score DROP NOT NULL"))
            conn.execute(text("ALTER TABLE ratings ADD COLUMN answers TEXT"))
            conn.execute(text("ALTER TABLE ratings ADD CONSTRAINT ck_ratings_answer "
                              "CHECK ((score IS NULL) <> (answers IS NULL))"))
    metadata.create_all(conn, checkfirst=True)  # field_consensus


def _rebuild_sqlite_ratings(conn: Connection) -> None:
    """ratings as version 4 defines it, with every row of the old table (ids kept), indexes recreated."""
    ddl = str(CreateTable(ratings).compile(conn)).replace("CREATE TABLE ratings", "CREATE TABLE ratings_v4", 1)
    conn.execute(text(ddl))
    columns = ", ".join(_RATING_COLUMNS)
    conn.execute(text(f"INSERT INTO ratings_v4 ({columns}) SELECT {columns} FROM ratings"))  # noqa: S608 - fixed names
    conn.execute(text("DROP TABLE ratings"))  # its indexes go with it
    conn.execute(text("ALTER TABLE ratings_v4 RENAME TO ratings"))
    for index in ratings.indexes:
        index.create(conn)


MIGRATIONS: dict[int, Callable[[Connection], None]] = {1: _migration_1, 2: _migration_2, 3: _migration_3,
                                                       4: _migration_4}

_STORES: dict[str, LabelStore] = {}
_STORES_LOCK = threading.Lock()


_ADVICE = (  # what an error of the database means for the user: the store is not damaged by the first three
    (("disk is full", "no space left"), "the disk is full: free some space and try again (the store is intact)"),
    (("readonly", "read-only", "permission denied", "access permission"),
     "the store or its folder is read-only: make it writable for this user (SQLite writes a journal beside "
     "it even to read; the store is intact)"),
    (("database is locked", "busy"), "another process holds it: try again when it has finished (the store is intact)"),
    (("unable to open database file",), "its folder is missing or not writable: check the path and permissions"),
)


def advice(reason: str, otherwise: str = "restore it from a backup or move it away to start a new one") -> str:
    """What to do about a label store that cannot be opened, from the database's own ``reason``.

    >>> advice("database or disk is full")
    'the disk is full: free some space and try again (the store is intact)'
    >>> advice("file is not a database")
    'restore it from a backup or move it away to start a new one'
    """
    low = reason.lower()
    for needles, hint in _ADVICE:
        if any(n in low for n in needles):
            return hint
    return otherwise


def open_store(workspace_root: str | Path | None = None, *, url: str | None = None,
               reading: bool = False) -> LabelStore:
    """The process-wide store of a workspace (or of an explicit URL), schema ensured.

    Args:
        workspace_root: the workspace folder; its URL comes from :func:`core.base.settings.labels_url`.
        url: an explicit SQLAlchemy URL (overrides the workspace).
        reading: the caller only reads: a SQLite store this user cannot write (a read-only file or
            folder) is opened read-only (:mod:`.readonly`) instead of refused.

    Raises:
        WorkbenchError: the store cannot be opened (why, and what to do), or it is read-only and
            the caller writes.
    """
    if url is None:
        if workspace_root is None:
            raise ValueError("open_store needs a workspace root or a URL")
        url = labels_url(Path(workspace_root).resolve())
    key = normalize_url(url)
    why = readonly.not_writable(key)
    if why and not reading:
        raise WorkbenchError(readonly.write_refused(make_url(key).database or key, why))
    with _STORES_LOCK:
        store = _STORES.get(f"{key}#ro" if why else key)
        if store is None:
            store = LabelStore(key, read_only=why)
            try:
                store.check_schema() if why else store.ensure_schema()
            except (DBAPIError, WorkbenchError) as exc:  # not a database (a corrupted or foreign file), locked
                store.dispose()
                if isinstance(exc, WorkbenchError):
                    raise
                reason = str(exc.orig).splitlines()[0] if exc.orig is not None else type(exc).__name__
                raise WorkbenchError(f"the label store {store!r} cannot be opened: {reason}; {advice(reason)}") from None
            _STORES[f"{key}#ro" if why else key] = store
        return store


def store_exists(workspace_root: str | Path) -> bool:
    """True when the workspace's label store exists (a SQLite file; a server URL always counts)."""
    parsed = make_url(normalize_url(labels_url(Path(workspace_root).resolve())))
    if parsed.get_backend_name() != "sqlite":
        return True
    database = parsed.database
    return bool(database) and database is not None and Path(database).exists()


def close_stores() -> None:
    """Dispose every cached store (tests, and before a workspace folder is deleted)."""
    with _STORES_LOCK:
        for store in _STORES.values():
            store.dispose()
        _STORES.clear()

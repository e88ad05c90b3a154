"""The label store: SQLAlchemy Core tables, engine set-up, transactions and schema upgrades.

The URL comes from :func:`core.settings.labels_url` (default: SQLite in the workspace,
``labels.sqlite``); a PostgreSQL URL (``postgresql+psycopg://…``) works unchanged.

SQLite runs in WAL mode with foreign keys on and a busy timeout; every write transaction starts
with ``BEGIN IMMEDIATE``, so writers are serialised from their first statement (no lost update,
no "database is locked" half-way through). On PostgreSQL every write that decides an assignment
first locks its project row (``SELECT … FOR UPDATE``), which serialises assignment per project
while reads never block. A killed process leaves either its whole transaction or none of it.

Schema creation is idempotent and versioned: ``schema_version`` holds one row per applied step;
:meth:`LabelStore.ensure_schema` applies the missing steps in order inside one write transaction.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import (
    Boolean,
    CheckConstraint,
    Column,
    Connection,
    DateTime,
    Engine,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    PrimaryKeyConstraint,
    String,
    Table,
    Text,
    UniqueConstraint,
    create_engine,
    event,
    func,
    inspect,
    select,
    text,
)
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError

from core.errors import WorkbenchError
from core.settings import labels_url

SCHEMA_VERSION = 2
ROLES = ("rater", "adjudicator", "admin")
RATER_KINDS = ("human", "model")
CONSENSUS_SOURCES = ("calculated", "adjudicated")

metadata = MetaData()

schema_version = Table(
    "schema_version", metadata,
    Column("version", Integer, primary_key=True, autoincrement=False),
    Column("applied_at", DateTime, nullable=False),
)

projects = Table(
    "projects", metadata,
    Column("project_id", Integer, primary_key=True),
    Column("name", String(64), nullable=False, unique=True),
    Column("guidelines", Text, nullable=False, default=""),
    Column("label_neg", String(200), nullable=False),
    Column("label_zero", String(200), nullable=False),
    Column("label_pos", String(200), nullable=False),
    Column("target_raters", Integer, nullable=False, default=3),
    Column("visible_fields", Text, nullable=False, default="[]"),  # JSON list of field names
    Column("reservation_seconds", Integer, nullable=False, default=300),
    Column("repeat_audits", Boolean, nullable=False, default=True),
    Column("created_at", DateTime, nullable=False),
    CheckConstraint("target_raters >= 1", name="ck_projects_target"),
    CheckConstraint("reservation_seconds >= 1", name="ck_projects_reservation"),
)

raters = Table(
    "raters", metadata,
    Column("code", String(200), primary_key=True),
    Column("role", String(20), nullable=False, default="rater"),
    Column("kind", String(10), nullable=False, default="human"),
    Column("display_name", String(200)),
    Column("created_at", DateTime, nullable=False),
    CheckConstraint("role IN ('rater', 'adjudicator', 'admin')", name="ck_raters_role"),
    CheckConstraint("kind IN ('human', 'model')", name="ck_raters_kind"),
)

# A retired code (a mistyped one, say) cannot sign in again; its ratings stay and are marked.
rater_retirements = Table(
    "rater_retirements", metadata,
    Column("code", String(200), ForeignKey("raters.code"), primary_key=True),
    Column("retired_at", DateTime, nullable=False),
    Column("retired_by", String(200), nullable=False),
    Column("reason", Text, nullable=False, default=""),
)

items = Table(
    "items", metadata,
    Column("item_id", Integer, primary_key=True),
    Column("project_id", Integer, ForeignKey("projects.project_id"), nullable=False),
    Column("dataset", String(200), nullable=False),
    Column("identifier", String(500), nullable=False),
    Column("run_id", String(200), nullable=False, default=""),
    Column("prompt_title", Text, nullable=False, default=""),
    Column("prompt_body", Text, nullable=False, default=""),
    Column("response_text", Text, nullable=False, default=""),
    Column("model_id", String(200)),
    Column("metadata", Text, nullable=False, default="{}"),  # JSON object
    Column("created_at", DateTime, nullable=False),
    # Maintained in the same transaction as every rating insert (checked by integrity_problems):
    Column("n_raters", Integer, nullable=False, default=0),  # distinct human raters
    Column("n_ratings", Integer, nullable=False, default=0),  # rows, repeats included
    UniqueConstraint("dataset", "identifier", "run_id", name="uq_items_key"),
    Index("ix_items_assign", "project_id", "n_raters", "created_at", "item_id"),
)

ratings = Table(
    "ratings", metadata,
    Column("rating_id", Integer, primary_key=True),
    Column("item_id", Integer, ForeignKey("items.item_id"), nullable=False),
    Column("rater", String(200), ForeignKey("raters.code"), nullable=False),
    Column("score", Float, nullable=False),
    Column("notes", Text),
    Column("created_at", DateTime, nullable=False),
    Column("seconds_spent", Float),
    Column("is_repeat", Boolean, nullable=False, default=False),
    Column("client_key", String(200), unique=True),  # idempotency key of one submission/import line
    CheckConstraint("score >= -1 AND score <= 1", name="ck_ratings_score"),
    CheckConstraint("seconds_spent IS NULL OR seconds_spent >= 0", name="ck_ratings_seconds"),
    Index("ix_ratings_item_rater", "item_id", "rater"),
    Index("ix_ratings_rater_item", "rater", "item_id"),
)

reservations = Table(
    "reservations", metadata,
    Column("project_id", Integer, ForeignKey("projects.project_id"), nullable=False),
    Column("rater", String(200), ForeignKey("raters.code"), nullable=False),
    Column("item_id", Integer, ForeignKey("items.item_id"), nullable=False),
    Column("token", String(64), nullable=False),
    Column("first_pass", Boolean, nullable=False),  # counts toward the item's target while active
    Column("reserved_at", DateTime, nullable=False),
    Column("expires_at", DateTime, nullable=False),
    PrimaryKeyConstraint("project_id", "rater", name="pk_reservations"),
    Index("ix_reservations_item", "item_id", "expires_at"),
)

skips = Table(
    "skips", metadata,
    Column("skip_id", Integer, primary_key=True),
    Column("item_id", Integer, ForeignKey("items.item_id"), nullable=False),
    Column("rater", String(200), ForeignKey("raters.code"), nullable=False),
    Column("created_at", DateTime, nullable=False),
    Index("ix_skips_rater_item", "rater", "item_id"),
)

consensus = Table(
    "consensus", metadata,
    Column("consensus_id", Integer, primary_key=True),
    Column("item_id", Integer, ForeignKey("items.item_id"), nullable=False),
    Column("value", Float, nullable=False),
    Column("source", String(20), nullable=False),
    Column("raw_scores", Text, nullable=False),  # JSON list, aligned with raters
    Column("raters", Text, nullable=False),  # JSON list of rater codes
    Column("note", Text),
    Column("adjudicator", String(200), ForeignKey("raters.code")),
    Column("created_at", DateTime, nullable=False),
    CheckConstraint("value >= -1 AND value <= 1", name="ck_consensus_value"),
    CheckConstraint("source IN ('calculated', 'adjudicated')", name="ck_consensus_source"),
    Index("ix_consensus_item", "item_id", "created_at"),
)


def utcnow() -> datetime:
    """The current UTC time as a naive datetime (how every timestamp is stored)."""
    return datetime.now(UTC).replace(tzinfo=None)


def normalize_url(url: str) -> str:
    """Make a plain ``postgresql://`` URL use psycopg 3 (the driver this project installs)."""
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix):]
    return url


def _sqlite_engine(url: str, busy_timeout_ms: int, synchronous: str) -> Engine:
    parsed = make_url(url)
    if parsed.database and parsed.database != ":memory:":
        Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(
        url, connect_args={"timeout": busy_timeout_ms / 1000, "check_same_thread": False},
        pool_size=10, max_overflow=30,
    )

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
    """

    def __init__(
        self,
        url: str,
        *,
        busy_timeout_ms: int = 30_000,
        synchronous: str = "FULL",
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self.url = normalize_url(url)
        self.clock = clock
        self.known_raters: set[str] = set()  # rater codes known to exist (they are never deleted)
        backend = make_url(self.url).get_backend_name()
        if backend == "sqlite":
            if synchronous.upper() not in ("OFF", "NORMAL", "FULL", "EXTRA"):
                raise ValueError(f"invalid synchronous mode {synchronous!r}")
            self.engine = _sqlite_engine(self.url, busy_timeout_ms, synchronous.upper())
            # Threads of one process queue here instead of in SQLite's sleep-and-retry busy handler,
            # which is unfair under load; other processes still wait through busy_timeout.
            self._write_lock: threading.RLock | contextlib.nullcontext = threading.RLock()
        elif backend == "postgresql":
            self.engine = create_engine(self.url, pool_pre_ping=True, pool_size=10, max_overflow=30)
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
        with self._write_lock, self.engine.connect() as conn:
            conn.execution_options(write=True)
            with conn.begin():
                yield conn

    def lock_project(self, conn: Connection, project_id: int) -> None:
        """Serialise assignment decisions of one project (no-op on SQLite: BEGIN IMMEDIATE did it)."""
        if self.dialect == "postgresql":
            conn.execute(select(projects.c.project_id).where(projects.c.project_id == project_id).with_for_update())

    # -- schema ------------------------------------------------------------------------------
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

    def dispose(self) -> None:
        """Close every pooled connection."""
        self.engine.dispose()


def _migration_1(conn: Connection) -> None:
    # Version 1 is the base schema. Later versions append ALTER steps here; this one stays frozen.
    metadata.create_all(conn, checkfirst=True)


def _migration_2(conn: Connection) -> None:
    # Version 2 adds rater_retirements (a store created at version 1 lacks it).
    rater_retirements.create(conn, checkfirst=True)


MIGRATIONS: dict[int, Callable[[Connection], None]] = {1: _migration_1, 2: _migration_2}

_STORES: dict[str, LabelStore] = {}
_STORES_LOCK = threading.Lock()


def open_store(workspace_root: str | Path | None = None, *, url: str | None = None) -> LabelStore:
    """The process-wide store of a workspace (or of an explicit URL), schema ensured.

    Args:
        workspace_root: the workspace folder; its URL comes from :func:`core.settings.labels_url`.
        url: an explicit SQLAlchemy URL (overrides the workspace).
    """
    if url is None:
        if workspace_root is None:
            raise ValueError("open_store needs a workspace root or a URL")
        url = labels_url(Path(workspace_root).resolve())
    key = normalize_url(url)
    with _STORES_LOCK:
        store = _STORES.get(key)
        if store is None:
            store = LabelStore(key)
            try:
                store.ensure_schema()
            except DBAPIError as exc:  # not a database (a corrupted or foreign file), unreadable, locked
                store.dispose()
                reason = str(exc.orig).splitlines()[0] if exc.orig is not None else type(exc).__name__
                raise WorkbenchError(f"the label store {store!r} cannot be opened: {reason}; restore it from a "
                                     "backup or move it away to start a new one") from None
            _STORES[key] = store
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


def integrity_problems(store: LabelStore) -> list[str]:
    """Consistency checks of a store (empty list = consistent).

    SQLite's own ``integrity_check`` and ``foreign_key_check``; every item's ``n_ratings`` and
    ``n_raters`` equal to what its ratings say; exactly one first-pass (non-repeat) rating per
    (item, rater); every score in [-1, 1].
    """
    problems: list[str] = []
    with store.read() as conn:
        if store.dialect == "sqlite":
            result = conn.exec_driver_sql("PRAGMA integrity_check").scalars().all()
            if result != ["ok"]:
                problems.append(f"sqlite integrity_check: {result[:5]}")
            fk = conn.exec_driver_sql("PRAGMA foreign_key_check").all()
            if fk:
                problems.append(f"{len(fk)} rows violate foreign keys, e.g. {fk[:3]}")
        n_ratings = select(func.count()).where(ratings.c.item_id == items.c.item_id).scalar_subquery()
        n_raters = (select(func.count(func.distinct(ratings.c.rater)))
                    .select_from(ratings.join(raters, raters.c.code == ratings.c.rater))
                    .where(ratings.c.item_id == items.c.item_id, raters.c.kind == "human").scalar_subquery())
        bad = conn.execute(select(items.c.item_id).where(
            (items.c.n_ratings != n_ratings) | (items.c.n_raters != n_raters))).scalars().all()
        if bad:
            problems.append(f"{len(bad)} items have wrong rating counters, e.g. {bad[:5]}")
        firsts = (select(ratings.c.item_id, ratings.c.rater)
                  .where(ratings.c.is_repeat.is_(False)).group_by(ratings.c.item_id, ratings.c.rater)
                  .having(func.count() != 1))
        dup = conn.execute(firsts).all()
        if dup:
            problems.append(f"{len(dup)} (item, rater) pairs have several first-pass ratings, e.g. {dup[:3]}")
        pairs = select(ratings.c.item_id, ratings.c.rater).group_by(ratings.c.item_id, ratings.c.rater).subquery()
        with_first = select(func.count()).select_from(pairs).where(
            ~select(ratings.c.rating_id).where(ratings.c.item_id == pairs.c.item_id, ratings.c.rater == pairs.c.rater,
                                               ratings.c.is_repeat.is_(False)).exists())
        missing = int(conn.execute(with_first).scalar() or 0)
        if missing:
            problems.append(f"{missing} (item, rater) pairs have only repeat ratings")
        out_of_range = conn.execute(select(func.count()).where((ratings.c.score < -1) | (ratings.c.score > 1))).scalar()
        if out_of_range:
            problems.append(f"{out_of_range} ratings lie outside [-1, 1]")
    return problems

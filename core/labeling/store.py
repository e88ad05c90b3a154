"""The label store: SQLAlchemy Core tables, engine set-up, transactions, schema upgrades and every statement.

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
from typing import Any

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
    bindparam,
    case,
    create_engine,
    delete,
    event,
    exists,
    func,
    inspect,
    select,
    text,
    tuple_,
    update,
)
from sqlalchemy.dialects import sqlite
from sqlalchemy.engine import Row, make_url
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


# -- statements ---------------------------------------------------------------------------------
# Every SQL statement of the labeling package lives below, behind a named function; the other
# modules (assignment, consensus, export, identity, items, reports) decide, these read and write.
# A function taking ``conn`` runs inside the caller's transaction; one taking ``store`` opens its own.

_P = bindparam
_IN_CHUNK = 500  # keys per IN (...) list


def _insert_ignore(store: LabelStore, table: Table) -> Any:
    """An INSERT that the caller turns into ON CONFLICT DO NOTHING (both dialects have it)."""
    if store.dialect == "postgresql":
        # deferred: the PostgreSQL dialect (~25 ms of imports) only for a PostgreSQL store; Home opens
        # the default SQLite one in the first page's run
        from sqlalchemy.dialects import postgresql

        return postgresql.insert(table)
    return sqlite.insert(table)


# projects
def project_row(conn: Connection, name: str) -> Row | None:
    """The ``projects`` row called ``name``, or None."""
    return conn.execute(select(projects).where(projects.c.name == name)).first()


def project_names(conn: Connection) -> list[str]:
    """Every project name."""
    return list(conn.execute(select(projects.c.name)).scalars().all())


def project_rows(store: LabelStore) -> list[Row]:
    """Every ``projects`` row, oldest first."""
    with store.read() as conn:
        return list(conn.execute(select(projects).order_by(projects.c.created_at, projects.c.project_id)).all())


def insert_project(conn: Connection, values: dict[str, Any]) -> None:
    """Insert one project."""
    conn.execute(projects.insert().values(**values))


def update_project_row(store: LabelStore, project_id: int, values: dict[str, Any]) -> None:
    """Change settings of one project."""
    with store.write() as conn:
        conn.execute(update(projects).where(projects.c.project_id == project_id).values(**values))


# items
def count_items(conn: Connection, project_id: int | None = None) -> int:
    """Items in the store (or in one project)."""
    stmt = select(func.count()).select_from(items)
    if project_id is not None:
        stmt = stmt.where(items.c.project_id == project_id)
    return int(conn.execute(stmt).scalar() or 0)


def insert_items_ignoring_existing(conn: Connection, store: LabelStore, rows: list[dict[str, Any]]) -> None:
    """Insert item rows; a row whose (dataset, identifier, run_id) exists already is skipped."""
    stmt = _insert_ignore(store, items).on_conflict_do_nothing(index_elements=["dataset", "identifier", "run_id"])
    conn.execute(stmt, rows)


def insert_item(conn: Connection, values: dict[str, Any]) -> int:
    """Insert one item; returns its id."""
    result = conn.execute(items.insert().values(**values))
    return int(result.inserted_primary_key[0])  # type: ignore[index]


def item_row(conn: Connection, item_id: int) -> Row | None:
    """The ``items`` row of ``item_id``, or None."""
    return conn.execute(_ITEM, {"iid": item_id}).first()


def item_ids_by_key(conn: Connection, keys: set[tuple[str, str, str]]) -> dict[tuple[str, str, str], tuple[int, int]]:
    """(dataset, identifier, run_id) → (item id, project id) of the keys that exist."""
    found: dict[tuple[str, str, str], tuple[int, int]] = {}
    key_list = sorted(keys)
    for start in range(0, len(key_list), _IN_CHUNK):
        chunk = key_list[start:start + _IN_CHUNK]
        stmt = select(items.c.dataset, items.c.identifier, items.c.run_id, items.c.item_id, items.c.project_id).where(
            tuple_(items.c.dataset, items.c.identifier, items.c.run_id).in_(chunk))
        found.update({(d, i, r): (item_id, pid) for d, i, r, item_id, pid in conn.execute(stmt)})
    return found


def recount_items(conn: Connection, item_ids: list[int]) -> None:
    """Recompute ``n_raters`` (distinct human raters) and ``n_ratings`` of items from their ratings."""
    for start in range(0, len(item_ids), _IN_CHUNK):
        chunk = item_ids[start:start + _IN_CHUNK]
        n_ratings = select(func.count()).where(ratings.c.item_id == items.c.item_id).scalar_subquery()
        n_raters = (select(func.count(func.distinct(ratings.c.rater)))
                    .select_from(ratings.join(raters, raters.c.code == ratings.c.rater))
                    .where(ratings.c.item_id == items.c.item_id, raters.c.kind == "human").scalar_subquery())
        conn.execute(update(items).where(items.c.item_id.in_(chunk)).values(n_ratings=n_ratings, n_raters=n_raters))


def item_rows(store: LabelStore, project_id: int, columns: list[str], item_ids: list[int] | None = None) -> list[tuple]:
    """``columns`` of the project's items (all, or those in ``item_ids``), oldest first."""
    stmt = select(*(items.c[name] for name in columns)).where(items.c.project_id == project_id)
    if item_ids is not None:
        stmt = stmt.where(items.c.item_id.in_(item_ids))
    with store.read() as conn:
        return [tuple(r) for r in conn.execute(stmt.order_by(items.c.created_at, items.c.item_id)).all()]


def items_by_rater_count(store: LabelStore, project_id: int) -> dict[int, int]:
    """Number of (human) raters → number of the project's items with that many."""
    stmt = select(items.c.n_raters, func.count()).where(items.c.project_id == project_id).group_by(items.c.n_raters)
    with store.read() as conn:
        return {int(k): int(v) for k, v in conn.execute(stmt).all()}


# raters
def rater_exists(conn: Connection, code: str) -> bool:
    """Whether ``code`` is a stored rater."""
    return conn.execute(select(raters.c.code).where(raters.c.code == code)).first() is not None


def insert_rater_if_new(conn: Connection, store: LabelStore, code: str, *, role: str, kind: str) -> None:
    """Insert a rater unless the code exists (a concurrent insert of the same code is not an error)."""
    stmt = _insert_ignore(store, raters).values(code=code, role=role, kind=kind, created_at=store.clock())
    conn.execute(stmt.on_conflict_do_nothing(index_elements=["code"]))


def rater_role(store: LabelStore, code: str) -> str | None:
    """The stored role of ``code`` (None for an unknown code)."""
    with store.read() as conn:
        return conn.execute(select(raters.c.role).where(raters.c.code == code)).scalar()


def update_rater_role(conn: Connection, code: str, role: str) -> None:
    """Set the role of an existing rater."""
    conn.execute(update(raters).where(raters.c.code == code).values(role=role))


def retire_code(store: LabelStore, code: str, *, by: str, reason: str) -> bool:
    """Record the retirement of ``code`` (once; a second call changes nothing). False: no such rater."""
    with store.write() as conn:
        if not rater_exists(conn, code):
            return False
        if conn.execute(select(rater_retirements.c.code).where(rater_retirements.c.code == code)).scalar() is None:
            conn.execute(rater_retirements.insert().values(code=code, retired_at=store.clock(), retired_by=by,
                                                           reason=reason))
        return True


def retired_rater_codes(store: LabelStore) -> set[str]:
    """Codes an admin retired."""
    with store.read() as conn:
        return {r for (r,) in conn.execute(select(rater_retirements.c.code))}


def rater_rows(store: LabelStore) -> list[tuple]:
    """Every rater: code, role, kind, created_at, n_ratings (all projects), retired_at, retired_by."""
    n = func.count(ratings.c.rating_id)
    stmt = (
        select(raters.c.code, raters.c.role, raters.c.kind, raters.c.created_at, n.label("n_ratings"),
               rater_retirements.c.retired_at, rater_retirements.c.retired_by)
        .select_from(raters.outerjoin(ratings, ratings.c.rater == raters.c.code)
                     .outerjoin(rater_retirements, rater_retirements.c.code == raters.c.code))
        .group_by(raters.c.code, raters.c.role, raters.c.kind, raters.c.created_at,
                  rater_retirements.c.retired_at, rater_retirements.c.retired_by)
        .order_by(raters.c.code)
    )
    with store.read() as conn:
        return [tuple(r) for r in conn.execute(stmt).all()]


# ratings
def rating_rows(store: LabelStore, project_id: int, *, include_models: bool) -> list[tuple]:
    """The project's ratings (rating_id, item_id, rater, kind, score, notes, created_at, seconds_spent,
    is_repeat), oldest first; model raters only with ``include_models``."""
    stmt = (
        select(ratings.c.rating_id, ratings.c.item_id, ratings.c.rater, raters.c.kind, ratings.c.score,
               ratings.c.notes, ratings.c.created_at, ratings.c.seconds_spent, ratings.c.is_repeat)
        .select_from(ratings.join(items, items.c.item_id == ratings.c.item_id)
                     .join(raters, raters.c.code == ratings.c.rater))
        .where(items.c.project_id == project_id)
        .order_by(ratings.c.created_at, ratings.c.rating_id)
    )
    if not include_models:
        stmt = stmt.where(raters.c.kind == "human")
    with store.read() as conn:
        return [tuple(r) for r in conn.execute(stmt).all()]


def rater_progress_rows(store: LabelStore, project_id: int) -> list[tuple]:
    """Per rater of the project: rater, role, kind, n_ratings, n_items, n_repeats, mean_seconds, last_rating_at."""
    stmt = (
        select(ratings.c.rater, raters.c.role, raters.c.kind, func.count().label("n_ratings"),
               func.count(func.distinct(ratings.c.item_id)).label("n_items"),
               func.sum(case((ratings.c.is_repeat.is_(True), 1), else_=0)).label("n_repeats"),
               func.avg(ratings.c.seconds_spent).label("mean_seconds"),
               func.max(ratings.c.created_at).label("last_rating_at"))
        .select_from(ratings.join(items, items.c.item_id == ratings.c.item_id)
                     .join(raters, raters.c.code == ratings.c.rater))
        .where(items.c.project_id == project_id)
        .group_by(ratings.c.rater, raters.c.role, raters.c.kind)
        .order_by(func.count().desc(), ratings.c.rater)
    )
    with store.read() as conn:
        return [tuple(r) for r in conn.execute(stmt).all()]


def rating_keys(conn: Connection, item_ids: list[int]) -> set[tuple[int, str, datetime]]:
    """(item_id, rater, created_at) of every rating of ``item_ids``."""
    out: set[tuple[int, str, datetime]] = set()
    for start in range(0, len(item_ids), _IN_CHUNK):
        stmt = select(ratings.c.item_id, ratings.c.rater, ratings.c.created_at).where(
            ratings.c.item_id.in_(item_ids[start:start + _IN_CHUNK]))
        out.update((i, r, c) for i, r, c in conn.execute(stmt))
    return out


def insert_ratings(conn: Connection, rows: list[dict[str, Any]]) -> None:
    """Insert rating rows (the caller recounts the items: :func:`recount_items`)."""
    conn.execute(ratings.insert(), rows)


def insert_rating(conn: Connection, row: dict[str, Any], *, counts_toward_target: bool) -> int:
    """Insert one rating and bump its item's counters in the same transaction; returns the rating id."""
    result = conn.execute(ratings.insert(), row)
    conn.execute(_COUNT_RATING, {"iid": row["item_id"], "inc": 1 if counts_toward_target else 0})
    return int(result.inserted_primary_key[0])  # type: ignore[index]


def rater_counts(store: LabelStore, project_id: int, rater: str) -> tuple[list[tuple[int, int]], tuple[int, int, int]]:
    """(n_raters → items) of the project, and the rater's (distinct items, ratings, repeats) in it."""
    in_project = items.c.project_id == project_id
    with store.read() as conn:
        levels = conn.execute(select(items.c.n_raters, func.count()).where(in_project).group_by(items.c.n_raters)).all()
        mine = conn.execute(
            select(func.count(func.distinct(ratings.c.item_id)), func.count(),
                   func.coalesce(func.sum(case((ratings.c.is_repeat.is_(True), 1), else_=0)), 0))
            .select_from(ratings.join(items, items.c.item_id == ratings.c.item_id))
            .where(in_project, ratings.c.rater == rater)
        ).one()
    return [(int(k), int(n)) for k, n in levels], (int(mine[0]), int(mine[1]), int(mine[2]))


# assignment: statements are built once (bind parameters), which keeps a submit at a few
# milliseconds. The first pass walks one level of "raters so far" at a time (target-1 down to 0),
# each level in the (project_id, n_raters, created_at, item_id) index order, so the first fitting
# item ends the scan instead of every open item being ranked. Items the rater skipped come last.
_RATED_BY_ME = exists().where(ratings.c.item_id == items.c.item_id, ratings.c.rater == _P("rater"))
_SKIPPED_BY_ME = case((exists().where(skips.c.item_id == items.c.item_id, skips.c.rater == _P("rater")), 1), else_=0)
_OTHERS_CLAIMS = (
    select(func.count()).select_from(reservations)
    .where(reservations.c.item_id == items.c.item_id, reservations.c.rater != _P("rater"),
           reservations.c.expires_at > _P("now"), reservations.c.first_pass.is_(True))
    .scalar_subquery()
)
_SKIPPED_IDS = select(skips.c.item_id).where(skips.c.rater == _P("rater"))
_FIRST_PASS_LEVEL = (
    select(items.c.item_id)
    .where(items.c.project_id == _P("project_id"), items.c.n_raters == _P("level"), ~_RATED_BY_ME,
           _OTHERS_CLAIMS < _P("room"), items.c.item_id.not_in(_SKIPPED_IDS))
    .order_by(items.c.created_at, items.c.item_id)
    .limit(1)
)
_FIRST_PASS_SKIPPED = (
    select(items.c.item_id)
    .where(items.c.project_id == _P("project_id"), items.c.n_raters < _P("target"), ~_RATED_BY_ME,
           items.c.n_raters + _OTHERS_CLAIMS < _P("target"), items.c.item_id.in_(_SKIPPED_IDS))
    .order_by(items.c.n_raters.desc(), items.c.created_at, items.c.item_id)
    .limit(1)
)
_MINE = (
    select(ratings.c.item_id, func.count().label("n_mine"), func.max(ratings.c.created_at).label("last"))
    .where(ratings.c.rater == _P("rater")).group_by(ratings.c.item_id).subquery()
)
_MY_LATEST = select(func.max(ratings.c.created_at)).where(ratings.c.rater == _P("rater")).scalar_subquery()
_REPEAT = (
    select(items.c.item_id)
    .join(_MINE, _MINE.c.item_id == items.c.item_id)
    .where(items.c.project_id == _P("project_id"))
    .order_by(case((_MINE.c.last == _MY_LATEST, 1), else_=0), _SKIPPED_BY_ME, _MINE.c.n_mine,
              items.c.n_ratings, items.c.created_at, items.c.item_id)
    .limit(1)
)
_MY_RESERVATION = (reservations.c.project_id == _P("project_id")) & (reservations.c.rater == _P("rater"))
_HELD_ACTIVE = select(reservations).where(_MY_RESERVATION, reservations.c.expires_at > _P("now"))
_RELEASE = delete(reservations).where(_MY_RESERVATION)
_ITEM = select(items).where(items.c.item_id == _P("iid"))
_ITEM_PROJECT = select(items.c.project_id).where(items.c.item_id == _P("iid"))
_BY_TOKEN = select(ratings.c.rating_id).where(ratings.c.client_key == _P("token"))
_RATED_BEFORE = select(exists().where(ratings.c.item_id == _P("iid"), ratings.c.rater == _P("rater")))
_HELD_FIELD = select(reservations.c.item_id).where(_MY_RESERVATION).scalar_subquery()
_HELD_SINCE = select(reservations.c.reserved_at).where(_MY_RESERVATION).scalar_subquery()
_HELD_UNTIL = select(reservations.c.expires_at).where(_MY_RESERVATION).scalar_subquery()
_ITEM_RATERS = select(items.c.n_raters).where(items.c.item_id == _P("iid")).scalar_subquery()
_CLAIMS_ON_ITEM = (
    select(func.count()).select_from(reservations)
    .where(reservations.c.item_id == _P("iid"), reservations.c.rater != _P("rater"),
           reservations.c.expires_at > _P("now"), reservations.c.first_pass.is_(True))
    .scalar_subquery()
)
# Everything a submission needs to know, in one round trip.
_SUBMIT_CONTEXT = select(
    _BY_TOKEN.scalar_subquery().label("done"), _ITEM_PROJECT.scalar_subquery().label("project_id"),
    _RATED_BEFORE.scalar_subquery().label("rated_before"), _HELD_FIELD.label("held_item"),
    _HELD_SINCE.label("held_since"), _HELD_UNTIL.label("held_until"), _ITEM_RATERS.label("n_raters"),
    _CLAIMS_ON_ITEM.label("claims"),
)
_COUNT_RATING = update(items).where(items.c.item_id == _P("iid")).values(
    n_ratings=items.c.n_ratings + 1, n_raters=items.c.n_raters + _P("inc"))


def first_pass_item(conn: Connection, project_id: int, rater: str, now: datetime, *, target: int) -> int | None:
    """The rater's next first-pass item: most raters so far first (2 → 3, then 1 → 2, then 0 → 1),
    oldest first, counting other raters' active first-pass reservations; skipped items last."""
    who = {"project_id": project_id, "rater": rater, "now": now}
    for level in range(target - 1, -1, -1):
        found = conn.execute(_FIRST_PASS_LEVEL, {**who, "level": level, "room": target - level}).scalar()
        if found is not None:
            return int(found)
    found = conn.execute(_FIRST_PASS_SKIPPED, {**who, "target": target}).scalar()
    return None if found is None else int(found)


def repeat_item(conn: Connection, project_id: int, rater: str) -> int | None:
    """The item for a repeat audit: rated least by the rater, then fewest ratings, then oldest; the
    item they rated last goes to the back."""
    found = conn.execute(_REPEAT, {"project_id": project_id, "rater": rater}).scalar()
    return None if found is None else int(found)


def active_reservation(conn: Connection, project_id: int, rater: str, now: datetime) -> Row | None:
    """The rater's reservation in the project if it has not expired."""
    return conn.execute(_HELD_ACTIVE, {"project_id": project_id, "rater": rater, "now": now}).first()


def release_reservation(conn: Connection, project_id: int, rater: str) -> None:
    """Drop the rater's reservation in the project (expired or not)."""
    conn.execute(_RELEASE, {"project_id": project_id, "rater": rater})


def insert_reservation(conn: Connection, values: dict[str, Any]) -> None:
    """Reserve an item for a rater (``project_id, rater, item_id, token, first_pass, reserved_at, expires_at``)."""
    conn.execute(reservations.insert(), values)


def submit_context(conn: Connection, project_id: int, rater: str, item_id: int, token: str | None,
                   now: datetime) -> Row:
    """What a submission needs, in one round trip: ``done`` (rating id of this token), ``project_id``
    of the item, ``rated_before``, the rater's ``held_item``/``held_since``/``held_until``, the item's
    ``n_raters`` and other raters' active first-pass ``claims`` on it."""
    return conn.execute(_SUBMIT_CONTEXT, {"project_id": project_id, "rater": rater, "token": token, "iid": item_id,
                                          "now": now}).one()


def insert_skip(conn: Connection, item_id: int, rater: str, now: datetime) -> None:
    """Record that the rater skipped the item."""
    conn.execute(skips.insert().values(item_id=item_id, rater=rater, created_at=now))


# consensus
def adjudication_rows(store: LabelStore, project_id: int) -> list[tuple]:
    """Adjudicated consensus records of the project: item_id, value, note, adjudicator, created_at, consensus_id."""
    stmt = (
        select(consensus.c.item_id, consensus.c.value, consensus.c.note, consensus.c.adjudicator,
               consensus.c.created_at, consensus.c.consensus_id)
        .join(items, items.c.item_id == consensus.c.item_id)
        .where(items.c.project_id == project_id, consensus.c.source == "adjudicated")
    )
    with store.read() as conn:
        return [tuple(r) for r in conn.execute(stmt).all()]


def calculated_consensus_rows(store: LabelStore, project_id: int) -> list[Row]:
    """Calculated consensus records of the project (item_id, value, raw_scores, raters, …), oldest first."""
    stmt = (select(consensus.c.item_id, consensus.c.value, consensus.c.raw_scores, consensus.c.raters,
                   consensus.c.created_at, consensus.c.consensus_id)
            .join(items, items.c.item_id == consensus.c.item_id)
            .where(items.c.project_id == project_id, consensus.c.source == "calculated")
            .order_by(consensus.c.created_at, consensus.c.consensus_id))
    with store.read() as conn:
        return list(conn.execute(stmt).all())


def insert_consensus(store: LabelStore, row: dict[str, Any]) -> int:
    """Insert one consensus record; returns its id."""
    with store.write() as conn:
        result = conn.execute(consensus.insert().values(**row))
        return int(result.inserted_primary_key[0])  # type: ignore[index]


def insert_consensus_rows(store: LabelStore, rows: list[dict[str, Any]]) -> None:
    """Insert consensus records in one transaction."""
    with store.write() as conn:
        conn.execute(consensus.insert(), rows)

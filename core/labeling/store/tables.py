"""The label store's tables (SQLAlchemy Core), one ``MetaData`` for SQLite and PostgreSQL alike."""

from __future__ import annotations

from sqlalchemy import (
    Boolean,
    CheckConstraint,
    Column,
    DateTime,
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
)

SCHEMA_VERSION = 4
ROLES = ("rater", "adjudicator", "admin")
RATER_KINDS = ("human", "model")
CONSENSUS_SOURCES = ("calculated", "adjudicated")
PROJECT_KINDS = ("rating", "judgment_audit")  # a slider score per item; categorical field answers per item
SPREAD_MEASURES = ("range", "ci_width")  # max − min of the item's scores; width of its mean's 95 % interval

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
    Column("visible_fields", Text, nullable=False, default="[]"),  # JSON list of field names (prompt_title too)
    Column("reservation_seconds", Integer, nullable=False, default=300),
    Column("repeat_audits", Boolean, nullable=False, default=True),
    Column("created_at", DateTime, nullable=False),
    # version 3: raters where they count (an item whose raters disagree beyond the spread gets one more)
    Column("target_spread", Float),  # None: never route an extra rater
    Column("spread_measure", String(20), nullable=False, default="range", server_default="range"),
    Column("max_raters", Integer),  # the cap of raters per item with extra ones (None: target + 2)
    # version 4: a judgment audit's raters answer categorical fields instead of moving a slider
    Column("kind", String(20), nullable=False, default="rating", server_default="rating"),
    Column("answer_fields", Text, nullable=False, default="[]", server_default="[]"),  # JSON [{name, description, values: [[value, meaning]]}]
    Column("kind_spec", Text, nullable=False, default="{}", server_default="{}"),  # JSON: what the kind needs (an audit's plan)
    CheckConstraint("target_raters >= 1", name="ck_projects_target"),
    CheckConstraint("reservation_seconds >= 1", name="ck_projects_reservation"),
    CheckConstraint("kind IN ('rating', 'judgment_audit')", name="ck_projects_kind"),
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

# version 3: a rater's personal sign-in link (team mode). Only the SHA-256 of the token is kept.
rater_links = Table(
    "rater_links", metadata,
    Column("token_hash", String(64), primary_key=True),
    Column("code", String(200), ForeignKey("raters.code"), nullable=False),
    Column("created_at", DateTime, nullable=False),
    Column("created_by", String(200), nullable=False),
    Column("revoked_at", DateTime),
    Index("ix_rater_links_code", "code"),
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
    Column("n_ratings", Integer, nullable=False, default=0),  # rows, repeats and corrections included
    # version 3: raters added beyond the project's target because the raters disagreed (item_routing says why)
    Column("extra_raters", Integer, nullable=False, default=0, server_default="0"),
    UniqueConstraint("dataset", "identifier", "run_id", name="uq_items_key"),
    # extra_raters last: the assignment scan and the progress counts read the index only
    Index("ix_items_assign", "project_id", "n_raters", "created_at", "item_id", "extra_raters"),
    Index("ix_items_extra", "project_id", "extra_raters"),  # the few items with extra raters, found at once
)

ratings = Table(
    "ratings", metadata,
    Column("rating_id", Integer, primary_key=True),
    Column("item_id", Integer, ForeignKey("items.item_id"), nullable=False),
    Column("rater", String(200), ForeignKey("raters.code"), nullable=False),
    Column("score", Float),  # version 4: null for an answer of a judgment audit (answers instead)
    Column("notes", Text),
    Column("created_at", DateTime, nullable=False),
    Column("seconds_spent", Float),
    Column("is_repeat", Boolean, nullable=False, default=False),
    Column("client_key", String(200), unique=True),  # idempotency key of one import line
    # version 3: the reservation (round) the rating answered, and the rating it corrects (which stays, out of force)
    Column("round_key", String(64)),
    Column("supersedes", Integer),
    # version 4: a judgment audit's answer, JSON {field: value} (exactly one of score and answers is set)
    Column("answers", Text),
    CheckConstraint("score >= -1 AND score <= 1", name="ck_ratings_score"),
    CheckConstraint("(score IS NULL) <> (answers IS NULL)", name="ck_ratings_answer"),
    CheckConstraint("seconds_spent IS NULL OR seconds_spent >= 0", name="ck_ratings_seconds"),
    Index("ix_ratings_item_rater", "item_id", "rater"),
    Index("ix_ratings_rater_item", "rater", "item_id"),
    Index("ix_ratings_supersedes", "supersedes"),
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

# version 3: an item of the disagreement queue held by one adjudicator (one claim per adjudicator and project)
adjudication_claims = Table(
    "adjudication_claims", metadata,
    Column("project_id", Integer, ForeignKey("projects.project_id"), nullable=False),
    Column("adjudicator", String(200), ForeignKey("raters.code"), nullable=False),
    Column("item_id", Integer, ForeignKey("items.item_id"), nullable=False),
    Column("claimed_at", DateTime, nullable=False),
    Column("expires_at", DateTime, nullable=False),
    PrimaryKeyConstraint("project_id", "adjudicator", name="pk_adjudication_claims"),
    Index("ix_adjudication_claims_item", "item_id", "expires_at"),
)

# version 3: why an item got a rater beyond the project's target (one row per extra rater granted)
item_routing = Table(
    "item_routing", metadata,
    Column("routing_id", Integer, primary_key=True),
    Column("item_id", Integer, ForeignKey("items.item_id"), nullable=False),
    Column("created_at", DateTime, nullable=False),
    Column("n_raters", Integer, nullable=False),  # raters when it was decided
    Column("measure", String(20), nullable=False),
    Column("value", Float, nullable=False),  # the spread or interval width measured
    Column("threshold", Float, nullable=False),  # the project's target spread then
    Column("new_target", Integer, nullable=False),  # raters the item now needs
    Index("ix_item_routing_item", "item_id"),
)

# version 4: an adjudicated value of one field of a judgment-audit item (the field's raters tied)
field_consensus = Table(
    "field_consensus", metadata,
    Column("field_consensus_id", Integer, primary_key=True),
    Column("item_id", Integer, ForeignKey("items.item_id"), nullable=False),
    Column("field", String(200), nullable=False),
    Column("value", String(200), nullable=False),
    Column("raw_answers", Text, nullable=False),  # JSON list of the raters' values, aligned with raters
    Column("raters", Text, nullable=False),  # JSON list of rater codes
    Column("note", Text, nullable=False),
    Column("adjudicator", String(200), ForeignKey("raters.code"), nullable=False),
    Column("created_at", DateTime, nullable=False),
    Index("ix_field_consensus_item", "item_id", "field", "created_at"),
)

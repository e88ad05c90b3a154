"""The label store: one SQLite file or PostgreSQL database behind SQLAlchemy Core.

The public face is small: :class:`LabelStore` (transactions), :func:`open_store`,
:func:`store_exists`, :func:`close_stores`, :func:`integrity_problems` and the tables (read them
only through the statement modules). Every SQL statement of the labeling package, and of the
pages that show labels, lives in this package, behind named functions:

- :mod:`~core.labeling.store.tables`: the tables and their constants;
- :mod:`~core.labeling.store.engine`: engines, transactions, isolation, schema upgrades;
- :mod:`~core.labeling.store.catalog`: projects, items, raters, retired codes, rater links;
- :mod:`~core.labeling.store.rating_sql`: ratings, corrections and counters;
- :mod:`~core.labeling.store.assign_sql`: assignment, reservations, skips, extra raters;
- :mod:`~core.labeling.store.review_sql`: consensus records and adjudication claims;
- :mod:`~core.labeling.store.answer_sql`: a judgment audit's adjudicated field values;
- :mod:`~core.labeling.store.checks`: consistency checks.
"""

from core.labeling.store.checks import integrity_problems
from core.labeling.store.engine import (
    LabelStore,
    close_stores,
    normalize_url,
    open_store,
    store_exists,
    utcnow,
)
from core.labeling.store.tables import (
    CONSENSUS_SOURCES,
    PROJECT_KINDS,
    RATER_KINDS,
    ROLES,
    SCHEMA_VERSION,
    SPREAD_MEASURES,
    consensus,
    field_consensus,
    items,
    projects,
    raters,
    ratings,
    schema_version,
    skips,
)

__all__ = [
    "CONSENSUS_SOURCES", "PROJECT_KINDS", "RATER_KINDS", "ROLES", "SCHEMA_VERSION", "SPREAD_MEASURES", "LabelStore", "close_stores",
    "consensus", "field_consensus", "integrity_problems", "items", "normalize_url", "open_store", "projects", "raters", "ratings",
    "schema_version", "skips", "store_exists", "utcnow",
]

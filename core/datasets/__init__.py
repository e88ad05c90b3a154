"""Datasets (SPEC §1): import SCALE or flat Yelp sources, store normalised tables, lock and verify.

```
write_dataset(ws, name, restaurants, reviews, *, sources, layout, replace=False) -> dict
verify_dataset(ws, name) -> dict          re-hash tables and sources; LockError when changed
require_verified(ws, name) -> dict        the lock, tables checked (cached per file state)
list_datasets(ws) -> list[dict]           name, layout, counts, created_at, verified
dataset_info(ws, name) -> dict            lock + path, verified, date range
scan_restaurants(ws, name) / scan_reviews(ws, name) -> pl.LazyFrame (verified first)
```
Imports are :func:`core.datasets.importer.import_dataset` (not re-exported here: readers of a
dataset do not load the importer and the libraries it needs). The tables are also the DuckDB views ``restaurants`` and ``reviews`` of :mod:`core.datasets.db`. Imports
stream (:mod:`core.datasets.staging`): memory does not grow with the source file. Every write
computes the reviews' ``text_hash`` (sha256 of the text, first 16 hex characters; SPEC §2.2).
"""

from core.datasets.lock import LOCK_NAME, TABLES, read_lock, require_verified, verify_dataset
from core.datasets.schema import RESTAURANT_SCHEMA, REVIEW_SCHEMA
from core.datasets.store import (
    dataset_info,
    list_datasets,
    scan_restaurants,
    scan_reviews,
    write_dataset,
)

__all__ = [
    "LOCK_NAME",
    "RESTAURANT_SCHEMA",
    "REVIEW_SCHEMA",
    "TABLES",
    "dataset_info",
    "list_datasets",
    "read_lock",
    "require_verified",
    "scan_restaurants",
    "scan_reviews",
    "verify_dataset",
    "write_dataset",
]

"""The one clock of the workbench: every record's time stamp comes from here (UTC).

```
now_iso() -> str        "2026-11-27T22:10:09+00:00": the created_at / started_at of new records
utcnow() -> datetime    naive UTC (the label store's columns), to pass as a replaceable clock
```
"""

from __future__ import annotations

from datetime import UTC, datetime


def now_iso() -> str:
    """The current UTC time as an ISO-8601 string to the second, with its offset."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def utcnow() -> datetime:
    """The current UTC time as a naive datetime (what SQL stores compare)."""
    return datetime.now(UTC).replace(tzinfo=None)

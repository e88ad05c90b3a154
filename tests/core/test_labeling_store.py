"""The label store on SQLite and on PostgreSQL: schema, constraints, assignment under concurrency
(threads and processes), and a process killed in the middle of writing.

PostgreSQL runs as a throwaway server started inside the test session (``initdb`` as the
``postgres`` user in a temporary folder, listening on 127.0.0.1 and a socket in /tmp, a random
port); the tests skip where PostgreSQL is not installed (CI turns that skip into a failure).
"""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path

import pytest
from sqlalchemy import func, select, text
from sqlalchemy.exc import IntegrityError

from core.base.errors import WorkbenchError
from core.labeling import assignment
from core.labeling.store import (
    SCHEMA_VERSION,
    LabelStore,
    integrity_problems,
    ratings,
    schema_version,
)
from core.labeling.store import (
    items as items_table,
)
from tests.helpers.label_store import (  # noqa: F401 - fixtures among them
    N_ITEMS,
    N_RATERS,
    N_SUBMITS,
    TARGET,
    _new_postgres_db,
    _project_with_items,
    postgres_server,
    store,
    store_url,
)

ROOT = Path(__file__).resolve().parents[2]


# -- schema ------------------------------------------------------------------------------------
def test_schema_is_created_once_and_versioned(store):
    assert store.schema_version() == SCHEMA_VERSION
    assert store.ensure_schema() == SCHEMA_VERSION  # idempotent
    with store.read() as conn:
        assert conn.execute(select(func.count()).select_from(schema_version)).scalar() == SCHEMA_VERSION


def test_upgrade_reapplies_missing_steps_without_touching_data(store):
    project = _project_with_items(store, 5)
    assignment.submit(store, project, "ana", 1, 0.5)
    with store.write() as conn:  # an older store: its version rows are missing
        conn.execute(schema_version.delete())
    assert store.ensure_schema() == SCHEMA_VERSION
    with store.read() as conn:
        assert conn.execute(select(func.count()).select_from(ratings)).scalar() == 1


def test_a_newer_store_is_refused(store):
    with store.write() as conn:
        conn.execute(schema_version.insert().values(version=SCHEMA_VERSION + 1, applied_at=store.clock()))
    with pytest.raises(WorkbenchError, match="newer than this workbench"):
        store.ensure_schema()


def test_database_constraints_hold_without_the_python_checks(store):
    project = _project_with_items(store, 1)
    assignment.submit(store, project, "ana", 1, 0.5)
    bad_rows = [
        {"item_id": 1, "rater": "ana", "score": 1.5},  # CHECK score in [-1, 1]
        {"item_id": 999, "rater": "ana", "score": 0.0},  # foreign key to items
        {"item_id": 1, "rater": "nobody", "score": 0.0},  # foreign key to raters
    ]
    for row in bad_rows:
        with pytest.raises(IntegrityError), store.write() as conn:
            conn.execute(ratings.insert().values(created_at=store.clock(), is_repeat=False, **row))
    assert integrity_problems(store) == []


def test_sqlite_runs_in_wal_mode_with_foreign_keys(tmp_path):
    s = LabelStore(f"sqlite:///{tmp_path / 'x.sqlite'}")
    s.ensure_schema()
    with s.read() as conn:
        assert conn.execute(text("PRAGMA journal_mode")).scalar() == "wal"
        assert conn.execute(text("PRAGMA foreign_keys")).scalar() == 1
        assert conn.execute(text("PRAGMA busy_timeout")).scalar() == 30000


def test_a_plain_postgres_url_gets_the_psycopg_driver():
    from core.labeling.store import normalize_url

    assert normalize_url("postgresql://u@h/db") == "postgresql+psycopg://u@h/db"
    assert normalize_url("postgres://u@h/db") == "postgresql+psycopg://u@h/db"
    assert normalize_url("sqlite:///x.sqlite") == "sqlite:///x.sqlite"


# -- assignment on both backends ---------------------------------------------------------------
def test_assignment_order_and_reservation_on_both_backends(store):
    project = _project_with_items(store, 4)
    for rater in ("a", "b"):  # item 2 gets 2 ratings, item 3 gets 1
        assignment.submit(store, project, rater, 2, 0.1)
    assignment.submit(store, project, "a", 3, 0.1)
    view = assignment.next_item(store, project, "c")
    assert view.item_id == 2  # 2 → 3 first
    other = assignment.next_item(store, project, "d")
    assert other.item_id == 3  # item 2's last slot is reserved by c
    assert integrity_problems(store) == []


# -- concurrency -------------------------------------------------------------------------------
def _check_after_concurrent_run(store: LabelStore, returned_ids: list[int]) -> None:
    with store.read() as conn:
        rows = conn.execute(select(ratings.c.rating_id, ratings.c.item_id, ratings.c.rater, ratings.c.is_repeat)).all()
    assert len(rows) == N_RATERS * N_SUBMITS, "a rating was lost or duplicated"
    assert sorted(returned_ids) == sorted(r.rating_id for r in rows)
    assert Counter(r.rater for r in rows) == {f"r{i}": N_SUBMITS for i in range(N_RATERS)}
    raters_per_item = Counter(r.item_id for r in rows if not r.is_repeat)
    assert max(raters_per_item.values()) <= TARGET, "an item passed its target through double assignment"
    first_pass = sum(raters_per_item.values())
    # 1000 submissions for 900 slots. A rater whose remaining items are all reserved by others gets
    # a repeat audit instead of waiting, so near the end a few slots may stay open when budgets run
    # out; the repeats are real rows, the counters must agree, and most slots are filled.
    with store.read() as conn:
        counted = conn.execute(select(func.sum(items_table.c.n_raters))).scalar()
    assert counted == first_pass and first_pass >= 0.85 * N_ITEMS * TARGET
    assert integrity_problems(store) == []


@pytest.mark.slow
def test_ten_raters_in_threads_lose_nothing_and_never_overfill(store):
    project = _project_with_items(store)
    barrier = threading.Barrier(N_RATERS)
    returned: list[int] = []
    errors: list[BaseException] = []
    lock = threading.Lock()

    def rate(rater: str) -> None:
        try:
            barrier.wait()
            view = assignment.next_item(store, project, rater)
            for n in range(N_SUBMITS):
                score = (n % 21 - 10) / 10
                if n + 1 < N_SUBMITS:
                    rid, view = assignment.submit_and_next(store, project, rater, view.item_id, score,
                                                           token=view.token)
                else:  # the last one takes no new item: a reservation nobody rates would block others
                    rid = assignment.submit(store, project, rater, view.item_id, score, token=view.token)
                with lock:
                    returned.append(rid)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=rate, args=(f"r{i}",)) for i in range(N_RATERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=240)
    assert not errors, errors
    _check_after_concurrent_run(store, returned)


WORKER = """
import sys, time
from pathlib import Path
from core.labeling import assignment, items
from core.labeling.store import LabelStore
url, rater, n, go = sys.argv[1], sys.argv[2], int(sys.argv[3]), Path(sys.argv[4])
store = LabelStore(url)
project = items.get_project(store, "p")
while not go.exists():
    time.sleep(0.005)
view = assignment.next_item(store, project, rater)
done = 0
while n < 0 or done < n:
    score = ((done % 41) - 20) / 20
    if done + 1 == n:  # the last one takes no new item (an unrated reservation would block others)
        rid = assignment.submit(store, project, rater, view.item_id, score, token=view.token)
    else:
        rid, view = assignment.submit_and_next(store, project, rater, view.item_id, score, token=view.token)
    done += 1
    print(rid, flush=True)
"""


def _spawn(url: str, rater: str, n: int, go: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", WORKER, url, rater, str(n), str(go)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.slow
def test_a_process_killed_while_writing_leaves_a_consistent_store(store, store_url, tmp_path):
    project = _project_with_items(store, 2000)
    go = tmp_path / "go"
    go.touch()
    victims = [_spawn(store_url, f"k{i}", -1, go) for i in range(3)]  # rate forever
    committed: list[int] = []
    for n_wanted, victim in zip((40, 60, 80), victims, strict=True):
        for _ in range(n_wanted):  # wait until it is busy writing, then kill it mid-loop
            line = victim.stdout.readline()
            assert line, victim.stderr.read()[-2000:]
            committed.append(int(line))
        victim.send_signal(signal.SIGKILL)
        victim.wait(timeout=30)
        committed += [int(x) for x in victim.stdout.read().split()]  # printed before the kill
    assert integrity_problems(store) == []
    with store.read() as conn:
        stored = set(conn.execute(select(ratings.c.rating_id)).scalars())
    assert set(committed) <= stored, "a committed rating disappeared"
    assert len(stored) - len(committed) <= len(victims)  # at most the one commit each was printing
    # The store stays usable: the killed raters' reservations simply wait for expiry.
    view = assignment.next_item(store, project, "survivor")  # (item 1 has its raters: no overfilling it)
    rid, _ = assignment.submit_and_next(store, project, "survivor", view.item_id, 0.25, token=view.token)
    assert rid > max(stored)
    assert integrity_problems(store) == []

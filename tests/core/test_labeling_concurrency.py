"""Concurrency as the best labeling tools test it, on SQLite and on PostgreSQL (a throwaway server
the tests start, tests/core/test_labeling_store.py):

- 10 rater processes × 100 submissions each, three of them killed (SIGKILL) mid-run and restarted:
  every committed rating is stored, each rater ends with exactly 100 ratings, no item gets more
  first-pass raters than its target, and the store is consistent;
- adjudicator processes claiming the disagreement queue at once never hold the same item.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from sqlalchemy import func, select

from core.labeling import claims
from core.labeling.store import integrity_problems, ratings
from core.labeling.store import items as items_table
from tests.helpers.label_store import (  # noqa: F401  # noqa: F401 - the fixtures
    N_ITEMS,
    TARGET,
    _project_with_items,
    postgres_server,
    store,
    store_url,
)

ROOT = Path(__file__).resolve().parents[2]
N_RATERS, N_SUBMITS = 10, 100
KILLS = {"r0": 20, "r3": 45, "r6": 70}  # rater → committed ratings after which its process is killed

RATER = """
import sys, time
from pathlib import Path
from sqlalchemy import func, select
from core.labeling import assignment, items
from core.labeling.store import LabelStore, ratings
url, rater, total, go = sys.argv[1], sys.argv[2], int(sys.argv[3]), Path(sys.argv[4])
store = LabelStore(url)
project = items.get_project(store, "p")
while not go.exists():
    time.sleep(0.005)
with store.read() as conn:  # a restarted rater goes on from what is stored
    done = conn.execute(select(func.count()).where(ratings.c.rater == rater)).scalar()
view = assignment.next_item(store, project, rater) if done < total else None
while done < total:
    deadline = time.monotonic() + 5
    while view is None and time.monotonic() < deadline:  # every open item held by another rater right now
        time.sleep(0.05)
        view = assignment.next_item(store, project, rater)
    if view is None:  # nothing left for this rater (each item is repeated at most once): the project ends
        break
    score = ((done % 41) - 20) / 20
    result = assignment.submit_rating(store, project, rater, view.item_id, score, token=view.token,
                                      take_next=done + 1 < total)  # the last takes no item: it would block others
    assert result.status == "saved", result
    done += 1
    view = result.next
    print(result.rating_id, flush=True)
"""


def _spawn(url: str, rater: str, go: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", RATER, url, rater, str(N_SUBMITS), str(go)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _kill_after(proc: subprocess.Popen, n_lines: int, printed: list[int]) -> None:
    for _ in range(n_lines):
        line = proc.stdout.readline()
        assert line, proc.stderr.read()[-2000:]
        printed.append(int(line))
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    printed += [int(x) for x in proc.stdout.read().split()]  # printed before the kill


@pytest.mark.slow
def test_ten_rater_processes_with_kills_lose_nothing_and_never_overfill(store, store_url, tmp_path):  # noqa: F811
    _project_with_items(store)
    go = tmp_path / "go"
    procs = {f"r{i}": _spawn(store_url, f"r{i}", go) for i in range(N_RATERS)}
    time.sleep(0.5)
    started = time.monotonic()
    go.touch()
    printed: list[int] = []
    for rater, n in KILLS.items():
        _kill_after(procs[rater], n, printed)
        procs[rater] = _spawn(store_url, rater, go)  # the rater reopens the page: a new process
    for rater, proc in procs.items():
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, f"{rater}: {err[-2000:]}"
        printed += [int(x) for x in out.split()]
    elapsed = time.monotonic() - started
    with store.read() as conn:
        rows = conn.execute(select(ratings.c.rating_id, ratings.c.item_id, ratings.c.rater, ratings.c.is_repeat)).all()
        counted = conn.execute(select(func.sum(items_table.c.n_raters))).scalar()
    assert set(printed) <= {r.rating_id for r in rows}, "a committed rating was lost"
    assert len(rows) - len(set(printed)) <= len(KILLS), "more unreported commits than killed processes"
    per_rater = Counter(r.rater for r in rows)  # a restarted rater may run out of items to repeat, never over
    assert set(per_rater) == {f"r{i}" for i in range(N_RATERS)} and max(per_rater.values()) <= N_SUBMITS
    first_pass = Counter(r.item_id for r in rows if not r.is_repeat)
    assert max(first_pass.values()) <= TARGET, "an item got more raters than its target"
    assert counted == sum(first_pass.values()) >= 0.85 * N_ITEMS * TARGET
    assert integrity_problems(store) == []
    print(f"{store.dialect}: {len(rows)} ratings by {N_RATERS} processes, {len(KILLS)} killed and restarted, "
          f"{elapsed:.1f} s")


CLAIMER = """
import sys, time
from pathlib import Path
from core.labeling import claims, items
from core.labeling.store import LabelStore
url, worker, n, go = sys.argv[1], sys.argv[2], int(sys.argv[3]), Path(sys.argv[4])
store = LabelStore(url)
project = items.get_project(store, "p")
queue = list(range(1, 201))
while not go.exists():
    time.sleep(0.002)
for i in range(n):  # a new adjudicator each time: every claim stays held (600 s)
    got = claims.claim(store, project, f"adj_{worker}_{i}", queue, wanted=queue[0])
    print(got, flush=True)
"""


@pytest.mark.slow
def test_adjudicators_opening_the_queue_at_once_never_hold_the_same_item(store, store_url, tmp_path):  # noqa: F811
    project = _project_with_items(store, 200)
    go = tmp_path / "go"
    procs = [subprocess.Popen([sys.executable, "-c", CLAIMER, store_url, str(w), "40", str(go)], cwd=ROOT,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for w in range(4)]
    time.sleep(0.5)
    go.touch()
    got: list[int] = []
    for proc in procs:
        out, err = proc.communicate(timeout=240)
        assert proc.returncode == 0, err[-2000:]
        got += [int(x) for x in out.split()]
    assert len(got) == 160 and len(set(got)) == 160, Counter(got).most_common(3)
    assert len(claims.claimed_by(store, project)) == 160


def test_an_adjudicator_keeps_their_claim_and_a_second_one_gets_the_next_item(store):  # noqa: F811
    project = _project_with_items(store, 5)
    queue = [3, 1, 5]
    assert claims.claim(store, project, "ben", queue) == 3
    assert claims.claim(store, project, "cleo", queue) == 1  # 3 is ben's
    assert claims.claim(store, project, "ben", queue) == 3  # asking again: the same item
    assert claims.claim(store, project, "cleo", queue, wanted=3) == 1  # ben's item is not handed over
    assert claims.claim(store, project, "ben", queue, wanted=5) == 5  # opening another item moves the claim
    assert claims.claim(store, project, "cleo", queue, wanted=3) == 3
    assert claims.claimed_by(store, project) == {5: "ben", 3: "cleo"}
    claims.release(store, project, "ben")
    assert claims.claimed_by(store, project) == {3: "cleo"}


def test_lowering_the_target_with_reservations_held_never_overfills(store):  # noqa: F811
    from core.labeling import assignment, items

    project = _project_with_items(store, 1)  # target 3
    views = {r: assignment.next_item(store, project, r) for r in ("a", "b", "c")}
    items.update_project(store, "p", target_raters=2)
    stored = []
    for rater, view in views.items():  # their pages still hold the old project (target 3)
        try:
            stored.append(assignment.submit(store, project, rater, view.item_id, 0.5, token=view.token))
        except Exception as exc:  # noqa: BLE001 - the refusal is the point
            assert "has its 2 raters already" in str(exc)
    assert len(stored) == 2
    with store.read() as conn:
        assert conn.execute(select(func.count()).select_from(ratings)).scalar() == 2
    assert integrity_problems(store) == []

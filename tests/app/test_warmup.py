"""The warm-up thread imports what every page script imports, and the heavy libraries pages defer."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from core.ui import PAGES, warmup

ROOT = Path(__file__).resolve().parents[2]


def test_every_page_glue_module_is_warmed():
    names = warmup.modules_to_warm()
    for spec in PAGES:
        script = (ROOT / spec.path).read_text(encoding="utf-8")
        for line in script.splitlines():
            if line.startswith("from core.ui import "):
                for part in line.removeprefix("from core.ui import ").split(","):
                    module = part.strip().split(" as ")[0]
                    assert f"core.ui.{module}" in names, (spec.path, module)
    assert names[-len(warmup.HEAVY):] == list(warmup.HEAVY)
    assert len(names) == len(set(names))


def test_warmup_imports_them_in_a_fresh_process():
    code = ("import sys, time; from core.ui import warmup; assert 'sklearn' not in sys.modules; "
            "assert warmup.start() and not warmup.start(); "
            "[t.join() for t in __import__('threading').enumerate() if t.name == 'workbench-warmup']; "
            "print(all(m in sys.modules for m in ('core.ui.gt_page', 'core.ui.results', 'sklearn.metrics', "
            "'scipy.stats', 'altair')), __import__('gc').get_freeze_count() > 100_000)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300,
                         env={"PATH": "/usr/bin:/bin", "WORKBENCH_WARMUP": "1"})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "True True"  # imported, and frozen out of the collector's walks


def test_warmup_can_be_turned_off(monkeypatch):
    monkeypatch.setenv("WORKBENCH_WARMUP", "0")
    assert warmup.start() is False


def test_preload_reads_the_workspace_into_homes_caches(small_demo, monkeypatch):
    """At server start (app.py) the first page's caches are filled, reading only: Home's next run
    computes neither the file sections nor the unreadable-files check again."""
    from core.ui import health, home, overview
    from core.workspace import Workspace

    monkeypatch.setenv("WORKBENCH_WORKSPACE", str(small_demo))
    before = sorted((p, p.stat().st_mtime_ns) for p in small_demo.rglob("*"))
    warmup.preload_first_page()
    assert sorted((p, p.stat().st_mtime_ns) for p in small_demo.rglob("*")) == before  # nothing written

    def refused(*args, **kwargs):
        raise AssertionError("recomputed although preloaded")
    monkeypatch.setattr(overview, "workspace_overview", refused)
    monkeypatch.setattr(health, "workspace_problems", refused)
    ws = Workspace(small_demo)
    summary = home.workspace_overview(ws)
    assert summary.datasets.height and [title for title, *_ in summary.sections][-1] == "Labeling"
    assert home.problems(ws).is_empty()


def test_preload_leaves_a_missing_workspace_alone(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_WORKSPACE", str(tmp_path / "not-yet"))
    warmup.preload_first_page()
    assert not (tmp_path / "not-yet").exists()


def test_a_page_run_and_a_background_import_never_overlap():
    """A run waits for the module being imported to be complete; an import waits until no page runs."""
    import threading
    import time

    gate, events = warmup._Gate(), []
    importing, run_started = threading.Event(), threading.Event()

    def background_import() -> None:
        with gate.importing():
            importing.set()
            time.sleep(0.3)  # a slow module
            events.append("import done")

    def page() -> None:
        importing.wait()
        with gate.run():
            events.append("run")
            run_started.set()
            time.sleep(0.3)
            events.append("run done")

    threads = [threading.Thread(target=background_import), threading.Thread(target=page)]
    for t in threads:
        t.start()
    def second_import() -> None:
        with gate.importing():
            events.append("second import")

    run_started.wait(5)
    late = threading.Thread(target=second_import)
    late.start()  # the next module waits for the run to end
    for t in [*threads, late]:
        t.join(5)
    assert events == ["import done", "run", "run done", "second import"]

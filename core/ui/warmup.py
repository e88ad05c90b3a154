"""Warm-up: once the first page is drawn, import what the other pages need, in the background.

A fresh server process imports a page's modules the first time someone opens that page: up to
1.5 s (scikit-learn for Results, SciPy for Label review and Analysis, the page glue of GT and
Trace). The first page drawn starts one daemon thread per process that, a second after that
page's run has ended (the browser draws it meanwhile), imports the modules every
page script imports (read from ``app_pages/*.py``, in the order of the navigation) and the heavy
libraries their first computation needs, so the first visit to each page finds them loaded. It only
imports: it reads no workspace and writes nothing. A module that fails to import is logged and
skipped (the page that needs it shows the error when opened). ``WORKBENCH_WARMUP=0`` turns it off.
The imports and the page runs never overlap (:class:`_Gate`): each module is imported between runs.
"""

from __future__ import annotations

import ast
import gc
import importlib
import importlib.util
import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from streamlit import delta_generator

from core.base.settings import warmup_enabled
from core.ui import PAGES
from core.workspace import Workspace
from core.workspace.choice import workspace_dir

LOG = logging.getLogger(__name__)
PAGES_DIR = Path(__file__).resolve().parents[2] / "app_pages"
# Imported by the first computation of a page rather than by its script (deferred imports).
HEAVY = ("altair", "sklearn.metrics", "sklearn.feature_extraction.text", "scipy.stats", "sqlalchemy", "openai",
         "core.judgments.judges")

# What the first page's run imports beyond the modules its scripts name: pandas (st.dataframe
# converts through it), the label store (Home's labeling section).
FIRST_PAGE_EXTRA = ("pandas", "core.labeling.items", "core.labeling.reports", "core.labeling.store")

_lock = threading.Lock()
_started = False


class _Gate:
    """Page runs (any number at once) and the background imports (one module at a time) exclude
    each other.

    Libraries look a module up in ``sys.modules`` without importing it (Altair's ``pandas``, to
    convert timestamps): while another thread is still importing it, they get the half-made module
    and fail (``partially initialized module 'pandas' has no attribute 'Timestamp'``). So a page
    run waits for the module being imported to be complete, and an import waits until no page
    runs: the warm-up yields to the users, and an interaction waits at most for one module.
    """

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._runs = 0
        self._importing = False

    @contextmanager
    def run(self) -> Iterator[None]:
        with self._cond:
            self._cond.wait_for(lambda: not self._importing)
            self._runs += 1
        try:
            yield
        finally:
            with self._cond:
                self._runs -= 1
                self._cond.notify_all()

    @contextmanager
    def importing(self) -> Iterator[None]:
        with self._cond:
            self._cond.wait_for(lambda: not self._runs and not self._importing)
            self._importing = True
        try:
            yield
        finally:
            with self._cond:
                self._importing = False
                self._cond.notify_all()


_gate = _Gate()
page_run = _gate.run  # main.py runs each page inside it


def page_modules(scripts: list[Path]) -> list[str]:
    """The modules the page scripts import, in script order, each once; ``from core import ui``
    gives ``core`` and ``core.ui`` (a name that is an attribute, not a module, is skipped later).

    >>> import tempfile
    >>> page = Path(tempfile.mkdtemp()) / "p.py"
    >>> _ = page.write_text("import streamlit as st\\nfrom core import ui\\nfrom core.ui import cache, gt_page\\n")
    >>> page_modules([page])
    ['streamlit', 'core', 'core.ui', 'core.ui.cache', 'core.ui.gt_page']
    """
    out: list[str] = []
    for script in scripts:
        for node in ast.parse(script.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0 and node.module != "__future__":
                names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
            else:
                continue
            out += [name for name in names if name not in out]
    return out


def modules_to_warm() -> list[str]:
    """Every page's imports in navigation order, then :data:`HEAVY`."""
    scripts = [PAGES_DIR.parent / spec.path for spec in PAGES]
    return [*page_modules([s for s in scripts if s.is_file()]), *HEAVY]


def _importable(name: str) -> bool:
    """Whether ``name`` is a module (``core.tasks.get_task`` of ``from core.tasks import get_task`` is not)."""
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # its parent is a module, not a package
        return False


# Seconds between the end of the first page's run and the imports: meanwhile the browser draws that
# page, and where it shares the machine's cores with the server it would otherwise wait for them.
DRAW_DELAY_S = 1.0


def _run(caller: threading.Thread | None) -> None:
    if caller is not None:  # after the page run that started it, and after the browser has drawn it
        caller.join(timeout=10)
        time.sleep(DRAW_DELAY_S)
    gc.disable()  # no collections walking the objects the imports make (see freeze), then out of sight
    try:
        _import_all(modules_to_warm())
        freeze()
    finally:
        gc.enable()


def freeze() -> None:
    """Move every object the process holds now out of the garbage collector's sight (``gc.freeze``).

    Streamlit runs a full collection after every script run (``runner.postScriptGC``), and a full
    collection walks every object: with the libraries of every page imported, 75-300 ms added to
    each interaction before the browser hears that the run has finished. What the imports made lives
    as long as the process; frozen, it is kept (reference counting still frees what is not in a
    cycle) and a collection walks only what the sessions made since. The server calls it after the
    preload (app.py) and the warm-up thread after its imports."""
    gc.freeze()


def _import_all(names: list[str]) -> None:
    """Import each module, one at a time between page runs (:class:`_Gate`)."""
    for name in names:
        try:
            with _gate.importing():
                if _importable(name):
                    importlib.import_module(name)
        except Exception:  # noqa: BLE001 - a broken module is the page's error to show when opened
            LOG.warning("warm-up: importing %s failed", name, exc_info=True)


def _streamlit_first_element_check() -> None:
    """Run Streamlit's once-per-process check made when the first element is drawn (whether it runs
    in a REPL: ``inspect.stack()``, which resolves the file of every loaded module) now, while few
    modules are loaded, instead of inside the first page's run (0.45 s there). Under ``streamlit
    run`` it only sets its flag; if a Streamlit version lacks it, nothing happens."""
    check = getattr(delta_generator, "_maybe_print_use_warning", None)
    if callable(check):
        check()


def preload_first_page() -> None:
    """What the first page's run would do first, done while the browser loads the frontend (app.py
    runs this when the server starts, before any session): import what ``main.py`` and the Home
    page import (and pandas, which ``st.dataframe`` converts through), then read the default
    workspace's overview and unreadable files into Home's caches. It only reads: a workspace that
    does not exist yet (the demo mode generates it on the first visit) is left alone."""
    root = PAGES_DIR.parent
    _streamlit_first_element_check()
    _import_all([*page_modules([root / "main.py", PAGES_DIR / "home.py"]), *FIRST_PAGE_EXTRA])
    try:
        with _gate.importing():  # its reads import what they use on the way
            # deferred: Home's page glue is what this preload imports ahead of the first run (in the
            # server's start-up, not when main.py imports this module)
            from core.ui import home

            ws = Workspace(workspace_dir())
            if ws.exists():
                home.warm(ws)
    except Exception:  # noqa: BLE001 - Home shows the error itself when it is opened
        LOG.warning("warm-up: reading the workspace failed", exc_info=True)


def start() -> bool:
    """Start the warm-up thread unless this process has one (or it is turned off); True if started."""
    global _started
    if not warmup_enabled():
        return False
    with _lock:
        if _started:
            return False
        _started = True
    caller = threading.current_thread()  # a page's script thread (not a test's or a CLI's main thread)
    threading.Thread(target=_run, args=(None if caller is threading.main_thread() else caller,),
                     name="workbench-warmup", daemon=True).start()
    return True

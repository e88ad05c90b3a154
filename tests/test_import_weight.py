"""No page pays for an import it does not use (a structural check, not a timing test).

Each page is imported the way Streamlit runs it, in a fresh interpreter: the frame (what main.py
imports), the page's glue module in ``core/ui`` and the page script's own module-level imports.
Heavy optional libraries must then be absent: ``openai`` is loaded only when an endpoint is
called, ``sklearn``/``scipy`` only when a metric or statistic that needs them is computed,
``bm25s`` only when a rag run retrieves, ``sqlalchemy`` only when the label store is opened
(the labeling pages and Analysis open it, so it is allowed there). Timings are in ``bench/``.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("openai", "sklearn", "scipy", "bm25s", "sqlalchemy")
FRAME = ("streamlit", "core.ui", "core.ui.hosting", "core.ui.auth", "core.ui.warmup")  # what main.py imports
NOT_STORE = ("openai", "sklearn", "scipy", "bm25s", "sqlalchemy")
STORE = ("openai", "sklearn", "scipy", "bm25s")  # pages whose module-level code uses the label store

# page script -> (its glue module in core/ui, or None; the heavy modules it must not import)
PAGES: dict[str, tuple[str | None, tuple[str, ...]]] = {
    "home": ("core.ui.home", NOT_STORE),
    "data": ("core.ui.data_page", NOT_STORE),
    "ground_truth": ("core.ui.gt_page", NOT_STORE),
    "trace": ("core.ui.trace_page", NOT_STORE),
    "runs": ("core.ui.runs", NOT_STORE),
    "results": ("core.ui.results", NOT_STORE),
    "labeling": ("core.ui.labeling", STORE),
    "label_review": ("core.ui.label_review", STORE),
    "analysis": ("core.ui.analysis", STORE),
    "gold": ("core.ui.gold", NOT_STORE),
}


def _page_imports(page: str) -> list[str]:
    """The module-level import statements of ``app_pages/<page>.py`` (without ``__future__``)."""
    tree = ast.parse((ROOT / "app_pages" / f"{page}.py").read_text(encoding="utf-8"))
    return [ast.unparse(node) for node in tree.body
            if isinstance(node, ast.Import | ast.ImportFrom) and getattr(node, "module", None) != "__future__"]


def _script(page: str) -> str:
    glue, _ = PAGES[page]
    lines = ["import sys", *(f"import {m}" for m in FRAME), *([f"import {glue}"] if glue else []), *_page_imports(page)]
    lines.append(f"print(' '.join(sorted(m for m in {HEAVY!r} if m in sys.modules)))")
    return "\n".join(lines)


@pytest.fixture(scope="module")
def loaded() -> dict[str, set[str]]:
    """Heavy modules loaded by each page, one fresh interpreter per page (started together)."""
    procs = {page: subprocess.Popen([sys.executable, "-c", _script(page)], cwd=ROOT, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True) for page in PAGES}
    out: dict[str, set[str]] = {}
    for page, proc in procs.items():
        stdout, stderr = proc.communicate(timeout=300)
        assert proc.returncode == 0, f"importing the {page} page failed:\n{stderr[-2000:]}"
        out[page] = set(stdout.split())
    return out


def test_every_registered_page_is_checked():
    from core.ui import PAGES as REGISTERED

    assert {Path(spec.path).stem for spec in REGISTERED} == set(PAGES)


@pytest.mark.parametrize("page", list(PAGES))
def test_page_imports_no_heavy_module_it_does_not_use(loaded, page):
    _, forbidden = PAGES[page]
    assert not loaded[page] & set(forbidden), f"{page} imports {sorted(loaded[page] & set(forbidden))}"


def test_the_check_sees_a_heavy_import():
    """The probe itself works: a function that needs scikit-learn loads it (scoring a run no longer
    does: macro F1 and AP are computed in its arithmetic without it)."""
    code = ("import sys, core.gold.accuracy as a; a.tfidf_similarity_sklearn(['a b'], ['a c']); "
            "print('sklearn' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.stdout.strip() == "True", result.stderr[-2000:]

"""Every import inside a function in ``core/`` says why it is deferred (a structural check).

Imports belong at the top of a module. One inside a function is allowed only where a heavy
optional import is deferred, a CLI command imports what only it needs (start-up time), or a cycle
is broken, and then a comment says so (``# deferred: <what> (~N ms), only needed when <when>``):
on the import's own line, or above it. A comment above a block of imports (blank lines between
import groups included) covers the whole block.
"""

from __future__ import annotations

import ast
from pathlib import Path

CORE = Path(__file__).resolve().parents[1] / "core"


def undocumented_imports(path: Path, root: Path = CORE.parent) -> list[str]:
    """``file:line: import`` for each import inside a function of ``path`` with no comment on its
    lines or above its block."""
    src = path.read_text(encoding="utf-8").splitlines()
    tree = ast.parse("\n".join(src), filename=str(path))
    imports: dict[int, ast.Import | ast.ImportFrom] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for sub in ast.walk(node):
                if isinstance(sub, ast.Import | ast.ImportFrom):
                    imports[sub.lineno] = sub
    import_lines = {ln for sub in imports.values() for ln in range(sub.lineno, (sub.end_lineno or sub.lineno) + 1)}

    def has_comment(lineno: int) -> bool:  # 1-based
        return "#" in src[lineno - 1]

    out = []
    for lineno, sub in sorted(imports.items()):
        if any(has_comment(ln) for ln in range(lineno, (sub.end_lineno or lineno) + 1)):
            continue
        ln = lineno - 1
        documented = False
        while ln >= 1:
            text = src[ln - 1].strip()
            if text.startswith("#") or (ln in import_lines and "#" in text):
                documented = True
                break
            if text and ln not in import_lines:
                break
            ln -= 1
        if not documented:
            rel = path.relative_to(root)
            out.append(f"{rel}:{lineno}: {src[lineno - 1].strip()}")
    return out


def test_every_import_inside_a_function_in_core_says_why_it_is_deferred() -> None:
    bad = [line for path in sorted(CORE.rglob("*.py")) for line in undocumented_imports(path)]
    assert not bad, (
        "imports inside functions without a '# deferred: ...' comment (hoist them to the top of the "
        "module, or say why they are deferred):\n" + "\n".join(bad)
    )


def test_the_check_finds_an_undocumented_import_and_accepts_a_documented_block(tmp_path: Path) -> None:
    module = tmp_path / "probe.py"
    module.write_text(
        "import os\n\n\n"
        "def a():\n    import json\n\n    return json\n\n\n"
        "def b():\n    # deferred: heavy optional import (x, ~1 s), only needed when b runs\n"
        "    import csv\n    import decimal\n\n    from fractions import Fraction\n\n"
        "    return csv, decimal, Fraction\n\n\n"
        "def c():\n    import re  # deferred: breaks the cycle a <-> b\n    x = 1\n    import glob\n"
        "    return re, x, glob\n",
        encoding="utf-8",
    )
    assert undocumented_imports(module, tmp_path) == ["probe.py:5: import json", "probe.py:23: import glob"]

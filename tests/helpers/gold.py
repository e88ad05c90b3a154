"""Builders of small gold sets in tmp_path for the gold tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SYSTEM = "Du er en norsk regnskapsassistent. Svar kort med kildehenvisning."


def gold_item(question: str, expected: str, *, task: str = "glossary_define", domain: str = "accounting",
              must_include: list[str] | None = None, citation_required: bool = True, max_tokens: int = 300) -> dict[str, Any]:
    """One SPEC §8 item."""
    return {
        "messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": question},
                     {"role": "assistant", "content": "EXPECTED_ANSWER"}],
        "metadata": {"domain": domain, "task": task, "source_ids": ["src_1"], "locale": "nb-NO", "split": "eval"},
        "expected_output": expected,
        "eval_criteria": {"must_include": must_include or [], "citation_required": citation_required,
                          "max_tokens": max_tokens},
    }


def write_jsonl(path: Path, rows: list[Any], *, header: str | None = "# a comment line\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = (header or "") + "".join((r if isinstance(r, str) else json.dumps(r, ensure_ascii=False)) + "\n" for r in rows)
    path.write_text(text + "\n", encoding="utf-8")
    return path


SMALL_SET = [
    gold_item("Hva er konto 1500?", "Konto 1500 er kundefordringer. [NS 4102]", must_include=["kundefordringer"]),
    gold_item("Hva er konto 2400?", "Konto 2400 er leverandørgjeld. [NS 4102]", must_include=["leverandørgjeld", "gjeld"]),
    gold_item("Hva er aksjekapital?", "Aksjekapitalen skal være minst 30 000 kroner. [§ 3-1 Lov om aksjeselskaper]",
              task="law_reference", domain="corporate", must_include=["30 000"]),
]


def write_small_set(folder: Path) -> list[Path]:
    """Two eval files: accounting_eval.jsonl (2 items) and corporate_eval.jsonl (1 item)."""
    return [write_jsonl(folder / "accounting_eval.jsonl", SMALL_SET[:2]),
            write_jsonl(folder / "corporate_eval.jsonl", SMALL_SET[2:])]

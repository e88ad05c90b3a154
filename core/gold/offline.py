"""The offline answerer: a real, deterministic retrieval model, labelled offline wherever it appears.

It answers a question with the reference passage(s) most similar to it: TF-IDF character
n-grams (the same vectorizer as the ``tfidf`` accuracy method) fitted on the passages, cosine
to the question, best ``top_k`` passages joined. It never sees the expected answers; a wrong
retrieval gives a wrong answer, which is what makes its reports worth reading.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core.base.errors import DataError
from core.gold.accuracy import tfidf_vectorizer
from core.gold.answers import Answer
from core.gold.items import GoldItem

OFFLINE_PREFIX = "offline-retrieval"


@dataclass(frozen=True)
class Passage:
    """One reference passage: its term and text (with its citation)."""

    term: str
    text: str


def read_passages(path: str | Path) -> list[Passage]:
    """``reference.jsonl``: one ``{term, text}`` per line; bad lines name file, line and field."""
    path = Path(path)
    out = []
    for n, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        try:
            obj = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise DataError(f"not valid JSON ({exc.msg})", path=path, line=n) from None
        for key in ("term", "text"):
            if not isinstance(obj.get(key) if isinstance(obj, dict) else None, str):
                raise DataError("missing or not a string", path=path, line=n, field=key)
        out.append(Passage(obj["term"], obj["text"]))
    return out


def offline_model_name(top_k: int) -> str:
    """The answers' name and the report's model label, e.g. ``offline-retrieval-top1``."""
    return f"{OFFLINE_PREFIX}-top{top_k}"


def retrieve(questions: Sequence[str], passages: Sequence[Passage], *, top_k: int = 1) -> list[list[int]]:
    """Indices of the ``top_k`` passages most similar to each question (ties: earlier passage first)."""
    if not passages:
        raise ValueError("the offline answerer needs at least one reference passage")
    if top_k < 1:
        raise ValueError(f"top_k must be >= 1, got {top_k}")
    vec = tfidf_vectorizer().fit([f"{p.term} {p.text}" for p in passages])
    sims = (vec.transform(list(questions)) @ vec.transform([f"{p.term} {p.text}" for p in passages]).T).toarray()
    return [list(np.argsort(-row, kind="stable")[:top_k]) for row in sims]


def offline_answers(items: Sequence[GoldItem], passages: Sequence[Passage], *, top_k: int = 1) -> dict[str, Answer]:
    """Each item's answer: its best ``top_k`` passages, joined by a space."""
    picks = retrieve([item.question for item in items], passages, top_k=top_k)
    return {item.sample_id: Answer(" ".join(passages[i].text for i in pick)) for item, pick in zip(items, picks, strict=True)}

"""``offline-cues-v1``: an offline judge for any task whose judgment fields list ``cues`` (no LLM).

Each field takes the first value (in the field's ``cues`` order) one of whose phrases occurs in
the lower-cased review text at word boundaries; a field with no cue found takes its first value
(``none``). A boolean ``is_relevant`` field is true when any other field found a cue. The excerpt
is the verbatim sentence of the first cue found. It is a plain phrase matcher: good on the demo's
planted sentences, labelled offline wherever its judgments appear, and no substitute for an LLM.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from core.base.errors import WorkbenchError
from core.judgments.judges.base import JudgeKind, make_record, register_judge_kind
from core.judgments.judges.heuristic import sentence_spans

JUDGE_ID = "offline-cues-v1"
RELEVANCE = "is_relevant"


class CueJudge:
    """Phrase-matching judge built from a task's field cues."""

    concurrent = False
    prompt_version = "cues-v1"

    def __init__(self, task: Any) -> None:
        self.task = task
        self.judge_id = JUDGE_ID
        self.rules = [
            (f.name, f.values[0], [(value, re.compile(r"\b(?:" + "|".join(re.escape(p) for p in phrases) + r")\b"))
                                   for value, phrases in f.cues if phrases])
            for f in task.fields if f.name != RELEVANCE
        ]
        if not any(rules for _, _, rules in self.rules):
            raise WorkbenchError(f"task {task.task_id} lists no cues: the offline cue judge cannot judge it")

    def judge_one(self, row: dict[str, Any]) -> dict[str, Any]:
        text = str(row.get("text") or "")
        lower = text.lower()
        fields: dict[str, Any] = {}
        first_hit: int | None = None
        fired = []
        for name, default, rules in self.rules:
            fields[name] = default
            for value, pattern in rules:
                m = pattern.search(lower)
                if m:
                    fields[name] = value
                    fired.append(f"{name}={value} ({m.group(0)!r})")
                    first_hit = m.start() if first_hit is None else min(first_hit, m.start())
                    break
        if RELEVANCE in self.task.field_names:
            fields[RELEVANCE] = "true" if fired else "false"
        excerpt = ""
        if first_hit is not None:
            excerpt = next((text[s:e] for s, e in sentence_spans(text) if s <= first_hit < e), "")
        return make_record(row, task=self.task.task_id, judge=self.judge_id, prompt_version=self.prompt_version,
                           fields=fields, excerpt=excerpt, raw={"rules": fired or ["no cue found"]})

    def judge(self, review_rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        return [self.judge_one(r) for r in review_rows]


register_judge_kind(JudgeKind("cues", "offline phrase matcher over the task's field cues (no LLM)", CueJudge))

"""Judges: turn keyword-matched reviews into stored judgments (SPEC §2.3).

``base`` (interface, registry, record layout), ``heuristic`` (``heuristic-v1`` rules), ``cues`` (offline phrase matcher),
``openai_judge`` (any OpenAI-compatible model, structured output), ``ensemble`` (weighted vote),
``runner`` (plan and execute, resume, concurrency, progress), ``batch`` (OpenAI Batch API).
Importing the package registers every judge kind.
"""

from core.judgments.judges import cues, ensemble, heuristic, openai_judge  # noqa: F401 - register the judge kinds
from core.judgments.judges.base import JUDGE_KINDS, Judge, get_judge_kind, make_judge
from core.judgments.judges.runner import JudgingPlan, JudgingReport, execute_judging, plan_judging

__all__ = [
    "JUDGE_KINDS",
    "Judge",
    "JudgingPlan",
    "JudgingReport",
    "execute_judging",
    "get_judge_kind",
    "make_judge",
    "plan_judging",
]

"""What a run may spend, and how its failed samples are told apart.

**The cap** (``--max-cost USD``, the workspace default ``max_cost_usd`` in ``workspace.json`` or
``$WORKBENCH_MAX_COST``): before a sample starts, its calls' cost is bounded from above (prompt
tokens estimated with a margin, :data:`COMPLETION_MARGIN` times the expected answer); the sample
starts only when what was spent, what the samples in flight may still cost and this bound stay
within the cap. Otherwise the run stops there as a cancelled run, which ``--resume`` continues
(with a new cap). A model without a price cannot be capped in dollars: it needs a price
(``--price IN,OUT`` per million tokens, ``$WORKBENCH_PRICES``) or an explicit ``--unpriced``
(a local endpoint is free and needs neither).

**Failed samples** carry ``error_kind``: ``transport`` (no answer: timeouts, connection errors,
429, 5xx, other API errors) or ``model`` (an answer that cannot be used: not JSON, truncated,
out of contract, too large). ``run --resume --retry-errors transport|model|all`` asks again only
those.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from core.llm import MODEL, TRANSPORT
from core.llm.budget import (  # noqa: F401 - the runs' face of the cap (shared with LLM judging)
    COMPLETION_MARGIN,
    PROMPT_MARGIN,
    Budget,
    check_cap,
    check_price,
    default_cap,
    request_bound,
)

RETRY_CHOICES = (TRANSPORT, MODEL, "all")


def error_kind(record: dict[str, Any]) -> str | None:
    """``transport``, ``model`` or None (no error) of one sample record; records written before
    kinds were stored are classified by their message."""
    error = record.get("error")
    if not error:
        return None
    kind = record.get("error_kind")
    if kind in (TRANSPORT, MODEL):
        return str(kind)
    return TRANSPORT if str(error).startswith("LLM call failed") else MODEL


def retry_filter(which: str | None) -> Callable[[dict[str, Any]], bool] | None:
    """Which finished records a resume asks again: those failed with an error of kind ``which``
    (``all``: both kinds); None: none.

    >>> f = retry_filter("transport")
    >>> f({"error": "LLM call failed after 4 attempt(s): timeout"}), f({"error": "parse error: x"}), f({})
    (True, False, False)
    """
    if which is None:
        return None
    if which not in RETRY_CHOICES:
        raise ValueError(f"--retry-errors must be one of {', '.join(RETRY_CHOICES)}, got {which!r}")
    return lambda record: (kind := error_kind(record)) is not None and which in (kind, "all")

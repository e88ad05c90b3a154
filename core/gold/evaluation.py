"""One evaluation end to end: load the set, get the answers, score, build the report.

Shared by ``python -m core gold eval`` and the Gold page. LLM access goes through
:mod:`core.llm` (:class:`core.llm.SyncLLM` over :class:`core.llm.AsyncLLM`, the client of runs and
judges, with the workspace's response cache).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.base.errors import DataError
from core.base.progress import Progress, no_progress
from core.base.settings import env
from core.gold.accuracy import ACCURACY_METHODS, DEFAULT_JUDGE_MODEL, AccuracyContext, make_embedder
from core.gold.answers import Answer, expected_answers, model_answers, read_answers_file
from core.gold.items import GoldItem, load_gold_files
from core.gold.report import evaluate
from core.gold.scoring import GoldConfig
from core.llm import AsyncLLM, SyncLLM, endpoint_options, workspace_cache
from core.workspace import Workspace

SOURCES = ("expected", "answers", "model")
EXPECTED_LABEL = "expected_output (grader check)"


@dataclass
class EvalRequest:
    """What to evaluate: files, config, where answers come from, and the accuracy method."""

    eval_files: list[Path]
    config: GoldConfig = field(default_factory=GoldConfig)
    source: str = "expected"  # expected | answers | model
    answers_path: Path | None = None
    model: str | None = None  # the answering model (source "model")
    model_label: str | None = None  # report's metadata.model (default from the source)
    accuracy: str | None = None  # default: the config's
    accuracy_model: str | None = None  # embedding or judge model
    timestamp: str | None = None

    def label(self) -> str:
        """The report's ``metadata.model``."""
        if self.model_label:
            return self.model_label
        if self.source == "expected":
            return EXPECTED_LABEL
        if self.source == "answers" and self.answers_path is not None:
            return self.answers_path.stem
        return str(self.model)


def make_llm(ws: Workspace | None, model: str, client: Any = None) -> SyncLLM:
    """A :class:`core.llm.SyncLLM` for ``model`` with the workspace's response cache (temperature 0),
    on the configured endpoint or on ``client``'s (an ``openai`` client: its base URL, key, timeout
    and retries). Close it when done (``with``)."""
    options = endpoint_options(client) if client is not None else {}
    return SyncLLM(AsyncLLM(model, cache=workspace_cache(ws) if ws is not None else None, temperature=0, **options))


def get_answers(ws: Workspace | None, items: list[GoldItem], request: EvalRequest, *, client: Any = None,
                progress: Progress = no_progress) -> dict[str, Answer]:
    """The answers of ``request``'s source."""
    if request.source == "expected":
        return expected_answers(items)
    if request.source == "answers":
        if request.answers_path is None:
            raise ValueError("answers source needs an answers file")
        return read_answers_file(request.answers_path, items)
    if request.source == "model":
        if not request.model:
            raise ValueError("model source needs a model name")
        with make_llm(ws, request.model, client) as llm:
            return model_answers(items, llm, progress=progress)
    raise ValueError(f"unknown answer source {request.source!r}; valid: {', '.join(SOURCES)}")


def accuracy_context(ws: Workspace | None, method: str, accuracy_model: str | None, *, client: Any = None,
                     progress: Progress = no_progress) -> AccuracyContext:
    """The context ``method`` needs (an embedder or a judge LLM), built only when needed."""
    needs = ACCURACY_METHODS[method].needs
    ctx = AccuracyContext(progress=progress)
    if needs == "embeddings":
        from core.llm import workspace_cache  # the openai client, only when an endpoint is used

        ctx.embedder = make_embedder(accuracy_model, client=client,
                                     cache=workspace_cache(ws) if ws is not None else None)
    elif needs == "llm":
        judge = accuracy_model or env("WORKBENCH_JUDGE_MODEL", DEFAULT_JUDGE_MODEL) or DEFAULT_JUDGE_MODEL
        ctx.llm = make_llm(ws, judge, client)
    return ctx


def run_evaluation(ws: Workspace | None, request: EvalRequest, *, client: Any = None,
                   progress: Progress = no_progress) -> dict[str, Any]:
    """Load, answer, score: the SPEC §8 report of ``request`` (nothing is written)."""
    items = load_gold_files(request.eval_files)
    if not items:  # a report of 0 samples would be saved, joined to the history and "compared"
        raise DataError("no gold items (every line blank or a # comment): nothing to evaluate",
                        path=", ".join(str(p) for p in request.eval_files))
    method = request.accuracy or request.config.accuracy
    ACCURACY_METHODS[method]  # an unknown name fails before any model is called
    answers = get_answers(ws, items, request, client=client, progress=progress)
    ctx = accuracy_context(ws, method, request.accuracy_model, client=client, progress=progress)
    try:
        return evaluate(items, answers, request.config, model=request.label(), eval_files=request.eval_files,
                        method=method, context=ctx, timestamp=request.timestamp)
    finally:
        if ctx.llm is not None:
            ctx.llm.close()

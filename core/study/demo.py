"""The demo perspective study: the whole pipeline on a small grid, offline and seeded.

1. Training labels: the offline advisors answer the ``costs`` and ``renewal`` templates; three demo
   raters rate the answers in the project ``demo-stance-training``.
2. A scorer (``tfidf-ridge``) is trained on that consensus: ``scorers/demo-stance``.
3. The study ``demo-rent``: a small grid of the ``raise`` template, answered by both offline
   advisors (run ``demo-run``), scored by the scorer (``run_scored.jsonl``).
4. A blinded audit of 30 scored responses (project ``demo-rent-audit``), rated by the demo raters.

The demo raters are synthetic (like the labeling demo's): each rating is the advisor's own
stance on the prompt plus the rater's bias and seeded noise, rounded to 0.05. Nothing here is
real human judgement; it only gives every page and statistic something to show.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from typing import Any

from core.base.progress import Progress, no_progress
from core.base.settings import labels_url
from core.labeling import assignment, items
from core.labeling.reports import items_frame
from core.labeling.store import LabelStore, open_store
from core.study import audit, grid, scoring
from core.study.collect import collect_responses, plan_collection
from core.study.responders import OFFLINE_MODELS, OfflineAdvisor, Responder
from core.study.runs import GRID_FILE, RUN_FILE, SCORED_FILE, read_run, run_dir, study_dir
from core.study.scorer import data, model
from core.workspace import Workspace

STUDY, RUN_ID = "demo-rent", "demo-run"
TRAINING_PROJECT, AUDIT_PROJECT, SCORER_DIR = "demo-stance-training", "demo-rent-audit", "demo-stance"
RATERS = {"demo_ana": 0.04, "demo_ben": -0.08, "demo_chloe": 0.06}
DEMO_LEVELS: dict[str, list[Any]] = {"base_rent": [600, 1200], "amount": [50, 100, 200], "relationship_quality": ["good", "bad"]}
AUDIT_N = 30
_START = datetime(2026, 1, 12, 9, 0, 0, tzinfo=UTC)  # the demo run's (fake) clock


def demo_rating(stance: float, rater: str, rng: random.Random) -> float:
    """A synthetic demo rater's score of a response with the given stance."""
    raw = stance + RATERS[rater] + rng.gauss(0, 0.15)
    return round(max(-1.0, min(1.0, round(raw * 20) / 20)), 2)


def _rate(store: LabelStore, project: items.Project, stances: dict[str, float], rng: random.Random,
          per_item: tuple[int, ...] = (3, 2)) -> int:
    frame = items_frame(store, project)
    n = 0
    for ident, item_id in zip(frame["identifier"].to_list(), frame["item_id"].to_list(), strict=True):
        for code in rng.sample(sorted(RATERS), rng.choice(per_item)):
            assignment.submit(store, project, code, item_id, demo_rating(stances[ident], code, rng),
                              seconds_spent=round(rng.uniform(15, 90), 1))
            n += 1
    return n


def _stance(rec: dict[str, Any]) -> float:
    return OFFLINE_MODELS[rec["model_id"]].stance(grid.user_text(rec))


def seed_study_demo(ws: Workspace, *, seed: int = 0, progress: Progress = no_progress) -> dict[str, Any]:
    """Build the demo study (idempotent: nothing changes when its scored run exists)."""
    scored_path = run_dir(ws, STUDY, RUN_ID) / SCORED_FILE
    if scored_path.is_file():
        return {"study": STUDY, "created": False}
    ws.ensure()
    open_store(ws.root)  # schema
    rng = random.Random(seed)
    templates, factors = grid.read_templates(), grid.read_factors()
    advisors: list[Responder] = list(OFFLINE_MODELS.values())
    stamps = iter(range(10**9))
    store = LabelStore(labels_url(ws.root.resolve()), synchronous="NORMAL",
                       clock=lambda: (_START + timedelta(seconds=37 * next(stamps))).replace(tzinfo=None))
    try:
        progress(0, 5, "training answers")
        train_prompts = grid.build_grid(templates, factors, template_ids=["costs", "renewal"])
        records = []
        offline: list[OfflineAdvisor] = list(OFFLINE_MODELS.values())
        for i, p in enumerate(train_prompts):
            advisor = offline[i % len(offline)]
            records.append({"run_id": "demo-training", "model_id": advisor.model_id, "prompt_id": p["prompt_id"],
                            "factors": p["factors"], "messages": p["messages"],
                            "response_text": advisor.respond(p["messages"]).text})
        project, _ = audit.push_audit(store, TRAINING_PROJECT, records)
        stances = {audit.audit_identifier(r): _stance(r) for r in records}
        progress(1, 5, "training ratings")
        n_train_ratings = _rate(store, project, stances, rng)
        progress(2, 5, "scorer")
        trained = model.train(data.consensus_examples(store, project), data.project_ratings(store, project),
                              seed=seed, cv=3, project=project.name, created_at=_START)
        scorer_dir = model.save(trained, ws.scorers_dir / SCORER_DIR)
        progress(3, 5, "study run")
        prompts = grid.build_grid(templates, factors, template_ids=["raise"], levels=DEMO_LEVELS)
        grid.write_grid(study_dir(ws, STUDY) / GRID_FILE, prompts)
        run_path = run_dir(ws, STUDY, RUN_ID) / RUN_FILE
        ticks = iter(range(10**9))
        collect_responses(plan_collection(prompts, advisors, run_path, run_id=RUN_ID),
                          clock=lambda: _START + timedelta(milliseconds=250 * next(ticks)))
        scoring.apply_to_run(model.load(scorer_dir), run_path, scored_path)
        progress(4, 5, "audit")
        sample = audit.stratified_sample(read_run(scored_path), AUDIT_N, seed=seed)
        audit_project, _ = audit.push_audit(store, AUDIT_PROJECT, sample)
        n_audit_ratings = _rate(store, audit_project, {audit.audit_identifier(r): _stance(r) for r in sample}, rng,
                                per_item=(3, 3, 2))
        progress(5, 5, "done")
    finally:
        store.dispose()
    return {"study": STUDY, "created": True, "training_items": len(records), "training_ratings": n_train_ratings,
            "scorer": str(scorer_dir), "held_out": model.summary_line(trained.manifest), "prompts": len(prompts),
            "responses": len(prompts) * len(advisors), "audited": len(sample), "audit_ratings": n_audit_ratings}

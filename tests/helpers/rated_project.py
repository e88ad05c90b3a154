"""A labeling project of study responses rated by simulated raters, for the scorer and study tests."""

from __future__ import annotations

import random

from core.labeling.store import LabelStore
from core.study import audit, grid
from core.study.demo import _rate, _stance
from core.study.responders import OFFLINE_MODELS


def build_rated_project(store: LabelStore, name: str = "stance", *, templates=("costs", "renewal"), seed: int = 0,
                        levels=None):
    prompts = grid.build_grid(grid.read_templates(), grid.read_factors(), template_ids=list(templates),
                              levels=levels)
    advisors = list(OFFLINE_MODELS.values())
    records = []
    for i, p in enumerate(prompts):
        a = advisors[i % 2]
        records.append({"run_id": "t", "model_id": a.model_id, "prompt_id": p["prompt_id"], "factors": p["factors"],
                        "messages": p["messages"], "response_text": a.respond(p["messages"]).text})
    project, _ = audit.push_audit(store, name, records)
    _rate(store, project, {audit.audit_identifier(r): _stance(r) for r in records}, random.Random(seed))
    return project, records

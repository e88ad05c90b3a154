"""The demo study: the whole pipeline offline, deterministic (same seed, same bytes)."""

from __future__ import annotations

from core.base.files import sha256_file
from core.labeling.store import close_stores
from core.study import demo
from core.study.runs import read_run
from core.workspace import Workspace


def test_demo_study_is_complete_and_deterministic(tmp_path):
    a = Workspace(tmp_path / "a").ensure()
    b = Workspace(tmp_path / "b").ensure()
    summary = demo.seed_study_demo(a, seed=0)
    demo.seed_study_demo(b, seed=0)
    assert summary["created"] and summary["responses"] == 72 and summary["audited"] == demo.AUDIT_N
    assert demo.seed_study_demo(a, seed=0) == {"study": demo.STUDY, "created": False}  # idempotent
    for rel in ("studies/demo-rent/grid.jsonl", "studies/demo-rent/runs/demo-run/run.jsonl",
                "studies/demo-rent/runs/demo-run/run_scored.jsonl", "scorers/demo-stance/model.json",
                "scorers/demo-stance/manifest.json"):
        assert sha256_file(a.root / rel) == sha256_file(b.root / rel), rel
    scored = read_run(a.root / "studies/demo-rent/runs/demo-run/run_scored.jsonl")
    assert all(r["offline"] and r["provider"] == "offline" and -1 <= r["score"] <= 1 for r in scored)
    assert {r["scorer_model"] for r in scored} == {"demo-stance"}
    close_stores()

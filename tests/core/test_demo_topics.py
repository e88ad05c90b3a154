"""The demo's own tasks (dietary restrictions, business dining): planted sentences, the offline cue
judge, GT of their policies, and the allergy content left untouched (issue 11)."""

from __future__ import annotations

import random

import polars as pl
import pytest

from core.demo.topics import BUSINESS, DIET_END, business_sentence, diet_sentence, every_sentence, plan_topics
from core.ground_truth import compute_gt, distribution_by_k, list_gt_files
from core.judgments import get_gt_judge, load_judgments
from core.judgments.judges import make_judge
from core.tasks import get_task, task_ids
from core.tasks.keyword_index import index_stats
from core.workspace import Workspace


def test_planted_sentences_carry_no_allergy_keyword():
    keywords = get_task("G1a", None).keywords
    assert not [(s, k) for s in every_sentence() for k in keywords if k in s.lower()]


@pytest.mark.parametrize("label", ["positive+quiet", "negative+loud", "neutral+efficient", "private", "loud+slow"])
def test_cue_judge_reads_business_sentences(small_demo, label):
    ws = Workspace(small_demo)
    judge = make_judge("cues", get_task("G2_meetings", ws))
    text = "Nice place overall. " + business_sentence(random.Random(1), label)
    fields = judge.judge([{"business_id": "b", "idx": 0, "review_id": "r", "text": text}])[0]["fields"]
    expected = {"meeting_outcome": "none", "noise_level": "none", "service_pace": "none", "privacy": "none"}
    for part in label.split("+"):
        name = {"positive": "meeting_outcome", "negative": "meeting_outcome", "neutral": "meeting_outcome",
                "quiet": "noise_level", "loud": "noise_level", "efficient": "service_pace", "slow": "service_pace",
                "private": "privacy"}[part]
        expected[name] = part
    assert fields == {**expected, "is_relevant": "true"}


@pytest.mark.parametrize("outcome", list(DIET_END))
def test_cue_judge_reads_dietary_sentences(small_demo, outcome):
    ws = Workspace(small_demo)
    judge = make_judge("cues", get_task("G1_diet", ws))
    record = judge.judge([{"business_id": "b", "idx": 0, "review_id": "r",
                           "text": diet_sentence(random.Random(3), f"firsthand:{outcome}")}])[0]
    got = record["fields"]
    assert got["account_type"] == "firsthand" and got["is_relevant"] == "true"
    assert outcome in (got["accommodation"], got["mistake"])
    assert record["excerpt"] and record["judge"] == "offline-cues-v1"


def test_plants_avoid_allergy_reviews_and_are_deterministic():
    a = plan_topics(7, 3, 200, taken={0, 1, 2})
    assert a == plan_topics(7, 3, 200, taken={0, 1, 2}) and not set(a) & {0, 1, 2}
    assert all(p.task in ("G1_diet", "G2_meetings") for p in a.values())
    assert set(BUSINESS) >= {"positive", "negative", "quiet", "loud", "private"}


def test_demo_shows_three_tasks_with_offline_judgments_and_gt(small_demo):
    ws = Workspace(small_demo)
    assert task_ids(ws) == ["G1a", "G1_diet", "G2_meetings"]
    stats = index_stats(ws, "demo")
    assert set(stats["tasks"]) == {"G1a", "G1_diet", "G2_meetings"}  # one pass, every task
    for task in ("G1_diet", "G2_meetings"):
        assert get_gt_judge(ws, "demo", task) == "offline-cues-v1"
        judged = load_judgments(ws, "demo", task)
        assert judged.height == stats["tasks"][task]["matches"] and judged["parse_error"].null_count() == judged.height
    frame = compute_gt(ws, "demo", "G2_meetings", "G2_meetings_V1", [25, 50, 100, 200])
    dist = distribution_by_k(frame, get_task("G2_meetings", ws).verdict_scale)
    assert dist.columns == ["k", "Poor fit", "Workable", "Great fit", "total"]
    assert set(frame["verdict"].unique()) <= {"Poor fit", "Workable", "Great fit"}
    files = {(f["definition"], f["k"]) for f in list_gt_files(ws)}
    assert {("G2_meetings_V2", 25), ("G1_diet_V1", 200)} <= files
    v2 = compute_gt(ws, "demo", "G1_diet", "G1_diet_V2", [25])
    assert v2["reference_year"].to_list()[0] == 2025  # no reference in the policy: the newest review's year
    assert pl.Series(v2["verdict"]).is_in(["Low Risk", "High Risk", "Critical Risk"]).all()

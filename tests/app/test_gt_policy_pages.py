"""The GT and Trace pages for the policy language's gaps (issue 11 after the pages refactor):
"score ≤" and per-K thresholds drawn, no meaningless score for a rule policy, verdict badges of
any scale from verdict_palette, the task's own wording, and the dataset's reference year."""

from __future__ import annotations

import json
import shutil

import polars as pl

from core.ground_truth import compute_gt
from core.ground_truth.compute import newest_review_year
from core.ground_truth.views.charts import verdict_badges
from core.workspace import Workspace

GT, TRACE = "app_pages/ground_truth.py", "app_pages/trace.py"
SCALE = ["Poor fit", "Workable", "Great fit"]


def _gt(app_factory, root, definition):
    at = app_factory(root).run()
    at.switch_page(GT).run()
    at.selectbox(key="gt.task").set_value("G2_meetings").run()
    at.selectbox(key="gt.definition").set_value(definition).run()
    assert not at.exception, at.exception
    return at


def _specs(at):
    return [c.proto.spec for c in at.get("vega_lite_chart")]


def test_score_chart_draws_le_rules_and_per_k_thresholds(app_factory, small_demo):
    at = _gt(app_factory, small_demo, "G2_meetings_V2")  # Great fit: score ≥ 20/35/50/60 by K; Poor fit: ≤ -5/-10
    chart = next(c for c in at.get("vega_lite_chart") if '"final score"' in c.proto.spec)
    texts = chart.proto.spec.count('"detail": {"field": "text"')  # the per-K threshold lines
    assert texts >= 1
    from core.ground_truth import views as gt_views

    frame = gt_views.score_thresholds(_policy(small_demo, "G2_meetings_V2"), [25, 50, 100, 200])
    assert set(frame.filter(pl.col("op") == "≤")["y"]) == {-5.0, -10.0}  # the "score ≤" rule, per K
    assert frame.filter(pl.col("op") == "≥")["y"].to_list() == [20.0, 35.0, 50.0, 60.0]
    assert any("Dashed: the score thresholds" in str(c.value) for c in at.caption)


def test_rule_policy_shows_no_score(app_factory, small_demo):
    at = _gt(app_factory, small_demo, "G2_meetings_V1")
    specs = _specs(at)
    assert not any('"final score"' in s for s in specs)  # no score chart: the rules decide
    assert any("A rule policy has no score" in str(i.value) for i in at.info)
    assert any("no number (a rule policy has no score)" in str(c.value) for c in at.caption)
    table = next(d.value for d in at.dataframe if "N_JUDGMENTS" in d.value.columns or "n_judgments" in d.value.columns)
    assert "score" not in table.columns


def _policy(root, policy_id):
    from core.ground_truth import get_definition

    return get_definition(policy_id, Workspace(root))


def _trace(app_factory, root, definition):
    frame = compute_gt(Workspace(root), "demo", "G2_meetings", definition, [50])
    row = frame.sort("n_incidents", "business_id", descending=True).row(0, named=True)
    at = app_factory(root).run()
    at.query_params.update({"dataset": "demo", "task": "G2_meetings", "formula": definition, "k": "50",
                            "business_id": row["business_id"]})
    at.switch_page(TRACE).run()
    assert not at.exception, at.exception
    return at, row


def test_trace_of_a_rule_policy_badges_on_its_scale_and_no_score(app_factory, small_demo):
    at, row = _trace(app_factory, small_demo, "G2_meetings_V1")
    colour = verdict_badges(SCALE)[row["verdict"]]
    head = next(str(m.value) for m in at.markdown if "at K=50" in str(m.value))
    assert head.startswith(f":{colour}-badge[") and "0.00" not in head
    assert not any(m.label.startswith("K=") for m in at.metric)  # no score strip for a rule policy
    captions = " ".join(str(c.value) for c in at.caption)
    assert "N_ALLERGY_REVIEWS" not in captions and "Business Dining" in captions


def test_trace_of_a_scoring_policy_keeps_its_scores(app_factory, small_demo):
    at, row = _trace(app_factory, small_demo, "G2_meetings_V2")
    head = next(str(m.value) for m in at.markdown if "at K=50" in str(m.value))
    assert f"**{row['score']:.2f}**" in head and head.startswith(f":{verdict_badges(SCALE)[row['verdict']]}-badge[")
    assert [m.label for m in at.metric if m.label.startswith("K=")]


def test_gt_page_uses_the_datasets_newest_review_year(small_demo, tmp_path):
    """A policy without a reference year takes the dataset's newest review (as `gt`), not the judgments'."""
    from core.ground_truth.policies.loader import POLICY_DIR
    from core.judgments import load_judgments
    from core.ui import cache

    root = tmp_path / "ws"
    shutil.copytree(small_demo, root)
    yaml = (POLICY_DIR / "G1_allergy_V3.yaml").read_text(encoding="utf-8")
    yaml = yaml.replace("policy_id: G1_allergy_V3", "policy_id: G1_allergy_V3_dataset_year")
    yaml = "\n".join(line for line in yaml.splitlines() if "reference_year:" not in line) + "\n"
    (root / "policies" / "G1_allergy_V3_dataset_year.yaml").write_text(yaml, encoding="utf-8")
    ws = Workspace(root)
    year = newest_review_year(ws, "demo")
    # keep only the judgments of reviews older than the dataset's newest year (the copy is ours):
    # a reference taken from the judgments would then be an earlier year
    from core.datasets import scan_reviews

    old = set(scan_reviews(ws, "demo").filter(pl.col("date").str.slice(0, 4).cast(pl.Int64) < year)
              .select("business_id", pl.col("idx").cast(pl.Int64)).collect().iter_rows())
    log = root / "judgments" / "demo" / "G1a" / "heuristic-v2.jsonl"
    kept = [line for line in log.read_text(encoding="utf-8").splitlines()
            if (json.loads(line)["business_id"], json.loads(line)["idx"]) in old]
    log.write_text("\n".join(kept) + "\n", encoding="utf-8")
    assert load_judgments(ws, "demo", "G1a")["date"].str.slice(0, 4).cast(pl.Int64).max() < year
    page = cache.gt_frame(ws, "demo", "G1a", None, "G1_allergy_V3_dataset_year", [25, None])
    cli = compute_gt(ws, "demo", "G1a", "G1_allergy_V3_dataset_year", [25, None])
    assert set(page["reference_year"].to_list()) == set(cli["reference_year"].to_list()) == {year}
    key = ["business_id", "k"]
    joined = page.select(*key, "score", "verdict").join(cli.select(*key, "score", "verdict"), on=key, nulls_equal=True)
    assert joined.height == cli.height == 24
    assert (joined["score"] == joined["score_right"]).all() and (joined["verdict"] == joined["verdict_right"]).all()

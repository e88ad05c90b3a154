"""The Analysis page through AppTest on the small demo workspace (its demo study) and on edge cases."""

from __future__ import annotations

import json
import shutil

from core.study.runs import import_scored_run
from core.workspace import Workspace

PAGE = "app_pages/analysis.py"


def test_analysis_page_shows_groups_uplifts_audit_and_disagreements(app_factory, small_demo):
    at = app_factory(small_demo).run()
    at.switch_page(PAGE).run()
    assert not at.exception, at.exception
    assert at.title[0].value == "Perspective analysis"
    assert at.selectbox(key="analysis.run").value == "demo-rent / demo-run"
    assert at.selectbox(key="analysis.project").value == "demo-rent-audit"
    quality, groups, uplift, versus = (d.value for d in at.dataframe)
    # the demo scorer's held-out quality, from its manifest, before any conclusion drawn with it
    assert list(quality["scorer"]) == ["demo-stance"] and list(quality["verdict"]) == ["usable"]
    assert quality["Lin's CCC"].iloc[0] > 0.4 and not at.warning
    assert len(groups) == 6 and set(groups["asked as"]) == {"landlord", "tenant", "neutral"}
    assert {"Sides with the tenant", "Balanced", "Sides with the landlord"} <= set(groups.columns)  # project labels
    assert len(uplift) == 2
    assert list(versus["who"]) == ["demo-stance", "human ceiling"]
    assert any("offline models (rule-based, no LLM)" in c.value for c in at.caption)
    specs = [json.loads(c.proto.spec) for c in at.get("arrow_vega_lite_chart")] or [
        json.loads(c.proto.spec) for c in at.get("vega_lite_chart")]
    assert len(specs) == 2
    assert "scorer − human" in json.dumps(specs[1], ensure_ascii=False)
    assert len(at.get("download_button")) == 1  # the audit brought back, as CSV
    texts = [t.value for t in at.text]
    assert texts and all(not any(t in m.value for m in at.markdown) for t in texts if len(t) > 20)

    at.segmented_control(key="analysis.perspective").set_value("tenant").run()
    assert not at.exception
    assert at.dataframe[3].value["n"].iloc[0] < versus["n"].iloc[0]

    at.number_input(key="analysis.bins").set_value(0.5).run()
    assert not at.exception
    wider = at.dataframe[1].value
    assert (wider["Balanced"] >= groups["Balanced"]).all()

    at.selectbox(key="analysis.project").set_value("(no audit)").run()
    assert not at.exception and len(at.dataframe) == 3
    assert any("Choose a human audit" in i.value for i in at.info)


def test_imported_llm_judged_run_and_empty_workspace(app_factory, small_demo, tmp_path, fixtures_dir):
    root = tmp_path / "ws"
    shutil.copytree(small_demo, root)
    import_scored_run(Workspace(root), fixtures_dir / "aita/runs/1760158358/run_scored.jsonl", study="aita")
    at = app_factory(root).run()
    at.switch_page(PAGE).run()
    assert not at.exception
    at.selectbox(key="analysis.run").set_value("aita / 1760158358").run()
    assert not at.exception
    assert at.selectbox(key="analysis.project").value == "(no audit)"
    assert any("scored by **openai/gpt\\-oss\\-20b\\:free**" in c.value for c in at.caption)  # escaped: text
    groups = at.dataframe[1].value
    assert len(groups) == 6
    # an LLM judge: no manifest, its quality unknown; the neutral groups scored 0 throughout say so
    assert list(at.dataframe[0].value["verdict"]) == ["unknown (no manifest)"]
    (box,) = [w.value.replace("\\", "") for w in at.warning]  # text from data: escaped markdown, one box
    warnings = box.split("\n\n")
    assert any("no scorer manifest" in w for w in warnings)
    assert sum("nothing varies, so the interval has no width" in w for w in warnings) == 2
    neutral = groups[groups["asked as"] == "neutral"]
    assert list(neutral["95% CI"]) == ["none: all 36 scores +0.00", "none: all 35 scores +0.00"]
    assert list(neutral["failed"]) == [0, 1] and list(neutral["never scored"]) == [0, 0]

    empty = Workspace(tmp_path / "empty").ensure()
    at = app_factory(empty.root).run()
    at.switch_page(PAGE).run()
    assert not at.exception
    assert any("No scored run" in i.value for i in at.info)


def test_a_weak_scorer_is_flagged_next_to_its_conclusions(app_factory, small_demo, tmp_path):
    root = tmp_path / "ws"
    shutil.copytree(small_demo, root)
    manifest_path = next(root.glob("scorers/*/manifest.json"))
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    manifest["metrics"].update(ccc=0.046, mae=0.358, pearson=0.207)  # the scorer trained on the real AITA ratings
    manifest["n_test"] = 15
    manifest_path.write_text(json.dumps(manifest), encoding="utf-8")
    at = app_factory(root).run()
    at.switch_page(PAGE).run()
    assert not at.exception, at.exception
    quality = at.dataframe[0].value
    assert list(quality["verdict"]) == ["weak (CCC < 0.4)"] and list(quality["held-out n"]) == [15]
    first = [w.value.replace("\\", "") for w in at.warning][0]  # text from data: escaped markdown
    assert first.startswith("Scorer demo-stance is weak: held-out CCC 0.05 with the human consensus (MAE 0.36, "
                            "Pearson 0.21, n_test 15), below 0.4")
    # and beside the uplifts
    assert any("Scored by demo-stance: held-out CCC 0.05 (weak)." in c.value.replace("\\", "") for c in at.caption)

"""Results page through AppTest: one run, two runs compared, the drilldown, no runs, caching by stamp."""

from __future__ import annotations

import json
import shutil

import pyarrow as pa
import pytest

from tests.helpers.results import write_runs

PAGE = "app_pages/results.py"


@pytest.fixture(scope="module")
def results_ws(small_demo, tmp_path_factory):
    root = tmp_path_factory.mktemp("results") / "ws"
    shutil.copytree(small_demo, root)
    write_runs(root, n_boot=100)
    return root


def _open(app_factory, root):
    at = app_factory(root).run()
    at.switch_page(PAGE).run()
    assert not at.exception, at.exception
    return at


def test_one_run_shows_scores_intervals_and_ranking_source(app_factory, results_ws):
    at = _open(app_factory, results_ws)
    labels = [m.label for m in at.metric]
    assert [lbl.split()[0] for lbl in labels[:4]] == ["AUPRC", "Process", "Consistency", "Accuracy"]
    run = json.loads((results_ws / "runs" / at.selectbox(key="results.run").value.split()[0] / "results.json").read_text())
    assert at.metric[0].value == f"{run['unified_scores']['auprc'] * 100:.1f}%"
    assert any(c.value.startswith("95 % CI") for c in at.caption)
    assert any("Samples ranked by **risk\\_score**" in c.value for c in at.caption)  # names from data are escaped
    specs = [json.loads(c.proto.spec) for c in at.get("vega_lite_chart")]
    assert len(specs) >= 3  # PR curves, process components, confusion matrix
    thresholds = at.dataframe[0].value
    assert list(thresholds["threshold"]) == ["≥ High Risk", "≥ Critical Risk"]


def test_drilldown_filters_and_shows_evidence(app_factory, results_ws):
    at = _open(app_factory, results_ws)
    at.multiselect(key="results.gt").set_value(["Critical Risk"]).run()
    assert not at.exception, at.exception
    table = next(d.value for d in at.dataframe if "gt_verdict" in d.value.columns)
    assert set(table["gt_verdict"]) == {"Critical Risk"}
    bid = at.selectbox(key="results.business_id").value
    assert bid in set(table["business_id"])
    links = [el.proto for el in at.get("page_link") if "Trace" in el.proto.label]
    assert links and f"business_id={bid}" in links[0].help and "formula=G1_allergy_V2" in links[0].help
    evidence = next(d.value for d in at.dataframe if "snippet_found" in d.value.columns)
    assert len(evidence) >= 1 and evidence["snippet_found"].all()  # snippets quote the review texts
    assert any(c.value.startswith("<b>raw</b>") for c in at.code)  # raw response as text, never HTML
    at.selectbox(key="results.correct").set_value("incorrect").run()
    assert not at.exception, at.exception


def test_two_runs_compared_with_paired_differences_and_buckets(app_factory, results_ws):
    at = _open(app_factory, results_ws)
    at.radio(key="results.mode").set_value("Compare runs").run()
    assert not at.exception, at.exception
    chosen = at.multiselect(key="results.runs").value
    assert len(chosen) == 2
    diffs = next(d.value for d in at.dataframe if "diff_pct" in d.value.columns)
    assert list(diffs["metric"]) == ["AUPRC", "Process", "Consistency", "Accuracy"]
    assert diffs["diff_low_pct"].le(diffs["diff_pct"]).all()
    buckets = {m.label: int(m.value) for m in at.metric}
    assert set(buckets) == {"newly failing", "newly fixed", "still failing", "still right"}
    assert sum(buckets.values()) == 12
    specs = [json.loads(c.proto.spec) for c in at.get("vega_lite_chart")]
    assert len(specs) == 1  # scores with intervals; the two newest runs share K = 50
    at.checkbox(key="results.k_all_runs").check().run()
    assert len(at.get("vega_lite_chart")) == 2  # + score against K over every run (K 25 and 50)
    at.selectbox(key="results.baseline").set_value(chosen[1]).run()
    assert not at.exception, at.exception


def test_no_runs_says_so(app_factory, small_demo, tmp_path):
    root = tmp_path / "ws"
    shutil.copytree(small_demo, root, ignore=shutil.ignore_patterns("runs"))  # the demo makes runs now
    at = _open(app_factory, root)
    assert any("No runs yet" in i.value for i in at.info)


def test_rewritten_results_file_is_read_again(app_factory, results_ws, tmp_path):
    root = tmp_path / "ws"
    shutil.copytree(results_ws, root)
    at = _open(app_factory, root)
    label = at.selectbox(key="results.run").value
    path = root / "runs" / label.split()[0] / "results.json"
    run = json.loads(path.read_text())
    run["unified_scores"]["auprc"] = 0.123
    path.write_text(json.dumps(run))
    at.run()
    assert not at.exception
    assert at.metric[0].value == "12.3%"


def test_unscored_results_file_is_scored_in_memory_only(app_factory, small_demo, tmp_path):
    from tests.helpers.metrics import run, sample

    root = tmp_path / "ws"
    shutil.copytree(small_demo, root)
    samples = [sample(f"b{i}", {"verdict": v, "risk_score": float(i), "evidences": []}, gt_verdict=g)
               for i, (v, g) in enumerate([("Low Risk", "Low Risk"), ("High Risk", "High Risk"), ("Low Risk", "High Risk")])]
    folder = root / "runs" / "made_elsewhere"
    folder.mkdir(parents=True)
    text = json.dumps(run(samples, run_id="made_elsewhere"))
    (folder / "results.json").write_text(text, encoding="utf-8")
    at = _open(app_factory, root)
    # GT from gt_verdict: 2 of 3 right; ≥High ranked by risk_score 0,1,2 with y 0,1,1 → AP 1
    assert at.metric[0].value == "100.0%" and at.metric[3].value == "66.7%"
    assert (folder / "results.json").read_text(encoding="utf-8") == text  # nothing written


def test_a_run_link_from_the_runs_page_selects_that_run(app_factory, results_ws):
    runs = sorted(p.name for p in (results_ws / "runs").iterdir() if (p / "results.json").exists())
    at = app_factory(results_ws)
    at.query_params["run"] = runs[-1]
    at.run()
    at.switch_page(PAGE).run()
    assert not at.exception, at.exception
    assert at.selectbox(key="results.run").value.split()[0] == runs[-1]


def test_a_degenerate_run_gets_no_tick_and_says_why(app_factory, small_demo, tmp_path):
    """The "no incident everywhere" run (tests.helpers.metrics): its headline shows ⚠/✗ with the
    reasons, accuracy beside its majority baseline, the incidents line, an amos spec fallback, and the PR
    curve drawn at its AP (the prevalence), not flat at precision 1."""
    from tests.helpers.charts import drawn_areas
    from tests.helpers.metrics import no_incident_run

    root = tmp_path / "ws"
    shutil.copytree(small_demo, root, ignore=shutil.ignore_patterns("runs"))
    folder = root / "runs" / "no-incident"
    folder.mkdir(parents=True)
    (folder / "results.json").write_text(json.dumps(no_incident_run()), encoding="utf-8")
    (folder / "spec.json").write_text(json.dumps({"spec": {"fallback": "keywords must be a non-empty list of strings"},
                                                  "usage": {"llm_calls": 1}}), encoding="utf-8")
    at = _open(app_factory, root)
    assert [m.label for m in at.metric[:4]] == ["AUPRC ⚠", "Process ⚠", "Consistency ⚠", "Accuracy ✗"]
    assert [m.value for m in at.metric[:4]] == ["2.0%", "75.0%", "100.0%", "98.0%"]  # SPEC §5 values unchanged
    captions = [c.value.replace("\\", "") for c in at.caption]  # text from data: escaped markdown
    assert any(c.endswith("majority baseline 98.0% (Low Risk)") for c in captions)
    assert "0 incidents claimed, 0 of 1 GT incident found" in captions
    (box,) = [w.value.replace("\\", "") for w in at.warning]  # one box, a paragraph per line
    assert [w.split(":")[0] for w in box.split("\n\n")] == ["AUPRC 2.0% ⚠", "Process 75.0% ⚠", "Consistency 100.0% ⚠",
                                                          "Accuracy 98.0% ✗", "amos spec fallback"]
    chart = next(c for c in at.get("vega_lite_chart") if "recall" in c.proto.spec)
    spec = json.loads(chart.proto.spec)  # the data travel as Arrow beside the spec
    (named,) = chart.proto.datasets
    spec["datasets"] = {named.name: pa.ipc.open_stream(named.data.data).read_all().to_pylist()}
    assert drawn_areas(spec) == {"≥ High Risk": pytest.approx(0.02, abs=1e-9)}
    assert at.dataframe[0].value["AP"].iloc[0] == pytest.approx(0.02)  # the AP printed beside the curve


def test_a_link_with_a_baseline_compares_and_offers_the_paired_table(app_factory, results_ws):
    from core.release.run_figures import paired_table, samples_frame
    from core.runs.records import load_results

    runs = sorted(p.name for p in (results_ws / "runs").iterdir() if (p / "results.json").exists())
    at = app_factory(results_ws)
    at.query_params.update({"run": runs[-1], "baseline": runs[0]})  # what `show --json` prints as link
    at.run()
    at.switch_page(PAGE).run()
    assert not at.exception, at.exception
    assert at.radio(key="results.mode").value == "Compare runs"
    assert at.selectbox(key="results.baseline").value.split()[0] == runs[0]
    labels = [b.proto.label for b in at.get("download_button")]
    assert "Paired table (CSV)" in labels and "Paired table (Parquet)" in labels
    other = at.selectbox(key="results.other").value.split()[0]
    table = paired_table(*(samples_frame(load_results(results_ws / "runs" / r)) for r in (runs[0], other)))
    assert table.height == 12
    assert (table["bucket"] == "GT differs").to_list() == (~table["same_gt"]).to_list()  # those are not paired
    assert {"baseline_verdict", "verdict", "gt_verdict", "bucket"} <= set(table.columns)

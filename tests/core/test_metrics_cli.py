"""``python -m core score`` / ``show`` end to end on the shared ADDM fixtures and built runs."""

from __future__ import annotations

import copy
import json

import pytest

from core.cli import main
from tests.helpers.metrics import answer, perfect_run_from_gt, review_texts, run, sample


def test_score_with_addm_gt_and_dataset(fixtures_dir, workspace, tmp_path, capsys):
    folder = fixtures_dir / "dev-ADDM"
    gt_file = folder / "answers" / "G1_allergy_V2_K25_groundtruth.json"
    texts = review_texts(folder / "dataset_K25_subset.jsonl")
    results, gt = perfect_run_from_gt(gt_file, texts)
    for s in results["results"]:
        s["gt_verdict"] = None  # GT must come from --gt
    bid = "JrG4NINLspXPNhSXg7Q07Q"
    s = next(x for x in results["results"] if x["business_id"] == bid)
    s["parsed"]["evidences"][0]["snippet"] = "not in the review"  # 1 of the snippets is invented
    path = tmp_path / "results.json"
    path.write_text(json.dumps(results), encoding="utf-8")
    root = str(workspace.root)
    assert main(["--workspace", root, "datasets", "import", str(folder / "dataset_K25_subset.jsonl"), "--name", "addm5"]) == 0
    capsys.readouterr()
    out_file = tmp_path / "scored.json"
    assert main(["--workspace", root, "score", str(path), "--gt", str(gt_file), "--dataset", "addm5", "--n-boot", "100",
                 "--out", str(out_file)]) == 0
    text = capsys.readouterr().out
    assert "UNIFIED SCORES" in text and "│ AUPRC       │ 100.0% │ ✓" in text
    scored = json.loads(out_file.read_text(encoding="utf-8"))
    comp = scored["unified_metrics_full"]["process_components"]
    n_snippets = scored["unified_metrics_full"]["intermediate_metrics"]["n_snippets"]
    assert comp["snippet_validity"] == pytest.approx((n_snippets - 1) / n_snippets)
    assert json.loads(path.read_text(encoding="utf-8")) == results  # the input file is untouched


def test_score_json_and_show_compare(workspace, capsys):
    def one(bid, g, v):
        return sample(bid, answer(v, [], score={"Low Risk": 0, "High Risk": 5, "Critical Risk": 9}[v]), gt_verdict=g)

    base = run([one("a", "Low Risk", "Low Risk"), one("b", "High Risk", "Low Risk"), one("c", "Critical Risk", "Critical Risk")],
               run_id="base", method="direct")
    better = copy.deepcopy(base)
    better["run_id"], better["method"] = "better", "cot"
    better["results"][1] = one("b", "High Risk", "High Risk")
    for r in (base, better):
        d = workspace.runs_dir / r["run_id"]
        d.mkdir(parents=True)
        (d / "results.json").write_text(json.dumps(r), encoding="utf-8")
    root = str(workspace.root)
    assert main(["--workspace", root, "score", str(workspace.runs_dir / "base"), "--json", "--n-boot", "50"]) == 0
    scored = json.loads(capsys.readouterr().out)
    assert (scored["correct"], scored["total"]) == (2, 3)
    assert main(["--workspace", root, "show"]) == 0
    text = capsys.readouterr().out
    assert text.count("UNIFIED SCORES") == 1 and "COMPARISON" in text and "better" in text and "base" in text
    assert main(["--workspace", root, "show", str(workspace.runs_dir / "base"), str(workspace.runs_dir / "better")]) == 0
    assert capsys.readouterr().out.count("UNIFIED SCORES") == 2


def test_score_bad_file_is_one_line(tmp_path, workspace, capsys):
    bad = tmp_path / "results.json"
    bad.write_text('{"results": [{"verdict": "Low Risk"}]}', encoding="utf-8")
    assert main(["--workspace", str(workspace.root), "score", str(bad)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "results[0]" in err and err.count("\n") == 1

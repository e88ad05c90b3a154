"""Comparing two judgment sets: κ and confusion against scikit-learn, and the real xnot judgments
against a copy with three fields changed (exactly those reviews and the restaurants they move)."""

from __future__ import annotations

import copy
import json

import numpy as np
import polars as pl
import pytest
from sklearn.metrics import cohen_kappa_score, confusion_matrix

from core.cli import main
from core.ground_truth.views.judge_compare import cohen_kappa, compare_fields, compare_judges, confusion
from core.judgments.judges import charts
from core.judgments.xnot_files import import_xnot_judgments

LABELS = ["none", "mild", "moderate", "severe"]


def test_kappa_and_confusion_match_scikit_learn():
    a = ["none", "none", "mild", "severe", "moderate", "none", "mild", "none"]
    b = ["none", "mild", "mild", "severe", "none", "none", "mild", "moderate"]
    # p_o = 5/8; marginals a: none 4, mild 2, moderate 1, severe 1; b: none 3, mild 3, moderate 1, severe 1
    # p_e = (4·3 + 2·3 + 1·1 + 1·1) / 64 = 20/64; κ = (40/64 − 20/64) / (44/64) = 20/44
    assert cohen_kappa(a, b, LABELS) == pytest.approx(20 / 44)
    assert cohen_kappa(a, b, LABELS) == pytest.approx(cohen_kappa_score(a, b, labels=LABELS))
    assert confusion(a, b, LABELS).tolist() == confusion_matrix(a, b, labels=LABELS).tolist()


def test_kappa_edge_cases():
    assert cohen_kappa([], [], LABELS) is None
    assert cohen_kappa(["none"] * 3, ["none"] * 3, LABELS) == 1.0  # one label, full agreement
    assert cohen_kappa(["none"] * 3, ["none", "none", "mild"], LABELS) == pytest.approx(0.0)
    with pytest.raises(ValueError, match="differ in length"):
        cohen_kappa(["none"], [], LABELS)


def test_compare_fields_lists_the_reviews_only_one_judged():
    a = pl.DataFrame({"business_id": ["b", "b", "c"], "idx": [0, 1, 0], "review_id": ["r0", "r1", "r2"],
                      "name": ["B", "B", "C"], "incident_severity": ["none", "mild", "none"]})
    b = a.filter(pl.col("idx") == 0).with_columns(pl.lit("severe").alias("incident_severity"))
    out = compare_fields(a, b, ["incident_severity"], {"incident_severity": LABELS})
    assert out["n_both"] == 2 and [r["review_id"] for r in out["only_a"]] == ["r1"] and out["only_b"] == []
    f = out["fields"]["incident_severity"]
    assert f["agreement"] == 0.0 and np.array(f["confusion"])[0, 3] == 2


# Three changes to real judgments: two make a firsthand severe incident of a review that had none
# (+15 points, times recency and credibility: both restaurants leave Low Risk at K = all),
# one only changes a staff interaction from none to positive in a restaurant that stays Low.
CHANGES = [
    ("incident_severity", "severe", "account_type", "firsthand"),
    ("incident_severity", "severe", "account_type", "firsthand"),
    ("safety_interaction", "positive", None, None),
]


@pytest.fixture()
def xnot_pair(fixtures_dir, workspace, tmp_path):
    path = fixtures_dir / "xnot" / "semantic_gt" / "task_G1a" / "judgments.json"
    data = json.loads(path.read_text())
    changed = copy.deepcopy(data)
    quiet = [name for name, block in changed["judgments"].items()
             if all(r["incident_severity"] == "none" and r["safety_interaction"] == "none" for r in block["reviews"])]
    touched = []
    for name, (f1, v1, f2, v2) in zip(quiet[:3], CHANGES, strict=True):
        review = changed["judgments"][name]["reviews"][0]
        review[f1] = v1
        if f2:
            review[f2] = v2
        touched.append((name, review["idx"]))
    copy_path = tmp_path / "judgments_changed.json"
    copy_path.write_text(json.dumps(changed))
    import_xnot_judgments(workspace, path, task="G1a", dataset="x", judge="gpt-5-nano")
    import_xnot_judgments(workspace, copy_path, task="G1a", dataset="x", judge="gpt-5-nano-edited")
    return workspace, touched


@pytest.mark.fixtures
def test_xnot_judgments_against_a_copy_with_three_changes(xnot_pair):
    ws, touched = xnot_pair
    report = compare_judges(ws, "x", "G1a", "gpt-5-nano", "gpt-5-nano-edited", definitions=["v1"], ks=[None])
    assert report["n_both"] == report["n_a"] == report["n_b"] == 2173
    assert report["only_a"] == report["only_b"] == []
    sev = report["fields"]["incident_severity"]
    assert sev["agreement"] == pytest.approx(2171 / 2173)
    assert np.array(sev["confusion"])[0, 3] == 2  # none → severe, twice
    assert report["fields"]["safety_interaction"]["agreement"] == pytest.approx(2172 / 2173)
    (v1,) = report["verdicts"]
    moved = {d["name"]: d for d in v1["differing"]}
    assert set(moved) == {touched[0][0], touched[1][0]}  # the staff change moves no verdict
    for name, d in moved.items():
        assert d["verdict_a"] == "Low Risk" and d["verdict_b"] != "Low Risk"
        (review,) = d["reviews"]
        assert (name, review["idx"]) in touched
        assert review["fields"] == {"incident_severity": {"a": "none", "b": "severe"},
                                    "account_type": {"a": review["fields"]["account_type"]["a"], "b": "firsthand"}}
    assert v1["verdict_agreement"] == pytest.approx(98 / 100)


@pytest.mark.fixtures
def test_cli_judges_compare(xnot_pair, capsys):
    ws, touched = xnot_pair
    code = main(["--workspace", str(ws.root), "judges", "compare", "--dataset", "x", "--a", "gpt-5-nano",
                 "--b", "gpt-5-nano-edited", "--formula", "v1", "--k", "all", "50"])
    out = capsys.readouterr().out
    assert code == 0
    assert "2173 reviews judged by both" in out and "98.0 %" in out and touched[0][0] in out
    code = main(["--workspace", str(ws.root), "--json", "judges", "compare", "--dataset", "x",
                 "--a", "gpt-5-nano", "--b", "gpt-5-nano"])
    assert code == 1 and "two different judges" in capsys.readouterr().err


@pytest.mark.fixtures
def test_compare_charts_of_the_xnot_pair(xnot_pair):
    """The Compare judges charts: every confusion count in its cell with the diagonal outlined, and the
    verdict agreement of each formula and policy at each K (a legend only with several of them)."""
    ws, _ = xnot_pair
    report = compare_judges(ws, "x", "G1a", "gpt-5-nano", "gpt-5-nano-edited", definitions=["v1", "v2"], ks=[None, 50])
    for name, f in report["fields"].items():
        spec = charts.confusion_heatmap(f["confusion"], f["labels"], a="gpt-5-nano", b="gpt-5-nano-edited",
                                        title=name).to_dict()
        (rows,) = spec["datasets"].values()
        assert sum(r["n"] for r in rows) == report["n_both"] == 2173
        assert {(r["a"], r["b"]): r["n"] for r in rows if r["n"]} == {
            (la, lb): n for la, row in zip(f["labels"], f["confusion"], strict=True)
            for lb, n in zip(f["labels"], row, strict=True) if n}
        cells, text = spec["layer"]
        assert cells["encoding"]["stroke"]["condition"]["test"] == "datum.agree"
        assert text["encoding"]["text"]["field"] == "n" and spec["title"] == name
    spec = charts.verdict_agreement_chart(report["verdicts"]).to_dict()
    (rows,) = spec["datasets"].values()
    assert {(r["definition"], r["K"]): r["agreement"] for r in rows} == {
        (v["definition"], "all" if v["k"] is None else str(v["k"])): 100 * v["verdict_agreement"]
        for v in report["verdicts"]}
    assert {r["differ"] for r in rows if r["definition"] == "v1" and r["K"] == "all"} == {2}
    assert spec["encoding"]["x"]["sort"] == ["50", "all"] and spec["encoding"]["color"]["legend"]["orient"] == "top"
    single = charts.verdict_agreement_chart([v for v in report["verdicts"] if v["definition"] == "v1"]).to_dict()
    assert single["encoding"]["color"]["legend"] is None

"""The GT page's verdict probabilities (issue 28): P(verdict) in the primitives table and the grid,
uncertain restaurants per K, a knife edge's tables; a confusion file's name is checked."""

from __future__ import annotations

import polars as pl
import pytest

from core.ground_truth.views import certainty
from core.workspace import Workspace

P = pl.DataFrame({"business_id": ["a", "b", "a"], "k": [25, 25, None], "verdict": ["High Risk", "Low Risk", "Low Risk"],
                  "p": [{"Low Risk": 0.25, "High Risk": 0.75}, {"Low Risk": 1.0, "High Risk": 0.0},
                        {"Low Risk": 1.0, "High Risk": 0.0}],
                  "p_verdict": [0.75, 1.0, 1.0]})


def test_table_gets_p_after_verdict_and_the_other_verdicts():
    table = pl.DataFrame({"name": ["A", "B"], "verdict": ["High Risk", "Low Risk"], "score": [4.5, 0.0],
                          "business_id": ["a", "b"]})
    out = certainty.with_probability(table, P, 25)
    assert out.columns[:4] == ["name", "verdict", "P(verdict)", "other verdicts"]
    assert out["P(verdict)"].to_list() == [0.75, 1.0] and out["other verdicts"].to_list() == ["Low Risk 0.25", ""]


def test_grid_cells_and_counts_per_k():
    long = pl.DataFrame({"business_id": ["a", "a", "b"], "k_label": ["25", "all", "25"]})
    assert certainty.grid_probability(long, P)["p_verdict"].to_list() == [0.75, 1.0, 1.0]
    assert certainty.uncertain_by_k(P, [25, None]).rows() == [("25", 2, 1, 0.75), ("all", 1, 0, 1.0)]


def test_knife_edge_tables():
    edge = {"thresholds": [{"verdict": "Critical Risk", "text": "score ≥ 8", "value": 18.0, "threshold": 8.0,
                            "margin": 10.0, "holds": True}],
            "flips": {"High Risk": [{"review_id": "r9", "idx": 9, "field": "incident_severity", "judged": "moderate",
                                     "value": "none"},
                                    {"review_id": "r13", "idx": 13, "field": "incident_severity", "judged": "moderate",
                                     "value": "none"}]}}
    assert certainty.threshold_rows(edge).row(0) == ("Critical Risk", "score ≥ 8", 18.0, 8.0, 10.0, "yes")
    flips = certainty.flip_rows(edge)
    assert flips["idx"].to_list() == [9, 13] and set(flips["changes"].to_list()) == {2}


def test_confusion_files_are_listed_and_names_checked(tmp_path):
    ws = Workspace(tmp_path)
    assert certainty.confusion_files(ws) == []
    (tmp_path / "confusion").mkdir()
    (tmp_path / "confusion" / "half.json").write_text('{"incident_severity": {"moderate": {"none": 0.5, "moderate": 0.5}}}')
    assert certainty.sources(ws, "d", "G1a") == ["file:half.json"]
    confusion = certainty.load_source(ws, "file:half.json", "G1a", "j")
    assert confusion is not None
    with pytest.raises(ValueError):
        certainty.load_source(ws, "file:../x.json", "G1a", "j")
    with pytest.raises(ValueError, match="unknown confusion source"):
        certainty.load_source(ws, "web:x", "G1a", "j")

"""The analysis charts: layers, encodings and the Bland–Altman lines at the given values."""

from __future__ import annotations

from core.study import charts


def test_group_means_chart_has_interval_point_and_zero_line():
    groups = [{"model_id": "m", "perspective": p, "n": 3, "mean": v, "ci_low": v - 0.1, "ci_high": v + 0.1}
              for p, v in (("landlord", 0.4), ("tenant", -0.3), ("neutral", 0.0))]
    spec = charts.group_means_chart(groups).to_dict()
    marks = [layer["mark"]["type"] if isinstance(layer["mark"], dict) else layer["mark"] for layer in spec["layer"]]
    assert marks == ["rule", "rule", "point"]
    assert spec["layer"][1]["encoding"]["x"]["scale"]["domain"] == [-1, 1]
    rows = [r for d in spec["datasets"].values() for r in d if "row" in r]
    assert [r["row"] for r in rows] == ["m · landlord", "m · tenant", "m · neutral"]


def test_bland_altman_lines_are_bias_and_limits():
    points = [{"model_id": "m", "perspective": "tenant", "prompt_id": str(i), "mean": 0.1 * i, "diff": d}
              for i, d in enumerate((0.2, -0.1, 0.05))]
    spec = charts.bland_altman_chart(points, {"bias": 0.05, "loa_low": -0.25, "loa_high": 0.35}).to_dict()
    datasets = list(spec["datasets"].values())
    lines = next(d for d in datasets if d and "what" in d[0])
    assert [(r["what"], r["y"]) for r in lines] == [("bias", 0.05), ("95% limit", -0.25), ("95% limit", 0.35)]
    assert spec["layer"][0]["encoding"]["y"]["scale"]["domain"][1] >= 0.35

"""Issue 26, Medium 7 and 8 and the Low items on policies: crafted YAML and policy files are one-line
DataErrors naming file, line or field, never a hang, a crash, a traceback or a read outside."""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from core.base.errors import DataError, UnknownNameError
from core.base.files import read_yaml_mapping
from core.ground_truth.policies.addm_convert import convert_policy
from core.ground_truth.policies.addm_terms import Terms
from core.ground_truth.policies.loader import get_policy, load_policy_file
from core.workspace import Workspace

HEAD = "dev-ADDM/head"


def _laughs(levels: int = 9) -> str:
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, levels + 1)]
    return "\n".join([*lines, "policy_id: G1_x_V1"]) + "\n"


@pytest.mark.parametrize(("text", "message", "line"), [
    (_laughs(), "billion laughs", 6),  # the line whose aliases cross the limit, not the file's end
    ("x: " + "[" * 50_000 + "]" * 50_000 + "\n", "nested more than 64 levels deep", 1),
    ("a:\n" + "".join("  " * i + f"k{i}:\n" for i in range(1, 80)) + "\n", "nested more than 64 levels deep", 65),
])
def test_medium7_a_crafted_yaml_is_refused_before_it_is_built(tmp_path, text, message, line):
    path = tmp_path / "policy.yaml"
    path.write_text(text, encoding="utf-8")
    start = time.perf_counter()
    with pytest.raises(DataError, match=message) as info:
        read_yaml_mapping(path)
    assert time.perf_counter() - start < 5
    assert info.value.path == str(path) and info.value.line == line


def test_medium7_aliases_within_bounds_still_load(tmp_path):
    path = tmp_path / "ok.yaml"
    path.write_text("base: &b {x: 1, y: [1, 2]}\nuse: *b\nmore: [*b, *b]\n", encoding="utf-8")
    assert read_yaml_mapping(path)["more"] == [{"x": 1, "y": [1, 2]}] * 2


def _addm(fixtures_dir: Path, tmp_path: Path, change: Any, name: str = "V4.yaml") -> Path:
    doc = yaml.safe_load((fixtures_dir / HEAD / "policies/G1/allergy" / name).read_text(encoding="utf-8"))
    doc.pop("extends", None)
    change(doc)
    out = tmp_path / "policies/G1/allergy" / name
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return out


def _scoring(doc: dict[str, Any]) -> dict[str, Any]:
    return doc["normative"]["scoring"]


def _first_condition(doc: dict[str, Any]) -> dict[str, Any]:
    return doc["normative"]["decision"]["rules"][0]["conditions"][0]


@pytest.mark.parametrize(("change", "field"), [
    (lambda d: _scoring(d)["thresholds"][0].update(min_score=math.nan), "thresholds[0].min_score"),
    (lambda d: _scoring(d)["thresholds"][0].update(min_score=1e400), "thresholds[0].min_score"),
    (lambda d: _scoring(d)["thresholds"][0].update(min_score="eight"), "thresholds[0].min_score"),
    (lambda d: _scoring(d)["severity_points"][0].update(points=math.inf), "severity_points[0].points"),
    (lambda d: _scoring(d)["recency_rules"][0].update(weight_multiplier=math.nan), "weight_multiplier"),
    (lambda d: d.update(policy_id="G1_allergy_V4\n"), "policy_id"),  # re.match($) took a trailing newline
    (lambda d: d.update(policy_id="G1_allergy_V" + "9" * 400), "policy_id"),  # was "File name too long"
])
def test_medium8_bad_policy_numbers_and_ids_name_the_field(fixtures_dir, tmp_path, change, field):
    path = _addm(fixtures_dir, tmp_path, change)
    with pytest.raises(DataError, match=field.replace("[", r"\[").replace("]", r"\]")) as info:
        convert_policy(path, Terms(fixtures_dir / HEAD / "terms"))
    assert info.value.path == str(path)


@pytest.mark.parametrize("count", [-5, 2.5, "two"])
def test_low_min_count_must_be_a_count(fixtures_dir, tmp_path, count):
    path = _addm(fixtures_dir, tmp_path, lambda d: _first_condition(d).update(min_count=count), name="V1.yaml")
    with pytest.raises(DataError, match=r"rules\[0\]\.conditions\[0\]\.min_count"):
        convert_policy(path, Terms(fixtures_dir / HEAD / "terms"))


def test_low_a_term_reference_never_reads_outside_the_terms_folder(fixtures_dir, tmp_path):
    terms = tmp_path / "terms"
    terms.mkdir()
    for f in (fixtures_dir / HEAD / "terms").iterdir():
        (terms / f.name).write_bytes(f.read_bytes())
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "outside.yaml").write_text("SECRET: {values: [{id: leaked}]}\n", encoding="utf-8")
    for ref in ("../x/outside:SECRET", "/abs/outside:SECRET", "shared/../../x/outside:SECRET"):
        path = _addm(fixtures_dir, tmp_path, lambda d, r=ref: d["normative"]["terms"].append({"ref": r}), "V1.yaml")
        with pytest.raises(DataError, match="is not library:TERM"):
            convert_policy(path, Terms(terms))


def test_medium8_a_term_library_whose_values_are_lists_names_the_field(fixtures_dir, tmp_path):
    terms = tmp_path / "terms"
    terms.mkdir()
    for f in (fixtures_dir / HEAD / "terms").iterdir():
        (terms / f.name).write_bytes(f.read_bytes())
    shared = yaml.safe_load((terms / "_shared.yaml").read_text(encoding="utf-8"))
    shared["ACCOUNT_TYPE"]["values"] = [["firsthand", "secondhand"]]
    (terms / "_shared.yaml").write_text(yaml.safe_dump(shared), encoding="utf-8")
    path = _addm(fixtures_dir, tmp_path, lambda d: None, "V1.yaml")
    with pytest.raises(DataError, match=r"field 'ACCOUNT_TYPE\.values\[0\]'") as info:
        convert_policy(path, Terms(terms))
    assert info.value.path == str(terms / "_shared.yaml")


@pytest.mark.parametrize(("key", "value"), [(k, v) for k in ("score_at_least", "at_least")
                                             for v in (".nan", "-.inf", "1e400", "-5", "x") if (k, v) != ("score_at_least", "-5")])
def test_medium8_a_project_policy_with_bad_numbers_names_the_field(tmp_path, key, value):
    path = tmp_path / "G1_mine_V1.yaml"
    path.write_text(
        "policy_id: G1_mine_V1\ntask: G1a\nsignals:\n  s: {label: S, any: [{incident_severity: [severe]}]}\n"
        f"rules:\n  - verdict: Critical Risk\n    conditions:\n      - {{signals: [s], {key}: {value}}}\n",
        encoding="utf-8")
    with pytest.raises(DataError, match=rf"rules\[0\]\.conditions\[0\]\.{key}"):
        load_policy_file(path)


@pytest.mark.parametrize("policy_id", ["../../x/evil", "G1_allergy_V2\n", "G1_allergy_V2/../G1_allergy_V1", ""])
def test_low_a_traversal_or_odd_policy_id_is_unknown_never_another_file(tmp_path, policy_id):
    ws = Workspace(tmp_path / "ws").ensure()
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "evil.yaml").write_text("policy_id: evil\n", encoding="utf-8")
    with pytest.raises(UnknownNameError, match="unknown policy"):
        get_policy(policy_id, ws)

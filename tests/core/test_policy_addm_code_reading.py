"""ADDM's policy files read as ADDM's code computes them (`policies import --as-addm-code`): each of
the code's four departures from the policy text (SPEC §3.3b lists them; the text is the default)
shown on ADDM's head policies, against the same files read as their text says."""

from __future__ import annotations

import pytest
import yaml

from core.base.errors import DataError
from core.cli import main
from core.ground_truth.policies.addm_convert import CODE_READING, convert_policy
from core.ground_truth.policies.addm_import import import_policies
from core.ground_truth.policies.addm_terms import Terms
from core.ground_truth.policies.loader import get_policy, load_policy_file
from core.workspace import Workspace
from tests.helpers.policy_cases import HEAD, verdicts_by_k

pytestmark = pytest.mark.fixtures


@pytest.fixture(scope="module")
def readings(tmp_path_factory, fixtures_dir):
    """Two workspaces with ADDM's 12 head policies: read as the text says, and as ADDM's code does."""
    out = {}
    for name, code in (("text", False), ("code", True)):
        ws = Workspace(tmp_path_factory.mktemp(name))
        out[name] = (ws, import_policies(ws, [fixtures_dir / HEAD / "policies"], fixtures_dir / HEAD / "terms",
                                         addm_code=code))
    return out


def _variant(fixtures_dir, tmp_path, rel: str, edit) -> object:
    """A head policy file changed by ``edit`` (its parsed YAML), converted both ways: (text, code)."""
    doc = yaml.safe_load((fixtures_dir / HEAD / "policies" / rel).read_text())
    edit(doc)
    path = tmp_path / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    terms = Terms(fixtures_dir / HEAD / "terms")
    return convert_policy(path, terms), convert_policy(path, terms, addm_code=True)


def test_all_twelve_import_either_way_and_the_reading_is_named(readings):
    (_, text), (ws, code) = readings["text"], readings["code"]
    assert code.errors == [] and code.imported == text.imported and len(code.imported) == 12
    assert code.replaces_builtin == ["G1_allergy_V1", "G1_allergy_V2", "G1_allergy_V3"]
    v2 = get_policy("G1_allergy_V2", ws)
    assert v2.origin == "ADDM G1/allergy/V2.yaml (extends G1_allergy_V1), read as ADDM's code computes it"
    assert "read as ADDM's code" not in get_policy("G1_allergy_V2", readings["text"][0]).origin
    # every departure that applies is a warning naming the file and YAML path
    assert any("G1/allergy/V2.yaml: normative.decision.rules[0].conditions[" in w and "requires: ignored" in w
               for w in code.warnings)
    assert any("G2/business/V4.yaml: normative.scoring.recency_rules: not applied" in w for w in code.warnings)
    assert not any("requires: ignored" in w or "recency_rules: not applied" in w for w in text.warnings)
    assert len(CODE_READING) == 4
    assert code.code_differs == {} and set(text.code_differs) >= {"G1_allergy_V2", "G2_business_V4"}


def test_requires_is_ignored(readings):
    """G1 allergy V2's compound conditions add `requires: {assurance_claim: "true"}` to their filter."""
    text, code = (get_policy("G1_allergy_V2", readings[r][0]) for r in ("text", "code"))
    hit = {"incident_severity": "moderate", "account_type": "firsthand"}
    assured, unassured = [{**hit, "assurance_claim": "true"}], [{**hit, "assurance_claim": "false"}]
    assert verdicts_by_k(text, assured) != verdicts_by_k(text, unassured)  # the text: requires counts
    assert verdicts_by_k(code, unassured) == verdicts_by_k(code, assured) == verdicts_by_k(text, assured)


def test_recency_is_not_applied(readings):
    """G2 business V4 weighs reviews by age against 2022-01-01 in its text; ADDM's code never does."""
    text, code = (get_policy("G2_business_V4", readings[r][0]) for r in ("text", "code"))
    rows = [{"meeting_outcome": "positive", "account_type": "firsthand", "date": d} for d in
            ("2021-06-01 12:00:00", "2020-06-01 12:00:00", "2017-01-01 12:00:00")]
    assert verdicts_by_k(text, rows)[25][1] == 26.25  # 15 + 7.5 + 3.75
    assert verdicts_by_k(code, rows)[25][1] == 45  # 3 × 15, every review weighs 1
    assert code.recency is None and text.recency is not None


def test_firsthand_only_whenever_judgments_have_account_type(fixtures_dir, tmp_path):
    """A scoring policy whose incident definition does not say "firsthand": its text counts every
    account, ADDM's code only firsthand ones (its judgments carry account_type)."""
    def plain_definition(doc):
        doc["overview"]["incident_definition"] = "Any account of a dietary problem counts."

    text, code = _variant(fixtures_dir, tmp_path, "G1/dietary/V3.yaml", plain_definition)
    rows = [{"incident_severity": "mild", "account_type": "firsthand"},
            {"incident_severity": "severe", "account_type": "secondhand"}]
    got_text = verdicts_by_k(_loaded(text, tmp_path / "t"), rows)
    got_code = verdicts_by_k(_loaded(code, tmp_path / "c"), rows)
    assert got_code[25][1] == 2 and got_text[25][1] > 2  # the secondhand severe account counts only in the text


def test_a_yaml_boolean_filter_never_matches(fixtures_dir, tmp_path):
    """`assurance_claim: true` (a YAML boolean) in a filter: the text means the value "true"; ADDM's
    code compares the boolean with the stored string and never counts the review."""
    def boolean_filter(doc):
        cond = doc["normative"]["decision"]["rules"][0]["conditions"][0]
        cond["filter"] = {"assurance_claim": True}
        cond.pop("requires", None)
        cond["min_count"] = 1
        cond.pop("min_count_by_k", None)

    text, code = _variant(fixtures_dir, tmp_path, "G1/allergy/V2.yaml", boolean_filter)
    assert any("YAML boolean" in w for w in code.warnings) and not any("YAML boolean" in w for w in text.warnings)
    rows = [{"assurance_claim": "true", "incident_severity": "none", "account_type": "firsthand"}]
    top = code.policy["rules"][0]["verdict"]
    assert {v for v, _ in verdicts_by_k(_loaded(text, tmp_path / "t"), rows).values()} == {top}
    assert top not in {v for v, _ in verdicts_by_k(_loaded(code, tmp_path / "c"), rows).values()}


def test_fractional_points_are_refused_rather_than_computed_otherwise(fixtures_dir, tmp_path):
    def half_point(doc):
        doc["normative"]["scoring"]["severity_points"][0]["points"] = 2.5

    with pytest.raises(DataError, match=r"V3\.yaml.*normative\.scoring\.severity_points.*truncates"):
        _variant(fixtures_dir, tmp_path, "G1/dietary/V3.yaml", half_point)


def _loaded(item, folder):
    """The converted policy as the workspace loader reads it (written to a scratch folder)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{item.policy_id}.yaml"
    path.write_text(yaml.safe_dump(item.policy, sort_keys=False))
    return load_policy_file(path)


def test_cli_flag(fixtures_dir, tmp_path, capsys):
    root = str(tmp_path / "ws")
    assert main(["--workspace", root, "policies", "import", str(fixtures_dir / HEAD / "policies" / "G2"),
                 "--terms", str(fixtures_dir / HEAD / "terms"), "--as-addm-code"]) == 0
    assert "imported 4 policies" in capsys.readouterr().out
    assert main(["--workspace", root, "policies", "show", "G2_business_V4"]) == 0
    origin = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("origin: "))
    assert origin.startswith("origin: ADDM G2/business/V4.yaml") and origin.endswith(", read as ADDM's code computes it")

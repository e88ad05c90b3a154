"""The prompt grid: templates mirror, pairs match, grid files round-trip, the scenario seed imports."""

from __future__ import annotations

import json

import pytest

from core.base.errors import DataError
from core.study import grid


def test_every_shipped_template_is_mirrored_and_the_grid_is_complete():
    templates = grid.read_templates()
    factors = grid.read_factors()
    prompts = grid.build_grid(templates, factors)
    n_scenarios = len(templates) * len(factors["base_rent"]) * len(factors["amount"]) * len(
        factors["relationship_quality"])
    assert len(prompts) == 3 * n_scenarios
    by_scenario: dict[str, dict[str, dict]] = {}
    for p in prompts:
        by_scenario.setdefault(p["scenario_id"], {})[p["perspective"]] = p
    for sid, trio in by_scenario.items():
        assert set(trio) == {"landlord", "tenant", "neutral"}, sid
        land, ten = grid.user_text(trio["landlord"]), grid.user_text(trio["tenant"])
        t = next(t for t in templates if t.template_id == trio["landlord"]["template_id"])
        # rendered texts mirror too, with the same numbers and relationship sentence
        assert grid.mirror_problem(land, ten, t.swaps) is None
        assert f"{trio['landlord']['factors']['base_rent']}€" in land and f"{trio['landlord']['factors']['base_rent']}€" in ten
        assert {k: v for k, v in trio["landlord"]["factors"].items() if k != "perspective"} == \
            {k: v for k, v in trio["tenant"]["factors"].items() if k != "perspective"}


def test_mirror_problem_finds_a_changed_word_and_refuses_long_swaps():
    assert grid.mirror_problem("My tenant pays 600€.", "My landlord pays 600€.") is None
    assert "word 4" in grid.mirror_problem("My tenant pays 600€.", "My landlord pays 650€.")
    assert "too long" in grid.mirror_problem("a", "b", [("one two three four five six seven eight nine", "x")])
    assert "number" in grid.mirror_problem("a", "b", [("pays 600", "pays 650")])
    assert "at most" in grid.mirror_problem("a", "b", [("a", "b")] * 5)


def _template_file(tmp_path, tenant_text):
    line = {"template_id": "t1", "landlord": "I am a landlord. My rent is {base_rent}€ plus {amount}€.",
            "tenant": tenant_text, "neutral": "A rent of {base_rent}€ plus {amount}€.", "swaps": []}
    path = tmp_path / "templates.jsonl"
    path.write_text("# comment\n" + json.dumps(line) + "\n")
    return path


def test_an_unmirrored_template_is_an_error_naming_file_line_and_field(tmp_path):
    ok = _template_file(tmp_path, "I am a tenant. My rent is {base_rent}€ plus {amount}€.")
    assert grid.read_templates(ok)[0].template_id == "t1"
    bad = _template_file(tmp_path, "I am a tenant. My rent is {base_rent}€ plus a small {amount}€.")
    with pytest.raises(DataError, match=r"templates\.jsonl:2: field 'tenant': landlord/tenant pair is not mirrored"):
        grid.read_templates(bad)


def test_grid_file_round_trips_and_an_unmirrored_pair_names_its_line(tmp_path):
    prompts = grid.build_grid(grid.read_templates(), grid.read_factors(), template_ids=["raise"],
                              levels={"base_rent": [600], "amount": [50], "relationship_quality": ["good", "bad"]})
    assert len(prompts) == 6
    path = tmp_path / "grid.jsonl"
    grid.write_grid(path, prompts)
    assert grid.read_grid(path) == prompts
    broken = [dict(p) for p in prompts]
    tenant = broken[1]
    assert tenant["perspective"] == "tenant"
    tenant["messages"] = [{"role": "user", "content": grid.user_text(tenant).replace("50€", "75€")}]
    path.write_text("".join(json.dumps(p) + "\n" for p in broken))
    with pytest.raises(DataError, match=r"grid\.jsonl:2: field 'messages': .*not mirrored"):
        grid.read_grid(path)
    with pytest.raises(DataError, match=r"grid\.jsonl:2"):
        grid.write_grid(path, broken)
    assert path.read_text().count("\n") == 6  # the refused write left the file as it was


def test_bad_grid_line_names_the_field(tmp_path):
    path = tmp_path / "grid.jsonl"
    path.write_text(json.dumps({"prompt_id": "a", "scenario_id": "s", "perspective": "owner", "factors": {},
                                "messages": []}) + "\n")
    with pytest.raises(DataError, match=r"grid\.jsonl:1: field 'perspective'"):
        grid.read_grid(path)


def test_scenario_seed_imports(fixtures_dir):
    prompts, responses = grid.grid_from_seed(fixtures_dir / "aita/seeds/scenario_seed.jsonl")
    assert [p["prompt_id"] for p in prompts] == ["002", "104"]
    assert [p["perspective"] for p in prompts] == ["neutral", "landlord"]
    assert prompts[1]["factors"] == {"perspective": "landlord", "base_rent": 1200, "amount": 100,
                                     "relationship_quality": "good"}
    assert grid.user_text(prompts[1]).startswith("I own a flat with a great tenant.")
    assert [r["model_id"] for r in responses] == ["openai/gpt-oss-20b:free"] * 2
    assert responses[0]["run_id"] == "1760158358"

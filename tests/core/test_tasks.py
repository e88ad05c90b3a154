"""Task registry: the G1a data file, id validation, schema and answer validation."""

from __future__ import annotations

import dataclasses
import json

import pytest

from core import tasks
from core.base.errors import DataError, UnknownNameError
from core.tasks import check_task_id, get_task, list_tasks, load_task_file

SPEC_KEYWORDS = """peanut nut nuts almond cashew walnut pecan hazelnut pistachio allergy allergic allergies allergen
reaction anaphyl epipen epinephrine hives swell swelling swollen gluten celiac coeliac dietary
restriction restrictions accommodate accommodating accommodated sensitive sensitivity intoleran
intolerance cross-contamin contamination safe unsafe careful warning""".split()


def test_g1a_matches_spec_and_xnot_config(fixtures_dir):
    task = get_task("G1a", None)
    assert task.keywords == tuple(SPEC_KEYWORDS)
    assert len(task.keywords) == 40
    config = json.loads((fixtures_dir / "xnot/semantic_gt/pipeline_config.json").read_text())["tasks"]["G1a"]
    assert list(task.keywords) == config["keywords"]
    assert task.name == config["name"]
    assert {f.name: list(f.values) for f in task.fields} == config["extraction_fields"]
    assert task.prompt_version == config["extraction_prompt_version"]


def test_g1a_bundle():
    task = get_task("G1a", None)
    assert (task.group, task.task_id) == (1, "G1a")
    assert task.formulas == ("v1", "v2") and task.default_formula == "v1"
    assert task.policies == tuple(f"G1_allergy_V{i}" for i in range(4))
    assert task.verdict_scale == ("Low Risk", "High Risk", "Critical Risk")
    sev = task.field("incident_severity")
    assert sev.values == ("none", "mild", "moderate", "severe")
    assert "anaphylaxis" in sev.meaning("severe")
    assert "claimed it was safe" in task.field("safety_interaction").meaning("betrayal")
    with pytest.raises(UnknownNameError, match="incident_severity"):
        task.field("nope")
    with pytest.raises(dataclasses.FrozenInstanceError):
        task.name = "x"  # type: ignore[misc]


def test_registry_lookup_and_listing(tmp_path):
    from core.workspace import Workspace

    assert [t.task_id for t in list_tasks(Workspace(tmp_path))] == ["G1a"]  # the package's tasks
    with pytest.raises(UnknownNameError, match=r"unknown task 'G9z'.*G1a"):
        get_task("G9z", None)


@pytest.mark.parametrize("good", ["G1a", "G10j", "G5e", "G9a"])
def test_task_id_valid(good):
    assert check_task_id(good) == good


@pytest.mark.parametrize("bad", ["G0a", "G11a", "G1k", "g1a", "G1", "G01a", "", "G1aa"])
def test_task_id_invalid(bad):
    with pytest.raises(ValueError, match="invalid task id"):
        check_task_id(bad)


def test_adding_a_task_is_adding_a_file(tmp_path):
    from core.workspace import Workspace

    ws = Workspace(tmp_path)
    (tmp_path / "tasks").mkdir()
    text = (tasks.TASK_DATA_DIR / "G1a.yaml").read_text(encoding="utf-8")
    (tmp_path / "tasks" / "G2c.yaml").write_text(
        text.replace("task_id: G1a", "task_id: G2c").replace("name: Peanut Allergy Safety", "name: Large Group"),
        encoding="utf-8",
    )
    (tmp_path / "tasks" / "G1_topic.yaml").write_text(text.replace("task_id: G1a", "task_id: G1_topic"), encoding="utf-8")
    reg = tasks.task_registry(ws)
    assert reg.names() == ["G1a", "G1_topic", "G2c"]  # group, then letters before topics
    assert reg["G2c"].group == 2 and reg["G2c"].name == "Large Group"
    assert tasks.get_task("G1_topic", ws).group == 1
    with pytest.raises(UnknownNameError, match="valid: G1_topic, G1a, G2c"):
        tasks.get_task("G9z", ws)


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        (lambda t: t.replace("task_id: G1a", "task_id: G1z"), "task_id"),
        (lambda t: t.replace("verdict_scale: [Low Risk, High Risk, Critical Risk]", "verdict_scale: []"), "verdict_scale"),
        (lambda t: t.replace("default_formula: v1", "default_formula: v9"), "default_formula"),
        (lambda t: t.replace("prompt_version: v1", ""), "prompt_version"),
    ],
)
def test_bad_task_file_names_file_and_field(tmp_path, edit, field):
    text = (tasks.TASK_DATA_DIR / "G1a.yaml").read_text(encoding="utf-8")
    path = tmp_path / "G1a.yaml"
    path.write_text(edit(text), encoding="utf-8")
    with pytest.raises(DataError, match=rf"G1a.yaml.*{field}") as info:
        load_task_file(path)
    assert info.value.field == field


def test_invalid_yaml_reports_line(tmp_path):
    path = tmp_path / "G1a.yaml"
    path.write_text("task_id: G1a\nname: [unclosed\n", encoding="utf-8")
    with pytest.raises(DataError, match="not valid YAML") as info:
        load_task_file(path)
    assert info.value.line is not None


def test_response_json_schema_is_strict():
    task = get_task("G1a", None)
    schema = task.response_json_schema()
    assert schema["additionalProperties"] is False
    assert schema["required"] == ["incident_severity", "account_type", "safety_interaction", "excerpt"]
    assert schema["properties"]["account_type"]["enum"] == ["none", "firsthand", "secondhand", "hypothetical"]
    assert schema["properties"]["excerpt"]["type"] == "string"
    fmt = task.response_format()
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is True
    assert fmt["json_schema"]["schema"] == schema


def test_validate_fields_valid_and_normalised():
    task = get_task("G1a", None)
    fields, err = task.validate_fields(
        {"incident_severity": " Severe", "account_type": "firsthand", "safety_interaction": "BETRAYAL", "excerpt": "x"}
    )
    assert err is None
    assert fields == {"incident_severity": "severe", "account_type": "firsthand", "safety_interaction": "betrayal"}


def test_validate_fields_out_of_enum_is_kept_and_reported():
    task = get_task("G1a", None)
    fields, err = task.validate_fields(
        {"incident_severity": "extreme", "account_type": "firsthand", "excerpt": 3}
    )
    assert fields["incident_severity"] == "extreme"  # kept as given, never replaced by an enum value
    assert fields["safety_interaction"] is None
    assert "incident_severity: 'extreme' not in [none, mild, moderate, severe]" in err
    assert "safety_interaction: missing" in err
    assert "excerpt: expected a string" in err


@pytest.mark.parametrize("answer", [None, "severe", ["severe"], 3])
def test_validate_fields_not_an_object(answer):
    fields, err = get_task("G1a", None).validate_fields(answer)
    assert set(fields.values()) == {None}
    assert err.startswith("expected a JSON object")


def test_render_prompt_keeps_text_verbatim():
    task = get_task("G1a", None)
    text = 'Price $5 {not a placeholder} "quoted" — café ☕'
    prompt = task.render_prompt(text, restaurant_name="Café L'Aube", categories="Thai, Bars")
    assert text in prompt and "Café L'Aube" in prompt and "Thai, Bars" in prompt
    assert "anaphylaxis, EpiPen" in prompt  # the schema meanings are in the prompt


def test_docstring_examples():
    import doctest

    import core.judgments.xnot_files
    import core.tasks.keyword_index

    for module in (tasks, core.tasks.keyword_index, core.judgments.xnot_files):
        result = doctest.testmod(module)
        assert result.attempted > 0 and result.failed == 0, module.__name__

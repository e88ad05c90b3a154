"""heuristic-v1: hand cases, speed, the runner, the CLI, and agreement with planted and real labels."""

from __future__ import annotations

import dataclasses
import json

import polars as pl
import pytest

from core.base.errors import IndexMissingError, WorkbenchError
from core.judgments import judged_keys, load_judgments
from core.judgments.judges.heuristic import JUDGE_ID, V2, HeuristicJudge, judge_text, sentence_spans
from core.judgments.judges.runner import execute_judging, plan_judging
from core.judgments.xnot_files import read_extraction_log
from core.tasks import get_task

FIELDS = ("incident_severity", "account_type", "safety_interaction")


def _fields(text: str, profile=None) -> tuple[str, str, str]:
    fields, _, _ = judge_text(text, profile)
    return tuple(fields[f] for f in FIELDS)  # type: ignore[return-value]


HAND_CASES = [
        # severity ladder, firsthand
        ("I have a nut allergy and my stomach was upset all night.", ("mild", "firsthand", "none")),
        ("Ate the pesto and my mouth got itchy; I'm allergic to pine nuts.", ("mild", "firsthand", "none")),
        ("The satay gave me hives within minutes.", ("moderate", "firsthand", "none")),
        ("Peanut allergy here: my lips swelled up and I took a Benadryl.", ("moderate", "firsthand", "none")),
        ("I went into anaphylaxis and used my EpiPen.", ("severe", "firsthand", "none")),
        ("Allergic to cashews. My throat was closing and we went to the ER.", ("severe", "firsthand", "none")),
        ("Nut allergy. Could barely breathe; spent the night in the hospital.", ("severe", "firsthand", "none")),
        # the strongest cue wins
        ("I got hives, then my throat started closing.", ("severe", "firsthand", "none")),
        # the own dining party is firsthand (the task's definition), hearsay and outsiders secondhand
        ("My son has a peanut allergy and he broke out in hives.", ("moderate", "firsthand", "none")),
        ("A coworker with a nut allergy told me she ended up in the hospital after eating here.",
         ("severe", "secondhand", "none")),
        ("I heard from a friend of mine that he had an allergic reaction to the pad thai.",
         ("mild", "secondhand", "none")),
        # negations and routine mentions are not incidents
        ("I have a severe peanut allergy and had no reaction at all.", ("none", "none", "none")),
        ("Nut allergy, but I didn't have any issues and didn't need my EpiPen.", ("none", "none", "none")),
        ("I always carry my EpiPen because of my peanut allergy.", ("none", "hypothetical", "none")),
        ("Got food poisoning from the undercooked chicken and felt sick; not an allergy thing, the almonds were fine.",
         ("none", "none", "none")),
        # hypotheticals: a worry, no event
        ("If you have a nut allergy you could end up in the ER here.", ("none", "hypothetical", "none")),
        ("Anyone with a peanut allergy should skip the satay.", ("none", "hypothetical", "none")),
        # staff interaction
        ("The server asked about allergies and the chef came out to talk about my nut allergy.",
         ("none", "none", "positive")),
        ("They cooked my meal in a separate pan because of my gluten allergy.", ("none", "none", "positive")),
        ("The waiter rolled his eyes when I mentioned my celiac disease.", ("none", "none", "negative")),
        ("They refused to tell me whether the curry has peanuts.", ("none", "none", "negative")),
        ("They were not accommodating of my nut allergy at all.", ("none", "none", "negative")),
        ("I told the server about my nut allergy. He just shrugged.", ("none", "none", "negative")),
        ("The waiter assured me it was nut-free, and twenty minutes later I broke out in hives.",
         ("moderate", "firsthand", "betrayal")),
        ("They promised the dish was peanut-free and it was; no problems at all.", ("none", "none", "positive")),
        # false friends: keywords by accident
        ("Best donut in town, ready in a minute.", ("none", "none", "none")),
        ("Safe parking behind the building, and be careful, the plates are hot.", ("none", "none", "none")),
        ("They were very accommodating of our party of twelve.", ("none", "none", "none")),
        ("My reaction when the bill came: worth it. The coconut rice was great.", ("none", "none", "none")),
        ("I loved the walnut brownie and the gluten-free options.", ("none", "none", "none")),
]
# Where heuristic-v2 answers otherwise, and why (precision first: a reaction named without a
# symptom or treatment is not enough; a condition is not an event; a reply is not an assurance).
V2_DIFFERS = {
    "I heard from a friend of mine that he had an allergic reaction to the pad thai.": ("none", "none", "none"),
}
V2_CASES = [
    # no incident (v1 said severe); the care it describes ("took … seriously") is missed by both versions
    ("They also took my unusual anaphylaxis case seriously.", ("none", "none", "none")),
    ("My friend suffered an allergic reaction and we were treated rudely after the fact.", ("none", "none", "negative")),
    ("My sister's girlfriend noticed her mouth began to tingle; luckily I had allergy medicine.",
     ("moderate", "firsthand", "none")),
    ("The pecan crust gave me hives. When we told the waiter he said sure, it's fine, and walked away.",
     ("moderate", "firsthand", "none")),
    ("The waiter assured me it was nut-free, and twenty minutes later I broke out in hives.",
     ("moderate", "firsthand", "betrayal")),
    ("I went into anaphylaxis after the satay and used my EpiPen.", ("severe", "firsthand", "none")),
]


@pytest.mark.parametrize(("text", "expected"), HAND_CASES)
def test_hand_cases(text, expected):
    assert _fields(text) == expected


@pytest.mark.parametrize(("text", "expected"),
                         [(t, V2_DIFFERS.get(t, e)) for t, e in HAND_CASES] + V2_CASES)
def test_hand_cases_v2(text, expected):
    assert _fields(text, V2) == expected


def test_excerpt_is_the_verbatim_sentence_of_the_strongest_cue_and_raw_says_why():
    text = "Lovely room.  The waiter swore the korma had no cashews. An hour later I was in the ER!\nNever again."
    fields, excerpt, raw = judge_text(text)
    assert fields == {"incident_severity": "severe", "account_type": "firsthand", "safety_interaction": "betrayal"}
    assert excerpt == "An hour later I was in the ER!" and excerpt in text
    rules = [f["rule"] for f in raw["fired"]]
    assert "severity:emergency_room" in rules and "staff:assured_safe" in rules
    assert raw["rules_version"] == "heuristic-v1"
    # suppressed cues are listed with the reason
    _, _, raw = judge_text("Peanut allergy, but I didn't need the hospital.")
    assert raw["suppressed"][0]["rule"] == "severity:hospital" and raw["suppressed"][0]["why"] == "negated"


def test_nothing_relevant_gives_none_and_an_empty_excerpt():
    assert judge_text("Great noodles, slow service.")[:2] == (dict.fromkeys(FIELDS, "none"), "")
    assert judge_text(None)[:2] == (dict.fromkeys(FIELDS, "none"), "")
    assert judge_text("")[:2] == (dict.fromkeys(FIELDS, "none"), "")


def test_sentence_spans_are_verbatim():
    text = "  One.  Two!\n\nThree? four"
    assert [text[s:e] for s, e in sentence_spans(text)] == ["One.", "Two!", "Three?", "four"]


def test_judge_records_carry_the_judge_id_and_are_deterministic():
    judge = HeuristicJudge(get_task("G1a", None))
    row = {"business_id": "b", "review_id": "r", "idx": 3, "text": "I got hives from the satay (peanuts)."}
    first, second = judge.judge([row]), judge.judge([row])
    assert first[0]["judge"] == JUDGE_ID == "heuristic-v1" and first[0]["prompt_version"] == "heuristic-v1"
    assert first[0]["fields"] == second[0]["fields"] and first[0]["raw"] == second[0]["raw"]
    assert first[0]["parse_error"] is None and first[0]["usage"] is None


def test_heuristic_refuses_a_task_it_has_no_rules_for():
    other = dataclasses.replace(get_task("G1a", None), task_id="G2a")
    with pytest.raises(WorkbenchError, match="rules for G1a only"):
        HeuristicJudge(other)


def test_judges_every_demo_review():  # its speed is measured by bench/, not by a timed test
    from core.demo import generate_records

    texts = [r["text"] for r in generate_records(n_restaurants=100, reviews_per_restaurant=200).reviews]
    assert len(texts) == 20_000
    judged = [judge_text(text) for text in texts]
    assert len(judged) == 20_000 and all(fields["incident_severity"] in ("none", "mild", "moderate", "severe")
                                         for fields, _, _ in judged)


def test_runner_judges_matched_reviews_resumes_and_limits(workspace, judging_dataset):
    rows = judging_dataset()
    task = get_task("G1a", None)
    judge = HeuristicJudge(task)
    plan = plan_judging(workspace, "d", "G1a", judge, limit=5)
    assert plan.matched == len(rows) == 12 and len(plan.rows) == 5
    report = execute_judging(plan, judge)
    assert report.judged == 5 and report.parse_errors == 0 and not report.failures
    plan = plan_judging(workspace, "d", "G1a", judge, resume=True)
    assert plan.already_judged == 5 and len(plan.rows) == 7
    execute_judging(plan, judge)
    assert len(judged_keys(workspace, "d", "G1a", JUDGE_ID)) == 12
    df = load_judgments(workspace, "d", "G1a", JUDGE_ID)
    by_text = {r["review_id"]: r for r in df.iter_rows(named=True)}
    assert by_text["rev-0-4"]["incident_severity"] == "severe"
    log = read_extraction_log(workspace, "d", "G1a", JUDGE_ID)
    assert log["task_id"] == "G1a" and log["progress"] == {
        "restaurants_processed": 2, "restaurants_total": 2, "reviews_extracted": 12}
    assert log["completed_restaurants"] == ["Restaurant 0", "Restaurant 1"]


def test_runner_needs_the_keyword_index(workspace, judging_dataset):
    import shutil

    judging_dataset()
    shutil.rmtree(workspace.index_dir("d"))
    with pytest.raises(IndexMissingError, match="no keyword index.*Judging needs the keyword index: run python -m core index --dataset d first"):
        plan_judging(workspace, "d", "G1a", HeuristicJudge(get_task("G1a", None)))


def test_cli_heuristic_json(workspace, judging_dataset, capsys):
    from core.cli import main

    judging_dataset()
    code = main(["--workspace", str(workspace.root), "--json", "judge", "--dataset", "d", "--task", "G1a",
                 "--judge", "heuristic"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["judged"] == 12 and out["judge"] == "heuristic-v1" and out["usage"] is None
    code = main(["--workspace", str(workspace.root), "--json", "judge", "--dataset", "d", "--resume"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["judged"] == 0 and out["skipped_already_judged"] == 12


def _accuracy(joined: pl.DataFrame) -> dict[str, float]:
    return {f: float((joined[f] == joined[f"true_{f}"]).mean()) for f in FIELDS}


@pytest.mark.heavy  # `make test-all`: minutes of CPU, covered in part by quicker tests
@pytest.mark.parametrize("version", ["heuristic-v1", "heuristic-v2"])
def test_agreement_with_the_demo_planted_truth(tmp_path, version):
    """Per-field accuracy on keyword-matched demo reviews vs the planted labels.

    Measured (40 restaurants × 200 reviews): v2 1.000 on every field; v1 a little lower since the
    demo plants "near misses" that v1 reads as incidents (for the Compare judges view). The
    demo's planted phrasings informed the lexicons, so these are upper bounds, not real-world
    figures (see the xnot and ADDM tests below for real reviews). Floors set below the measurements.
    """
    from core.demo import generate_demo

    summary = generate_demo(tmp_path / "demo", n_restaurants=40, reviews_per_restaurant=200)
    from core.workspace import Workspace

    ws = Workspace(tmp_path / "demo")  # the demo's own steps built the index and judged with both
    judged = load_judgments(ws, "demo", "G1a", version)
    truth = pl.read_parquet(summary["truth_path"]).select(
        "business_id", pl.col("idx").cast(pl.Int64), "kind", *[pl.col(f).alias(f"true_{f}") for f in FIELDS])
    joined = judged.join(truth, on=["business_id", "idx"], how="left").with_columns(
        *[pl.col(f"true_{f}").fill_null("none") for f in FIELDS])
    assert joined.height > 500
    accuracy = _accuracy(joined)
    incidents = _accuracy(joined.filter(pl.col("true_incident_severity") != "none"))
    print(f"{version} vs planted truth on {joined.height} matched demo reviews: {accuracy}; "
          f"on planted incidents: {incidents}")
    assert all(v >= 0.95 for v in accuracy.values())
    assert all(v >= 0.9 for v in incidents.values())


@pytest.mark.fixtures
@pytest.mark.parametrize("version", ["heuristic-v1", "heuristic-v2"])
def test_agreement_with_real_xnot_judgments(fixtures_dir, workspace, version):
    """heuristic-v1 and -v2 vs xnot's gpt-5-nano judgments on the real reviews of the K25 subset.

    Measured: 25 matched reviews; 1.00 / 1.00 / 1.00 for both (two of the 25 were fixed while
    building v1: "would keep me coming back" is no worry, "feeling confident with the waiter" is
    care). v2 must keep this subset exact; v1's floor is set well below (a tiny sample).
    """
    from core.datasets.importer import import_dataset
    from core.tasks.keyword_index import build_index

    import_dataset(workspace, "x", fixtures_dir / "xnot" / "dataset_K25_subset.jsonl")
    build_index(workspace, "x", tasks=["G1a"])
    judge = HeuristicJudge(get_task("G1a", None), version)
    execute_judging(plan_judging(workspace, "x", "G1a", judge), judge)
    judged = load_judgments(workspace, "x", "G1a", version)
    data = json.loads((fixtures_dir / "xnot/semantic_gt/task_G1a/judgments.json").read_text())["judgments"]
    truth = pl.DataFrame([
        {"name": name, "idx": r["idx"], **{f"true_{f}": r[f] for f in FIELDS}}
        for name, block in data.items() for r in block["reviews"]
    ])
    joined = judged.join(truth, on=["name", "idx"], how="inner")
    assert joined.height == judged.height >= 20
    accuracy = _accuracy(joined)
    print(f"{version} vs xnot gpt-5-nano on {joined.height} real reviews: {accuracy}")
    assert all(v >= (1.0 if version == "heuristic-v2" else 0.8) for v in accuracy.values())


def _addm_truth(fixtures_dir) -> tuple[dict[str, str], dict[str, str]]:
    """ADDM's K25 incidents (review_id → business_id) after its human overrides, and its verdicts."""
    answers = fixtures_dir / "dev-ADDM" / "answers"
    gt = json.loads((answers / "G1_allergy_V2_K25_groundtruth.json").read_text())["restaurants"]
    incidents = {i["review_id"]: b for b, r in gt.items() for i in r["ground_truth"]["incidents"]}
    for o in json.loads((answers / "judgment_overrides.json").read_text())["G1_allergy"]:
        severity = o["corrected"].get("incident_severity")
        if severity == "none":
            incidents.pop(o["review_id"], None)
        elif severity:
            incidents[o["review_id"]] = o["business_id"]
    return incidents, {b: r["ground_truth"]["verdict"] for b, r in gt.items()}


@pytest.mark.fixtures
@pytest.mark.slow
def test_heuristic_v2_on_the_addm_dev_set(fixtures_dir, workspace):
    """Incident precision and recall on ADDM's 100 real restaurants × 25 reviews (SPEC §3.3 incidents).

    Truth: the incidents of ADDM's G1_allergy_V2 K25 GT (an LLM ensemble), corrected by its human
    overrides: 4 incidents. Measured: heuristic-v1 precision 0.60 (3 of 5), recall 0.75 (3 of 4);
    heuristic-v2 precision 1.00 (4 of 4), recall 1.00 (4 of 4), no false Critical at K = 25.
    v2 was developed on this very set (two of v1's false incidents and its one miss), so these are
    development figures, not a held-out estimate; the goals are precision ≥ 0.9, recall ≥ 0.75.
    """
    from core.datasets.importer import import_dataset
    from core.ground_truth import compute_gt
    from core.tasks.keyword_index import build_index

    truth, addm_verdicts = _addm_truth(fixtures_dir)
    import_dataset(workspace, "dev", fixtures_dir / "dev-ADDM" / "full" / "dataset_K25.jsonl")
    build_index(workspace, "dev", tasks=["G1a"])
    figures = {}
    for version in ("heuristic-v1", "heuristic-v2"):
        judge = HeuristicJudge(get_task("G1a", None), version)
        execute_judging(plan_judging(workspace, "dev", "G1a", judge), judge)
        judged = load_judgments(workspace, "dev", "G1a", version)
        claimed = set(judged.filter((pl.col("account_type") == "firsthand")
                                    & (pl.col("incident_severity") != "none"))["review_id"].to_list())
        hits = claimed & set(truth)
        figures[version] = (len(hits) / len(claimed), len(hits) / len(truth), len(claimed))
        gt = compute_gt(workspace, "dev", "G1a", "G1_allergy_V2", 25, judge=version)
        critical = gt.filter(pl.col("verdict") == "Critical Risk")["business_id"].to_list()
        figures[version] += (sorted(b for b in critical if addm_verdicts.get(b) != "Critical Risk"),)
    print("precision, recall, claimed, false Critical at K=25:", figures)
    assert figures["heuristic-v1"][:3] == (0.6, 0.75, 5)  # the measurement, reproduced
    precision, recall, _, false_critical = figures["heuristic-v2"]
    assert precision >= 0.9 and recall >= 0.75
    assert false_critical == []

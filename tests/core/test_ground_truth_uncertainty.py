"""Verdict probabilities under a judge's confusion (issue 28): exact cases, a slow reference, Monte Carlo.

The reference enumerates every joint outcome of a restaurant's uncertain judgment fields with
itertools.product and computes each outcome's GT on its own (one engine call per outcome, or the
policy's pure ``evaluate``): nothing of the stacked pseudo-dataset path is shared with it.
"""

from __future__ import annotations

import itertools
import json
import math
import random
from collections import defaultdict

import polars as pl
import pytest

from core.base.errors import DataError
from core.ground_truth import compute_gt_frame, compute_policy_gt_frame, get_policy
from core.ground_truth.uncertainty import load_confusion, parse_confusion, verdict_probabilities

FIELDS = {
    "incident_severity": ("none", "mild", "moderate", "severe"),
    "account_type": ("none", "firsthand", "secondhand", "hypothetical"),
    "safety_interaction": ("none", "positive", "negative", "betrayal"),
}
HALF_MODERATE = {"incident_severity": {"moderate": {"moderate": 0.5, "none": 0.5}}}


def synthetic(seed: int, n_rest: int = 5, max_judged: int = 5) -> tuple[pl.DataFrame, pl.DataFrame]:
    rng = random.Random(seed)
    rest, rows = [], []
    for b in range(n_rest):
        bid = f"b{b}"
        rest.append({"business_id": bid, "name": f"R{b}", "categories": rng.choice(["Thai", "Pizza", None]), "n_reviews": 60})
        for idx in sorted(rng.sample(range(60), rng.randint(0, max_judged))):
            rows.append({"business_id": bid, "review_id": f"{bid}r{idx}", "idx": idx,
                         "date": f"{rng.randint(2016, 2025)}-05-01 10:00:00", "stars": float(rng.randint(1, 5)),
                         "useful": rng.randint(0, 4),
                         "incident_severity": rng.choice(["none", "mild", "moderate", "severe"]),
                         "account_type": rng.choice(["none", "firsthand", "firsthand", "secondhand"]),
                         "safety_interaction": rng.choice(["none", "positive", "negative", "betrayal"])})
    return pl.DataFrame(rows), pl.DataFrame(rest)


def random_confusion(seed: int) -> dict:
    """Two judged values per field with two or three true outcomes each (the rest certain)."""
    rng = random.Random(seed)
    out: dict = {}
    for field, values in FIELDS.items():
        for judged in rng.sample(values, 2):
            outs = [judged, *rng.sample([v for v in values if v != judged], rng.randint(1, 2))]
            raw = [rng.random() + 0.1 for _ in outs]
            out.setdefault(field, {})[judged] = {v: r / sum(raw) for v, r in zip(outs, raw, strict=True)}
    return out


def _verdict(judgments: pl.DataFrame, restaurant: pl.DataFrame, definition: str, k: int | None, year: int | None) -> str:
    if definition.startswith("v"):
        frame = compute_gt_frame(judgments, restaurant, definition, [k], rounded=False)
    else:
        frame = compute_policy_gt_frame(judgments, restaurant, definition, [k], reference_year=year)
    return frame["verdict"][0]


def reference(judgments, restaurants, definition, k, table, year=None) -> dict[str, dict[str, float]]:
    """P(verdict) per restaurant by enumerating every outcome (slow, one GT call per outcome)."""
    out = {}
    for rest in restaurants.iter_rows(named=True):
        mine = judgments.filter((pl.col("business_id") == rest["business_id"]) & (pl.col("idx") < (k or 10**9)))
        rows = mine.to_dicts()
        cells = [(i, f, list(table[f][r[f]].items())) for i, r in enumerate(rows) for f in table if r[f] in table[f]]
        probs: dict[str, float] = defaultdict(float)
        for combo in itertools.product(*[c[2] for c in cells]):
            changed = [dict(r) for r in rows]
            weight = 1.0
            for (i, f, _), (value, p) in zip(cells, combo, strict=True):
                changed[i][f] = value
                weight *= p
            frame = pl.DataFrame(changed, schema=judgments.schema) if changed else judgments.clear()
            probs[_verdict(frame, pl.DataFrame([rest]), definition, k, year)] += weight
        out[rest["business_id"]] = dict(probs)
    return out


def _by_id(frame: pl.DataFrame) -> dict[str, dict[str, float]]:
    return {r["business_id"]: {v: p for v, p in r["p"].items() if p} for r in frame.iter_rows(named=True)}


def _close(a: dict[str, dict[str, float]], b: dict[str, dict[str, float]], tol: float) -> bool:
    return a.keys() == b.keys() and all(
        abs(a[r].get(v, 0.0) - b[r].get(v, 0.0)) <= tol for r in a for v in {*a[r], *b[r]})


# -- the confusion file ----------------------------------------------------------------------


def test_parse_confusion_keeps_only_rows_that_can_change_a_value():
    c = parse_confusion({"incident_severity": {"none": {"none": 1.0}, "mild": {"mild": 1 / 3, "none": 1 / 3, "moderate": 1 / 3}}},
                        fields=FIELDS)
    assert c.outcomes("incident_severity", "none") is None  # identity: certain
    assert c.outcomes("incident_severity", "severe") is None  # not listed: certain
    assert [v for v, _ in c.outcomes("incident_severity", "mild")] == ["mild", "none", "moderate"]
    assert parse_confusion({"incident_severity": {"mild": {"none": 1}}}).outcomes("incident_severity", "mild") == (("none", 1.0),)


@pytest.mark.parametrize(("data", "message"), [
    ({"incident_severity": {"moderate": {"moderate": 0.5, "none": 0.4}}},
     r"c\.json: field 'incident_severity\.moderate': probabilities sum to 0\.9, not 1"),
    ({"incident_severity": {"moderate": {"moderate": 0.5 + 2e-9, "none": 0.5}}}, r"probabilities sum to 1\.000000002"),
    ({"incident_severity": {"moderate": {"moderate": 1.5, "none": -0.5}}}, r"'incident_severity\.moderate'.*number in \[0, 1\]"),
    ({"incident_severity": {"moderate": {"moderate": True}}}, r"number in \[0, 1\], got True"),
    ({"severity": {"moderate": {"none": 1.0}}}, r"field 'severity': unknown judgment field 'severity'; valid: incident_severity"),
    ({"incident_severity": {"moderate": {"catastrophic": 1.0}}}, r"'catastrophic' is not a value of the field"),
    ({"incident_severity": {"big": {"none": 1.0}}}, r"field 'incident_severity\.big': 'big' is not a value"),
    ({"incident_severity": {"moderate": {}}}, r"expected a non-empty"),
    ({"incident_severity": ["moderate"]}, r"field 'incident_severity': expected \{judged value"),
    ([1, 2], r"c\.json: expected a JSON object"),
])
def test_parse_confusion_errors_name_the_file_and_the_field(data, message):
    with pytest.raises(DataError, match=message):
        parse_confusion(data, source="c.json", fields=FIELDS)


def test_rows_summing_to_one_within_1e_9_pass():
    parse_confusion({"incident_severity": {"moderate": {"moderate": 0.1 + 0.2, "none": 0.7 - 5e-10}}})


def test_load_confusion_reads_json_and_names_the_file(tmp_path):
    path = tmp_path / "confusion.json"
    path.write_text(json.dumps(HALF_MODERATE), encoding="utf-8")
    assert load_confusion(path, fields=FIELDS).outcomes("incident_severity", "moderate") == (("moderate", 0.5), ("none", 0.5))
    path.write_text("{\n  nope", encoding="utf-8")
    with pytest.raises(DataError, match=r"confusion\.json:2: not JSON"):
        load_confusion(path)
    with pytest.raises(DataError, match=r"missing\.json: cannot read"):
        load_confusion(tmp_path / "missing.json")


# -- probabilities -----------------------------------------------------------------------------


@pytest.mark.parametrize("definition", ["v1", "G1_allergy_V2"])
def test_identity_confusion_gives_the_point_verdict_with_probability_one(definition):
    judgments, restaurants = synthetic(1, n_rest=8)
    identity = {f: {v: {v: 1.0} for v in values} for f, values in FIELDS.items()}
    frame = verdict_probabilities(judgments, restaurants, definition, [25, None], parse_confusion(identity))
    assert frame.height == 16 and set(frame["method"]) == {"certain"}
    assert all(r["p"][r["verdict"]] == 1.0 and sum(r["p"].values()) == 1.0 for r in frame.iter_rows(named=True))


def test_a_hand_computed_case():
    """Two firsthand moderate incidents in a Thai restaurant, G1_allergy_V2: 5 + 5 + 2 = 12 (Critical).
    Each kept with probability 0.5: both 12 → Critical (1/4); one 5 + 2 = 7 → High (2/4); none 0 → Low (1/4)."""
    rows = [{"business_id": "b", "review_id": f"r{i}", "idx": i, "date": "2024-01-01", "stars": 1.0, "useful": 0,
             "incident_severity": "moderate", "account_type": "firsthand", "safety_interaction": "none"} for i in (0, 1)]
    restaurants = pl.DataFrame([{"business_id": "b", "name": "B", "categories": "Thai"}])
    frame = verdict_probabilities(pl.DataFrame(rows), restaurants, "G1_allergy_V2", [25], parse_confusion(HALF_MODERATE))
    row = frame.row(0, named=True)
    assert row["verdict"] == "Critical Risk" and row["method"] == "exact" and row["outcomes"] == 4
    assert row["p"] == {"Low Risk": 0.25, "High Risk": 0.5, "Critical Risk": 0.25}


@pytest.mark.parametrize("definition", ["v1", "v2", "G1_allergy_V2", "G1_allergy_V3"])
@pytest.mark.parametrize("seed", [3, 4])
def test_exact_probabilities_equal_the_slow_reference(definition, seed):
    judgments, restaurants = synthetic(seed)
    table = random_confusion(seed)
    confusion = parse_confusion(table)
    full = {f: {j: dict(o) for j, o in rows.items()} for f, rows in confusion.table.items()}
    for k in (25, None):
        got = verdict_probabilities(judgments, restaurants, definition, [k], confusion, reference_year=2025)
        assert set(got["method"]) <= {"exact", "certain"}
        assert _close(_by_id(got), reference(judgments, restaurants, definition, k, full, year=2025), 1e-12)


def test_monte_carlo_is_within_002_of_exact_seeded_and_chunking_changes_nothing():
    judgments, restaurants = synthetic(7, n_rest=6, max_judged=6)
    confusion = parse_confusion(random_confusion(7))
    exact = verdict_probabilities(judgments, restaurants, "G1_allergy_V2", [None], confusion)
    drawn = verdict_probabilities(judgments, restaurants, "G1_allergy_V2", [None], confusion, exact_limit=0, seed=5)
    assert "monte_carlo" in set(drawn["method"]) and "exact" not in set(drawn["method"])
    assert _close(_by_id(drawn), _by_id(exact), 0.02)
    again = verdict_probabilities(judgments, restaurants, "G1_allergy_V2", [None], confusion, exact_limit=0, seed=5,
                                  row_budget=50)
    assert _close(_by_id(again), _by_id(drawn), 1e-12)  # same seed, any chunking: the same draws
    other = verdict_probabilities(judgments, restaurants, "G1_allergy_V2", [None], confusion, exact_limit=0, seed=6)
    assert not other.equals(drawn)
    chunked = verdict_probabilities(judgments, restaurants, "G1_allergy_V2", [None], confusion, row_budget=10)
    assert _close(_by_id(chunked), _by_id(exact), 1e-12)


def test_overridden_judgments_are_certain_and_parse_errors_left_out():
    rows = [{"business_id": "b", "review_id": f"r{i}", "idx": i, "incident_severity": "moderate",
             "account_type": "firsthand", "safety_interaction": "none", "overridden": i == 0,
             "parse_error": "bad" if i == 2 else None} for i in range(3)]
    restaurants = pl.DataFrame([{"business_id": "b", "name": "B", "categories": "Pizza"}])
    row = verdict_probabilities(pl.DataFrame(rows), restaurants, "G1_allergy_V2", [25], parse_confusion(HALF_MODERATE)).row(0, named=True)
    # r0 (overridden) always counts: 5; r1 kept half the time: 10 (Critical) or 5 (High); r2 never counts
    assert row["uncertain_reviews"] == 1 and row["p"] == {"Low Risk": 0.0, "High Risk": 0.5, "Critical Risk": 0.5}


def test_a_certain_change_and_the_errors():
    judgments, restaurants = synthetic(2)
    moved = parse_confusion({"incident_severity": {"moderate": {"none": 1.0}}, "account_type": {"secondhand": {"firsthand": 1.0}}})
    got = _by_id(verdict_probabilities(judgments, restaurants, "v1", [25], moved))
    table = {f: {j: dict(o) for j, o in rows.items()} for f, rows in moved.table.items()}
    assert _close(got, reference(judgments, restaurants, "v1", 25, table), 0.0)
    assert all(len(p) == 1 for p in got.values())
    with pytest.raises(ValueError, match="draws must be >= 1"):
        verdict_probabilities(judgments, restaurants, "v1", [25], moved, draws=0)
    judged = judgments.filter(pl.col("idx") < 25)["business_id"][0]
    with pytest.raises(ValueError, match=f"missing from the restaurants table: {judged}"):
        verdict_probabilities(judgments, restaurants.filter(pl.col("business_id") != judged), "v1", [25], moved)


# -- real reviews: dev-ADDM judged by heuristic-v2, G1_allergy_V2 at K = 25 -----------------------


def _addm_judged(fixtures_dir, workspace):
    from core.datasets.importer import import_dataset
    from core.judgments.judges.heuristic import HeuristicJudge
    from core.judgments.judges.runner import execute_judging, plan_judging
    from core.tasks import get_task
    from core.tasks.keyword_index import build_index

    import_dataset(workspace, "dev", fixtures_dir / "dev-ADDM" / "full" / "dataset_K25.jsonl")
    build_index(workspace, "dev", tasks=["G1a"])
    judge = HeuristicJudge(get_task("G1a", None), "heuristic-v2")
    execute_judging(plan_judging(workspace, "dev", "G1a", judge), judge)


def brute_force_half_moderate(judgments: pl.DataFrame, restaurants: pl.DataFrame, k: int) -> dict[str, dict[str, float]]:
    """Keep each judged-moderate review's severity with probability 1/2, else none: every subset of
    a restaurant's moderate reviews, weight 2^-n, verdict by the policy's pure ``evaluate``."""
    policy = get_policy("G1_allergy_V2", None)
    out = {}
    for rest in restaurants.iter_rows(named=True):
        rows = judgments.filter((pl.col("business_id") == rest["business_id"]) & (pl.col("idx") < k)).to_dicts()
        moderate = [i for i, r in enumerate(rows) if r["incident_severity"] == "moderate"]
        probs: dict[str, float] = defaultdict(float)
        for kept in itertools.product([True, False], repeat=len(moderate)):
            changed = [dict(r) for r in rows]
            for i, keep in zip(moderate, kept, strict=True):
                changed[i]["incident_severity"] = "moderate" if keep else "none"
            probs[policy.evaluate(changed, rest["categories"], k).verdict] += 0.5 ** len(moderate)
        out[rest["business_id"]] = dict(probs)
    return out


@pytest.mark.fixtures
def test_half_moderate_on_dev_addm_real_reviews(fixtures_dir, workspace):
    from core.ground_truth import load_restaurants
    from core.ground_truth.uncertainty import verdict_probabilities_ws
    from core.judgments import load_judgments

    _addm_judged(fixtures_dir, workspace)
    judgments, restaurants = load_judgments(workspace, "dev", "G1a", "heuristic-v2"), load_restaurants(workspace, "dev")
    expected = brute_force_half_moderate(judgments, restaurants, 25)
    assert len(expected) == 100 and sum(len(p) > 1 for p in expected.values()) >= 1  # some verdict is uncertain
    policy = get_policy("G1_allergy_V2", None)
    confusion = parse_confusion(HALF_MODERATE)
    exact = verdict_probabilities_ws(workspace, "dev", "G1a", policy, [25], confusion, judge="heuristic-v2")
    assert _close(_by_id(exact), expected, 1e-12)
    uncertain = exact.filter(pl.col("method") != "certain")
    print("uncertain verdicts:", uncertain.select("name", "verdict", "p", "uncertain_reviews").to_dicts())
    drawn = verdict_probabilities_ws(workspace, "dev", "G1a", policy, [25], confusion, judge="heuristic-v2",
                                     exact_limit=0, draws=20_000)
    assert _close(_by_id(drawn), expected, 0.02)
    assert math.isclose(sum(exact.row(0, named=True)["p"].values()), 1.0)


@pytest.mark.fixtures
def test_half_moderate_on_xnot_llm_judgments(fixtures_dir):
    """The same on xnot's 2,173 real gpt-5-nano judgments of 100 restaurants, every K."""
    from tests.helpers.gt_reference import load_xnot

    judgments, restaurants = load_xnot(fixtures_dir / "xnot/semantic_gt/task_G1a/judgments.json")
    confusion = parse_confusion(HALF_MODERATE)
    for k in (25, 50, 200):
        got = verdict_probabilities(judgments, restaurants, "G1_allergy_V2", [k], confusion)
        assert _close(_by_id(got), brute_force_half_moderate(judgments, restaurants, k), 1e-12)
    assert got.filter(pl.col("method") == "exact").height == 3  # three restaurants hold a moderate judgment


# -- the command line --------------------------------------------------------------------------


def test_cli_gt_uncertainty_json_matches_the_core_and_errors_name_file_and_field(demo_ws, tmp_path, capsys):
    from core.cli import main
    from core.ground_truth import load_restaurants
    from core.judgments import load_judgments

    path = tmp_path / "confusion.json"
    path.write_text(json.dumps({"incident_severity": {"moderate": {"moderate": 0.5, "none": 0.5},
                                                      "severe": {"severe": 0.8, "moderate": 0.2}}}), encoding="utf-8")
    argv = ["--workspace", str(demo_ws.root), "gt", "uncertainty", "--dataset", "demo", "--task", "G1a",
            "--formula", "G1_allergy_V2", "--k", "25,200", "--judge", "heuristic-v2", "--confusion", str(path)]
    assert main([*argv, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["definition"], out["judge"], out["draws"], out["seed"]) == ("G1_allergy_V2", "heuristic-v2", 20000, 0)
    assert len(out["restaurants"]) == 24 and {r["k"] for r in out["restaurants"]} == {25, 200}
    assert all(set(r) >= {"business_id", "name", "k", "verdict", "p"} for r in out["restaurants"])
    assert all(abs(sum(r["p"].values()) - 1) < 1e-12 for r in out["restaurants"])
    core = verdict_probabilities(load_judgments(demo_ws, "demo", "G1a", "heuristic-v2"), load_restaurants(demo_ws, "demo"),
                                 "G1_allergy_V2", [25, 200], parse_confusion(json.loads(path.read_text())))
    assert {(r["business_id"], r["k"]): r["p"] for r in out["restaurants"]} == {
        (r["business_id"], r["k"]): r["p"] for r in core.iter_rows(named=True)}
    assert [e["n"] for e in out["uncertain_by_k"]] == [
        sum(1 for r in out["restaurants"] if r["k"] == k and r["p"][r["verdict"]] < 1) for k in (25, 200)]
    assert sum(e["n"] for e in out["uncertain_by_k"]) >= 1
    assert main(argv) == 0 and "verdicts uncertain" in capsys.readouterr().out
    path.write_text(json.dumps({"incident_severity": {"moderate": {"none": 0.4}}}), encoding="utf-8")
    assert main(argv) == 1
    assert f"error: {path}: field 'incident_severity.moderate': probabilities sum to 0.4, not 1" in capsys.readouterr().err
    assert main([*argv[:-2], "--confusion", str(tmp_path / "nope.json")]) == 1
    assert "nope.json: cannot read" in capsys.readouterr().err
    assert main(argv[:-2]) == 1 and "needs --confusion" in capsys.readouterr().err

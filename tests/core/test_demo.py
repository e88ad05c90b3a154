"""The demo generator: determinism, proportions, planted truth and the GT by K it produces."""

from __future__ import annotations

import base64
import hashlib
import json
import math
import random
import re
from collections import Counter, defaultdict
from pathlib import Path

import polars as pl
import pytest

from core.cli import main as cli_main
from core.demo import (
    DEMO_STEPS,
    default_truth_path,
    demo_is_current,
    generate_demo,
    generate_records,
)
from core.demo.allergy_text import ALLERGEN_DISHES, render_plant
from core.demo.menu import COMPANIONS, CUISINES, DAYS, NUMBER_WORDS, OCCASIONS, STAFF_NAMES
from core.demo.planting import (
    FALSE_FRIEND,
    HYPOTHETICAL,
    KINDS,
    MENTION,
    incident,
    negative,
    positive,
    secondhand,
)
from core.demo.templates import TEMPLATES
from core.demo.text import SlotFiller, is_plural, template_count

# SPEC §2.2, verbatim: the match rule is a plain substring of the lower-cased text.
G1A_KEYWORDS = """
peanut nut nuts almond cashew walnut pecan hazelnut pistachio allergy allergic allergies allergen
reaction anaphyl epipen epinephrine hives swell swelling swollen gluten celiac coeliac dietary
restriction restrictions accommodate accommodating accommodated sensitive sensitivity intoleran
intolerance cross-contamin contamination safe unsafe careful warning
""".split()
REQUIRED_CUISINES = {"Thai", "Chinese", "Vietnamese", "Italian", "Pizza", "Coffee & Tea", "Steakhouses",
                     "Mexican", "Indian"}
KS = (25, 50, 100, 200)


def matches(text: str) -> bool:
    low = text.lower()
    return any(k in low for k in G1A_KEYWORDS)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def full_demo(tmp_path_factory):
    """The full 100 x 200 demo, generated once for this module."""
    root = tmp_path_factory.mktemp("full") / "demo"
    summary = generate_demo(root)
    source = root / "sources" / "demo"
    return {
        "root": root, "summary": summary,
        "businesses": read_jsonl(source / "business.json"), "reviews": read_jsonl(source / "review.json"),
        "truth": pl.read_parquet(default_truth_path(root)),
    }


# --- reference G1a formula v1, written from SPEC §3.1 (independent of core.ground_truth) ---
CUISINE_RISK = {"Thai": 2.0, "Vietnamese": 1.8, "Chinese": 1.5, "Asian Fusion": 1.5, "Indian": 1.3, "Japanese": 1.2,
                "Korean": 1.2, "Mexican": 1.0, "Italian": 0.5, "American (Traditional)": 0.5, "American (New)": 0.5,
                "Pizza": 0.5, "Sandwiches": 0.5, "Breakfast & Brunch": 0.6}


def v1_score(categories: str, judged: list[dict]) -> float:
    """FINAL_RISK_SCORE of SPEC §3.1 over ``judged`` (the keyword-matched reviews with idx < K)."""
    incidents = [j for j in judged if j["account_type"] == "firsthand"
                 and j["incident_severity"] in ("mild", "moderate", "severe")]
    sev = Counter(j["incident_severity"] for j in incidents)
    inter = Counter(j["safety_interaction"] for j in judged)
    incident_score = 2 * sev["mild"] + 5 * sev["moderate"] + 15 * sev["severe"]
    safety_credit = 1.0 * inter["positive"] - 0.5 * inter["negative"] - 5.0 * inter["betrayal"]
    modifier = max([1.0] + [CUISINE_RISK[c] for c in categories.split(", ") if c in CUISINE_RISK])
    penalty = 1 - 0.3 * (1 - min(1, len(judged) / 10))
    year = max((int(j["date"][:4]) for j in incidents), default=2020)
    decay = max(0.3, 1 - 0.15 * (2025 - year))
    weights = [(5 - j["stars"]) + math.log(j["useful"] + 1) for j in incidents]
    credibility = sum(weights) / len(weights) if incidents else 1.0
    raw = (2.5 + incident_score * decay * credibility - safety_credit * penalty + 0.5 * modifier
           - 3.0 * inter["betrayal"])
    return min(20.0, max(0.0, raw))


def verdict(score: float) -> str:
    return "Low Risk" if score < 4 else "High Risk" if score < 8 else "Critical Risk"


def true_judgments(demo: dict) -> list[dict]:
    """One judgment per keyword-matched review: its planted truth, else none/none/none."""
    truth = {(r["business_id"], r["idx"]): r for r in demo["truth"].iter_rows(named=True)}
    none = {"incident_severity": "none", "account_type": "none", "safety_interaction": "none"}
    out, idx_of = [], defaultdict(int)
    for review in demo["reviews"]:
        idx = idx_of[review["business_id"]]
        idx_of[review["business_id"]] += 1
        if matches(review["text"]):
            label = truth.get((review["business_id"], idx), none)
            out.append({"business_id": review["business_id"], "idx": idx, "date": review["date"],
                        "stars": review["stars"], "useful": review["useful"],
                        **{k: label[k] for k in none}})
    return out


def gt_by_k(demo: dict) -> dict[str, dict[int, float]]:
    judged = defaultdict(list)
    for j in true_judgments(demo):
        judged[j["business_id"]].append(j)
    return {b["business_id"]: {k: v1_score(b["categories"], [j for j in judged[b["business_id"]] if j["idx"] < k])
                               for k in KS} for b in demo["businesses"]}


# --- determinism ---
@pytest.mark.heavy  # `make test-all`: minutes of CPU, covered in part by quicker tests
def test_same_seed_same_bytes_and_other_seed_differs(tmp_path, full_demo):
    other = tmp_path / "again"
    generate_demo(other)
    for rel in ("sources/demo/business.json", "sources/demo/review.json",
                "datasets/demo/restaurants.parquet", "datasets/demo/reviews.parquet"):
        assert sha256(other / rel) == sha256(full_demo["root"] / rel), rel
    assert sha256(default_truth_path(other)) == sha256(default_truth_path(full_demo["root"]))
    small_a = generate_records(seed=7, n_restaurants=4, reviews_per_restaurant=30)
    small_b = generate_records(seed=8, n_restaurants=4, reviews_per_restaurant=30)
    assert small_a.reviews != small_b.reviews


def test_generation_uses_no_global_random_state():
    random.seed(1)
    a = generate_records(n_restaurants=3, reviews_per_restaurant=20)
    random.seed(2)
    b = generate_records(n_restaurants=3, reviews_per_restaurant=20)
    assert a == b


# --- proportions ---
def test_restaurants_cuisines_and_ids(full_demo):
    businesses = full_demo["businesses"]
    assert len(businesses) == 100
    categories = Counter(c for b in businesses for c in b["categories"].split(", "))
    cuisines = {c for c in categories if c in CUISINES}
    assert len(cuisines) >= 10 and REQUIRED_CUISINES <= cuisines
    assert len({b["name"] for b in businesses}) == 100
    for b in businesses:
        assert set(b) >= {"business_id", "name", "address", "city", "state", "postal_code", "latitude", "longitude",
                          "stars", "review_count", "is_open", "attributes", "categories", "hours"}
        assert 1.0 <= b["stars"] <= 5.0 and b["stars"] * 2 == int(b["stars"] * 2)
        assert b["review_count"] >= 200 and "Restaurants" in b["categories"].split(", ")
    ids = [b["business_id"] for b in businesses] + [r["review_id"] for r in full_demo["reviews"]]
    assert len(set(ids)) == len(ids)
    for value in ids + [r["user_id"] for r in full_demo["reviews"]]:
        assert re.fullmatch(r"[A-Za-z0-9_-]{22}", value), value
        assert len(base64.urlsafe_b64decode(value + "==")) == 16


def test_reviews_counts_dates_order_and_votes(full_demo):
    reviews = full_demo["reviews"]
    by_business = defaultdict(list)
    for r in reviews:
        by_business[r["business_id"]].append(r)
    assert len(by_business) == 100 and {len(v) for v in by_business.values()} == {200}
    for rows in by_business.values():
        dates = [r["date"] for r in rows]
        assert dates == sorted(dates, reverse=True) and len(set(dates)) == len(dates)  # newest first, no ties
        assert len({r["user_id"] for r in rows}) == len(rows)
    years = Counter(int(r["date"][:4]) for r in reviews)
    assert min(years) == 2012 and max(years) == 2025 and len(years) == 14
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", r["date"]) for r in reviews)
    stars = Counter(r["stars"] for r in reviews)
    assert set(stars) == {1.0, 2.0, 3.0, 4.0, 5.0} and stars.most_common(1)[0][0] == 5.0
    assert (stars[4.0] + stars[5.0]) / len(reviews) > 0.5  # Yelp's positive skew
    useful = [r["useful"] for r in reviews]
    assert sum(u <= 3 for u in useful) / len(useful) > 0.85 and max(useful) >= 20
    assert any(r["funny"] for r in reviews) and any(r["cool"] for r in reviews)
    lengths = Counter(r["text"].count(". ") + 1 for r in reviews)
    assert lengths[1] > 0 and max(lengths) >= 8


def test_keyword_match_rate_and_false_friends(full_demo):
    reviews = full_demo["reviews"]
    rate = sum(matches(r["text"]) for r in reviews) / len(reviews)
    print(f"\nG1a keyword match rate: {rate:.2%}")
    assert 0.14 <= rate <= 0.18
    texts = [r["text"].lower() for r in reviews]
    for phrase in ("donut", "minute", "safe parking", "careful with the hot plate", "walnut brownie",
                   "gluten-free menu", "coconut", "fair warning"):
        assert any(phrase in t for t in texts), phrase


def test_keyword_matches_are_exactly_the_planted_reviews(full_demo):
    truth_keys = set(full_demo["truth"].select("business_id", "idx").iter_rows())
    idx_of: dict[str, int] = defaultdict(int)
    matched = set()
    for r in full_demo["reviews"]:
        if matches(r["text"]):
            matched.add((r["business_id"], idx_of[r["business_id"]]))
        idx_of[r["business_id"]] += 1
    assert matched == truth_keys  # no accidental keyword in ordinary text, no silent plant


def test_imported_dataset_matches_sources_and_truth(full_demo):
    root = full_demo["root"]
    reviews = pl.read_parquet(root / "datasets" / "demo" / "reviews.parquet")
    assert reviews.height == 20_000 and set(reviews["dataset"].unique()) == {"demo"}
    joined = full_demo["truth"].join(reviews.select("review_id", "idx", "date"), on="review_id", suffix="_db")
    assert joined.height == full_demo["truth"].height
    assert (joined["idx"] == joined["idx_db"]).all() and (joined["date"] == joined["date_db"]).all()
    # the truth sits in the demo's own folder, never where a dataset query looks
    assert demo_is_current(root) and default_truth_path(root).is_relative_to(root / "sources" / "demo")


# --- planted truth ---
def test_truth_covers_every_label(full_demo):
    truth = full_demo["truth"]
    assert set(truth["incident_severity"]) == {"none", "mild", "moderate", "severe"}
    assert set(truth["account_type"]) == {"none", "firsthand", "secondhand", "hypothetical"}
    assert set(truth["safety_interaction"]) == {"none", "positive", "negative", "betrayal"}
    assert set(truth["staff_response"]) == {"none", "accommodating", "dismissive", "refused"}
    assert set(truth["assurance_claim"]) == {True, False}
    assert set(truth["kind"]) == set(KINDS)
    firsthand = truth.filter(pl.col("account_type") == "firsthand")
    assert set(firsthand["incident_severity"]) == {"mild", "moderate", "severe"}
    assert truth.filter(pl.col("kind").is_in(["mention", "false_friend"]))["incident_severity"].unique().to_list() == [
        "none"]
    for name in ("flip_vetri_like", "critical_recent_severe", "clean", "accommodating"):
        assert name in set(truth["profile"])


def test_vetri_like_restaurant_is_planted_like_the_real_case(full_demo):
    rows = full_demo["truth"].filter(pl.col("profile") == "flip_vetri_like")
    incident_row = rows.filter(pl.col("kind") == "incident").row(0, named=True)
    assert (incident_row["idx"], incident_row["incident_severity"], incident_row["account_type"]) == (
        39, "severe", "firsthand")
    assert int(incident_row["date"][:4]) <= 2020  # recency decay 0.3
    positives = rows.filter(pl.col("safety_interaction") == "positive")["idx"].to_list()
    assert {49, 52, 59, 83, 88} <= set(positives) and len(positives) > 5


# --- GT by K (formula v1 over the true labels) ---
def test_gt_by_k_resembles_the_real_distribution(full_demo):
    scores = gt_by_k(full_demo)
    dist = {k: Counter(verdict(s[k]) for s in scores.values()) for k in KS}
    print("\nGT v1 by K from the planted truth:", {k: dict(v) for k, v in dist.items()})
    for k in KS:
        assert dist[k]["Low Risk"] >= 90
    assert 4 <= dist[200]["High Risk"] <= 6 and 2 <= dist[200]["Critical Risk"] <= 3
    assert dist[25]["Critical Risk"] == 0
    flips = [b for b, s in scores.items() if len({verdict(s[k]) for k in KS}) > 1]
    assert len(flips) >= 3
    vetri = full_demo["truth"].filter(pl.col("profile") == "flip_vetri_like")["business_id"][0]
    # SPEC §3.1 worked example: 3.0 Low, 6.94 High, 3.44 Low, 1.44 Low
    assert [round(scores[vetri][k], 2) for k in KS] == [3.0, 6.94, 3.44, 1.44]


def test_gt_by_k_agrees_with_core_ground_truth(full_demo):
    from core.ground_truth import compute_gt_frame
    from core.tasks import get_task

    assert set(get_task("G1a", None).keywords) == set(G1A_KEYWORDS)
    judgments = pl.DataFrame(true_judgments(full_demo))
    restaurants = pl.DataFrame(full_demo["businesses"]).select("business_id", "name", "categories")
    frame = compute_gt_frame(judgments, restaurants, "v1", list(KS))
    ours = gt_by_k(full_demo)
    for row in frame.iter_rows(named=True):
        assert row["verdict"] == verdict(ours[row["business_id"]][row["k"]])
        assert row["final_risk_score"] == pytest.approx(ours[row["business_id"]][row["k"]], abs=0.006)


# --- text pools ---
def test_ordinary_text_has_no_keyword_and_every_slot_fills():
    pools = [*STAFF_NAMES, *COMPANIONS, *OCCASIONS, *DAYS, *NUMBER_WORDS]
    for c in CUISINES.values():
        pools += [*c.dishes, *c.drinks, *c.desserts, *c.name_first, *c.name_second]
    assert [p for p in pools if matches(p)] == []
    assert template_count() >= 300
    rng = random.Random(0)
    for section in TEMPLATES.values():
        for templates in section.values():
            for template in templates:
                assert not matches(template), template
                for cuisine in CUISINES.values():
                    text = template.format_map(SlotFiller(rng, cuisine, "Demo Place", "Reno"))
                    assert "{" not in text and not matches(text), text


def test_every_planted_phrasing_carries_a_keyword():
    plants = [incident(s, i) for s in ("mild", "moderate", "severe") for i in ("none", "negative", "betrayal")]
    plants += [positive(), positive(assurance=True), negative("dismissive"), negative("refused"),
               secondhand("severe"), secondhand("mild", "betrayal"), HYPOTHETICAL, MENTION, FALSE_FRIEND]
    rng = random.Random(0)
    for category in CUISINES:
        assert category in ALLERGEN_DISHES
        for plant in plants:
            for _ in range(25):
                fill = SlotFiller(rng, CUISINES[category], "Demo Place", "Reno")
                text = render_plant(rng, plant, category, fill)
                assert matches(text) and "{" not in text, (plant, text)


def test_verb_agreement_of_dish_names():
    assert is_plural("carnitas tacos") and is_plural("the summer rolls") and is_plural("eggs Benedict")
    assert not is_plural("pad see ew") and not is_plural("fish and chips") and not is_plural("hummus")


# --- API and CLI ---
def test_small_demo_and_bad_counts(tmp_path, monkeypatch):
    import core.demo as demo
    from core.workspace import Workspace

    monkeypatch.setattr(demo, "DEMO_STEPS", ())  # the steps would rebuild the derived files checked below

    ws = Workspace(tmp_path / "ws")
    stale = [ws.index_dir("demo") / "keyword_index.parquet", ws.judgments_dir("demo", "G1a") / "heuristic-v1.jsonl",
             ws.overrides_path("demo", "G1a"), ws.judgments_dir("other", "G1a") / "heuristic-v1.jsonl"]
    for path in stale:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("{}\n")
    summary = generate_demo(ws.root, n_restaurants=3, reviews_per_restaurant=30, truth_path=tmp_path / "t.parquet")
    assert [p.exists() for p in stale] == [False, False, False, True]  # the old demo's derived files are gone
    assert (summary["restaurants"], summary["reviews"], summary["steps"]) == (3, 90, [])
    assert pl.read_parquet(tmp_path / "t.parquet")["idx"].max() < 30
    with pytest.raises(ValueError, match="at least 1 restaurant"):
        generate_demo(tmp_path / "bad", n_restaurants=0)
    assert not (tmp_path / "bad").exists()


def test_demo_steps_run_in_order(tmp_path, monkeypatch):
    import core.demo as demo

    calls = []

    def step(ws, *, seed, progress):
        progress(1, 2, "half way")
        calls.append((ws.root, seed, ws.datasets()))

    monkeypatch.setattr(demo, "DEMO_STEPS", (step,))
    root = tmp_path / "ws"
    summary = demo.generate_demo(root, seed=3, n_restaurants=2, reviews_per_restaurant=10)
    assert calls == [(root, 3, ["demo"])] and summary["steps"] == [f"{__name__}.{step.__qualname__}"]
    assert demo.demo_is_current(root)
    fingerprint = demo.generator_fingerprint
    monkeypatch.setattr(demo, "generator_fingerprint", lambda: "changed")
    assert not demo.demo_is_current(root)  # a changed generator makes --if-missing regenerate
    monkeypatch.setattr(demo, "generator_fingerprint", fingerprint)
    assert demo.demo_is_current(root)
    monkeypatch.setattr(demo, "DEMO_STEPS", ())
    assert not demo.demo_is_current(root)  # so does a new step list
    assert [s.__name__ for s in DEMO_STEPS] == ["tasks_step", "index_step", "judge_step", "gt_step", "labels_step",
                                                "study_step", "gold_step", "runs_step"]


def test_cli_demo_if_missing_and_foreign_dataset(tmp_path, capsys):
    root = tmp_path / "ws"
    args = ["--workspace", str(root), "--no-progress", "demo", "--restaurants", "2", "--reviews", "20"]
    assert cli_main(args) == 0
    assert "2 restaurants, 40 reviews" in capsys.readouterr().out
    review_file = root / "sources" / "demo" / "review.json"
    before = review_file.stat().st_mtime_ns
    assert cli_main([*args, "--if-missing"]) == 0
    assert "already present" in capsys.readouterr().out and review_file.stat().st_mtime_ns == before
    assert cli_main(["--json", *args, "--seed", "9"]) == 0
    assert json.loads(capsys.readouterr().out)["seed"] == 9
    (root / "sources" / "demo" / "demo.json").unlink()  # now "demo" looks imported by someone else
    assert cli_main(args) == 1
    assert "did not write" in capsys.readouterr().err
    assert cli_main([*args, "--force"]) == 0
    assert cli_main([*args, "--restaurants", "0"]) == 1

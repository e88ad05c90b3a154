"""Digests of today's GT outputs (formulas v1/v2, policies G1_allergy_V0..V3), for the
byte-identical check after the policy language grew (issue 11).

``python -m tests.helpers.gt_reference FIXTURES_DIR OUT.json`` writes the digests;
tests/core/test_policy_language.py recomputes them and compares. Inputs: the xnot fixture
judgments (real) and a seeded synthetic set that exercises every signal, date band and the
relevance flag of the G1 allergy policies.

The stored digests were generated at the policies branch's base commit, then regenerated on
``main`` at 85534fd, just before ``policies`` was merged (main's GT files had gained the K coverage
fields ``k_requested``/``restaurants_short_of_k``; the frames' digests were unchanged): the merge
leaves every G1 allergy and xnot GT byte-identical to main's.
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from pathlib import Path

import polars as pl

from core.ground_truth import addm_payload, compute_gt_frame, compute_policy_gt_frame, xnot_payload
from core.ground_truth.policies.loader import get_policy

DEFINITIONS = ("v1", "v2", "G1_allergy_V0", "G1_allergy_V1", "G1_allergy_V2", "G1_allergy_V3")
KS = [25, 50, 100, 200, None]
STAMP = "2000-01-01T00:00:00"


def load_xnot(path: Path) -> tuple[pl.DataFrame, pl.DataFrame]:
    data = json.loads(path.read_text(encoding="utf-8"))["judgments"]
    rows, rest = [], []
    for name, entry in data.items():
        rest.append({"business_id": name, "name": name, "categories": entry["restaurant_meta"]["categories"],
                     "n_reviews": 200})
        for r in entry["reviews"]:
            rows.append({"business_id": name, "review_id": f"{name}#{r['idx']}", **r})
    return pl.DataFrame(rows), pl.DataFrame(rest)


def synthetic(seed: int = 11, n_rest: int = 60) -> tuple[pl.DataFrame, pl.DataFrame]:
    rng = random.Random(seed)
    cats = ["Thai, Restaurants", "Pizza", "Asian Fusion", None, "Chinese, Bars", "Italian"]
    rest, rows = [], []
    for b in range(n_rest):
        bid = f"b{b:03d}"
        rest.append({"business_id": bid, "name": f"R{b % 40}", "categories": rng.choice(cats),
                     "n_reviews": rng.choice([10, 30, 120, 250])})
        for idx in sorted(rng.sample(range(260), rng.randint(0, 25))):
            rows.append({
                "business_id": bid, "review_id": f"{bid}r{idx}", "idx": idx,
                "date": f"{rng.randint(2012, 2025)}-0{rng.randint(1, 9)}-10 12:00:00",
                "stars": float(rng.randint(1, 5)), "useful": rng.randint(0, 9),
                "incident_severity": rng.choice(["none", "mild", "moderate", "severe"]),
                "account_type": rng.choice(["none", "firsthand", "secondhand", "hypothetical"]),
                "safety_interaction": rng.choice(["none", "positive", "negative", "betrayal"]),
                "assurance_claim": rng.choice(["true", "false", None]),
                "staff_response": rng.choice(["none", "accommodated", "refused", "dismissive", None]),
                "is_allergy_related": rng.choice([True, True, False, None]),
            })
    return pl.DataFrame(rows), pl.DataFrame(rest)


def digests(judgments: pl.DataFrame, restaurants: pl.DataFrame) -> dict[str, str]:
    out = {}
    for d in DEFINITIONS:
        if d.startswith("v"):
            frame = compute_gt_frame(judgments, restaurants, d, KS)
        else:
            frame = compute_policy_gt_frame(judgments, restaurants, d, KS)
        out[f"{d}/frame"] = hashlib.sha256(frame.write_ndjson().encode()).hexdigest()
        for k in KS:
            if d.startswith("v"):
                payload = xnot_payload(frame, task_id="G1a", k=k, computed_at=STAMP)
            else:
                payload = addm_payload(frame, k=k, computed_at=STAMP, policy=get_policy(d, None))
                for entry in payload["restaurants"].values():  # the one key issue 11 added
                    entry["ground_truth"].pop("matched_rule", None)
            text = json.dumps(payload, sort_keys=True, ensure_ascii=False)
            out[f"{d}/K{k}"] = hashlib.sha256(text.encode()).hexdigest()
    return out


def all_digests(fixtures: Path | None) -> dict[str, dict[str, str]]:
    out = {"synthetic": digests(*synthetic())}
    if fixtures is not None:
        j, r = load_xnot(fixtures / "xnot/semantic_gt/task_G1a/judgments.json")
        out["xnot"] = digests(j.filter(pl.col("idx") >= 0), r)
    return out


if __name__ == "__main__":
    Path(sys.argv[2]).write_text(json.dumps(all_digests(Path(sys.argv[1])), indent=1, sort_keys=True) + "\n")

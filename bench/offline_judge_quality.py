"""How far to trust the offline G1a judges: their incidents and verdicts against LLM judgments on real reviews.

```
python bench/offline_judge_quality.py [--fixtures DIR] [--baseline CHECKOUT] [--xnot-dataset FILE] [--json OUT]
```

Three evaluation sets, all real Yelp reviews from the shared fixtures (``$WORKBENCH_FIXTURES``):

* **dev-ADDM** (``dev-ADDM/full/dataset_K25.jsonl``, 100 restaurants × 25 reviews): incident
  precision and recall against the incidents of ADDM's ``G1_allergy_V2`` K25 ground truth (an
  LLM ensemble) corrected by its human overrides (``judgment_overrides.json``); false firsthand
  incidents; the K = 25 verdict under ``G1_allergy_V2`` against ADDM's (corrected) verdict. The
  figures are given for all 100 restaurants and for the 98 that no rule was written beside
  (heuristic-v2's first rules fixed three reviews of two restaurants here: :data:`ADDM_DEVELOPED_BESIDE`).
* **xnot K25 subset** (``xnot/dataset_K25_subset.jsonl``, 6 restaurants): the restaurants the
  heuristic-v1 rules were written beside; per-field agreement with xnot's gpt-5-nano judgments
  (``xnot/semantic_gt/task_G1a/judgments.json``), false firsthand incidents, and the K = 25
  verdict under v1, v2 and ``G1_allergy_V2`` computed from each judge's judgments.
* **xnot held out** (``--xnot-dataset``: xnot's whole ``dataset_K25.jsonl``): the same on xnot's
  other restaurants. The fixtures do not hold their texts (xnot's judgments cover 100 restaurants,
  the fixture texts 6 of them; dev-ADDM's 100 share one name, Ruth's Chris Steak House, with
  other reviews of another branch), so this set is measured only when you pass the file.

``--baseline CHECKOUT`` (e.g. ``git worktree add /tmp/base main`` or ``git archive main | tar -x -C
/tmp/base``) also judges with that checkout's ``heuristic-v2`` (run in a subprocess on its own
code), shown as ``heuristic-v2 (baseline)``: the before/after figures of a rule change.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core.ground_truth import compute_gt_frame, compute_policy_gt_frame, get_policy  # noqa: E402
from core.judgments.judges.heuristic import PROFILES, judge_text  # noqa: E402
from core.tasks import get_task  # noqa: E402
from core.tasks.keyword_index import keyword_hits  # noqa: E402

FIELDS = ("incident_severity", "account_type", "safety_interaction")
# dev-ADDM restaurants whose reviews heuristic-v2's first rules were written for (commit b69ff17):
# Chop Steakhouse & Bar ("my unusual anaphylaxis case") and Cafe Blue Moose ("my friend suffered an
# allergic reaction", and "her mouth began to tingle ... allergy medicine", the miss v2 fixed).
ADDM_DEVELOPED_BESIDE = ("IhN-DlnytNvnzCoTIwwfgQ", "sf-KdXHB5nxfNjl2uUpI6Q")
DEFINITIONS = ("v1", "v2", "G1_allergy_V2")
_WORKER = ("import json, sys\nfrom core.judgments.judges.heuristic import PROFILES, judge_text\n"
           "texts = json.load(sys.stdin)\n"
           "print(json.dumps([judge_text(t, PROFILES[sys.argv[1]])[0] for t in texts]))\n")


def load_scale(path: Path) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(restaurants, reviews) of a SCALE-layout file (SPEC §1.1); idx = position, newest first."""
    rest, reviews = [], []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                continue
            row = json.loads(line)
            biz = row["business"]
            rest.append({"business_id": row["business_id"], "name": biz["name"],
                         "categories": biz.get("categories"), "n_reviews": len(row["reviews"])})
            reviews += [{"business_id": row["business_id"], "name": biz["name"], "categories": biz.get("categories"),
                         "review_id": r["review_id"], "idx": i, "date": r["date"], "stars": float(r["stars"]),
                         "useful": int(r.get("useful") or 0), "text": r["text"]} for i, r in enumerate(row["reviews"])]
    return pl.DataFrame(rest), pl.DataFrame(reviews)


def matched(reviews: pl.DataFrame) -> pl.DataFrame:
    """The reviews with a G1a keyword (SPEC §2.2: plain substring of the lower-cased text)."""
    rows = keyword_hits(reviews["text"], list(get_task("G1a", None).keywords))["row"].unique().sort()
    return reviews[rows.to_list()]


def judge(reviews: pl.DataFrame, judge_id: str, checkout: Path | None = None) -> pl.DataFrame:
    """``reviews`` with the judge's fields: this checkout's rules, or ``checkout``'s in a subprocess."""
    texts = reviews["text"].to_list()
    if checkout is None:
        fields = [judge_text(t, PROFILES[judge_id])[0] for t in texts]
    else:
        env = {**os.environ, "PYTHONPATH": str(checkout)}
        done = subprocess.run([sys.executable, "-c", _WORKER, judge_id], input=json.dumps(texts), text=True,
                              capture_output=True, cwd=checkout, env=env, check=True)
        fields = json.loads(done.stdout)
    return reviews.drop("text").with_columns(pl.DataFrame(fields, schema=dict.fromkeys(FIELDS, pl.String)))


def is_incident(frame: pl.DataFrame) -> pl.Series:
    return (frame["account_type"] == "firsthand") & (frame["incident_severity"] != "none")


def verdicts(judgments: pl.DataFrame, restaurants: pl.DataFrame, definition: str) -> dict[str, str]:
    """business_id → verdict at K = 25 of one formula or policy."""
    if definition.startswith("v"):
        frame = compute_gt_frame(judgments, restaurants, definition, [25])
    else:
        frame = compute_policy_gt_frame(judgments, restaurants, definition, [25])
    return dict(zip(frame["business_id"], frame["verdict"], strict=True))


def addm_truth(fixtures: Path) -> tuple[set[str], dict[str, str]]:
    """ADDM's K25 incident review_ids and verdicts, both after its human overrides (G1_allergy topic)."""
    answers = fixtures / "dev-ADDM" / "answers"
    gt = json.loads((answers / "G1_allergy_V2_K25_groundtruth.json").read_text(encoding="utf-8"))["restaurants"]
    corrected = {o["review_id"]: o["corrected"] for o in
                 json.loads((answers / "judgment_overrides.json").read_text(encoding="utf-8"))["G1_allergy"]}
    policy = get_policy("G1_allergy_V2", None)
    incidents, out = set(), {}
    for bid, entry in gt.items():
        kept = []
        for inc in entry["ground_truth"]["incidents"]:
            severity = corrected.get(inc["review_id"], {}).get("incident_severity", inc["severity"])
            if severity != "none":
                kept.append({**inc, "severity": severity})
                incidents.add(inc["review_id"])
        out[bid] = policy.score_incidents(kept, entry.get("categories")).verdict
    return incidents, out


def agreement(ours: dict[str, str], theirs: dict[str, str], ids: list[str]) -> dict[str, Any]:
    """Verdicts equal on ``ids``, and the ones that differ (ours above / below theirs)."""
    rank = {"Low Risk": 0, "High Risk": 1, "Critical Risk": 2}
    differ = [b for b in ids if ours[b] != theirs[b]]
    return {"agree": len(ids) - len(differ), "n": len(ids),
            "too_high": sorted(b for b in differ if rank[ours[b]] > rank[theirs[b]]),
            "too_low": sorted(b for b in differ if rank[ours[b]] < rank[theirs[b]])}


def addm_figures(fixtures: Path, judges: dict[str, Callable[[pl.DataFrame], pl.DataFrame]]) -> dict[str, Any]:
    restaurants, reviews = load_scale(fixtures / "dev-ADDM" / "full" / "dataset_K25.jsonl")
    truth, truth_verdicts = addm_truth(fixtures)
    texts = matched(reviews)
    held_out = [b for b in restaurants["business_id"] if b not in ADDM_DEVELOPED_BESIDE]
    out: dict[str, Any] = {"restaurants": restaurants.height, "reviews": reviews.height, "matched": texts.height,
                           "true_incidents": len(truth), "judges": {}}
    for name, run in judges.items():
        judged = run(texts)
        claimed = judged.filter(is_incident(judged))
        ids = set(claimed["review_id"])
        false = claimed.filter(~pl.col("review_id").is_in(list(truth)))
        ours = verdicts(judged, restaurants, "G1_allergy_V2")
        out["judges"][name] = {
            "claimed": len(ids), "hits": len(ids & truth), "missed": sorted(truth - ids),
            "precision": len(ids & truth) / len(ids) if ids else None, "recall": len(ids & truth) / len(truth),
            "false_incidents": false.select("business_id", "review_id", "incident_severity").to_dicts(),
            "false_incidents_held_out": false.filter(pl.col("business_id").is_in(held_out)).height,
            "verdicts_all": agreement(ours, truth_verdicts, list(restaurants["business_id"])),
            "verdicts_held_out": agreement(ours, truth_verdicts, held_out),
        }
    return out


def xnot_llm(fixtures: Path, restaurants: pl.DataFrame) -> pl.DataFrame:
    """xnot's gpt-5-nano judgments of the restaurants in ``restaurants`` (by name), with their business ids."""
    data = json.loads((fixtures / "xnot/semantic_gt/task_G1a/judgments.json").read_text(encoding="utf-8"))["judgments"]
    ids = dict(zip(restaurants["name"], restaurants["business_id"], strict=True))
    rows = [{"business_id": ids[name], "idx": r["idx"], "date": r["date"], "stars": float(r["stars"]),
             "useful": int(r.get("useful") or 0), **{f: r[f] for f in FIELDS}}
            for name, block in data.items() if name in ids for r in block["reviews"]]
    return pl.DataFrame(rows)


def xnot_figures(path: Path, fixtures: Path, judges: dict[str, Callable[[pl.DataFrame], pl.DataFrame]],
                 *, exclude: set[str] = frozenset()) -> dict[str, Any]:  # type: ignore[assignment]
    """Agreement with gpt-5-nano at K = 25 on the restaurants of ``path`` that xnot judged (minus ``exclude``)."""
    restaurants, reviews = load_scale(path)
    names = set(json.loads((fixtures / "xnot/semantic_gt/task_G1a/judgments.json").read_text(encoding="utf-8"))["judgments"])
    restaurants = restaurants.filter(pl.col("name").is_in(list(names - exclude)))
    reviews = reviews.filter(pl.col("business_id").is_in(restaurants["business_id"].to_list()) & (pl.col("idx") < 25))
    llm = xnot_llm(fixtures, restaurants).filter(pl.col("idx") < 25)
    texts = matched(reviews)
    llm_incidents = set(map(tuple, llm.filter(is_incident(llm)).select("business_id", "idx").rows()))
    llm_verdicts = {d: verdicts(llm, restaurants, d) for d in DEFINITIONS}
    ids = list(restaurants["business_id"])
    out: dict[str, Any] = {"restaurants": restaurants.height, "matched": texts.height, "llm_judged": llm.height,
                           "llm_incidents": len(llm_incidents), "judges": {}}
    for name, run in judges.items():
        judged = run(texts)
        joined = judged.join(llm, on=["business_id", "idx"], how="inner", suffix="_llm")
        claimed = set(map(tuple, judged.filter(is_incident(judged)).select("business_id", "idx").rows()))
        out["judges"][name] = {
            "field_agreement": {f: round(float((joined[f] == joined[f"{f}_llm"]).mean() or 0), 3) for f in FIELDS},
            "both_judged": joined.height, "claimed": len(claimed),
            "false_incidents": sorted(claimed - llm_incidents), "missed": sorted(llm_incidents - claimed),
            "verdicts": {d: agreement(verdicts(judged, restaurants, d), llm_verdicts[d], ids) for d in DEFINITIONS},
        }
    return out


def _verdict_cell(a: dict[str, Any]) -> str:
    return f"{a['agree']}/{a['n']} (+{len(a['too_high'])} −{len(a['too_low'])})"


def print_report(figures: dict[str, Any]) -> None:
    addm = figures["dev-ADDM"]
    print(f"dev-ADDM: {addm['restaurants']} restaurants × 25 reviews, {addm['matched']} keyword-matched; "
          f"{addm['true_incidents']} incidents in ADDM's K25 GT after overrides. Held out: the "
          f"{addm['restaurants'] - len(ADDM_DEVELOPED_BESIDE)} restaurants no rule was written beside.")
    print(f"{'judge':<26} {'claimed':>7} {'precision':>9} {'recall':>6} {'false inc.':>10} {'false h.o.':>10} "
          f"{'V2 K25 verdicts, all':>22} {'held out':>18}")
    for name, j in addm["judges"].items():
        precision = "–" if j["precision"] is None else f"{j['precision']:.2f}"
        print(f"{name:<26} {j['claimed']:>7} {precision:>9} {j['recall']:>6.2f} {len(j['false_incidents']):>10} "
              f"{j['false_incidents_held_out']:>10} {_verdict_cell(j['verdicts_all']):>22} "
              f"{_verdict_cell(j['verdicts_held_out']):>18}")
        for f in j["false_incidents"]:
            print(f"    false incident: {f['business_id']} review {f['review_id']} ({f['incident_severity']})")
        for r in j["missed"]:
            print(f"    missed incident: review {r}")
    for key in ("xnot subset", "xnot held out"):
        x = figures.get(key)
        if x is None:
            print(f"\n{key}: not measured (pass --xnot-dataset with xnot's dataset_K25.jsonl; the fixtures hold 6 of its restaurants)")
            continue
        print(f"\n{key}: {x['restaurants']} restaurants, {x['matched']} keyword-matched reviews at K = 25, "
              f"{x['llm_incidents']} firsthand incidents by gpt-5-nano")
        print(f"{'judge':<26} {'severity':>8} {'account':>8} {'staff':>6} {'false inc.':>10} {'missed':>6} "
              + " ".join(f"{d + ' K25':>22}" for d in DEFINITIONS))
        for name, j in x["judges"].items():
            a = j["field_agreement"]
            print(f"{name:<26} {a['incident_severity']:>8.3f} {a['account_type']:>8.3f} {a['safety_interaction']:>6.3f} "
                  f"{len(j['false_incidents']):>10} {len(j['missed']):>6} "
                  + " ".join(f"{_verdict_cell(j['verdicts'][d]):>22}" for d in DEFINITIONS))
    print("\nverdict cells: agree/n (+ too high, − too low), against the LLM judge's verdict at K = 25")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--fixtures", type=Path, default=Path(os.environ.get("WORKBENCH_FIXTURES", ROOT.parent / "shared" / "fixtures")))
    parser.add_argument("--baseline", type=Path, help="another checkout whose heuristic-v2 is measured too (before/after)")
    parser.add_argument("--xnot-dataset", type=Path, help="xnot's whole dataset_K25.jsonl: measure its other restaurants")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    judges: dict[str, Callable[[pl.DataFrame], pl.DataFrame]] = {
        "heuristic-v1": lambda t: judge(t, "heuristic-v1")}
    if args.baseline:
        judges["heuristic-v2 (baseline)"] = lambda t: judge(t, "heuristic-v2", args.baseline.resolve())
    judges["heuristic-v2"] = lambda t: judge(t, "heuristic-v2")
    subset = args.fixtures / "xnot" / "dataset_K25_subset.jsonl"
    figures: dict[str, Any] = {"dev-ADDM": addm_figures(args.fixtures, judges),
                               "xnot subset": xnot_figures(subset, args.fixtures, judges)}
    if args.xnot_dataset:
        written_beside = set(load_scale(subset)[0]["name"])
        figures["xnot held out"] = xnot_figures(args.xnot_dataset, args.fixtures, judges, exclude=written_beside)
    print_report(figures)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1, default=str) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

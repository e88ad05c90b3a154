"""Analysis of a scored run (SPEC §7): scores by model and perspective, uplifts, model vs human.

Scores lie on the landlord–tenant axis (−1 = sides with the tenant, +1 = with the landlord).

- ``by_group``: per (model, perspective) n, mean, sd, a 95% t-interval of the mean, and the
  stance shares: below −t, within [−t, t], above +t (t = the bin threshold, SPEC §6.4; the bin
  names are the labeling project's scale labels).
- ``uplifts``: per model, mean(landlord) − mean(neutral) and mean(tenant) − mean(neutral), with
  Welch 95% intervals; ``gap`` = mean(landlord) − mean(tenant) (how much the answer follows the
  asker: 0 for a model that answers both sides alike).
- ``model_vs_human`` (audited items): the scorer's score against the human consensus — MAE,
  RMSE, Pearson, Spearman, Lin's CCC, Bland–Altman bias and limits — next to the human ceiling
  (one held-out rater against the mean of the others, on the same items) and each LLM judge
  (a model rater of the audit project) on the items it rated. Overall and per perspective.
- ``disagreements``: audited responses where scorer and humans differ most, with their texts.
- ``scorer_quality`` / ``warnings``: the scorer's held-out quality from its manifest (weak below
  CCC 0.4, unknown without a manifest), groups never scored, groups whose scores are all equal.

A response never scored (null score) is missing everywhere: no mean or uplift is computed from it
or against it.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from core.base.files import read_json
from core.labeling.agreement import DEFAULT_BIN_THRESHOLD
from core.study.grid import PERSPECTIVES
from core.study.runs import read_run
from core.study.scorer import metrics
from core.study.scorer.model import FORMAT, MANIFEST_FILE, MODEL_FILE
from core.workspace import check_name

DEFAULT_BIN_LABELS = ("sides with tenant", "balanced", "sides with landlord")
WEAK_CCC = 0.4  # a scorer whose held-out Lin's CCC with the human consensus is below this is called weak
SCORED_SCHEMA = {"run_id": pl.String, "model_id": pl.String, "prompt_id": pl.String, "scenario_id": pl.String,
                 "perspective": pl.String, "base_rent": pl.Float64, "amount": pl.Float64,
                 "relationship_quality": pl.String, "offline": pl.Boolean, "scorer_model": pl.String,
                 "scorer_sha256": pl.String, "score": pl.Float64, "failed": pl.Boolean, "prompt_text": pl.String,
                 "response_text": pl.String}


def scored_frame(path: str | Path) -> pl.DataFrame:
    """A scored run as a frame (SCORED_SCHEMA). A null score is a failed response (``failed``: an
    error, or no text) or a response never scored (it has text): both are missing, never 0."""
    rows = []
    for r in read_run(path, scored=True):
        f = r.get("factors") or {}
        users = [m.get("content") for m in r["messages"] if isinstance(m, dict) and m.get("role") == "user"]
        rows.append((r["run_id"], r["model_id"], r["prompt_id"], r.get("scenario_id"), r["perspective"],
                     _num(f.get("base_rent")), _num(f.get("amount")),
                     None if f.get("relationship_quality") is None else str(f["relationship_quality"]),
                     bool(r.get("offline") or str(r["model_id"]).startswith("offline:")), r["scorer_model"],
                     r.get("scorer_sha256"), r["score"], _failed(r), users[-1] if users else "",
                     r.get("response_text")))
    return pl.DataFrame(rows, schema=SCORED_SCHEMA, orient="row")


def _failed(record: dict[str, Any]) -> bool:
    """The response itself failed (an error recorded, or no text): nothing to score."""
    return bool(record.get("error")) or not str(record.get("response_text") or "").strip()


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None


def _mean_ci(x: np.ndarray) -> tuple[float | None, float | None, float | None, float | None]:
    """mean, sd and a 95 % t-interval of the mean; None where undefined (no value: all four; one: sd, CI)."""
    n = len(x)
    if n == 0:
        return None, None, None, None
    mean = float(x.mean())
    if n < 2:
        return mean, None, None, None
    # deferred: heavy optional import (~500 ms), only needed when a mean's t-interval is computed
    from scipy import stats

    sd = float(x.std(ddof=1))
    half = float(stats.t.ppf(0.975, n - 1)) * sd / math.sqrt(n)
    return mean, sd, mean - half, mean + half


def by_group(frame: pl.DataFrame, *, threshold: float = DEFAULT_BIN_THRESHOLD,
             labels: tuple[str, str, str] = DEFAULT_BIN_LABELS) -> list[dict[str, Any]]:
    """Per (model, perspective): n (scored), n_failed (failed responses), n_unscored (responses never
    scored), mean, sd, ci_low, ci_high, the three stance shares, and ``constant`` (≥ 2 scores, all
    equal: the interval has no width because nothing varies, not because the mean is certain).

    A group without a single score has mean, interval and shares None (missing), never 0.
    """
    out = []
    for (model, perspective), part in sorted(frame.group_by("model_id", "perspective"),
                                             key=lambda kv: (kv[0][0], PERSPECTIVES.index(kv[0][1]))):
        x = part["score"].drop_nulls().to_numpy().astype(float)
        mean, sd, lo, hi = _mean_ci(x)
        shares: list[float | None] = [float(np.mean(x < -threshold)), float(np.mean(np.abs(x) <= threshold)),
                                      float(np.mean(x > threshold))] if len(x) else [None] * 3
        missing = part.filter(pl.col("score").is_null())
        n_failed = int(missing["failed"].sum())
        out.append({"model_id": model, "perspective": perspective, "n": len(x), "n_failed": n_failed,
                    "n_unscored": missing.height - n_failed, "mean": mean, "sd": sd, "ci_low": lo, "ci_high": hi,
                    "constant": len(x) >= 2 and sd == 0.0,
                    "share_tenant": shares[0], "share_balanced": shares[1], "share_landlord": shares[2],
                    "bin_labels": list(labels), "threshold": threshold})
    return out


def welch_diff(a: np.ndarray, b: np.ndarray) -> dict[str, float | None]:
    """mean(a) − mean(b) with a Welch 95% interval; the difference is None when a side has no score
    (never computed against a missing 0), the interval None when a side has fewer than 2."""
    if not len(a) or not len(b):
        return {"diff": None, "ci_low": None, "ci_high": None}
    d = float(a.mean() - b.mean())
    if len(a) < 2 or len(b) < 2:
        return {"diff": d, "ci_low": None, "ci_high": None}
    va, vb = a.var(ddof=1) / len(a), b.var(ddof=1) / len(b)
    se = math.sqrt(va + vb)
    if se == 0:
        return {"diff": d, "ci_low": d, "ci_high": d}
    # deferred: heavy optional import (~500 ms), only needed when a Welch interval is computed
    from scipy import stats

    df = (va + vb) ** 2 / (va**2 / (len(a) - 1) + vb**2 / (len(b) - 1))
    half = float(stats.t.ppf(0.975, df)) * se
    return {"diff": d, "ci_low": d - half, "ci_high": d + half}


def uplifts(frame: pl.DataFrame) -> list[dict[str, Any]]:
    """Per model: landlord and tenant uplift against neutral, and the landlord − tenant gap (None
    where a side has no scored response)."""
    out = []
    for model in sorted(frame["model_id"].unique().to_list()):
        part = frame.filter(pl.col("model_id") == model)
        x = {p: part.filter(pl.col("perspective") == p)["score"].drop_nulls().to_numpy().astype(float)
             for p in PERSPECTIVES}
        row: dict[str, Any] = {"model_id": model}
        for p in ("landlord", "tenant"):
            w = welch_diff(x[p], x["neutral"])
            row.update({f"{p}_uplift": w["diff"], f"{p}_uplift_ci_low": w["ci_low"],
                        f"{p}_uplift_ci_high": w["ci_high"]})
        gap = welch_diff(x["landlord"], x["tenant"])
        row.update({"gap": gap["diff"], "gap_ci_low": gap["ci_low"], "gap_ci_high": gap["ci_high"]})
        out.append(row)
    return out


def join_audit(frame: pl.DataFrame, audit: dict[str, pl.DataFrame]) -> pl.DataFrame:
    """Scored responses with a human consensus (inner join on run, model and prompt)."""
    cons = audit["consensus"].filter(pl.col("human").is_not_null())
    return frame.filter(pl.col("score").is_not_null()).join(cons, on=["run_id", "model_id", "prompt_id"],
                                                            how="inner")


def _versus(name: str, kind: str, truth: np.ndarray, pred: np.ndarray, perspective: str) -> dict[str, Any]:
    return {"rater": name, "kind": kind, "perspective": perspective, **metrics.agreement_report(truth, pred)}


def model_vs_human(joined: pl.DataFrame, audit: dict[str, pl.DataFrame]) -> list[dict[str, Any]]:
    """Scorer vs human consensus, the human ceiling and LLM judges: overall and per perspective."""
    rows = []
    scorer_name = ", ".join(sorted(joined["scorer_model"].unique().to_list())) or "scorer"
    for perspective in ("all", *PERSPECTIVES):
        part = joined if perspective == "all" else joined.filter(pl.col("perspective") == perspective)
        if part.is_empty():
            continue
        rows.append(_versus(scorer_name, "scorer", part["human"].to_numpy(), part["score"].to_numpy(), perspective))
        ratings = audit["ratings"].join(part.select("item_id"), on="item_id", how="semi")
        ceiling = metrics.human_ceiling(ratings.select("item_id", "rater", "score"))
        rows.append({"rater": "human ceiling", "kind": "ceiling", "perspective": perspective,
                     **{k: v for k, v in ceiling.items() if k not in ("n_items", "n_pairs")},
                     "n": ceiling["n_pairs"]})
        judged = audit["judges"].join(part.select("item_id", "human"), on="item_id", how="inner")
        for judge in sorted(judged["judge"].unique().to_list()):
            j = judged.filter(pl.col("judge") == judge)
            rows.append(_versus(judge, "llm judge", j["human"].to_numpy(), j["judge_score"].to_numpy(), perspective))
    return rows


def bland_altman_points(joined: pl.DataFrame) -> pl.DataFrame:
    """Per audited response: mean of scorer and human, and their difference (scorer − human)."""
    return joined.select("model_id", "perspective", "prompt_id",
                         ((pl.col("score") + pl.col("human")) / 2).alias("mean"),
                         (pl.col("score") - pl.col("human")).alias("diff"))


def audited_items(joined: pl.DataFrame) -> list[dict[str, Any]]:
    """The audit brought back: per audited response its keys, the scorer's score and the human consensus."""
    return (joined.select("run_id", "model_id", "perspective", "prompt_id", "scorer_model", "score", "human",
                          "human_source", "n_ratings")
            .sort("model_id", "perspective", "prompt_id").to_dicts())


def disagreements(joined: pl.DataFrame, *, top: int = 10) -> list[dict[str, Any]]:
    """The audited responses where scorer and humans differ most, with prompt and response."""
    return (joined.with_columns((pl.col("score") - pl.col("human")).alias("diff"))
            .sort(pl.col("diff").abs(), "prompt_id", descending=[True, False]).head(top)
            .select("model_id", "perspective", "prompt_id", "score", "human", "diff", "prompt_text", "response_text")
            .to_dicts())


def scorer_quality(frame: pl.DataFrame, scorers_dir: str | Path | None) -> list[dict[str, Any]]:
    """Per scorer of the run: its held-out quality from its manifest (``scorers_dir/<name>/manifest.json``:
    kind, n_test, MAE, Pearson, CCC, the human ceiling's CCC), ``weak`` (CCC below :data:`WEAK_CCC`,
    or unknown) and a ``note`` when the manifest is missing or belongs to another model file."""
    out = []
    for name in sorted(frame["scorer_model"].unique().to_list()):
        shas = frame.filter(pl.col("scorer_model") == name)["scorer_sha256"].drop_nulls().unique().to_list()
        out.append(_quality(str(name), shas, Path(scorers_dir) if scorers_dir is not None else None))
    return out


def _quality(name: str, shas: list[str], scorers_dir: Path | None) -> dict[str, Any]:
    row: dict[str, Any] = {"scorer": name, "manifest": None, "kind": None, "n_test": None, "mae": None,
                           "pearson": None, "ccc": None, "human_ceiling_ccc": None, "weak": True, "note": None}
    try:
        path = None if scorers_dir is None else scorers_dir / check_name("scorer model", name) / MANIFEST_FILE
    except ValueError:  # e.g. an LLM judge's model id: not a folder of this workspace
        path = None
    manifest = read_json(path) if path is not None and path.is_file() else None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        row["note"] = (f"no scorer manifest (scorers/{name}/{MANIFEST_FILE}) in this workspace: how well this "
                       "scorer agrees with humans is unknown")
        return row
    metrics_ = manifest.get("metrics") or {}
    row.update({"manifest": str(path), "kind": manifest.get("kind"), "n_test": manifest.get("n_test"),
                "mae": metrics_.get("mae"), "pearson": metrics_.get("pearson"), "ccc": metrics_.get("ccc"),
                "human_ceiling_ccc": (manifest.get("human_ceiling") or {}).get("ccc")})
    row["weak"] = row["ccc"] is None or not row["ccc"] >= WEAK_CCC
    model_sha = (manifest.get("files") or {}).get(MODEL_FILE)
    if shas and model_sha not in shas:
        row["note"] = (f"the model in scorers/{name} is not the one that scored this run (sha256 differs): "
                       "its held-out figures may not apply")
    return row


def _fmt(x: Any, spec: str = ".2f") -> str:
    return "n/a" if x is None or (isinstance(x, float) and not math.isfinite(x)) else format(x, spec)


def warnings(rep: dict[str, Any]) -> list[str]:
    """What the analysis's means and uplifts must be read with: a weak or unknown scorer, groups
    never scored, groups whose scores are all equal."""
    lines = []
    for q in rep.get("scorer_quality") or []:
        if q["manifest"] is not None and q["weak"]:
            lines.append(f"Scorer {q['scorer']} is weak: held-out CCC {_fmt(q['ccc'])} with the human consensus "
                         f"(MAE {_fmt(q['mae'])}, Pearson {_fmt(q['pearson'])}, n_test {q['n_test']}), below "
                         f"{WEAK_CCC}: the means and uplifts may describe the scorer more than the models.")
        if q["note"]:
            lines.append(f"Scorer {q['scorer']}: {q['note']}.")
    for g in rep.get("by_group") or []:
        who = f"{g['model_id']} · {g['perspective']}"
        if g.get("n_unscored"):
            lines.append(f"{who}: {g['n_unscored']} response(s) never scored: left out (missing, not 0).")
        if g["n"] == 0:
            lines.append(f"{who}: no scored response: no mean, and no uplift against it.")
        elif g.get("constant"):
            lines.append(f"{who}: all {g['n']} scores are {_fmt(g['mean'], '+.2f')}: nothing varies, so the "
                         "interval has no width; check the scorer on these responses.")
    return lines


def analyze(path: str | Path, *, audit: dict[str, pl.DataFrame] | None = None,
            threshold: float = DEFAULT_BIN_THRESHOLD, labels: tuple[str, str, str] = DEFAULT_BIN_LABELS,
            top: int = 10, scorers_dir: str | Path | None = None) -> dict[str, Any]:
    """Everything above for one scored run (model vs human only when an audit is given), with the
    scorer's held-out quality from its manifest in ``scorers_dir`` and the :func:`warnings`."""
    frame = scored_frame(path)
    out: dict[str, Any] = {
        "path": str(path), "run_ids": sorted(frame["run_id"].unique().to_list()),
        "scorer_models": sorted(frame["scorer_model"].unique().to_list()), "n_records": frame.height,
        "n_scored": int(frame["score"].is_not_null().sum()), "offline_models": sorted(
            frame.filter(pl.col("offline"))["model_id"].unique().to_list()),
        "by_group": by_group(frame, threshold=threshold, labels=labels), "uplifts": uplifts(frame),
        "scorer_quality": scorer_quality(frame, scorers_dir),
    }
    out["warnings"] = warnings(out)
    if audit is not None:
        joined = join_audit(frame, audit)
        out["audit"] = {"n_audited": joined.height, "model_vs_human": model_vs_human(joined, audit) if joined.height else [],
                        "bland_altman": bland_altman_points(joined).to_dicts(),
                        "disagreements": disagreements(joined, top=top), "items": audited_items(joined)}
    return out

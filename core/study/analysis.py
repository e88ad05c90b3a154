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
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from core.labeling.agreement import DEFAULT_BIN_THRESHOLD
from core.scorer import metrics
from core.study.grid import PERSPECTIVES
from core.study.runs import read_run

DEFAULT_BIN_LABELS = ("sides with tenant", "balanced", "sides with landlord")
SCORED_SCHEMA = {"run_id": pl.String, "model_id": pl.String, "prompt_id": pl.String, "scenario_id": pl.String,
                 "perspective": pl.String, "base_rent": pl.Float64, "amount": pl.Float64,
                 "relationship_quality": pl.String, "offline": pl.Boolean, "scorer_model": pl.String,
                 "score": pl.Float64, "prompt_text": pl.String, "response_text": pl.String}


def scored_frame(path: str | Path) -> pl.DataFrame:
    """A scored run as a frame (SCORED_SCHEMA); failed responses keep a null score."""
    rows = []
    for r in read_run(path, scored=True):
        f = r.get("factors") or {}
        users = [m.get("content") for m in r["messages"] if isinstance(m, dict) and m.get("role") == "user"]
        rows.append((r["run_id"], r["model_id"], r["prompt_id"], r.get("scenario_id"), r["perspective"],
                     _num(f.get("base_rent")), _num(f.get("amount")),
                     None if f.get("relationship_quality") is None else str(f["relationship_quality"]),
                     bool(r.get("offline") or str(r["model_id"]).startswith("offline:")), r["scorer_model"],
                     r["score"], users[-1] if users else "", r.get("response_text")))
    return pl.DataFrame(rows, schema=SCORED_SCHEMA, orient="row")


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None


def _mean_ci(x: np.ndarray) -> tuple[float, float, float, float]:
    n = len(x)
    if n == 0:
        return (math.nan,) * 4  # type: ignore[return-value]
    mean = float(x.mean())
    if n < 2:
        return mean, math.nan, math.nan, math.nan
    # deferred: heavy optional import (~500 ms), only needed when a mean's t-interval is computed
    from scipy import stats

    sd = float(x.std(ddof=1))
    half = float(stats.t.ppf(0.975, n - 1)) * sd / math.sqrt(n)
    return mean, sd, mean - half, mean + half


def by_group(frame: pl.DataFrame, *, threshold: float = DEFAULT_BIN_THRESHOLD,
             labels: tuple[str, str, str] = DEFAULT_BIN_LABELS) -> list[dict[str, Any]]:
    """Per (model, perspective): n, n_failed, mean, sd, ci_low, ci_high and the three stance shares."""
    out = []
    for (model, perspective), part in sorted(frame.group_by("model_id", "perspective"),
                                             key=lambda kv: (kv[0][0], PERSPECTIVES.index(kv[0][1]))):
        x = part["score"].drop_nulls().to_numpy().astype(float)
        mean, sd, lo, hi = _mean_ci(x)
        shares = [float(np.mean(x < -threshold)), float(np.mean(np.abs(x) <= threshold)),
                  float(np.mean(x > threshold))] if len(x) else [math.nan] * 3
        out.append({"model_id": model, "perspective": perspective, "n": len(x), "n_failed": part.height - len(x),
                    "mean": mean, "sd": sd, "ci_low": lo, "ci_high": hi,
                    "share_tenant": shares[0], "share_balanced": shares[1], "share_landlord": shares[2],
                    "bin_labels": list(labels), "threshold": threshold})
    return out


def welch_diff(a: np.ndarray, b: np.ndarray) -> dict[str, float]:
    """mean(a) − mean(b) with a Welch 95% interval."""
    if len(a) < 2 or len(b) < 2:
        d = float(a.mean() - b.mean()) if len(a) and len(b) else math.nan
        return {"diff": d, "ci_low": math.nan, "ci_high": math.nan}
    va, vb = a.var(ddof=1) / len(a), b.var(ddof=1) / len(b)
    d, se = float(a.mean() - b.mean()), math.sqrt(va + vb)
    if se == 0:
        return {"diff": d, "ci_low": d, "ci_high": d}
    # deferred: heavy optional import (~500 ms), only needed when a Welch interval is computed
    from scipy import stats

    df = (va + vb) ** 2 / (va**2 / (len(a) - 1) + vb**2 / (len(b) - 1))
    half = float(stats.t.ppf(0.975, df)) * se
    return {"diff": d, "ci_low": d - half, "ci_high": d + half}


def uplifts(frame: pl.DataFrame) -> list[dict[str, Any]]:
    """Per model: landlord and tenant uplift against neutral, and the landlord − tenant gap."""
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


def analyze(path: str | Path, *, audit: dict[str, pl.DataFrame] | None = None,
            threshold: float = DEFAULT_BIN_THRESHOLD, labels: tuple[str, str, str] = DEFAULT_BIN_LABELS,
            top: int = 10) -> dict[str, Any]:
    """Everything above for one scored run (model vs human only when an audit is given)."""
    frame = scored_frame(path)
    out: dict[str, Any] = {
        "path": str(path), "run_ids": sorted(frame["run_id"].unique().to_list()),
        "scorer_models": sorted(frame["scorer_model"].unique().to_list()), "n_records": frame.height,
        "n_scored": int(frame["score"].is_not_null().sum()), "offline_models": sorted(
            frame.filter(pl.col("offline"))["model_id"].unique().to_list()),
        "by_group": by_group(frame, threshold=threshold, labels=labels), "uplifts": uplifts(frame),
    }
    if audit is not None:
        joined = join_audit(frame, audit)
        out["audit"] = {"n_audited": joined.height, "model_vs_human": model_vs_human(joined, audit) if joined.height else [],
                        "bland_altman": bland_altman_points(joined).to_dicts(),
                        "disagreements": disagreements(joined, top=top), "items": audited_items(joined)}
    return out

"""GT files: xnot layout (SPEC §3.4) and ADDM layout (SPEC §3.3), export and import.

Export writes atomically. Import validates a file made elsewhere, stores a verbatim copy under
``gt/imported/{dataset|unassigned}/`` with a ``.meta.json`` sidecar (source, sha256, layout,
dataset), and :func:`load_gt_file` turns either layout into one frame (business_id, name, k,
verdict, score, n_incidents, incidents, cuisine_modifier, …) that runs can be scored against.
Computed GT written by ``python -m core gt`` goes to ``gt/{dataset}/{task}/`` by default.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from core.base.errors import DataError
from core.base.files import read_json, sha256_file, write_json_atomic, write_text_atomic
from core.base.settings import require_writable
from core.ground_truth.coverage import SHORT, STORED, reviews_used
from core.ground_truth.engine import aggregate_by_k, k_frame, prepare_judgments
from core.ground_truth.formulas import VERDICTS, get_formula
from core.ground_truth.policies.frame import INCIDENT_STRUCT
from core.ground_truth.policies.loader import policy_registry
from core.workspace import check_name

if TYPE_CHECKING:
    from core.base.registry import Registry
    from core.ground_truth.policies import Policy
    from core.workspace import Workspace

LAYOUTS = ("xnot", "addm")
META_SUFFIX = ".meta.json"
LINEAGE_KEY = "lineage"  # what a GT file was made from (core.ground_truth.lineage)
VARIANTS_DIR = "variants"  # gt/variants/*.json are saved what-if variants (core.ground_truth.variants), not GT files


def gt_filename(definition: str, k: int | None, layout: str) -> str:
    """``computed_gt{_k<K>}{_<formula>}.json`` (v1 has no suffix) or ``{policy}_K{k}_groundtruth.json``.

    >>> gt_filename("v2", 50, "xnot"), gt_filename("v1", None, "xnot"), gt_filename("G1_allergy_V2", 25, "addm")
    ('computed_gt_k50_v2.json', 'computed_gt.json', 'G1_allergy_V2_K25_groundtruth.json')
    """
    if layout == "addm":
        return f"{definition}_K{'all' if k is None else k}_groundtruth.json"
    return f"computed_gt{'' if k is None else f'_k{k}'}{'' if definition == 'v1' else f'_{definition}'}.json"


def _now() -> str:
    return datetime.now(UTC).replace(tzinfo=None).isoformat()


def _single_k(frame: pl.DataFrame, k: int | None) -> pl.DataFrame:
    if frame.height == 0:
        return frame
    return frame.filter(pl.col("k").is_null() if k is None else pl.col("k") == k)


def _distribution(frame: pl.DataFrame, verdicts: tuple[str, ...] = VERDICTS) -> dict[str, int]:
    counts = dict(frame.group_by("verdict").len().rows()) if frame.height else {}
    return {v: int(counts.get(v, 0)) for v in verdicts}


def _num(value: Any) -> Any:
    return int(value) if isinstance(value, float) and value.is_integer() else value


def _provenance(frame: pl.DataFrame) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for col in ("dataset", "task", "judgments_sha256", "variant", "variant_constants_sha256"):
        if col in frame.columns and frame.height:
            out[col] = frame[col][0]
    return out


def _coverage(frame: pl.DataFrame, k: int | None) -> dict[str, Any]:
    """``k_requested`` and, when the stored review counts are known, how many restaurants fell short."""
    out: dict[str, Any] = {"k_requested": k}
    if STORED in frame.columns:
        out["restaurants_short_of_k"] = int(frame[SHORT].sum()) if SHORT in frame.columns else 0
    return out


def xnot_payload(frame: pl.DataFrame, *, task_id: str, k: int | None, computed_at: str | None = None,
                 policy: Policy | None = None, records: bool = True) -> dict[str, Any]:
    """The xnot ``computed_gt`` document of one K of a formula (or policy) GT frame.

    Restaurants are keyed by name; a name that repeats gets `` [business_id]`` appended. When the
    frame knows each restaurant's stored reviews (``n_reviews_stored``), every record also carries
    ``n_reviews`` (the reviews used: min(K, stored)) and the document ``restaurants_short_of_k``.
    A policy frame needs its ``policy`` (for its verdict scale). ``records=False`` leaves
    ``restaurants`` empty (:mod:`core.ground_truth.gt_json` writes them column by column).
    """
    rows = _single_k(frame, k)
    if STORED in rows.columns:
        rows = rows.with_columns(reviews_used(rows).alias("_used"))
    fields: tuple[str, ...]
    if "policy_id" in rows.columns:
        fields = ("verdict", "score", "n_incidents", "cuisine_modifier", "triggered_rule", "incidents")
    else:
        version = rows["formula_version"][0] if rows.height else ""
        fields = get_formula(version.split("+")[0]).record_fields
    scale = _policy_of(rows, policy).verdicts if "policy_id" in rows.columns else VERDICTS
    seen = {n for n, count in Counter(rows["name"].to_list()).items() if count > 1} if records else set()
    restaurants: dict[str, Any] = {}
    for row in rows.iter_rows(named=True) if records else ():
        key = row["name"] if row["name"] not in seen else f"{row['name']} [{row['business_id']}]"
        restaurants[key] = {f: row[f] for f in fields}
        if "_used" in row:
            restaurants[key]["n_reviews"] = row["_used"]
    return {
        "task_id": task_id, "computed_at": computed_at or _now(),
        "formula_version": rows["formula_version"][0] if rows.height else None, "k": k, **_coverage(rows, k),
        **_provenance(rows), "restaurants": restaurants,
        "summary": {"total_restaurants": rows.height, "verdict_distribution": _distribution(rows, scale)},
    }


def _policy_of(rows: pl.DataFrame, policy: Policy | None) -> Policy:
    """The policy of a policy GT frame: ``policy``, which must be the frame's (no name is looked up)."""
    name = rows["policy_id"][0] if rows.height else None
    if policy is None:
        raise ValueError(f"a GT frame of policy {name} needs its policy object (the one in force in its workspace)")
    if name is not None and name != policy.policy_id:
        raise ValueError(f"the GT frame is of policy {name}, not {policy.policy_id}")
    return policy


def addm_payload(
    frame: pl.DataFrame, *, k: int | None, computed_at: str | None = None, policy: Policy | None = None,
    records: bool = True,
) -> dict[str, Any]:
    """The ADDM ``{policy}_K{k}_groundtruth.json`` document of one K of a GT frame.

    A policy frame maps directly; each restaurant records the rule that matched
    (``matched_rule``, null when the default verdict applied) and, when the policy took its
    recency reference from the dataset, the file records ``reference_year``. A formula frame
    (v1/v2) needs an ``incidents`` column (see :func:`formula_incidents`); its score is
    final_risk_score and cuisine_modifier is CUISINE_MODIFIER > 1. A policy frame needs its
    ``policy`` object (the one in force in its workspace; a name is never looked up here).
    ``records=False`` leaves ``restaurants`` empty (:mod:`core.ground_truth.gt_json` writes them).
    """
    rows = _single_k(frame, k)
    is_policy = "policy_id" in rows.columns
    definition = rows["policy_id"][0] if is_policy and rows.height else (rows["formula_version"][0] if rows.height else "")
    restaurants = {}
    for bid, name, cats, n_reviews, n_judgments, verdict, score, cuisine, incs, rule in (
            _addm_rows(rows, is_policy) if records else ()):
        incidents = [
            {"review_id": i["review_id"], "severity": i["severity"], "base_points": _num(i["base_points"]),
             "modifiers": list(i["modifiers"] or []), "total_points": _num(i["total_points"])}
            for i in incs
        ] if incs else []
        restaurants[bid] = {
            "name": name, "categories": cats, "n_reviews": n_reviews, "n_judgments": n_judgments,
            "ground_truth": {
                "verdict": verdict, "score": _num(score), "n_incidents": len(incidents),
                "incidents": incidents, "cuisine_modifier": cuisine if is_policy else bool(cuisine > 1.0),
                "policy_id": definition, **({"matched_rule": rule} if is_policy else {}),
            },
        }
    has_scoring = True
    verdicts: tuple[str, ...] = VERDICTS
    if is_policy and definition:
        policy = _policy_of(rows, policy)
        has_scoring, verdicts = policy.has_scoring, policy.verdicts
    extra = {"reference_year": rows["reference_year"][0]} if "reference_year" in rows.columns and rows.height else {}
    return {
        "policy_id": definition, "k": k, **_coverage(rows, k), "computed_at": computed_at or _now(),
        "has_scoring": has_scoring, **extra, **_provenance(rows), "restaurants": restaurants,
        "summary": {"total_restaurants": rows.height, "verdict_distribution": _distribution(rows, verdicts)},
    }


def _addm_rows(rows: pl.DataFrame, is_policy: bool) -> Iterator[tuple[Any, ...]]:
    """(business_id, name, categories, n_reviews, n_judgments, verdict, score, cuisine_modifier,
    incidents, matched rule) per restaurant: tuples of the columns a record needs (150,000 rows of a
    wide frame as dicts cost seconds). A column the frame lacks reads as null."""
    def col(name: str, *alternatives: str) -> pl.Expr:
        present = [c for c in (name, *alternatives) if c in rows.columns]
        return pl.col(present[0]) if present else pl.lit(None)

    exprs = [col("business_id"), col("name"), col("categories"), col("n_reviews"),
             col("n_judgments", "n_allergy_reviews"), col("verdict"), col("score" if is_policy else "final_risk_score"),
             col("cuisine_modifier"), col("incidents"), col("triggered_rule") if is_policy else pl.lit(None)]
    return rows.select([e.alias(f"_{i}") for i, e in enumerate(exprs)]).iter_rows()


def formula_incidents(judgments: pl.DataFrame, formula: str, ks: list[int | None],
                      constants: Mapping[str, Any] | None = None) -> pl.DataFrame:
    """business_id, k, incidents (list of {review_id, idx, severity, base_points, modifiers, total_points})
    of a formula's incident reviews, for writing a formula GT in the ADDM layout; ``constants`` (a
    saved variant's) set the severity points as they set the GT."""
    f = get_formula(formula)
    c = f.resolve_constants(constants)
    points = {k: float(v) for k, v in c["SEVERITY_POINTS"].items()}
    valid = prepare_judgments(judgments, ("incident_severity", "account_type", "safety_interaction"))
    base = pl.col("incident_severity").replace_strict(points, default=0.0, return_dtype=pl.Float64)
    reviews = valid.with_columns(f.review_columns(c)).with_columns(base.alias("_base"))
    inc = pl.col("is_incident")
    struct = pl.struct(
        pl.col("review_id").cast(pl.Utf8), pl.col("idx"), pl.col("incident_severity").alias("severity"),
        pl.col("_base").alias("base_points"), pl.lit([], dtype=pl.List(pl.Utf8)).alias("modifiers"),
        pl.col("_base").alias("total_points"),
    )
    agg = aggregate_by_k(reviews, [struct.filter(inc).sort_by(pl.col("idx").filter(inc)).alias("incidents")], ks)
    return agg.join(k_frame(ks), on="_limit").select("business_id", "k", "incidents")


def write_gt_file(path: str | Path, payload: Mapping[str, Any]) -> Path:
    """Write a GT document atomically; returns the path."""
    require_writable("write a GT file")
    path = Path(path)
    write_json_atomic(path, payload)
    return path


# -- import ----------------------------------------------------------------------------------
def detect_layout(payload: Any, path: str | Path = "") -> str:
    """"addm" or "xnot" from a document's shape; anything else is a DataError."""
    if not isinstance(payload, dict) or not isinstance(payload.get("restaurants"), dict):
        raise DataError("not a GT file: expected an object with a 'restaurants' object", path=path)
    first: Any = next(iter(payload["restaurants"].values()), {})
    if "policy_id" in payload and isinstance(first, dict) and ("ground_truth" in first or not payload["restaurants"]):
        return "addm"
    if "formula_version" in payload or "task_id" in payload:
        return "xnot"
    raise DataError("unknown GT layout: neither ADDM (policy_id + ground_truth) nor xnot (formula_version)", path=path)


def _check(payload: dict[str, Any], layout: str, path: str | Path, ws: Workspace | None,
           registry: Registry[Policy] | None = None) -> None:
    """Validate a GT document: verdicts on its policy's scale (G1a's for formulas and unknown policies);
    ``registry``: the policies of ``ws`` when the caller has them (a scan reads them once)."""
    scale: tuple[str, ...] = VERDICTS
    if layout == "addm" and payload.get("policy_id"):
        registry = registry or policy_registry(ws)
        if payload["policy_id"] in registry:
            scale = registry[payload["policy_id"]].verdicts
    for key, entry in payload["restaurants"].items():
        gt = entry.get("ground_truth") if layout == "addm" and isinstance(entry, dict) else entry
        where = f"restaurants.{key}" + (".ground_truth" if layout == "addm" else "")
        if not isinstance(gt, dict):
            raise DataError("expected an object", path=path, field=where)
        if gt.get("verdict") not in scale:
            raise DataError(f"verdict {gt.get('verdict')!r} is not one of {', '.join(scale)}", path=path, field=f"{where}.verdict")
        score = gt.get("score", gt.get("final_risk_score"))
        if score is not None and (isinstance(score, bool) or not isinstance(score, int | float)):
            raise DataError(f"score {score!r} is not a number", path=path, field=f"{where}.score")
        for i, inc in enumerate(gt.get("incidents") or []):
            if not isinstance(inc, dict) or "severity" not in inc:
                raise DataError("an incident needs a severity", path=path, field=f"{where}.incidents[{i}]")


def gt_records(payload: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """A GT document (either layout, already validated) as the ``gt`` of ``core.metrics.score_results``.

    ADDM documents are keyed by business_id (verdict, score, incidents, categories); xnot ones by
    restaurant name (their records carry no business_id), so samples match them by ``name``.
    """
    layout = detect_layout(payload, "GT document")
    out: dict[str, dict[str, Any]] = {}
    for key, entry in payload["restaurants"].items():
        if layout == "addm":
            g = entry["ground_truth"]
            out[str(key)] = {
                "verdict": g["verdict"], "score": g.get("score"), "name": entry.get("name"),
                "categories": entry.get("categories"), "n_reviews": entry.get("n_reviews"),
                "incidents": [{"review_id": i.get("review_id"), "severity": i.get("severity"),
                               "modifiers": list(i.get("modifiers") or [])} for i in g.get("incidents") or []],
            }
        else:
            out[str(key)] = {**entry, "score": entry.get("final_risk_score", entry.get("score")), "name": key,
                             "_keyed_by": "name"}
    return out


def read_gt_file(path: str | Path, ws: Workspace | None,
                 registry: Registry[Policy] | None = None) -> tuple[dict[str, Any], str]:
    """(document, layout) of a GT file, validated (policies of ``ws`` known by their scale)."""
    path = Path(path)
    payload = read_json(path)
    layout = detect_layout(payload, path)
    _check(payload, layout, path, ws, registry)
    return payload, layout


def import_gt_file(ws: Workspace, source: str | Path, *, dataset: str | None = None) -> dict[str, Any]:
    """Validate ``source`` and store a copy under ``gt/imported/``; returns its listing entry."""
    require_writable("import a GT file")

    source = Path(source)
    payload, layout = read_gt_file(source, ws)
    folder = ws.gt_dir / "imported" / (check_name("dataset", dataset) if dataset else "unassigned")
    target = folder / source.name
    write_text_atomic(target, source.read_text(encoding="utf-8"))
    meta = {
        "source": str(source.resolve()), "sha256": sha256_file(target), "layout": layout, "dataset": dataset,
        "imported_at": _now(),
    }
    write_json_atomic(target.with_name(target.name + META_SUFFIX), meta)
    return listing_entry(ws, target, gt_facts(payload, layout), meta)


def gt_facts(payload: Mapping[str, Any], layout: str) -> dict[str, Any]:
    """What a listing shows of a read GT document (small: kept beside large files by the listing)."""
    summary = payload.get("summary") or {}
    return {
        "layout": layout, "definition": payload.get("policy_id") or payload.get("formula_version"),
        "task": payload.get("task_id"), "k": payload.get("k"), "n_restaurants": len(payload["restaurants"]),
        "verdict_distribution": summary.get("verdict_distribution"), "computed_at": payload.get("computed_at"),
        "dataset": payload.get("dataset"), "judgments_sha256": payload.get("judgments_sha256"),
    }


def listing_entry(ws: Workspace, path: Path, facts: Mapping[str, Any], meta: dict[str, Any] | None) -> dict[str, Any]:
    """The listing entry of a GT file from its :func:`gt_facts` and its import record (``meta``)."""
    return {
        "name": str(path.relative_to(ws.gt_dir)), "path": str(path), "layout": facts["layout"],
        "definition": facts["definition"], "task": facts["task"], "k": facts["k"],
        "n_restaurants": facts["n_restaurants"], "verdict_distribution": facts["verdict_distribution"],
        "computed_at": facts["computed_at"], "dataset": (meta or {}).get("dataset") or facts["dataset"],
        "imported": meta is not None, "judgments_sha256": facts["judgments_sha256"],
    }


def resolve_gt_file(ws: Workspace, name: str | Path) -> Path:
    """A GT file by path, or by its name relative to ``gt/`` as listed."""
    path = Path(name)
    if path.exists():
        return path
    candidate = ws.gt_dir / str(name)
    if candidate.exists():
        return candidate
    raise FileNotFoundError(f"no GT file {name!r}; see `python -m core gt list`")


def load_gt_file(path: str | Path, ws: Workspace | None, *, restaurants: pl.DataFrame | None = None) -> pl.DataFrame:
    """A GT file (either layout) as a frame: business_id, name, k, verdict, score, n_incidents,
    incidents, definition, layout; plus cuisine_modifier (ADDM: bool) or every record field (xnot,
    where cuisine_modifier is the CUISINE_MODIFIER number and score is final_risk_score).

    xnot files are keyed by name: pass ``restaurants`` (business_id, name) to fill business_id.
    Verdicts are checked against the scale of the file's policy as in force in ``ws``.
    """
    payload, layout = read_gt_file(path, ws)
    rows = []
    for key, entry in payload["restaurants"].items():
        if layout == "addm":
            gt = entry["ground_truth"]
            rows.append({
                "business_id": key, "name": entry.get("name"), "verdict": gt["verdict"],
                "score": float(gt["score"]) if gt.get("score") is not None else None,
                "n_incidents": gt.get("n_incidents", len(gt.get("incidents") or [])),
                "incidents": [_incident(i) for i in gt.get("incidents") or []],
                "cuisine_modifier": bool(gt.get("cuisine_modifier", False)),
            })
        else:
            score = entry.get("final_risk_score", entry.get("score"))
            rows.append({
                **{k: v for k, v in entry.items() if k != "incidents"}, "business_id": None, "name": key,
                "score": float(score) if score is not None else None,
                "n_incidents": entry.get("n_total_incidents", entry.get("n_incidents", 0)),
                "incidents": [_incident(i) for i in entry.get("incidents") or []],
            })
    frame = pl.DataFrame(rows, schema_overrides={"incidents": pl.List(INCIDENT_STRUCT), "business_id": pl.Utf8},
                         infer_schema_length=None)
    if layout == "xnot" and restaurants is not None:
        ids = restaurants.select(pl.col("name").cast(pl.Utf8), pl.col("business_id").alias("_bid")).unique("name", keep="first")
        frame = frame.join(ids, on="name", how="left").with_columns(pl.col("_bid").alias("business_id")).drop("_bid")
    return frame.with_columns(
        pl.lit(payload.get("k"), dtype=pl.Int64).alias("k"),
        pl.lit(payload.get("policy_id") or payload.get("formula_version")).alias("definition"),
        pl.lit(layout).alias("layout"),
    )


def _incident(i: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "review_id": i.get("review_id"), "idx": i.get("idx"), "severity": i.get("severity"),
        "base_points": None if i.get("base_points") is None else float(i["base_points"]),
        "modifiers": list(i.get("modifiers") or []),
        "total_points": None if i.get("total_points") is None else float(i["total_points"]),
    }

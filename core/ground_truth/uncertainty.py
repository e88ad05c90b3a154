"""How sure is a GT verdict? The judge's measured error carried into every verdict (issue 28).

A **confusion** gives, per judgment field, P(true value | judged value):
``{field: {judged value: {true value: probability}}}``; a value it does not list is taken as
certain. Each judged review's fields are drawn independently from P(true | judged), the GT of the
restaurant is recomputed with the same formula or policy, and the share of draws per verdict is its
probability. Human-overridden judgments are certain (a person checked them).

Exact where it is cheap: a restaurant whose uncertain judgment fields have at most
:data:`EXACT_LIMIT` joint outcomes (2¹², e.g. twelve fields with two outcomes each) is enumerated,
each outcome weighted by the product of its probabilities; otherwise Monte Carlo with ``draws``
draws, seeded per (seed, K, restaurant), so a restaurant's figures do not depend on the others.

Set-wise: every outcome or draw of every restaurant is one *pseudo-restaurant*; all of them are
stacked into one judgments frame and go through the same engine as GT itself
(:func:`~core.ground_truth.compute.compute_gt_frame`, :func:`compute_policy_gt_frame`) in one
polars pass per chunk of :data:`ROW_BUDGET` rows: no Python loop over draws.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl

from core.base.errors import DataError
from core.ground_truth.compute import (
    compute_gt_frame,
    get_definition,
    judgments_sha256,
    load_restaurants,
    newest_review_year,
)
from core.ground_truth.ks import KSpec, normalize_ks
from core.ground_truth.policies import Policy
from core.ground_truth.policies.frame import compute_policy_gt_frame, newest_year

if TYPE_CHECKING:
    from core.ground_truth.formulas import Formula
    from core.workspace import Workspace

TOLERANCE = 1e-9  # a confusion row must sum to 1 within this
EXACT_LIMIT = 4096  # joint outcomes of one restaurant enumerated exactly (more: Monte Carlo)
ROW_BUDGET = 500_000  # pseudo-dataset judgment rows per engine pass (peak memory ~0.6 GB)
_DROP = ("excerpt", "text", "raw", "confidence", "name", "categories", "judge", "prompt_version", "created_at",
         "override_id", "dataset", "task")
_NOT_STACKED = ("review_id", "overridden", "text_hash")  # the engine needs none of them for a verdict
Outcomes = tuple[tuple[str, float], ...]


@dataclass(frozen=True)
class Confusion:
    """P(true | judged) per field; only the rows that can change a value are kept."""

    table: Mapping[str, Mapping[str, Outcomes]]
    sha256: str

    def outcomes(self, field: str, judged: str | None) -> Outcomes | None:
        """The (true value, probability > 0) pairs of a judged value; None when it is certain."""
        return self.table.get(field, {}).get(judged) if judged is not None else None


def parse_confusion(data: Any, *, source: str = "confusion", fields: Mapping[str, Sequence[str]] | None = None) -> Confusion:
    """Validate a confusion table; ``fields`` (field → allowed values) checks names and values.

    Raises:
        DataError: naming ``source`` and the field (and judged value) at fault.

    >>> c = parse_confusion({"incident_severity": {"moderate": {"moderate": 0.5, "none": 0.5}, "mild": {"mild": 1}}})
    >>> c.outcomes("incident_severity", "moderate"), c.outcomes("incident_severity", "mild")
    ((('moderate', 0.5), ('none', 0.5)), None)
    """
    if not isinstance(data, Mapping):
        raise DataError(f"expected a JSON object {{field: {{judged: {{true: p}}}}}}, got {type(data).__name__}", path=source)
    table: dict[str, dict[str, Outcomes]] = {}
    for name, rows in data.items():
        if fields is not None and name not in fields:
            raise DataError(f"unknown judgment field {name!r}; valid: {', '.join(fields)}", path=source, field=name)
        if not isinstance(rows, Mapping):
            raise DataError("expected {judged value: {true value: probability}}", path=source, field=name)
        for judged, row in rows.items():
            outcomes = _parse_row(row, source=source, where=f"{name}.{judged}", allowed=None if fields is None else fields[name],
                                  judged=judged)
            if outcomes != ((judged, 1.0),):
                table.setdefault(name, {})[judged] = outcomes
    digest = hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()
    return Confusion(table, digest)


def _parse_row(row: Any, *, source: str, where: str, allowed: Sequence[str] | None, judged: str) -> Outcomes:
    if not isinstance(row, Mapping) or not row:
        raise DataError("expected a non-empty {true value: probability}", path=source, field=where)
    for value in (judged, *row):
        if allowed is not None and value not in allowed:
            raise DataError(f"{value!r} is not a value of the field; valid: {', '.join(allowed)}", path=source, field=where)
    probs = {}
    for value, p in row.items():
        if isinstance(p, bool) or not isinstance(p, int | float) or not math.isfinite(p) or not 0 <= p <= 1 + TOLERANCE:
            raise DataError(f"probability of {value!r} must be a number in [0, 1], got {p!r}", path=source, field=where)
        probs[value] = float(p)
    total = math.fsum(probs.values())
    if abs(total - 1.0) > TOLERANCE:
        raise DataError(f"probabilities sum to {total:.12g}, not 1", path=source, field=where)
    return tuple((v, p) for v, p in probs.items() if p > 0)


def load_confusion(path: str | Path, *, fields: Mapping[str, Sequence[str]] | None = None) -> Confusion:
    """Read and validate a confusion file (JSON); errors name the file and field."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"cannot read: {exc}", path=str(path)) from None
    except json.JSONDecodeError as exc:
        raise DataError(f"not JSON: {exc.msg}", path=str(path), line=exc.lineno) from None
    return parse_confusion(data, source=str(path), fields=fields)


def gt_verdicts(
    judgments: pl.DataFrame, restaurants: pl.DataFrame, definition: Formula | Policy, k: int | None, *,
    constants: Mapping[str, Any] | None = None, reference_year: int | None = None,
) -> pl.DataFrame:
    """business_id, verdict of every restaurant at one K (the GT engine, unrounded)."""
    if isinstance(definition, Policy):
        frame = compute_policy_gt_frame(judgments, restaurants, definition, [k], reference_year=reference_year)
    else:
        frame = compute_gt_frame(judgments, restaurants, definition, [k], constants=constants, rounded=False)
    return frame.select("business_id", "verdict")


@dataclass
class Variants:
    """Variants of one restaurant's judgments to evaluate: pseudo-dataset d sets cell j (a row of
    ``base`` and a field) to ``cells[j][2][digits[j, d]][0]``; the other rows and fields stay."""

    code: int  # row of the restaurant in ``rest``
    start: int  # its first row in ``base``
    length: int  # its rows
    cells: list[tuple[int, str, Outcomes]]  # (row in base, field, outcomes)
    exact: bool
    digits: np.ndarray  # (cells, pseudo-datasets): the outcome of each cell in each
    weight: np.ndarray  # (pseudo-datasets,): probability of each
    outcomes: int  # outcomes enumerated, or draws made

    @property
    def size(self) -> int:
        return len(self.weight)


def _cells(base: pl.DataFrame, confusion: Confusion) -> dict[int, list[tuple[int, str, Outcomes]]]:
    """Uncertain (row, field, outcomes) per row of ``base`` (overridden rows are certain)."""
    certain = base["overridden"].fill_null(False).to_numpy() if "overridden" in base.columns else None
    out: dict[int, list[tuple[int, str, Outcomes]]] = {}
    for name, rows in confusion.table.items():
        if name not in base.columns:
            continue
        values = base[name].cast(pl.Utf8)
        for judged, outcomes in rows.items():
            hit = (values == judged).fill_null(False).to_numpy()
            if certain is not None:
                hit &= ~certain
            for row in np.flatnonzero(hit):
                out.setdefault(int(row), []).append((int(row), name, outcomes))
    return out


def _seed(seed: int, k: int | None, business_id: str) -> np.random.Generator:
    digest = hashlib.sha256(business_id.encode("utf-8")).digest()
    return np.random.default_rng([seed, 0 if k is None else k + 1, int.from_bytes(digest[:8], "big")])


def _exact(cells: list[tuple[int, str, Outcomes]], combos: int) -> tuple[np.ndarray, np.ndarray]:
    """Every joint outcome (mixed radix: cell j's outcome is (d // stride_j) % m_j) and its probability."""
    d, stride, digits, weight = np.arange(combos), 1, [], np.ones(combos)
    for _, _, outcomes in cells:
        digit = (d // stride) % len(outcomes)
        weight = weight * np.array([p for _, p in outcomes])[digit]
        digits.append(digit)
        stride *= len(outcomes)
    return np.array(digits), weight


def _drawn(cells: list[tuple[int, str, Outcomes]], draws: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``draws`` joint outcomes drawn cell by cell; equal draws merged, weighted by their share."""
    digits = []
    for _, _, outcomes in cells:
        cumulative = np.cumsum([p for _, p in outcomes])
        digits.append(np.minimum(np.searchsorted(cumulative, rng.random(draws), side="right"), len(outcomes) - 1))
    stacked = np.array(digits, dtype=np.uint8 if max(len(o) for _, _, o in cells) <= 256 else np.int64)
    rows = np.ascontiguousarray(stacked.T)  # one draw per row; equal rows are equal draws
    _, first, counts = np.unique(rows.view(np.dtype((np.void, rows.itemsize * rows.shape[1]))).ravel(),
                                 return_index=True, return_counts=True)
    return stacked[:, first], counts / draws


def _plan(base: pl.DataFrame, codes: np.ndarray, rest_ids: list[str], confusion: Confusion, k: int | None,
          options: dict[str, Any]) -> list[Variants]:
    cells = _cells(base, confusion)
    starts = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]]) if len(codes) else np.zeros(0, dtype=np.int64)
    out = []
    for s, e in zip(starts, np.r_[starts[1:], len(codes)], strict=True):
        mine = [c for r in range(s, e) for c in cells.get(r, [])]
        if not mine:
            continue
        combos, code = math.prod(len(o) for _, _, o in mine), int(codes[s])
        if combos <= options["exact_limit"]:
            digits, weight = _exact(mine, combos)
        else:
            digits, weight = _drawn(mine, options["draws"], _seed(options["seed"], k, rest_ids[code]))
        exact = combos <= options["exact_limit"]
        out.append(Variants(code, int(s), int(e - s), mine, exact, digits, weight,
                               combos if exact else options["draws"]))
    return out


def stack_variants(base: pl.DataFrame, rest: pl.DataFrame, chunk: list[Variants]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(judgments, restaurants) of the chunk's pseudo-datasets, in chunk order: pseudo restaurant i
    is business_id ``str(i)``, its rows are its restaurant's rows with the cells' outcomes."""
    size = np.array([r.size for r in chunk], dtype=np.int64)
    length = np.array([r.length for r in chunk], dtype=np.int64)
    blocks = size * length
    offsets = np.r_[0, np.cumsum(blocks)[:-1]].astype(np.int64)
    first_id = np.r_[0, np.cumsum(size)[:-1]].astype(np.int64)
    block = np.repeat(np.arange(len(chunk)), blocks)
    within = np.arange(int(blocks.sum())) - offsets[block]
    take = np.array([r.start for r in chunk], dtype=np.int64)[block] + within % length[block]
    columns = {}
    for name in dict.fromkeys(f for r in chunk for _, f, _ in r.cells):
        vocab = list(dict.fromkeys([*base[name].cast(pl.Utf8).unique().to_list(),
                                    *(v for r in chunk for _, f, o in r.cells if f == name for v, _ in o)]))
        index = {v: i for i, v in enumerate(vocab)}
        pseudo_codes = np.array([index[v] for v in base[name].cast(pl.Utf8).to_list()], dtype=np.int64)[take]
        columns[name] = (vocab, index, pseudo_codes)
    for j, r in enumerate(chunk):
        for (row, name, outcomes), digit in zip(r.cells, r.digits, strict=True):
            vocab, index, pseudo_codes = columns[name]
            where = offsets[j] + np.arange(r.size) * r.length + (row - r.start)
            pseudo_codes[where] = np.array([index[v] for v, _ in outcomes])[digit]
    ids = pl.Series("business_id", np.arange(int(size.sum()))).cast(pl.Utf8)  # formatted once per pseudo-restaurant
    kept = [c for c in base.columns if c not in (*_NOT_STACKED, "business_id", *columns)]
    rows = base.select(kept)[take].with_columns(
        ids.gather(first_id[block] + within // length[block]),
        *[pl.Series(name, vocab, dtype=pl.Utf8).gather(codes) for name, (vocab, _, codes) in columns.items()])
    owner = np.repeat(np.array([r.code for r in chunk], dtype=np.int64), size)
    restaurants = rest.drop("business_id")[owner].with_columns(ids)
    return rows, restaurants


def chunk_variants(plan: list[Variants], budget: int) -> list[list[tuple[int, Variants]]]:
    """(plan index, piece) in groups of about ``budget`` pseudo-dataset rows; an entry larger than
    the budget is cut into pieces of its pseudo-datasets (in order)."""
    pieces = []
    for i, r in enumerate(plan):
        step = max(1, budget // max(r.length, 1))
        for lo in range(0, r.size, step):
            hi = min(lo + step, r.size)
            pieces.append((i, r if (lo, hi) == (0, r.size) else dataclasses.replace(
                r, digits=r.digits[:, lo:hi], weight=r.weight[lo:hi])))
    out: list[list[tuple[int, Variants]]] = [[]]
    rows = 0
    for i, piece in pieces:
        if out[-1] and rows + piece.size * piece.length > budget:
            out.append([])
            rows = 0
        out[-1].append((i, piece))
        rows += piece.size * piece.length
    return [c for c in out if c]


def variant_verdicts(
    base: pl.DataFrame, rest: pl.DataFrame, plan: list[Variants], definition: Formula | Policy, k: int | None, *,
    constants: Mapping[str, Any] | None = None, reference_year: int | None = None, row_budget: int = ROW_BUDGET,
) -> list[np.ndarray]:
    """The verdict of every pseudo-dataset of every entry of ``plan`` (arrays in plan order), set-wise."""
    out: list[list[np.ndarray]] = [[] for _ in plan]
    for chunk in chunk_variants(plan, row_budget):
        rows, pseudo_rest = stack_variants(base, rest, [piece for _, piece in chunk])
        got = gt_verdicts(rows, pseudo_rest, definition, k, constants=constants, reference_year=reference_year)
        verdicts = np.empty(pseudo_rest.height, dtype=object)
        verdicts[got["business_id"].cast(pl.Int64).to_numpy()] = got["verdict"].to_numpy()
        for (i, _), part in zip(chunk, np.split(verdicts, np.cumsum([p.size for _, p in chunk])[:-1]), strict=True):
            out[i].append(part)
    return [np.concatenate(parts) for parts in out]


def base_rows(judgments: pl.DataFrame, k: int | None, code_of: dict[str, int]) -> pl.DataFrame:
    """The judgments GT counts at K (no parse error, idx < K), with ``_r`` = restaurant code, sorted."""
    base = judgments.filter(pl.col("idx") < k) if k is not None else judgments
    if "parse_error" in base.columns:
        base = base.filter(pl.col("parse_error").is_null())
    base = base.drop([c for c in _DROP if c in base.columns]).with_columns(
        pl.col("business_id").cast(pl.Utf8).replace_strict(code_of, default=None, return_dtype=pl.Int64).alias("_r"))
    if base["_r"].null_count():
        unknown = base.filter(pl.col("_r").is_null())["business_id"].unique().head(5).to_list()
        raise ValueError(f"judgments name restaurant(s) missing from the restaurants table: {', '.join(map(str, unknown))}")
    return base.sort("_r", "idx")


def _one_k(judgments: pl.DataFrame, rest: pl.DataFrame, definition: Formula | Policy, k: int | None,
           confusion: Confusion, options: dict[str, Any]) -> pl.DataFrame:
    scale = {v: i for i, v in enumerate(definition.verdicts)}
    gt = {"constants": options["constants"], "reference_year": options["reference_year"]}
    ids = rest["business_id"].to_list()
    code_of = {b: i for i, b in enumerate(ids)}
    point = dict(gt_verdicts(judgments, rest, definition, k, **gt).iter_rows())
    base = base_rows(judgments, k, code_of)
    plan = _plan(base, base["_r"].to_numpy(), ids, confusion, k, options)
    base = base.drop("_r")
    probs = np.zeros((rest.height, len(scale)))
    probs[np.arange(rest.height), [scale[point[b]] for b in ids]] = 1.0
    probs[[r.code for r in plan]] = 0.0
    for r, verdicts in zip(plan, variant_verdicts(base, rest, plan, definition, k, row_budget=options["row_budget"], **gt),
                           strict=True):
        np.add.at(probs[r.code], [scale[v] for v in verdicts], r.weight)
    method, uncertain, outcomes = ["certain"] * rest.height, [0] * rest.height, [1] * rest.height
    for r in plan:
        method[r.code] = "exact" if r.exact else "monte_carlo"
        uncertain[r.code] = len({row for row, _, _ in r.cells})
        outcomes[r.code] = r.outcomes
    return pl.DataFrame({
        "business_id": ids, "name": rest["name"], "k": pl.Series([k] * rest.height, dtype=pl.Int64),
        "verdict": [point[b] for b in ids], "p": [dict(zip(scale, map(float, row), strict=True)) for row in probs],
        "method": method, "uncertain_reviews": pl.Series(uncertain, dtype=pl.Int64),
        "outcomes": pl.Series(outcomes, dtype=pl.Int64),
    })


def verdict_probabilities(
    judgments: pl.DataFrame, restaurants: pl.DataFrame, definition: str | Formula | Policy, ks: KSpec,
    confusion: Confusion, *, draws: int = 20_000, seed: int = 0, constants: Mapping[str, Any] | None = None,
    reference_year: int | None = None, exact_limit: int = EXACT_LIMIT, row_budget: int = ROW_BUDGET,
) -> pl.DataFrame:
    """The probability of each verdict of every restaurant and K under a judge's confusion (pure).

    Args:
        judgments: as for GT (one row per judged review; ``overridden`` rows are certain).
        restaurants: business_id, name, categories (n_reviews).
        definition: a formula or policy (name or object); ``constants`` for a formula what-if.
        ks: K values (None = all reviews).
        confusion: from :func:`parse_confusion` / :func:`load_confusion`.
        draws: Monte Carlo draws of a restaurant with more than ``exact_limit`` joint outcomes.
        seed: seeds each (K, restaurant) draw.
        reference_year: recency reference of a policy that needs one (default: newest judged year).

    Returns:
        business_id, name, k, verdict (the point verdict, without uncertainty), p (struct: each
        verdict of the scale → probability), method (certain / exact / monte_carlo),
        uncertain_reviews, outcomes (enumerated outcomes or draws); sorted by K, then restaurant.
    """
    if draws < 1:
        raise ValueError(f"draws must be >= 1, got {draws}")
    d = get_definition(definition, None)  # a name is a built-in's; the workspace wrapper passes the object
    if isinstance(d, Policy) and d.needs_reference and reference_year is None:
        reference_year = newest_year(judgments)
    rest = restaurants.select("business_id", "name", *[c for c in ("categories", "n_reviews") if c in restaurants.columns])
    rest = rest.with_columns(pl.col("business_id").cast(pl.Utf8)).unique("business_id", keep="first").sort("name", "business_id")
    options = {"draws": draws, "seed": seed, "constants": constants, "reference_year": reference_year,
               "exact_limit": exact_limit, "row_budget": row_budget}
    frames = [_one_k(judgments, rest, d, k, confusion, options) for k in normalize_ks(ks)]
    return pl.concat(frames, how="vertical_relaxed")


def verdict_probabilities_ws(
    ws: Workspace, dataset: str, task: str, definition: Formula | Policy, ks: KSpec, confusion: Confusion, *,
    judge: str | None = None, **options: Any,
) -> pl.DataFrame:
    """:func:`verdict_probabilities` of a workspace's stored judgments (overrides applied), with the
    ``judgments_sha256`` they came from."""
    from core.judgments import load_judgments  # deferred: pandas

    if definition.task != task:
        raise ValueError(f"{definition.name} is a {definition.task} definition, not {task}")
    judgments = load_judgments(ws, dataset, task, judge)
    if isinstance(definition, Policy) and definition.needs_reference:
        options.setdefault("reference_year", newest_review_year(ws, dataset))
    frame = verdict_probabilities(judgments, load_restaurants(ws, dataset), definition, ks, confusion, **options)
    return frame.with_columns(pl.lit(judgments_sha256(judgments)).alias("judgments_sha256"))


def probability_matrix(frame: pl.DataFrame, k: int | None, scale: Sequence[str]) -> tuple[list[str], np.ndarray]:
    """(business ids, P) of one K of a :func:`verdict_probabilities` frame: row i is restaurant i's
    probability of each verdict of ``scale`` (lowest first), e.g. for :func:`core.metrics.gt_noise.gt_draws`."""
    rows = frame.filter(pl.col("k").is_null() if k is None else pl.col("k") == k)
    return rows["business_id"].to_list(), np.array([[r[v] for v in scale] for r in rows["p"].to_list()], dtype=np.float64)

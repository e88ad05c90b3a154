"""What the GT and Trace pages load from a workspace, in pieces the pages can cache.

The pages wrap these in ``st.cache_data`` keyed by :func:`data_stamp` (file sizes and mtimes of
the dataset, the judgment logs and the overrides), so a write made anywhere (the app, the CLI)
invalidates them, and an override made in the app clears them at once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from core.ground_truth import (
    Formula,
    compute_gt_frame,
    compute_policy_gt_frame,
    list_formulas,
    list_policies,
    normalize_ks,
)
from core.ground_truth.inputs import MEMO_VERSION as MEMO_VERSION  # re-exported: the pages' loaders
from core.ground_truth.inputs import GTInputs as GTInputs
from core.ground_truth.inputs import Stamp as Stamp
from core.ground_truth.inputs import data_stamp as data_stamp
from core.ground_truth.inputs import load_inputs as load_inputs
from core.ground_truth.inputs import load_restaurant_inputs as load_restaurant_inputs
from core.ground_truth.policies import Policy
from core.ground_truth.variants import whatif_definition
from core.ground_truth.views.grid import k_order, with_score
from core.workspace import Workspace


def definitions(task: str, ws: Workspace | None) -> list[str]:
    """Names of the task's formulas (v1, v2) then policies (G1_allergy_V2 …, and the workspace's)."""
    return [f.name for f in list_formulas(task)] + [p.policy_id for p in list_policies(ws, task)]


def describe(definition: Formula | Policy) -> str:
    """One line about a formula or policy (a workspace's policy that replaces a built-in says so)."""
    if isinstance(definition, Formula):
        return definition.description
    replaces = "; this workspace's own, in force instead of the built-in" if definition.replaces_builtin else ""
    reading = "; read as ADDM's code computes it" if definition.origin.endswith("read as ADDM's code computes it") else ""
    return f"{definition.title} (policy {definition.policy_id} v{definition.version}{replaces}{reading})"


def parse_ks(values: Sequence[Any] | str) -> list[int | None]:
    """K values from the page (``"25"``, ``50``, ``"all"``), ascending with all last.

    Raises:
        ValueError: a value is not a positive integer or "all", or none is given.
    """
    return k_order(normalize_ks(list(values) if not isinstance(values, str) else values))


def split_ks(values: Sequence[Any]) -> tuple[list[int | None], list[str]]:
    """(valid K ascending with all last, the values that are not a valid K) of the page's K chips.

    >>> split_ks(["25", "abc", "all", "-3", "50"])
    ([25, 50, None], ['abc', '-3'])
    """
    good: list[int | None] = []
    bad: list[str] = []
    for value in values:
        try:
            good.extend(normalize_ks([value]))
        except ValueError:
            bad.append(str(value))
    return k_order(good), bad


def compute_frame(inputs: GTInputs, definition: str | Formula | Policy, ks: Sequence[int | None], *,
                  changes: Mapping[str, float] | None = None, dataset: str = "", task: str = "",
                  reference_year: int | None = None) -> pl.DataFrame:
    """GT of every restaurant at every K (a what-if when ``changes`` are given), with ``score``
    and the provenance columns dataset, task, judge, judgments_sha256. ``reference_year``: the
    recency reference of a policy that sets none (the dataset's newest review year, as the CLI)."""
    d, constants = whatif_definition(definition, changes, None)
    if isinstance(d, Formula):
        frame = compute_gt_frame(inputs.judgments, inputs.restaurants, d, list(ks), constants=constants)
    else:
        frame = compute_policy_gt_frame(inputs.judgments, inputs.restaurants, d, list(ks), reference_year=reference_year)
    return with_score(frame).with_columns(
        pl.lit(dataset).alias("dataset"), pl.lit(task).alias("task"), pl.lit(inputs.judge).alias("judge"),
        pl.lit(inputs.sha256).alias("judgments_sha256"),
    )


def restaurant_inputs(inputs: GTInputs, business_id: str) -> GTInputs:
    """The inputs narrowed to one restaurant (what a trace needs)."""
    if inputs.restaurants.filter(pl.col("business_id") == business_id).height == 0:
        raise ValueError(f"no restaurant with business_id {business_id!r}")
    return GTInputs(inputs.judgments.filter(pl.col("business_id") == business_id),
                    inputs.restaurants.filter(pl.col("business_id") == business_id), inputs.judge, inputs.sha256)


def restaurant_info(ws: Workspace, dataset: str, business_id: str) -> dict[str, Any]:
    """name, categories, city, state, stars, n_reviews of one restaurant."""
    # deferred: core.datasets pulls in pandas (~500 ms), only needed when restaurant_info() runs
    from core.datasets import scan_restaurants

    rows = (scan_restaurants(ws, dataset).filter(pl.col("business_id") == business_id)
            .select("business_id", "name", "categories", "city", "state", "stars", "n_reviews").collect())
    if rows.height == 0:
        raise ValueError(f"no restaurant with business_id {business_id!r} in dataset {dataset!r}")
    return rows.row(0, named=True)


def review_texts(ws: Workspace, dataset: str, business_id: str) -> dict[int, str]:
    """idx -> full text of one restaurant's reviews (reviews without text are left out)."""
    # deferred: core.datasets pulls in pandas (~500 ms), only needed when review_texts() runs
    from core.datasets import scan_reviews

    rows = (scan_reviews(ws, dataset)
            .filter((pl.col("business_id") == business_id) & pl.col("text").is_not_null())
            .select(pl.col("idx").cast(pl.Int64), "text").collect())
    return dict(zip(rows["idx"].to_list(), rows["text"].to_list(), strict=True))

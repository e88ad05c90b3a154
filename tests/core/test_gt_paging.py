"""The GT page's views over many restaurants (core.ground_truth.views.paging): the side-by-side grid
equals the grouped one, the aggregates equal the full-frame computations, pages slice the sort
order; on the demo and on dev-ADDM's 100 real restaurants judged by heuristic-v2 (issue 27)."""

from __future__ import annotations

import polars as pl
import pytest

from core.cli import main
from core.demo import generate_demo
from core.ground_truth import distribution_by_k
from core.ground_truth import views as gt_views
from core.ground_truth.coverage import short_counts, with_review_counts
from core.ground_truth.views.grid import _joined_rows
from core.ground_truth.views.paging import ColumnLookup, k_slices, name_frame, page_of, sorted_page
from core.workspace import Workspace

KS: list[int | None] = [25, 50, 100, None]
DEFINITIONS = ("v1", "v2", "G1_allergy_V2")


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> tuple[Workspace, str]:
    root = tmp_path_factory.mktemp("paging-demo") / "ws"
    generate_demo(root)
    return Workspace(root), "demo"


@pytest.fixture(scope="module")
def addm(fixtures_dir, tmp_path_factory) -> tuple[Workspace, str]:
    root = tmp_path_factory.mktemp("paging-addm") / "ws"
    for args in (("datasets", "import", str(fixtures_dir / "dev-ADDM/full/dataset_K25.jsonl"), "--name", "addm"),
                 ("index", "--dataset", "addm"), ("judge", "--dataset", "addm", "--task", "G1a", "--judge", "heuristic-v2")):
        assert main(["--workspace", str(root), "--no-progress", *args]) == 0
    return Workspace(root), "addm"


def _frames(ws: Workspace, dataset: str) -> list[pl.DataFrame]:
    inputs = gt_views.load_inputs(ws, dataset, "G1a")
    return [with_review_counts(gt_views.compute_frame(inputs, d, KS, dataset=dataset, task="G1a"), inputs.restaurants)
            for d in DEFINITIONS]


@pytest.mark.parametrize("where", ["demo", "addm"])
def test_side_by_side_grid_equals_the_grouped_grid_and_the_full_frame_counts(where, request):
    ws, dataset = request.getfixturevalue(where)
    for frame in _frames(ws, dataset):
        f = gt_views.with_score(frame)
        assert k_slices(f, gt_views.k_order(KS)) is not None  # the fast path is the one taken
        for rank_by in (None, ["Low Risk", "High Risk", "Critical Risk"]):
            fast = gt_views.verdict_grid(frame, rank_by=rank_by)
            slow = _joined_rows(f, gt_views.k_order(KS), rank_by, None)
            slow = slow.sort(["_rank", "max_score", "name"], descending=[True, True, False]).select(fast.columns)
            assert fast.equals(slow)
        grid = gt_views.verdict_grid(frame, keep_hidden=True)
        assert grid.height == frame["business_id"].n_unique() and grid.height > 50
        assert int((grid["changes"] > 0).sum()) == gt_views.flips(frame).height  # the flips count
        short = {b for b, s in frame.group_by("business_id").agg(pl.col("short_of_k").any()).iter_rows() if s}
        assert set(grid.filter(pl.col("_short"))["business_id"]) == short
        assert dict(ColumnLookup(grid, "business_id", "name")) == gt_views.display_names(frame)
        # the distribution per K: the counts of every verdict at every K of the full frame
        dist = gt_views.distribution_table(frame)
        for row in dist.iter_rows(named=True):
            at = frame.filter(pl.col("k").is_null() if row["K"] == "all" else pl.col("k") == int(row["K"]))
            assert row["total"] == at.height
            assert all(row[v] == int((at["verdict"] == v).sum()) for v in gt_views.verdict_order(frame))
        assert distribution_by_k(frame, gt_views.verdict_order(frame))["total"].sum() == frame.height
        assert sum(short_counts(frame).values()) == int(frame["short_of_k"].sum())


def test_pages_slice_the_sort_order(demo):
    ws, dataset = demo
    frame = _frames(ws, dataset)[0]
    grid = gt_views.verdict_grid(frame, sort="Most verdict changes")
    page = page_of(grid, 2, 30)
    assert page.rows["business_id"].to_list() == grid["business_id"].to_list()[30:60]
    assert page.caption() == f"restaurants 31–60 of {grid.height:,}"
    last = page_of(grid, 99, 30)  # clamped to the last page
    assert last.number == last.pages == 4 and last.first == 91 and last.rows.height == grid.height - 90
    big = page_of(pl.DataFrame({"business_id": [f"b{i:06d}" for i in range(150_000)]}), 2, 200)
    assert big.caption() == "restaurants 201–400 of 150,000" and big.pages == 750
    assert big.rows["business_id"][0] == "b000200"


def test_name_frame_matches_display_names_with_shared_names():
    f = pl.DataFrame({"business_id": ["a1x", "b2y", "c3z", "a1x"], "name": ["Pho", "Pho", "Deli", "Pho"], "k": [25] * 4})
    assert dict(name_frame(f).iter_rows()) == {"a1x": "Pho [a1x]", "b2y": "Pho [b2y]", "c3z": "Deli"}
    lookup = ColumnLookup(name_frame(f), "business_id", "name")
    assert lookup["c3z"] == "Deli" and "nope" not in lookup and None not in lookup and len(lookup) == 3




@pytest.mark.parametrize("where", ["demo", "addm"])
def test_one_restaurants_gt_is_its_rows_of_every_restaurants_gt(where, request):
    """The Trace page computes one restaurant (gt_views.restaurant_inputs): the same rows as the full frame."""
    ws, dataset = request.getfixturevalue(where)
    inputs = gt_views.load_inputs(ws, dataset, "G1a")
    for definition, frame in zip(DEFINITIONS, _frames(ws, dataset), strict=True):
        for business_id in frame["business_id"].unique().sort().to_list()[::7]:
            one = gt_views.restaurant_inputs(inputs, business_id)
            mine = with_review_counts(gt_views.compute_frame(one, definition, KS, dataset=dataset, task="G1a"),
                                      one.restaurants)
            assert mine.equals(frame.filter(pl.col("business_id") == business_id)), (definition, business_id)


@pytest.mark.parametrize("where", ["demo", "addm"])
def test_sorted_pages_are_the_pages_of_the_full_sort(where, request):
    """The primitive table's pages come from a top-k selection (sorted_page): every page is that page
    of primitive_table, the full sort."""
    ws, dataset = request.getfixturevalue(where)
    by, descending = gt_views.PRIMITIVE_ORDER
    for frame in _frames(ws, dataset):
        for k in (25, None):
            rows, table = gt_views.primitive_rows(frame, k), gt_views.primitive_table(frame, k)
            assert rows.sort(by, descending=descending, maintain_order=True).equals(table)
            for size in (7, 30, 200):
                for number in range(1, table.height // size + 3):  # the last page, and one past it (clamped)
                    got, want = sorted_page(rows, by, descending, number, size), page_of(table, number, size)
                    assert got.rows.equals(want.rows) and got.caption() == want.caption(), (k, size, number)
                    assert (got.number, got.pages) == (want.number, want.pages)


def test_sorted_page_breaks_ties_by_row_order_and_sorts_nulls_fully():
    ties = pl.DataFrame({"s": [2.0, 1.0, 2.0, 2.0, 1.0, 3.0] * 50, "n": ["a", "b", "a", "c", "b", "a"] * 50,
                         "i": list(range(300))})
    full = ties.sort(["s", "n"], descending=[True, False], maintain_order=True)
    for number in (1, 2, 5, 11):
        assert sorted_page(ties, ["s", "n"], [True, False], number, 27).rows.equals(page_of(full, number, 27).rows)
    nulls = ties.with_columns(pl.when(pl.col("i") % 7 == 0).then(None).otherwise(pl.col("s")).alias("s"))
    want = nulls.sort(["s", "n"], descending=[True, False], maintain_order=True)
    assert sorted_page(nulls, ["s", "n"], [True, False], 1, 20).rows.equals(want.head(20))

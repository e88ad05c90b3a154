"""Issue 8 leftovers: the Data page ticks the selected restaurant's row however it was chosen, and
every page opens with the compact header (``ui.page_header``), never a large bare ``st.title``."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

from core.ui import FRAME_CSS, PAGES

DATA = "app_pages/data.py"
ROOT = Path(__file__).resolve().parents[2]


def ticked(at) -> list[int]:
    """Rows the restaurant table shows ticked: the selection state Streamlit sends to the browser
    (set from Session State) or, when the script did not rewrite it, the widget's own state."""
    table = at.dataframe[0]
    if table.proto.selection_state:
        return json.loads(table.proto.selection_state)["selection"]["rows"]
    return list(at.session_state["data.restaurant_table"]["selection"]["rows"])


def plain(markdown: str) -> str:
    """A subheader's text without the markdown escapes of :mod:`core.ui.text`."""
    return re.sub(r"\\(.)", r"\1", markdown)


def listed_ids(at, small_demo) -> list[str]:
    import polars as pl

    names = list(at.dataframe[0].value["name"])
    restaurants = pl.read_parquet(next((small_demo / "datasets").glob("*/restaurants.parquet")))
    by_name = dict(zip(restaurants["name"], restaurants["business_id"], strict=True))
    return [by_name[n] for n in names]


def test_link_ticks_the_linked_restaurant(app_factory, small_demo):
    at = app_factory(small_demo).run()
    at.switch_page(DATA).run()
    ids = listed_ids(at, small_demo)
    assert ticked(at) == [0]  # nothing chosen yet: the first restaurant is selected and ticked
    at.query_params["business_id"] = ids[3]
    at.run()
    assert not at.exception, at.exception
    assert ticked(at) == [3]
    assert plain(at.subheader[1].value) == at.dataframe[0].value["name"].iloc[3]  # the detail panel shows it


def test_find_selects_the_best_match_and_ticks_it(app_factory, small_demo):
    at = app_factory(small_demo).run()
    at.switch_page(DATA).run()
    names = list(at.dataframe[0].value["name"])
    target = names[5]
    at.text_input(key="data.name").input(target).run()
    assert not at.exception, at.exception
    shown = list(at.dataframe[0].value["name"])
    assert shown[0] == target and ticked(at) == [0]
    assert plain(at.subheader[1].value) == target
    assert at.query_params["business_id"]  # the URL links to the found restaurant


def test_filter_that_moves_rows_moves_the_tick(app_factory, small_demo):
    """A row position from before a filter never ticks another restaurant afterwards."""
    at = app_factory(small_demo).run()
    at.switch_page(DATA).run()
    ids = listed_ids(at, small_demo)
    at.query_params["business_id"] = ids[4]
    at.run()
    chosen = at.dataframe[0].value["name"].iloc[4]
    at.text_input(key="data.text").input("x").run()  # an unrelated rerun keeps the tick
    assert ticked(at) == [4]
    at.slider(key="data.stars").set_value((4.5, 5.0)).run()  # most restaurants leave the list
    names = list(at.dataframe[0].value["name"])
    assert ticked(at) == ([names.index(chosen)] if chosen in names else [])
    if chosen not in names:
        assert any("not on this page of the list" in c.value for c in at.caption)
    assert plain(at.subheader[1].value) == chosen  # the panel keeps the selection


@pytest.mark.parametrize("spec", PAGES, ids=[p.title for p in PAGES])
def test_every_page_uses_the_compact_header(spec):
    tree = ast.parse((ROOT / spec.path).read_text(encoding="utf-8"))
    calls = [n.func for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)]
    headers = [f for f in calls if f.attr == "page_header" and isinstance(f.value, ast.Name) and f.value.id == "ui"]
    titles = [f for f in calls if f.attr == "title" and isinstance(f.value, ast.Name) and f.value.id == "st"]
    assert len(headers) == 1 and not titles, spec.path


@pytest.mark.parametrize("path", ["app_pages/runs.py", "app_pages/results.py", "app_pages/gold.py",
                                  "app_pages/analysis.py", "app_pages/labeling.py", "app_pages/label_review.py"])
def test_rehead_pages_draw_the_frame_css(app_factory, small_demo, path):
    at = app_factory(small_demo).run()
    at.switch_page(path).run()
    assert not at.exception, at.exception
    assert any(FRAME_CSS in h.proto.body for h in at.get("html")), path
    assert len(at.title) == 1


@pytest.fixture()
def sixty_root(tmp_path):
    """60 restaurants (two pages of the list), one review each."""
    import polars as pl

    from core.datasets import write_dataset
    from core.workspace import Workspace

    ws = Workspace(tmp_path / "ws").ensure("sixty")
    restaurants = [{"business_id": f"b{i:02d}", "name": f"Place {i:02d}", "categories": "Diners", "city": "Reno",
                    "state": "NV", "stars": 4.0, "review_count": 1} for i in range(60)]
    reviews = [{"business_id": f"b{i:02d}", "review_id": f"r{i:02d}", "idx": 0, "date": "2024-01-01 10:00:00",
                "stars": 4.0, "useful": 0, "text": "Fine."} for i in range(60)]
    source = ws.root / "src.json"
    source.write_text(json.dumps({"restaurants": restaurants, "reviews": reviews}))
    write_dataset(ws, "sixty", pl.DataFrame(restaurants), pl.DataFrame(reviews), sources=[source], layout="test")
    return ws.root


def test_a_link_opens_the_list_at_the_linked_restaurants_page(app_factory, sixty_root):
    at = app_factory(sixty_root).run()
    at.query_params["business_id"] = "b55"
    at.switch_page(DATA).run()
    assert not at.exception, at.exception
    names = list(at.dataframe[0].value["name"])
    assert names[0] == "Place 50" and ticked(at) == [5]  # page 2 of the list, row 6
    assert plain(at.subheader[1].value) == "Place 55"
    at.button(key="data.restaurant_page.prev").click().run()  # paging away keeps the selection, unticked here
    assert list(at.dataframe[0].value["name"])[0] == "Place 00" and ticked(at) == []
    assert any("not on this page of the list" in c.value for c in at.caption)


def test_restaurant_position_follows_the_filter(sixty_root):
    from core.datasets import browse
    from core.datasets.db import Database

    db = Database(sixty_root)
    everything = browse.RestaurantFilter("", "", 0.0, 5.0)
    assert browse.restaurant_position(db, "sixty", everything, "b55") == 55
    assert browse.restaurant_position(db, "sixty", browse.RestaurantFilter("place 5", "", 0.0, 5.0), "b55") == 5
    assert browse.restaurant_position(db, "sixty", browse.RestaurantFilter("", "", 4.5, 5.0), "b55") is None
    assert browse.restaurant_position(db, "sixty", everything, "nope") is None


def test_a_tick_below_the_first_screen_is_named(app_factory, sixty_root):
    at = app_factory(sixty_root).run()
    at.query_params["business_id"] = "b15"
    at.switch_page(DATA).run()
    assert ticked(at) == [15]
    assert any("Selected: Place 15, row 16 of this page" in c.value for c in at.caption)

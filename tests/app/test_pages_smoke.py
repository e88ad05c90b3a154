"""Every registered page runs without an exception on the demo workspace and shows its key elements."""

from __future__ import annotations

import pytest

from core.ui import PAGES


def test_home_runs_and_links_every_page(app_factory, small_demo):
    at = app_factory(small_demo).run()
    assert not at.exception, at.exception
    assert at.title[0].value == "Scale Workbench"
    metric_labels = {m.label for m in at.metric}
    assert {"Datasets", "Restaurants", "Reviews"} <= metric_labels
    assert at.metric[0].value == "1"
    linked = {el.proto.page for el in at.get("page_link")}  # url paths; the default page is ""
    expected = {"" if spec.default else spec.url_path for spec in PAGES}
    assert expected <= linked, expected - linked


@pytest.mark.parametrize("spec", PAGES, ids=[p.title for p in PAGES])
def test_every_page_runs(app_factory, small_demo, spec):
    at = app_factory(small_demo).run()
    at.switch_page(spec.path).run()
    assert not at.exception, at.exception
    assert at.title, f"{spec.path} shows no title"


def test_data_page_lists_restaurants_and_reviews_in_idx_order(app_factory, small_demo):
    at = app_factory(small_demo).run()
    at.switch_page("app_pages/data.py").run()
    assert not at.exception
    table = at.dataframe[0].value
    assert len(table) == 12
    captions = [c.value for c in at.caption if c.value.startswith("idx ")]
    idxs = [int(c.split()[1]) for c in captions]
    assert idxs == list(range(len(idxs))) and len(idxs) == 20


def test_data_page_filters_by_name_and_text(app_factory, small_demo):
    at = app_factory(small_demo).run()
    at.switch_page("app_pages/data.py").run()
    first_name = at.dataframe[0].value["name"].iloc[0]
    at.text_input(key="data.name").input(first_name[:6]).run()
    assert not at.exception
    names = list(at.dataframe[0].value["name"])
    assert names and all(first_name[:6].lower() in n.lower() for n in names)
    at.text_input(key="data.text").input("zzzz-not-a-word").run()
    assert not [c for c in at.caption if c.value.startswith("idx ")]


def test_data_page_shows_html_in_reviews_inert(app_factory, small_demo, tmp_path):
    import shutil

    import polars as pl

    root = tmp_path / "ws"
    shutil.copytree(small_demo, root)
    reviews_path = next((root / "datasets").glob("*/reviews.parquet"))
    reviews = pl.read_parquet(reviews_path)
    payload = "<script>alert('x')</script><b>bold</b>"
    reviews = reviews.with_columns(
        pl.when(pl.col("idx") == 0).then(pl.lit(payload)).otherwise(pl.col("text")).alias("text")
    )
    reviews.write_parquet(reviews_path)
    at = app_factory(root).run()
    at.switch_page("app_pages/data.py").run()
    assert not at.exception and "changed since import" in at.error[0].value  # the lock check refuses it
    import json

    from core.base.files import sha256_file

    lock_path = reviews_path.parent / "dataset.lock.json"  # re-lock the edited table
    lock = json.loads(lock_path.read_text())
    lock["tables"]["reviews.parquet"] = sha256_file(reviews_path)
    lock_path.write_text(json.dumps(lock))
    at = app_factory(root).run()
    at.switch_page("app_pages/data.py").run()
    assert not at.exception
    bodies = [h.proto.body for h in at.get("html")]  # shown escaped: every character, no markup
    assert any("&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;&lt;b&gt;bold&lt;/b&gt;" in b for b in bodies)
    assert not any("<script" in b or "<b>" in b for b in bodies)
    assert not any(payload in m.value for m in at.markdown)

"""AppTests of the Data page: data shown as text, restaurants without stars,
search hits and keyword matches marked in escaped text, long reviews collapsed, judgment badges,
a Trace link per review."""

from __future__ import annotations

import json
import re

import polars as pl
import pytest

from core.datasets import write_dataset
from core.judgments import append_judgments
from core.workspace import Workspace

DATA = "app_pages/data.py"
EVIL_NAME = "![pixel](https://evil.example/p.png) [Log in](https://evil.example/login)"
LONG = "The staff checked every dish for peanuts. " + "We loved the quiet room and the long wine list. " * 30


@pytest.fixture()
def crafted_root(tmp_path):
    ws = Workspace(tmp_path / "ws").ensure("crafted")
    restaurants = [
        {"business_id": "evil", "name": EVIL_NAME, "categories": "**Bold**, [Thai](https://evil.example)",
         "city": "<img src=x>", "state": "PA", "stars": 4.5, "review_count": 3},
        {"business_id": "nostars", "name": "No Stars Diner", "categories": "Diners", "city": "Reno", "state": "NV",
         "stars": None, "review_count": 1},
    ]
    reviews = [
        {"business_id": "evil", "review_id": "e0", "idx": 0, "date": "2024-05-01 10:00:00", "stars": 1.0, "useful": 0,
         "text": "I have a peanut allergy and got hives <b>badly</b>."},
        {"business_id": "evil", "review_id": "e1", "idx": 1, "date": "2024-04-01 10:00:00", "stars": 5.0, "useful": 2,
         "text": LONG},
        {"business_id": "evil", "review_id": "e2", "idx": 2, "date": "2024-03-01 10:00:00", "stars": 4.0, "useful": 0,
         "text": "Nice patio."},
        {"business_id": "nostars", "review_id": "n0", "idx": 0, "date": "2024-01-01 10:00:00", "stars": 3.0,
         "useful": 0, "text": "Fine."},
    ]
    source = ws.root / "src.json"
    source.write_text(json.dumps({"restaurants": restaurants, "reviews": reviews}))
    write_dataset(ws, "crafted", pl.DataFrame(restaurants), pl.DataFrame(reviews), sources=[source], layout="test")
    append_judgments(ws, "crafted", "G1a", "test-judge", [
        {"business_id": "evil", "review_id": "e0", "idx": 0, "prompt_version": "test", "excerpt": "hives",
         "fields": {"incident_severity": "moderate", "account_type": "firsthand", "safety_interaction": "none"}}])
    return ws.root


def _open(app_factory, root, business_id="evil"):
    at = app_factory(root).run()
    at.query_params["business_id"] = business_id
    at.switch_page(DATA).run()
    assert not at.exception, at.exception
    return at


def _rendered(at) -> str:
    parts = [e.value for kind in ("markdown", "caption", "subheader", "warning", "info") for e in getattr(at, kind)]
    return "\n".join(str(p) for p in parts)


def test_restaurant_name_city_and_categories_are_text(app_factory, crafted_root):
    at = _open(app_factory, crafted_root)
    rendered = _rendered(at)
    assert "pixel" in rendered and "Log in" in rendered and "Bold" in rendered
    assert "](https://" not in rendered and "![" not in rendered and "**Bold**" not in rendered
    assert "\\<img src=x\\>" in rendered and not re.search(r"(?<!\\)<img", rendered)  # escaped, never a tag
    assert any(s.value.startswith("\\!\\[pixel\\]") for s in at.subheader)


def test_restaurants_without_stars_are_listed(app_factory, crafted_root):
    at = _open(app_factory, crafted_root)
    table = at.dataframe[0].value
    assert set(table["name"]) == {EVIL_NAME, "No Stars Diner"}  # the list shows names as cell text
    at = _open(app_factory, crafted_root, "nostars")
    assert any("no stars" in c.value for c in at.caption)


def test_search_hits_keywords_long_reviews_badges_and_trace_links(app_factory, crafted_root):
    at = _open(app_factory, crafted_root)
    at.text_input(key="data.text").input("peanut").run()
    assert not at.exception
    bodies = [h.proto.body for h in at.get("html")]
    first = next(b for b in bodies if "hives" in b)
    assert '<mark class="hit" title="search hit">peanut</mark>' in first
    assert '<mark class="kw" title="task keyword">allergy</mark>' in first
    assert "&lt;b&gt;badly&lt;/b&gt;" in first and "<b>" not in first
    long = next(b for b in bodies if "wine list" in b)
    assert "<details>" in long and "show all" in long  # a long review is collapsed
    badges = "\n".join(m.value for m in at.markdown)
    assert "G1a judgment:" in badges and "incident severity: moderate" in badges
    links = [p.proto for p in at.get("page_link")]
    trace = [p.query_string for p in links if p.label == "Trace"]
    assert len(trace) == 2 and "business_id=evil" in trace[0] and "k=25" in trace[0]

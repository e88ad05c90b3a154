"""Issue 26, Medium 6: values from data (a run's model and method, a study's model and scorer
names, an audit's models) are shown as text on every page: no markdown link or image from them
reaches a rendered element. The sweep opens every page on a workspace whose run and study carry
hostile names, with the hostile run and study selected, and reads every element that renders
markdown (text, captions, headers, alerts, expander and tab labels, metric labels)."""

from __future__ import annotations

import json
import re
import shutil

import pytest

from core.ui import PAGES

EVIL = "![pixel](https://evil.example/p.png) [Log in](https://evil.example/login)"
RUN = "demo-keyword-K25"


@pytest.fixture(scope="module")
def hostile_root(small_demo, tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile") / "ws"
    shutil.copytree(small_demo, root)
    results = root / "runs" / RUN / "results.json"
    doc = json.loads(results.read_text(encoding="utf-8"))
    doc.update(model=EVIL, method=EVIL)
    results.write_text(json.dumps(doc), encoding="utf-8")
    (root / "runs" / RUN / "summary.json").unlink(missing_ok=True)
    for name in ("run.jsonl", "run_scored.jsonl"):
        path = root / "studies" / "demo-rent" / "runs" / "demo-run" / name
        if path.exists():
            rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
            for row in rows:
                row["model_id"] = EVIL
                if "scorer_model" in row:
                    row["scorer_model"] = EVIL
            path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return root


_LINK = re.compile(r"(?<!\\)\]\((?!\\)|(?<!\\)!\[")  # an unescaped "](" or "![": a link or an image


def rendered(at) -> list[str]:
    """The text of every element that Streamlit renders as markdown."""
    out = []
    for kind in ("markdown", "caption", "title", "header", "subheader", "warning", "info", "error", "success",
                 "exception", "toast"):
        out += [str(e.value) for e in getattr(at, kind, [])]
    out += [str(e.label) for e in at.expander] + [str(t.label) for t in at.tabs]
    out += [str(m.label) for m in at.metric]
    return out


@pytest.mark.parametrize("spec", PAGES, ids=[p.title for p in PAGES])
def test_medium6_no_page_renders_a_link_or_image_from_data(app_factory, hostile_root, spec):
    at = app_factory(hostile_root).run()
    at.query_params["run"] = RUN
    at.switch_page(spec.path).run()
    assert not at.exception, at.exception
    for box in at.selectbox:  # pick the hostile run / study wherever a page offers it
        hits = [o for o in box.options if RUN in str(o) or "demo-run" in str(o)]
        if hits and box.value not in hits:
            box.set_value(hits[0]).run()
    assert not at.exception, at.exception
    bad = [text for text in rendered(at) if _LINK.search(text)]
    assert not bad, bad


def test_medium6_the_hostile_names_are_shown_escaped_on_results_and_analysis(app_factory, hostile_root):
    at = app_factory(hostile_root).run()
    at.query_params["run"] = RUN
    at.switch_page("app_pages/results.py").run()
    assert any("\\!\\[pixel\\]" in t for t in rendered(at)), "the run's model is not shown at all"
    at = app_factory(hostile_root).run()
    at.switch_page("app_pages/analysis.py").run()
    assert not at.exception, at.exception
    assert any("\\!\\[pixel\\]" in t for t in rendered(at)), "the study's model/scorer is not shown at all"

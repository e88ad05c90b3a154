"""AppTest of the Gold page on the small demo workspace (demo gold set, offline answers, reports)."""

from __future__ import annotations

import json
import shutil

import pytest

from core.gold import store
from core.gold.compare import CHANGE_ORDER
from core.gold.demo import DEMO_SET
from core.labeling import items as labeling_items
from core.labeling.store import open_store
from core.workspace import Workspace

GOLD = "app_pages/gold.py"


@pytest.fixture()
def demo_copy(small_demo, tmp_path):
    root = tmp_path / "ws"
    shutil.copytree(small_demo, root)
    return root


def _gold(app_factory, root):
    at = app_factory(root).run()
    at.switch_page(GOLD).run()
    assert not at.exception, at.exception
    return at


def _metrics(at) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def test_gold_page_shows_metrics_breakdowns_and_samples(app_factory, small_demo):
    at = _gold(app_factory, small_demo)
    assert at.title[0].value == "Gold answers"
    assert at.selectbox(key="gold.set").value == DEMO_SET
    assert at.selectbox(key="gold.source").value == "offline-retrieval-top2"  # the latest answers
    assert at.selectbox(key="gold.method").value == "tfidf"  # the set's config
    report = json.loads(store.report_path(Workspace(small_demo), store.history(Workspace(small_demo))[-1]["report"])
                        .read_text())
    metrics = _metrics(at)
    assert metrics["Pass rate"] == f"{report['aggregate_metrics']['pass_rate']:.0%}"
    assert metrics["Overall score"] == f"{report['aggregate_metrics']['overall_score']:.3f}"
    assert any("goal 90%" in str(m.proto.delta) for m in at.metric)
    specs = [json.loads(c.proto.spec) for c in at.get("arrow_vega_lite_chart") or at.get("vega_lite_chart")]
    assert len(specs) >= 2  # by task, by domain
    tables = [df.value for df in at.dataframe]
    assert any(set(t.columns) >= {"task", "count", "pass_rate"} for t in tables)
    assert any(set(t.columns) >= {"domain", "count", "pass_rate"} for t in tables)
    samples = next(t for t in tables if "sample_id" in t.columns and "status" in t.columns)
    assert len(samples) == 24
    # expected next to predicted, escaped, with keyword marks and the citation
    html = "".join(h.proto.body for h in at.get("html"))
    assert 'class="gold-text gold-expected"' in html and "<mark" in html and "Citation found" in html


def test_status_filter_and_html_in_answers_is_escaped(app_factory, demo_copy):
    ws = Workspace(demo_copy)
    path = store.answers_path(ws, DEMO_SET, "offline-retrieval-top2")
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    rows[0]["predicted"] = "<script>alert(1)</script> <b>Konto 1500</b>"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    at = _gold(app_factory, demo_copy)
    at.pills(key="gold.status").set_value(["fail"]).run()
    assert not at.exception
    samples = next(df.value for df in at.dataframe if "sample_id" in df.value.columns and "status" in df.value.columns)
    assert set(samples["status"]) == {"fail"}
    assert rows[0]["sample_id"] in list(samples["sample_id"])  # no citation, no match: it fails
    at.selectbox(key="gold.sample").set_value(rows[0]["sample_id"]).run()
    html = "".join(h.proto.body for h in at.get("html"))
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "<script>" not in html
    predicted = html.split('gold-predicted">')[1].split("</div>")[0]
    assert "&lt;b&gt;" in predicted and "<b>" not in predicted


def test_compare_history_save_and_send_to_labeling(app_factory, demo_copy):
    ws = Workspace(demo_copy)
    at = _gold(app_factory, demo_copy)
    reports = [h["report"] for h in store.history(ws, DEMO_SET)]
    assert at.selectbox(key="gold.report_a").value == reports[-2]
    assert at.selectbox(key="gold.report_b").value == reports[-1]
    compare = next(df.value for df in at.dataframe if "change" in df.value.columns)
    order = list(compare["change"])
    ranks = [CHANGE_ORDER[c] for c in order]
    assert ranks == sorted(ranks) and order[0] == "regression"  # regressions first
    assert _metrics(at)["Regressions"] == str(order.count("regression"))
    hist = next(df.value for df in at.dataframe if "accuracy_method" in df.value.columns)
    assert len(hist) == 3
    # save the current evaluation as a report: the history grows
    at.selectbox(key="gold.method").set_value("jaccard").run()
    at.button(key="gold.save").click().run()
    assert not at.exception
    assert len(store.history(ws, DEMO_SET)) == 4 and store.history(ws, DEMO_SET)[-1]["accuracy_method"] == "jaccard"
    # send the answers to a labeling project
    at.text_input(key="gold.project").input("gold-review").run()
    at.button(key="gold.send").click().run()
    assert not at.exception
    assert any("24 answers added to gold-review" in s.value for s in at.success)
    project = labeling_items.get_project(open_store(demo_copy), "gold-review")
    assert labeling_items.item_count(open_store(demo_copy), project) == 24


def test_expected_answers_source_is_the_grader_check(app_factory, small_demo):
    at = _gold(app_factory, small_demo)
    at.selectbox(key="gold.source").set_value("expected").run()
    assert not at.exception
    assert _metrics(at)["Pass rate"] == "100%"
    at.selectbox(key="gold.method").set_value("llm-judge").run()
    assert not at.exception  # needs the endpoint: a button, nothing is called yet
    assert at.button(key="gold.score_endpoint")


def test_a_bad_line_in_the_set_is_one_error_line(app_factory, demo_copy):
    ws = Workspace(demo_copy)
    path = store.set_files(ws, DEMO_SET)[0]
    path.write_text(path.read_text() + '{"messages": "oops"}\n')
    at = _gold(app_factory, demo_copy)
    assert [e.value for e in at.error] == [
        f"{path}:13: field 'messages': expected a list, got str"]


def test_gold_page_follows_a_changed_answers_file(app_factory, demo_copy):
    """The loaders are keyed by the gold folder's stamp: new answers show without a restart."""
    import os

    at = _gold(app_factory, demo_copy)
    before = _metrics(at)
    ws = Workspace(demo_copy)
    source = at.selectbox(key="gold.source").value
    assert source != "expected"
    path = store.answers_path(ws, DEMO_SET, source)
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    path.write_text("".join(json.dumps({**r, "predicted": ""}) + "\n" for r in rows), encoding="utf-8")
    os.utime(path, ns=(path.stat().st_mtime_ns + 10**9,) * 2)  # a new stamp even on a coarse clock
    at.run()
    assert not at.exception, at.exception
    after = _metrics(at)
    assert after["Overall score"] != before["Overall score"]
    assert after["Pass rate"] == "0%"

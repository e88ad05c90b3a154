"""Results page in a real Chromium: scores, the drilldown with highlighted snippets, raw response as text,
the link to Trace, and two runs compared."""

from __future__ import annotations

import json
import re
import shutil

import pytest

from core.metrics import views as mv
from core.runs.records import load_results
from tests.e2e.conftest import StreamlitServer, wait_ready
from tests.helpers.metrics import no_incident_run
from tests.helpers.results import write_runs

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def results_root(small_demo, tmp_path_factory):
    root = tmp_path_factory.mktemp("results_e2e") / "ws"
    shutil.copytree(small_demo, root)
    (root / "runs" / "no-incident").mkdir(parents=True)  # before the others: not the newest run
    (root / "runs" / "no-incident" / "results.json").write_text(json.dumps(no_incident_run()), encoding="utf-8")
    write_runs(root, n_boot=100)
    return root


@pytest.fixture(scope="module")
def results_server(results_root):
    server = StreamlitServer(results_root)
    yield server
    server.stop()


def test_drilldown_highlights_snippets_and_links_to_trace(chromium_browser, results_server):
    page = chromium_browser.new_page(viewport={"width": 1400, "height": 2000})
    try:
        page.goto(f"{results_server.url}/results")
        wait_ready(page, "Samples ranked by", timeout=60_000)
        assert "95 % CI" in page.inner_text("body")
        page.get_by_role("tab", name="Restaurants").click()
        page.get_by_test_id("stMultiSelect").first.click()
        page.get_by_role("option", name="Critical Risk").click()
        page.keyboard.press("Escape")
        wait_ready(page, "Evidence the method claimed")
        page.locator("summary").filter(has_text="Review ").first.click()
        mark = page.locator("mark").first
        mark.wait_for(timeout=20_000)
        assert mark.inner_text().strip()
        page.locator("summary").filter(has_text="Raw response").click()
        code = page.get_by_test_id("stCode").first
        code.wait_for(timeout=20_000)
        assert code.inner_text().startswith("<b>raw</b>")  # shown as text, not rendered as HTML
        page.get_by_role("link", name="Open this restaurant in Trace").first.click()
        page.wait_for_url(re.compile(r"/trace\?.*formula=G1_allergy_V2"), timeout=60_000)
        assert "business_id=" in page.url and "k=" in page.url
    finally:
        page.close()


def test_two_runs_compared(chromium_browser, results_server):
    page = chromium_browser.new_page(viewport={"width": 1400, "height": 2000})
    try:
        page.goto(f"{results_server.url}/results")
        wait_ready(page, "Samples ranked by", timeout=60_000)
        page.get_by_text("Compare runs").click()
        wait_ready(page, "Paired differences against", timeout=60_000)
        body = page.inner_text("body")
        assert "newly failing" in body and "still right" in body
        page.get_by_text("Each score against K per method").wait_for(timeout=20_000)
        page.get_by_text("runs in the workspace").click()
        page.get_by_test_id("stVegaLiteChart").nth(1).wait_for(timeout=60_000)  # the score-against-K chart
    finally:
        page.close()


# Each drawn PR line as Vega rendered it (SVG path), with its legend label: a step path of
# "x,y" pixel points; recall 1 is the rightmost x, precision 1 the first point's y (every curve
# starts at recall 0, precision 1) and the y scale's domain is [0, 1.02].
DRAWN = """() => {
  const chart = Array.from(document.querySelectorAll('.vega-embed')).find(e => e.innerText.includes('recall'));
  const labels = {};
  chart.querySelectorAll('.role-legend-symbol path').forEach((p, i) => {
    labels[p.getAttribute('stroke')] = chart.querySelectorAll('.role-legend-label text')[i].textContent; });
  return Array.from(chart.querySelectorAll('.mark-line path')).map(p => [labels[p.getAttribute('stroke')],
    p.getAttribute('d').slice(1).split('L').map(pt => pt.split(',').map(Number))]);
}"""


def _area(points: list[list[float]]) -> float:
    width = max(x for x, _ in points)
    height = points[0][1] * 51  # y(precision 1) = H·(1 − 1/1.02) = H/51
    area = 0.0
    for (x0, y0), (x1, y1) in zip(points, points[1:], strict=False):
        if x1 > x0:  # a horizontal piece of the step: its height is the precision drawn over [x0, x1]
            assert y0 == y1
            area += (x1 - x0) / width * 1.02 * (1 - y1 / height)
    return area


@pytest.mark.parametrize("run_id", ["no-incident", "cot_k50"])
def test_the_drawn_pr_curve_encloses_the_ap_and_a_degenerate_run_gets_no_tick(chromium_browser, results_server,
                                                                             results_root, run_id):
    page = chromium_browser.new_page(viewport={"width": 1400, "height": 2000})
    try:
        page.goto(f"{results_server.url}/results?run={run_id}")
        wait_ready(page, "Precision–recall per threshold", timeout=60_000)
        page.wait_for_function(f"() => ({DRAWN})().length > 0", timeout=30_000)
        drawn = {label: _area(points) for label, points in page.evaluate(DRAWN)}
        run = load_results(results_root / "runs" / run_id / "results.json")
        table = {r["threshold"]: r["AP"] for r in mv.thresholds(run).iter_rows(named=True) if r["AP"] is not None}
        assert drawn == pytest.approx(table, abs=2e-3)  # pixels rounded to 1/1000
        body = page.inner_text("body")
        if run_id == "no-incident":  # AP 0.02: drawn along the bottom, not flat at precision 1
            assert drawn == pytest.approx({"≥ High Risk": 0.02}, abs=2e-3)
            for text in ("AUPRC ⚠", "Process ⚠", "Consistency ⚠", "Accuracy ✗", "majority baseline 98.0% (Low Risk)",
                         "0 incidents claimed, 0 of 1 GT incident found", "not above the majority-class baseline"):
                assert text in body, text
            assert "✓" not in body.split("Samples ranked by")[0]
    finally:
        page.close()

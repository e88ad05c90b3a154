"""The Ground truth page pages through restaurants (issue 27): page 2 shows the next rows of the sort
order, the caption counts them, the selected restaurant stays visible; on dev-ADDM's 100 real
restaurants judged by heuristic-v2."""

from __future__ import annotations

import pyarrow as pa
import pytest

from core.cli import main
from core.ground_truth import views as gt_views
from core.workspace import Workspace
from tests.helpers.gt_pages import _gt


@pytest.fixture(scope="module")
def addm_root(fixtures_dir, tmp_path_factory):
    root = tmp_path_factory.mktemp("gt-paging") / "ws"
    for args in (("datasets", "import", str(fixtures_dir / "dev-ADDM/full/dataset_K25.jsonl"), "--name", "addm"),
                 ("index", "--dataset", "addm"), ("judge", "--dataset", "addm", "--task", "G1a", "--judge", "heuristic-v2")):
        assert main(["--workspace", str(root), "--no-progress", *args]) == 0
    return root


def _grid_ids(at) -> list[str]:
    chart = next(c for c in at.get("vega_lite_chart") if "picked" in c.proto.spec)
    rows = pa.ipc.open_stream(chart.proto.datasets[0].data.data).read_all().to_pylist()
    return list(dict.fromkeys(r["business_id"] for r in rows))


def test_page_two_shows_the_next_restaurants_of_the_sort_order(app_factory, addm_root):
    at = _gt(app_factory, addm_root)
    ws = Workspace(addm_root)
    inputs = gt_views.load_inputs(ws, "addm", "G1a")
    frame = gt_views.compute_frame(inputs, "v1", [25, 50, 100, 200], dataset="addm", task="G1a")
    order = gt_views.verdict_grid(frame, sort="Name")["business_id"].to_list()
    at.selectbox(key="gt.sort").set_value("Name").run()
    assert at.selectbox(key="gt.page_size").value == 30
    first = _grid_ids(at)
    assert first == order[:30]
    selected = at.selectbox(key="gt.business_id").value
    assert selected in first
    at.number_input(key="gt.page").set_value(2).run()
    assert not at.exception, at.exception
    shown = _grid_ids(at)
    assert shown[:30] == order[30:60] and shown[30:] == [selected]  # the selection stays visible, last
    captions = " ".join(c.value for c in at.caption)
    assert "restaurants 31–60 of 100 · page 2 of 4" in captions
    assert at.selectbox(key="gt.business_id").options[:30] == [gt_views.display_names(frame)[b] for b in order[30:60]]
    at.selectbox(key="gt.page_size").set_value(100).run()  # a new page size starts at page 1
    assert at.number_input(key="gt.page").value == 1 and _grid_ids(at) == order
    assert "restaurants 1–100 of 100" in " ".join(c.value for c in at.caption)
    at.number_input(key="gt.primitives_page").set_value(1).run()
    assert "restaurants 1–100 of 100, highest score first" in " ".join(c.value for c in at.caption)


def test_the_gt_claim_is_made_when_its_popover_opens(app_factory, tmp_path):
    """The claim (a sha256 of every restaurant's verdict: 0.4–1.4 s at 150,000) is made only while the
    popover is open."""
    from tests.helpers.gt_workspace import build_gt_workspace

    build_gt_workspace(tmp_path / "ws")
    at = _gt(app_factory, tmp_path / "ws")
    assert not [c for c in at.code if "restaurants" in c.value]
    at.session_state["gt.claim.popover"] = True
    at.run()
    assert not at.exception, at.exception
    claim = [c.value for c in at.code]
    assert claim[0].startswith("Under v1 at K=25, 3 Low Risk, 0 High Risk, 0 Critical Risk of 3 restaurants")
    assert "/results?claim=" in claim[1]

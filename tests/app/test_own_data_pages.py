"""Issue 8: a dataset made from a judgments file (synthetic ids, no texts) says "no text stored" on
the pages instead of showing nothing or a raw None."""

from __future__ import annotations

from core.judgments.xnot_files import import_xnot_judgments, synthetic_id
from core.workspace import Workspace


def test_synthetic_dataset_pages_say_no_text_stored(app_factory, fixtures_dir, tmp_path):
    ws = Workspace(tmp_path / "ws")
    import_xnot_judgments(ws, fixtures_dir / "xnot/semantic_gt/task_G1a/judgments.json", dataset="xnot")
    at = app_factory(ws.root)
    at.query_params["business_id"] = synthetic_id("Vetri Cucina")
    at.run()
    at.switch_page("app_pages/data.py").run()
    assert not at.exception, at.exception
    cards = [h.proto.body for h in at.get("html") if 'class="rv-text"' in h.proto.body]  # review texts, escaped HTML
    assert cards and all("(no text stored for this review)" in c for c in cards)
    assert not any(">None<" in c for c in cards)

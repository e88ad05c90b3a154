"""Issue 10: Home lists the workspace's broken files with the reason (nothing skipped in silence)."""

from __future__ import annotations

import shutil


def test_home_lists_a_broken_file_with_its_reason(app_factory, small_demo, tmp_path):
    root = tmp_path / "ws"
    shutil.copytree(small_demo, root)
    at = app_factory(root).run()
    assert not at.exception, at.exception
    assert not at.warning  # a clean workspace: no problem table
    log = next((root / "judgments").rglob("*.jsonl"))
    lines = log.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[1] = lines[1][:20] + "\n"  # damage in the middle of the log
    log.write_text("".join(lines), encoding="utf-8")
    (root / "gt" / "broken.json").parent.mkdir(exist_ok=True)
    (root / "gt" / "broken.json").write_text("{not json", encoding="utf-8")
    at = app_factory(root).run()
    assert not at.exception, at.exception
    assert "2 files in this workspace cannot be read" in at.warning[0].value
    table = at.dataframe[0].value
    problems = dict(zip(table["file"], table["problem"], strict=True))
    rel = str(log.relative_to(root))
    assert problems[rel].startswith("line 2: not valid JSON")
    assert problems["gt/broken.json"].startswith("line 1: not valid JSON")
    assert any("Not shown: a file this section reads cannot be read" in c.value for c in at.caption)
    assert at.subheader  # the rest of Home is drawn


def test_home_overview_is_cached_and_follows_writes(app_factory, small_demo, tmp_path):
    """The file sections are cached across reruns and sessions, and a new file is a new key."""
    import json

    from core.ui import home
    from core.workspace import Workspace

    root = tmp_path / "ws"
    shutil.copytree(small_demo, root)
    at = app_factory(root).run()
    assert not at.exception, at.exception
    runs = next(d.value for d, h in zip(at.dataframe, _headers(at), strict=False) if h == "Method runs")
    before = home.workspace_overview(Workspace(root))
    assert home.workspace_overview(Workspace(root)).datasets is before.datasets  # one cached object
    src = next(root.glob("runs/*/results.json"))
    payload = json.loads(src.read_text(encoding="utf-8"))
    payload["run_id"] = "copied_run"
    (root / "runs" / "copied_run").mkdir()
    (root / "runs" / "copied_run" / "results.json").write_text(json.dumps(payload), encoding="utf-8")
    at = app_factory(root).run()
    assert not at.exception, at.exception
    after = next(d.value for d, h in zip(at.dataframe, _headers(at), strict=False) if h == "Method runs")
    assert len(after) == len(runs) + 1 and "copied_run" in list(after["run"])


def _headers(at) -> list[str]:
    """The subheader above each dataframe of Home, in order (the problems table has none)."""
    return [s.value for s in at.subheader if s.value != "Pages"]


def test_a_broken_override_file_is_named_on_trace_gt_and_home(app_factory, small_demo, tmp_path):
    root = tmp_path / "ws"
    shutil.copytree(small_demo, root)
    path = root / "overrides" / "demo" / "G1a.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text('{"override_id": "a"\n{"override_id": "b"}\n', encoding="utf-8")
    at = app_factory(root).run()
    problems = dict(zip(at.dataframe[0].value["file"], at.dataframe[0].value["problem"], strict=True))
    assert problems["overrides/demo/G1a.jsonl"].startswith("line 1: not valid JSON")
    for page in ("app_pages/trace.py", "app_pages/ground_truth.py"):
        at.switch_page(page).run()
        assert not at.exception, (page, at.exception)
        [error] = at.error  # one line naming the file, not a page behaving as if there were no overrides
        shown = error.value.replace("\\", "")  # Trace escapes markdown in the message
        assert "overrides/demo/G1a.jsonl:1: not valid JSON" in shown, (page, shown)

"""``release --out DIR`` then ``release verify DIR`` on the small demo: every number recomputed from
the data the release carries, and any changed file named."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import orjson
import polars as pl

from core.release.verify import verify_release

ROOT = Path(__file__).resolve().parents[3]


def _copy(release_dir: Path, tmp_path: Path) -> Path:
    target = tmp_path / "rel"
    shutil.copytree(release_dir, target)
    return target


def test_release_holds_what_the_issue_lists(release_dir):
    names = {p.relative_to(release_dir).as_posix() for p in release_dir.rglob("*") if p.is_file()}
    for required in ("index.html", "vega.js", "release-data.js", "figures.json", "manifest.json", "DATASHEET.md",
                     "claims.json", "tables/gt_verdicts.parquet", "tables/samples.parquet", "data/workspace.json",
                     "data/datasets/demo/dataset.lock.json", "data/judgments/demo/G1a/heuristic-v2.jsonl"):
        assert required in names, required
    assert any(n.startswith("data/runs/") and n.endswith("/gt.json") for n in names)
    assert any(n.startswith("data/gt/demo/G1a/") for n in names)
    assert any(n.startswith("tables/paired/") and n.endswith(".csv") for n in names)
    manifest = json.loads((release_dir / "manifest.json").read_text())
    assert {e["path"] for e in manifest["files"]} == names - {"manifest.json"}
    html = (release_dir / "index.html").read_text()
    assert "http://" not in html and "https://" not in html.replace("https://vega.github.io", "")


def test_verify_passes_on_a_fresh_release(release_dir):
    out = verify_release(release_dir)
    assert out["ok"], out["problems"]
    assert out["checked"]["runs"] >= 5 and out["checked"]["claims"] >= 1


def test_the_page_shows_each_run_with_the_auprc_runs_show_prints(release_dir, demo_copy):
    figures = json.loads((release_dir / "figures.json").read_text())
    for run in figures["runs"]:
        stored = json.loads((demo_copy / "runs" / run["run_id"] / "results.json").read_text())
        auprc = stored["unified_scores"]["auprc"]
        assert run["auprc_text"] == ("N/A" if auprc is None else f"{auprc:.4f}")  # runs show's format
        assert run["stored_differs"] == []


def test_a_changed_judgment_fails_naming_the_file_and_the_numbers(release_dir, tmp_path):
    rel = _copy(release_dir, tmp_path)
    log = rel / "data/judgments/demo/G1a/heuristic-v2.jsonl"
    lines = log.read_text().splitlines()
    first = json.loads(lines[0])
    first["fields"] = {"incident_severity": "severe", "account_type": "firsthand", "safety_interaction": "betrayal"}
    lines[0] = json.dumps(first)
    log.write_text("\n".join(lines) + "\n")
    problems = verify_release(rel)["problems"]
    assert any(p.startswith("data/judgments/demo/G1a/heuristic-v2.jsonl: changed") for p in problems)
    assert any(p.startswith("figures.json: gt[") and "distribution" in p and "recomputed" in p for p in problems), problems


CHANGED = ("tables/runs.parquet", "figures.json", "DATASHEET.md", "vega.js", "data/datasets/demo/reviews.parquet")


def test_any_changed_added_or_missing_file_fails_naming_it(release_dir, tmp_path):
    rel = _copy(release_dir, tmp_path)  # one copy, one verify: each change is named on its own line
    for rel_path in CHANGED:
        path = rel / rel_path
        path.write_bytes(path.read_bytes() + b" ")
    (rel / "extra.txt").write_text("x")
    (rel / "tables/gt_verdicts.parquet").unlink()
    problems = verify_release(rel)["problems"]
    for rel_path in CHANGED:
        assert any(p.startswith(f"{rel_path}: changed since the release was made") for p in problems), (rel_path, problems)
    assert "extra.txt: not in the manifest (added after the release was made)" in problems
    assert "tables/gt_verdicts.parquet: missing (listed in the manifest)" in problems


def test_a_changed_number_or_kept_gt_fails_even_with_a_matching_manifest(release_dir, tmp_path):
    rel = _copy(release_dir, tmp_path)
    figures = orjson.loads((rel / "figures.json").read_bytes())
    run = figures["runs"][0]
    run["scores"]["accuracy"]["value"] = 0.123456
    body = orjson.dumps(figures, option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2) + b"\n"
    (rel / "figures.json").write_bytes(body)
    kept = rel / "data" / "runs" / run["run_id"] / "gt.json"
    kept.write_bytes(kept.read_bytes() + b"\n")  # the same GT to a parser, not the bytes the run recorded
    manifest = json.loads((rel / "manifest.json").read_text())
    for e in manifest["files"]:  # a forger who rewrites the manifest too
        path = rel / e["path"]
        if path.exists():
            e["sha256"], e["bytes"] = hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_size
    (rel / "manifest.json").write_text(json.dumps(manifest))
    problems = verify_release(rel)["problems"]
    assert any(f"runs[run_id={run['run_id']}" in p and "accuracy.value: shown 0.123456" in p for p in problems), problems
    assert any(p.startswith(f"data/runs/{run['run_id']}/gt.json: sha256 ") and "results.json records" in p
               for p in problems), problems


def test_text_from_data_is_never_html(release_dir):
    app = (ROOT / "core/release/static/app.js").read_text()
    assert "innerHTML" not in app and "insertAdjacentHTML" not in app and "document.write" not in app
    data = (release_dir / "release-data.js").read_text()
    assert "Small demo <release> & co" in data  # JSON in a script file of its own, drawn as text nodes


def test_cli_verify_exit_codes(release_dir, tmp_path):
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}  # exit 0 and "ok:" on a fresh release: tests/e2e
    rel = _copy(release_dir, tmp_path)
    samples = pl.read_parquet(rel / "tables/samples.parquet")
    samples.with_columns(pl.lit("Low Risk").alias("verdict")).write_parquet(rel / "tables/samples.parquet")
    bad = subprocess.run([sys.executable, "-m", "core", "release", "verify", str(rel)], capture_output=True, text=True,
                         env=env, cwd=tmp_path, timeout=300)
    assert bad.returncode == 1
    assert "FAIL tables/samples.parquet: changed since the release was made" in bad.stdout
    assert "FAIL tables/samples.parquet: row" in bad.stdout

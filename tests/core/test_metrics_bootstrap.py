"""Issue 26, finding 5: bootstrap resampling bounds its memory (a 1,000,000-sample results.json was
killed at about 22 GB); ``runs import`` takes ``--n-boot``. bench/large_results.py measures 1M."""

from __future__ import annotations

import json
import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.cli import main
from core.metrics import bootstrap
from core.metrics.bootstrap import COUNT_COLUMNS, SampleTable, bootstrap_intervals, paired_differences
from core.workspace import Workspace
from tests.helpers.metrics import answer, run, sample


def _table(n: int, seed: int = 0) -> SampleTable:
    rng = np.random.default_rng(seed)
    return SampleTable(tuple(f"b{i}" for i in range(n)), rng.integers(0, 3, n).astype(float), rng.random(n).round(2),
                       rng.integers(0, 3, (n, len(COUNT_COLUMNS))).astype(float), 3)


def test_blocks_give_the_very_figures_of_the_whole_matrix(monkeypatch):
    table = _table(300)
    whole = bootstrap_intervals(table, n_boot=50, seed=3)  # 15,000 cells: one block
    monkeypatch.setattr(bootstrap, "MAX_CELLS", 1000)  # three rows a block, the last one shorter
    assert bootstrap_intervals(table, n_boot=50, seed=3) == whole
    other = _table(300, seed=1)
    assert paired_differences(table, other, n_boot=50, seed=3) == paired_differences(table, other, n_boot=50, seed=3)


def test_resampling_memory_is_bounded_by_the_block_not_the_matrix(monkeypatch):
    """200 resamples of 20,000 restaurants: the whole matrix is 4M cells (32 MB of int64 indices
    alone, ~100 MB with the work arrays); in blocks of 100,000 cells the peak stays under 12 MB."""
    monkeypatch.setattr(bootstrap, "MAX_CELLS", 100_000)
    table = _table(20_000)
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        bootstrap_intervals(table, n_boot=200, seed=0)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 12_000_000, f"peak {peak / 1e6:.1f} MB"


def test_runs_import_takes_n_boot(tmp_path, capsys):
    verdicts = [("b1", "High Risk", "High Risk"), ("b2", "Low Risk", "Low Risk"), ("b3", "Low Risk", "High Risk")]
    source = tmp_path / "r.json"
    source.write_text(json.dumps(run([sample(b, answer(v, []), gt_verdict=g) for b, v, g in verdicts])))
    ws = Workspace(tmp_path / "ws")
    base = ["--workspace", str(ws.root), "runs", "import", str(source), "--run-id"]
    assert main([*base, "none", "--n-boot", "0"]) == 0
    assert "intervals" not in json.loads((ws.runs_dir / "none" / "results.json").read_text())
    assert main([*base, "few", "--n-boot", "20"]) == 0
    assert json.loads((ws.runs_dir / "few" / "results.json").read_text())["intervals"]["n_boot"] == 20
    capsys.readouterr()
    assert main([*base, "bad", "--n-boot", "-5"]) != 0
    assert "n_boot must be ≥ 1" in capsys.readouterr().err and not (ws.runs_dir / "bad").exists()


@pytest.mark.parametrize("n_boot", [1, 7])
def test_fewer_resamples_than_a_block(n_boot):
    assert bootstrap_intervals(_table(10), n_boot=n_boot, seed=0)["scores"]["accuracy"]["n_boot"] == n_boot


@settings(max_examples=200, deadline=None)
@given(n=st.integers(1, 60), n_boot=st.integers(1, 6), n_scores=st.integers(1, 6), n_labels=st.integers(1, 3),
       seed=st.integers(0, 2**32 - 1), dtype=st.sampled_from([np.float32, np.float64]), presorted=st.booleans())
def test_tie_grouped_ap_is_bit_identical_to_the_sorted_cumsum(n, n_boot, n_scores, n_labels, seed, dtype,
                                                              presorted):
    """The per-tie-group sums (one matrix product) give the very bits of the cumsum over every sample
    (the formula before issue 27, still the path for mostly distinct scores: forced here with a zero cap)."""
    rng = np.random.default_rng(seed)
    score = rng.integers(0, n_scores, n) / max(n_scores - 1, 1)
    if presorted:
        score = np.sort(score)[::-1].copy()
    ys = rng.integers(0, 2, size=(n_labels, n)).astype(bool)
    weights = rng.integers(0, 4, size=(n_boot, n)).astype(dtype)
    grouped = bootstrap.weighted_average_precisions(ys, score, weights)
    assert bootstrap._group_sums(ys, score, weights) is not None or len(np.unique(score)) == n  # the grouped path ran
    with pytest.MonkeyPatch.context() as m:
        m.setattr(bootstrap, "MAX_GROUP_COLUMNS", 0)
        cumsum = bootstrap.weighted_average_precisions(ys, score, weights)
    assert grouped.dtype == cumsum.dtype and grouped.shape == cumsum.shape
    assert grouped.tobytes() == cumsum.tobytes()


@pytest.mark.parametrize("distinct", [False, True])
@pytest.mark.parametrize("max_cells", [None, 700])
def test_one_draw_for_both_sides_gives_the_figures_of_each_side_drawn_apart(monkeypatch, distinct, max_cells):
    """``paired_differences`` draws each block once for both runs and sums both in one product;
    every figure equals that of each side resampled on its own (tie-grouped AP and the sorted pass,
    whole matrix and blocks, samples without a GT)."""
    if max_cells:
        monkeypatch.setattr(bootstrap, "MAX_CELLS", max_cells)
    a, b = _table(240, seed=1), _table(240, seed=2)
    if distinct:
        a = SampleTable(a.business_ids, a.gt_ordinal, np.random.default_rng(7).random(240), a.counts, 3)
    gt = b.gt_ordinal.copy()
    gt[::9] = np.nan
    b = SampleTable(b.business_ids, gt, b.score, b.counts, 3)
    shared = paired_differences(a, b, n_boot=40, seed=5, same_gt=False)
    apart = paired_differences(a, b, n_boot=40, seed=5, same_gt=False,
                               resampled=lambda side, t: bootstrap.resampled_scores(t, n_boot=40, seed=5))
    assert shared == apart
    assert shared["differences"]["ordinal_auprc"]["n_defined"] == 40

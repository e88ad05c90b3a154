"""Training invariants (grouped split, no leakage, clipping, reproducibility), the model folder's
manifest and its refusals, apply and evaluate, and the CLI."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest

from core.base.errors import DataError, WorkbenchError
from core.study import scoring
from core.study.scorer import apply, data, model


def _invariants(trained, examples):
    m = trained.manifest
    train_keys, test_keys = set(m["split"]["train"]), set(m["split"]["test"])
    assert not train_keys & test_keys and len(train_keys) + len(test_keys) == examples.height
    group = dict(zip(examples["key"].to_list(), examples["group"].to_list(), strict=True))
    assert not {group[k] for k in train_keys} & {group[k] for k in test_keys}  # no prompt on both sides
    assert m["n_train"] == len(train_keys) and m["n_test"] == len(test_keys)
    preds = np.array(m["test_predictions"])
    assert preds.min() >= -1 and preds.max() <= 1
    test = examples.filter(pl.col("key").is_in(m["split"]["test"])).sort("key")
    assert m["metrics"]["mae"] == pytest.approx(np.abs(preds - test["target"].to_numpy()).mean())


@pytest.mark.parametrize("kind", list(model.SCORER_KINDS))
def test_train_grouped_reproducible_and_clipped(rated_project, kind):
    store, project, _ = rated_project
    examples = data.consensus_examples(store, project)
    ratings = data.project_ratings(store, project)
    a = model.train(examples, ratings, kind=kind, seed=3, project=project.name)
    b = model.train(examples.sample(fraction=1.0, shuffle=True, seed=9), ratings, kind=kind, seed=3,
                    project=project.name)
    _invariants(a, examples)
    assert a.manifest["split"] == b.manifest["split"] and a.manifest["test_predictions"] == b.manifest["test_predictions"]
    assert a.manifest["training_data_sha256"] == b.manifest["training_data_sha256"]
    assert a.manifest["cv"]["folds"] == 5 and a.manifest["human_ceiling"]["n_items"] == a.manifest["n_test"]
    assert model.train(examples, ratings, kind=kind, seed=4).manifest["split"] != a.manifest["split"]
    extreme = a.predict(["The landlord is entitled to this increase " * 30, "hard to justify push back " * 30])
    assert extreme.min() >= -1 and extreme.max() <= 1


def test_refuses_fewer_than_20_items(rated_project):
    store, project, _ = rated_project
    examples = data.consensus_examples(store, project).head(19)
    with pytest.raises(WorkbenchError, match=r"19 items with a consensus; training a scorer needs at least 20"):
        model.train(examples, data.project_ratings(store, project), project=project.name)
    with pytest.raises(KeyError, match="valid: tfidf-ridge"):
        model.train(data.consensus_examples(store, project), data.project_ratings(store, project), kind="bert")


def test_model_folder_round_trip_and_refusals(rated_project, tmp_path):
    store, project, _ = rated_project
    trained = model.train(data.consensus_examples(store, project), data.project_ratings(store, project))
    out = model.save(trained, tmp_path / "m1")
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["format_version"] == model.FORMAT_VERSION and manifest["kind"] == "tfidf-ridge"
    assert {"config", "training_data_sha256", "metrics", "cv", "human_ceiling", "files"} <= set(manifest)
    loaded = model.load(out)
    texts = ["I would lean towards protecting the tenant", "This is a modest, well-justified increase"]
    assert loaded.predict(texts).tolist() == trained.predict(texts).tolist()

    with pytest.raises(ValueError, match="invalid scorer model name"):
        model.save(trained, tmp_path / "..bad")
    (tmp_path / "m2").mkdir()
    (tmp_path / "m2" / "notes.txt").write_text("mine")
    with pytest.raises(WorkbenchError, match="not a scorer folder"):
        model.save(trained, tmp_path / "m2")
    assert (tmp_path / "m2" / "notes.txt").read_text() == "mine"

    old = dict(manifest, format_version=0)
    (out / "manifest.json").write_text(json.dumps(old))
    with pytest.raises(WorkbenchError, match=r"manifest\.json: scorer format version 0, this workbench reads version 2"):
        model.load(out)
    (out / "manifest.json").write_text(json.dumps(dict(manifest, sklearn_version="0.24.2")))
    with pytest.raises(WorkbenchError, match="written with scikit-learn 0.24.2"):
        model.load(out)
    (out / "manifest.json").write_text(json.dumps(manifest))
    with open(out / "model.json", "ab") as fh:
        fh.write(b"tampered")
    with pytest.raises(WorkbenchError, match="missing or changed since it was written"):
        model.load(out)


def _run_file(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_apply_and_evaluate(rated_project, tmp_path):
    store, project, records = rated_project
    scorer = model.load(model.save(model.train(data.consensus_examples(store, project),
                                               data.project_ratings(store, project)), tmp_path / "m"))
    run = [{**r, "perspective": r["factors"]["perspective"]} for r in records[:10]]
    run[3] = {**run[3], "response_text": None, "error": "APIError 500: boom"}
    result = scoring.apply_to_run(scorer, _run_file(tmp_path / "run.jsonl", run), tmp_path / "run_scored.jsonl")
    assert result["scored"] == 9 and result["failed_responses"] == 1
    scored = [json.loads(line) for line in (tmp_path / "run_scored.jsonl").read_text().splitlines()]
    assert scored[3]["score"] is None and all(-1 <= s["score"] <= 1 for i, s in enumerate(scored) if i != 3)
    assert {s["scorer_model"] for s in scored} == {"m"}
    assert scored[0]["score"] == pytest.approx(float(scorer.predict([run[0]["response_text"]])[0]), abs=1e-6)

    bad = list(run)
    bad[5] = {k: v for k, v in bad[5].items() if k != "model_id"}
    with pytest.raises(DataError, match=r"bad\.jsonl:6: field 'model_id'"):
        scoring.apply_to_run(scorer, _run_file(tmp_path / "bad.jsonl", bad), tmp_path / "bad_scored.jsonl")
    assert not (tmp_path / "bad_scored.jsonl").exists()

    ev = apply.evaluate(scorer, store, project)
    assert ev["n_test"] == scorer.manifest["n_test"] and ev["n_skipped_training_items"] == scorer.manifest["n_train"]
    assert ev["mae"] == pytest.approx(scorer.manifest["metrics"]["mae"])


def test_cli_train_apply_evaluate(rated_project, tmp_path, capsys, monkeypatch):
    from core.cli import main
    from core.labeling.store import close_stores

    store, project, records = rated_project
    monkeypatch.setenv("WORKBENCH_LABELS_URL", str(store.engine.url))
    ws = tmp_path / "ws"
    out = tmp_path / "scorer-a"
    assert main(["--workspace", str(ws), "scorer", "train", "--project", project.name, "--out", str(out), "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    for key in ("n_train", "n_test", "mae", "rmse", "pearson", "spearman", "ccc"):
        assert isinstance(payload[key], int | float), key
    assert {"mae", "pearson", "n_pairs"} <= set(payload["human_ceiling"])
    run = _run_file(tmp_path / "run.jsonl", [{**r, "perspective": r["factors"]["perspective"]} for r in records[:4]])
    assert main(["--workspace", str(ws), "--no-progress", "scorer", "apply", str(out), str(run), "--out",
                 str(tmp_path / "scored.jsonl")]) == 0
    assert main(["--workspace", str(ws), "scorer", "evaluate", str(out), "--project", project.name]) == 0
    assert "human ceiling" in capsys.readouterr().out
    assert main(["--workspace", str(ws), "scorer", "train", "--project", project.name, "--out", str(out),
                 "--kind", "nope"]) == 1
    assert "unknown scorer kind 'nope'" in capsys.readouterr().err
    close_stores()


def test_fast_path_matches_scikit_learn(rated_project, fixtures_dir):
    import json as _json

    from core.study.scorer.fast import compile_linear

    store, project, records = rated_project
    examples = data.consensus_examples(store, project)
    trained = model.train(examples, data.project_ratings(store, project))
    fast = compile_linear(trained.pipeline)
    assert fast is not None and len(fast.bigram_keys) > 0 and fast.sublinear
    aita = [_json.loads(line)["model_response_text"]
            for line in (fixtures_dir / "aita/seeds/aita_seed.jsonl").read_text(encoding="utf-8").splitlines()]
    texts = [*examples["text"].to_list(), *aita, "", "x", "Ünïcödé wörds — ÀÉÎ straße 42€ l'été", "TENANT Tenant tenant"]
    expected = np.clip(trained.pipeline.predict(texts), -1, 1)
    assert np.abs(trained.predict(texts) - expected).max() < 1e-5
    assert trained.predict(["", "zzz qqq"]).tolist() == pytest.approx(
        [float(np.clip(trained.pipeline[-1].intercept_, -1, 1))] * 2)
    other = model.train(examples, data.project_ratings(store, project), kind="tfidf-wordchar-ridgecv")
    assert compile_linear(other.pipeline) is None  # falls back to scikit-learn


def test_fast_path_other_settings_match_or_fall_back():
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import Ridge
    from sklearn.pipeline import make_pipeline

    from core.study.scorer.fast import compile_linear

    texts = [f"the tenant pays {i} and the landlord asks for more rent number {i % 7}" for i in range(40)]
    texts += ["landlord landlord tenant", "short", "Ünïcödé straße tenant's rent"]
    y = np.linspace(-1, 1, len(texts))
    for vec, expect_fast in ((TfidfVectorizer(), True), (TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=False), True),
                             (TfidfVectorizer(ngram_range=(1, 2), max_df=0.5), None),
                             (TfidfVectorizer(stop_words="english"), False)):
        pipe = make_pipeline(vec, Ridge()).fit(texts, y)
        fast = compile_linear(pipe)
        if expect_fast is False:
            assert fast is None
        elif fast is not None:
            new = ["the landlord asks", "tenant pays 3 and more", "", "nothing known here"]
            assert np.abs(fast.predict(new) - pipe.predict(new)).max() < 1e-9
        else:
            assert expect_fast is None  # pruned words: either exact or refused, never wrong

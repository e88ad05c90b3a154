"""Issue 26, High 2: a crafted scorer folder never runs code. The model is data (``model.json``),
set on a pipeline the workbench builds; a pickle in the folder is never opened, whatever the
manifest says, and bad arrays are DataErrors naming the field."""

from __future__ import annotations

import hashlib
import json
import pickle
import re
import shutil
from pathlib import Path

import pytest

from core.base.errors import DataError, WorkbenchError
from core.cli import main
from core.study.scorer import data, model


def _evil_pickle(marker) -> bytes:
    # os.system-free but real: unpickling calls pathlib.Path(marker).touch()
    import pathlib

    class Evil:
        def __reduce__(self):
            return (pathlib.Path.touch, (pathlib.Path(marker),))

    return pickle.dumps(Evil())


@pytest.fixture(scope="module")
def _trained(tmp_path_factory):
    """One scorer trained for the module (training is the slow part); each test edits a copy."""
    from core.labeling.store import LabelStore
    from tests.helpers.rated_project import build_rated_project

    base = tmp_path_factory.mktemp("scorer")
    store = LabelStore(f"sqlite:///{base / 'labels.sqlite'}")
    store.ensure_schema()
    try:
        project, _ = build_rated_project(store)
        trained = model.train(data.consensus_examples(store, project), data.project_ratings(store, project))
        return model.save(trained, base / "m"), trained
    finally:
        store.dispose()


@pytest.fixture()
def trained_dir(_trained, tmp_path):
    return Path(shutil.copytree(_trained[0], tmp_path / "m"))


@pytest.mark.parametrize("version", [1, 2])
def test_high2_a_pickle_with_a_recomputed_sha256_is_never_unpickled(trained_dir, tmp_path, monkeypatch, version):
    marker = tmp_path / "code-ran"
    blob = _evil_pickle(marker)
    pickle.loads(blob)  # the payload works: unpickling it does create the marker ...
    assert marker.exists()
    marker.unlink()
    manifest = json.loads((trained_dir / "manifest.json").read_text())
    (trained_dir / "model.joblib").write_bytes(blob)  # ... and the attacker records its sha256 beside it
    name = "model.joblib" if version == 1 else "model.json"
    if version == 2:
        (trained_dir / "model.json").write_bytes(blob)
    manifest.update(format_version=version, files={name: hashlib.sha256(blob).hexdigest()})
    (trained_dir / "manifest.json").write_text(json.dumps(manifest))

    def no_unpickling(*_a, **_k):
        raise AssertionError("a scorer folder was unpickled")

    monkeypatch.setattr(pickle, "load", no_unpickling)
    monkeypatch.setattr(pickle, "loads", no_unpickling)
    with pytest.raises(WorkbenchError):
        model.load(trained_dir)
    assert main(["--workspace", str(tmp_path / "ws"), "scorer", "evaluate", str(trained_dir), "--project", "p"]) == 1
    assert not marker.exists()


def test_high2_the_model_file_is_plain_json_and_reloads_to_the_same_scores(trained_dir, _trained):
    params = json.loads((trained_dir / "model.json").read_text())
    assert set(params) == {"vectorizers", "regressor"}
    assert not list(trained_dir.glob("*.joblib")) and not list(trained_dir.glob("*.pkl"))
    texts = ["I would lean towards protecting the tenant", "a modest increase"]
    assert model.load(trained_dir).predict(texts).tolist() == _trained[1].predict(texts).tolist()


@pytest.mark.parametrize(("change", "field"), [
    (lambda p: p["regressor"].update(coef=p["regressor"]["coef"][:-1]), "regressor.coef"),
    (lambda p: p["regressor"].update(coef=[float("nan")] * len(p["regressor"]["coef"])), "regressor.coef"),
    (lambda p: p["regressor"].update(dtype="object"), "regressor.coef dtype"),
    (lambda p: p["vectorizers"][0].update(terms=[1, 2]), "vectorizers[0].terms"),
    (lambda p: p["vectorizers"][0].update(idf="x"), "vectorizers[0].idf"),
    (lambda p: p.update(vectorizers=[]), "vectorizers"),
])
def test_high2_bad_arrays_are_data_errors_naming_the_field(trained_dir, change, field):
    params = json.loads((trained_dir / "model.json").read_text())
    change(params)
    body = json.dumps(params).encode()
    (trained_dir / "model.json").write_bytes(body)
    manifest = json.loads((trained_dir / "manifest.json").read_text())
    manifest["files"] = {"model.json": hashlib.sha256(body).hexdigest()}
    (trained_dir / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(DataError, match=re.escape(f"field '{field}'")):
        model.load(trained_dir)


def test_high2_an_unknown_kind_is_refused_before_anything_is_read(trained_dir):
    manifest = json.loads((trained_dir / "manifest.json").read_text())
    (trained_dir / "manifest.json").write_text(json.dumps(dict(manifest, kind="os.system")))
    with pytest.raises(DataError, match="unknown scorer kind 'os.system'"):
        model.load(trained_dir)

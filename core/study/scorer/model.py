"""Learned scorers: scikit-learn regression from a response's text to a score in [-1, 1].

Training (:func:`train`): a held-out split grouped by prompt (``GroupShuffleSplit``, fixed seed),
grouped k-fold cross-validation on the training part, a fit on the training part, and the held-out
metrics next to the human ceiling on the same test items. Predictions are clipped to [-1, 1].

Kinds (:data:`SCORER_KINDS`):

- ``tfidf-ridge`` (default): word 1–2-gram TF-IDF (sublinear tf) + ridge regression (α = 1).
- ``tfidf-wordchar-ridgecv``: word 1–2-gram and character 2–5-gram TF-IDF side by side, ridge with
  α chosen from 10⁻² … 10² by efficient leave-one-out on the training part.

A model folder holds ``model.json`` and ``manifest.json`` (format and version, kind, config,
seed, the training data's sha256, the split's item keys, held-out and cross-validation metrics,
the human ceiling, the scikit-learn version and the sha256 of ``model.json``). ``model.json`` is
data only: each vectorizer's terms (in column order) and idf weights, the regressor's coefficients,
intercept and alpha. Loading builds the pipeline of the manifest's kind from this module's code
(:data:`SCORER_KINDS`) and sets those fitted arrays on it, each checked (lengths, finite numbers):
nothing in a scorer folder is ever unpickled or executed, so a crafted folder can at worst score
badly. (Format 1 kept a joblib pickle, whose sha256 sat beside it where anyone could recompute it;
such a folder is refused with "retrain", never opened.)
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from core.base.errors import DataError, WorkbenchError
from core.base.files import atomic_dir, read_json, sha256_file, write_json_atomic
from core.base.registry import Registry
from core.study.scorer import metrics
from core.study.scorer.fast import compile_linear
from core.workspace import check_name

FORMAT = "scale-workbench-scorer"
FORMAT_VERSION = 2
MODEL_FILE, MANIFEST_FILE = "model.json", "manifest.json"
_DTYPES = ("float32", "float64")
DEFAULT_KIND, DEFAULT_SEED, DEFAULT_TEST_SIZE, DEFAULT_CV = "tfidf-ridge", 0, 0.25, 5


@dataclass(frozen=True)
class ScorerKind:
    """One kind of scorer: name, description and a factory of an unfitted pipeline."""

    name: str
    description: str
    build: Callable[[int], Any]
    config: dict[str, Any]


def _tfidf_ridge(seed: int) -> Any:
    # deferred: heavy optional import (scikit-learn, ~1 s), only needed when a scorer is built
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import Ridge
    from sklearn.pipeline import make_pipeline

    return make_pipeline(TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True, min_df=1, dtype=np.float32),
                         Ridge(alpha=1.0, random_state=seed))


def _tfidf_wordchar_ridgecv(seed: int) -> Any:
    # deferred: heavy optional import (scikit-learn, ~1 s), only needed when a scorer is built
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import RidgeCV
    from sklearn.pipeline import make_pipeline, make_union

    features = make_union(
        TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True, dtype=np.float32),
        TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 5), sublinear_tf=True, min_df=2, dtype=np.float32),
    )
    return make_pipeline(features, RidgeCV(alphas=np.logspace(-2, 2, 9)))


SCORER_KINDS: Registry[ScorerKind] = Registry("scorer kind")
SCORER_KINDS.add(ScorerKind("tfidf-ridge", "word 1-2-gram TF-IDF + ridge (alpha 1)", _tfidf_ridge,
                            {"ngram_range": [1, 2], "sublinear_tf": True, "alpha": 1.0}))
SCORER_KINDS.add(ScorerKind("tfidf-wordchar-ridgecv", "word 1-2-gram + char 2-5-gram TF-IDF + ridge, alpha by LOO",
                            _tfidf_wordchar_ridgecv,
                            {"word_ngram_range": [1, 2], "char_ngram_range": [2, 5], "alphas": "logspace(-2, 2, 9)"}))


def _drop_process_state(pipeline: Any) -> Any:
    """Delete what differs between processes from each vectorizer, so the same data and seed give
    the same model file bytes (and hash): ``stop_words_`` (the terms min_df pruned, a set kept for
    introspection only) and ``_stop_words_id`` (a memory address; scikit-learn recomputes it)."""
    for _, step in getattr(pipeline, "steps", []):
        for _, part in getattr(step, "transformer_list", [("", step)]):
            for name in ("stop_words_", "_stop_words_id"):
                if hasattr(part, name):
                    delattr(part, name)
    return pipeline


def predict_clipped(pipeline: Any, texts: list[str]) -> np.ndarray:
    """Predictions clipped to [-1, 1]."""
    if not texts:
        return np.zeros(0)
    return np.clip(np.asarray(pipeline.predict(texts), dtype=float), -1.0, 1.0)


def grouped_split(groups: list[str], *, test_size: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Train and test indices with no group on both sides (``GroupShuffleSplit``, seeded)."""
    # deferred: heavy optional import (scikit-learn, ~1 s), only needed when a scorer's data is split
    from sklearn.model_selection import GroupShuffleSplit

    if len(set(groups)) < 2:
        raise WorkbenchError("a held-out split needs items from at least 2 different prompts")
    splitter = GroupShuffleSplit(n_splits=1, test_size=test_size, random_state=seed)
    train_idx, test_idx = next(splitter.split(np.zeros(len(groups)), groups=groups))
    return np.sort(train_idx), np.sort(test_idx)


def cross_validate(kind: ScorerKind, texts: list[str], y: np.ndarray, groups: list[str], *, n_splits: int,
                   seed: int) -> dict[str, Any]:
    """Grouped k-fold CV (shuffled with ``seed``): per-fold MAE and Pearson, their means and sds."""
    # deferred: heavy optional import (scikit-learn, ~1 s), only needed when a scorer is cross-validated
    from sklearn.model_selection import GroupKFold

    k = min(n_splits, len(set(groups)))
    if k < 2:
        return {"folds": 0}
    folds = []
    for train_idx, test_idx in GroupKFold(n_splits=k, shuffle=True, random_state=seed).split(texts, y, groups):
        model = kind.build(seed).fit([texts[i] for i in train_idx], y[train_idx])
        pred = predict_clipped(model, [texts[i] for i in test_idx])
        folds.append({"n": len(test_idx), "mae": metrics.mean_absolute_error(y[test_idx], pred),
                      "pearson": metrics.pearson_score(y[test_idx], pred)})
    out: dict[str, Any] = {"folds": k, "per_fold": folds}
    for name in ("mae", "pearson"):
        values = np.array([f[name] for f in folds], dtype=float)
        out[f"{name}_mean"] = float(np.nanmean(values)) if np.isfinite(values).any() else float("nan")
        out[f"{name}_sd"] = float(np.nanstd(values, ddof=1)) if np.isfinite(values).sum() > 1 else float("nan")
    return out


@dataclass
class TrainedScorer:
    """A fitted pipeline and its manifest (before or after saving)."""

    pipeline: Any
    manifest: dict[str, Any]
    _fast: Any = None  # core.study.scorer.fast.FastLinear, compiled on first use (False: not applicable)

    @property
    def name(self) -> str:
        return str(self.manifest.get("name") or self.manifest["kind"])

    def predict(self, texts: list[str]) -> np.ndarray:
        """Scores in [-1, 1] (the vectorised path for linear TF-IDF pipelines, else scikit-learn)."""
        if self._fast is None:
            self._fast = compile_linear(self.pipeline) or False
        if self._fast is False or not texts:
            return predict_clipped(self.pipeline, texts)
        return np.clip(self._fast.predict(texts), -1.0, 1.0)


def train(examples: pl.DataFrame, ratings: pl.DataFrame, *, kind: str = DEFAULT_KIND, seed: int = DEFAULT_SEED,
          test_size: float = DEFAULT_TEST_SIZE, cv: int = DEFAULT_CV, project: str = "",
          minimum: int | None = None, created_at: datetime | None = None) -> TrainedScorer:
    """Fit a scorer on consensus examples (see :mod:`core.study.scorer.data`).

    Args:
        examples: item_id, key, group, text, target (one row per item).
        ratings: human ratings (item_id, rater, score; one per rater and item) for the ceiling.
        kind: a name in :data:`SCORER_KINDS`.
        minimum: refuse below this many examples (default :data:`core.study.scorer.data.MIN_TRAINING_ITEMS`).
        created_at: the time recorded in the manifest (default now; the demo passes a fixed one).
    """
    # deferred: heavy optional import (scikit-learn, ~1 s), only needed when a scorer is trained or its manifest read
    from sklearn import __version__ as sklearn_version

    # deferred: core.study.scorer.data pulls in sqlalchemy (~350 ms), only needed when train() runs
    from core.study.scorer.data import MIN_TRAINING_ITEMS, check_enough, data_hash

    spec = SCORER_KINDS[kind]
    if not 0 < test_size < 1:
        raise ValueError(f"test_size must lie in (0, 1), got {test_size!r}")
    check_enough(examples, project, MIN_TRAINING_ITEMS if minimum is None else minimum)
    examples = examples.sort("key")
    texts, groups = examples["text"].to_list(), examples["group"].to_list()
    y = examples["target"].to_numpy().astype(float)
    train_idx, test_idx = grouped_split(groups, test_size=test_size, seed=seed)
    tr_texts = [texts[i] for i in train_idx]
    cv_report = cross_validate(spec, tr_texts, y[train_idx], [groups[i] for i in train_idx], n_splits=cv, seed=seed)
    pipeline = _drop_process_state(spec.build(seed).fit(tr_texts, y[train_idx]))
    pred = predict_clipped(pipeline, [texts[i] for i in test_idx])
    held_out = metrics.agreement_report(y[test_idx], pred)
    test_ids = examples["item_id"].to_numpy()[test_idx].tolist()
    ceiling = metrics.human_ceiling(ratings, test_ids)
    manifest = {
        "format": FORMAT, "format_version": FORMAT_VERSION, "kind": kind, "description": spec.description,
        "config": {**spec.config, "seed": seed, "test_size": test_size, "cv_folds": cv, "text": "response_text",
                   "split": "GroupShuffleSplit by prompt", "target": "consensus in [-1, 1]"},
        "project": project, "training_data_sha256": data_hash(examples), "n_items": examples.height,
        "n_train": len(train_idx), "n_test": len(test_idx),
        "split": {"train": [examples["key"][int(i)] for i in train_idx],
                  "test": [examples["key"][int(i)] for i in test_idx]},
        "test_predictions": [round(float(p), 6) for p in pred],
        "metrics": held_out, "cv": cv_report, "human_ceiling": ceiling,
        "sklearn_version": sklearn_version, "created_at": (created_at or datetime.now(UTC)).isoformat(timespec="seconds"),
    }
    return TrainedScorer(pipeline, manifest)


def _vectorizers(pipeline: Any) -> list[Any]:
    """The TF-IDF vectorizers of a pipeline: its first step, or the parts of its feature union."""
    first = pipeline.steps[0][1]
    return [part for _, part in getattr(first, "transformer_list", [("", first)])]


def parameters(pipeline: Any) -> dict[str, Any]:
    """The fitted arrays of a pipeline as plain data (``model.json``): per vectorizer its terms in
    column order and its idf, and the regressor's coefficients, intercept (and alpha)."""
    reg = pipeline.steps[-1][1]
    out: dict[str, Any] = {"vectorizers": [], "regressor": {
        "coef": [float(x) for x in np.asarray(reg.coef_).ravel()], "dtype": str(np.asarray(reg.coef_).dtype),
        "intercept": float(reg.intercept_)}}
    if hasattr(reg, "alpha_"):
        out["regressor"]["alpha"] = float(reg.alpha_)
    for vec in _vectorizers(pipeline):
        terms = sorted(vec.vocabulary_, key=vec.vocabulary_.__getitem__)
        out["vectorizers"].append({"terms": terms, "idf": [float(x) for x in vec.idf_], "dtype": str(vec.idf_.dtype)})
    return out


def _floats(value: Any, n: int | None, dtype: Any, where: str, path: Path) -> np.ndarray:
    if not isinstance(value, list) or (n is not None and len(value) != n) or not all(
            isinstance(x, (int, float)) and not isinstance(x, bool) for x in value):
        raise DataError(f"expected a list of {n if n is not None else 'some'} numbers", path=path, field=where)
    if dtype not in _DTYPES:
        raise DataError(f"expected one of {', '.join(_DTYPES)}", path=path, field=where + " dtype")
    array = np.asarray(value, dtype=dtype)
    if not np.isfinite(array).all():
        raise DataError("expected finite numbers", path=path, field=where)
    return array


def rebuild(kind: str, seed: int, params: Any, path: Path) -> Any:
    """The pipeline of ``kind`` (built by this module's code) with the fitted arrays of ``params``
    (what :func:`parameters` wrote) set on it, each checked; a DataError names the bad field."""
    pipeline = SCORER_KINDS[kind].build(seed)
    vecs = _vectorizers(pipeline)
    given = params.get("vectorizers") if isinstance(params, dict) else None
    if not isinstance(given, list) or len(given) != len(vecs) or not all(isinstance(v, dict) for v in given):
        raise DataError(f"expected {len(vecs)} vectorizer(s) for a {kind} scorer", path=path, field="vectorizers")
    n_features = 0
    for i, (vec, raw) in enumerate(zip(vecs, given, strict=True)):
        terms = raw.get("terms")
        if not isinstance(terms, list) or not all(isinstance(t, str) for t in terms) or len(set(terms)) != len(terms):
            raise DataError("expected a list of distinct terms", path=path, field=f"vectorizers[{i}].terms")
        vec.vocabulary_ = {t: j for j, t in enumerate(terms)}
        vec.fixed_vocabulary_ = False
        vec.idf_ = _floats(raw.get("idf"), len(terms), raw.get("dtype"), f"vectorizers[{i}].idf", path)
        n_features += len(terms)
    reg, raw_reg = pipeline.steps[-1][1], params.get("regressor")
    if not isinstance(raw_reg, dict):
        raise DataError("expected an object", path=path, field="regressor")
    reg.coef_ = _floats(raw_reg.get("coef"), n_features, raw_reg.get("dtype"), "regressor.coef", path)
    reg.intercept_ = _floats([raw_reg.get("intercept")], 1, raw_reg.get("dtype"), "regressor.intercept", path)[0]
    reg.n_features_in_ = n_features
    if "alpha" in raw_reg:
        reg.alpha_ = float(_floats([raw_reg["alpha"]], 1, "float64", "regressor.alpha", path)[0])
    return pipeline


def save(scorer: TrainedScorer, model_dir: str | Path) -> Path:
    """Write the model folder atomically (a crash leaves the old folder or none). The folder name
    is checked like every name that becomes a path."""
    target = Path(model_dir)
    check_name("scorer model", target.name)
    if target.exists() and not (target / MANIFEST_FILE).is_file():
        raise WorkbenchError(f"{target} exists and is not a scorer folder; choose another --out")
    with atomic_dir(target) as tmp:
        write_json_atomic(tmp / MODEL_FILE, parameters(scorer.pipeline), indent=None)
        scorer.manifest["name"] = target.name
        scorer.manifest["files"] = {MODEL_FILE: sha256_file(tmp / MODEL_FILE)}
        write_json_atomic(tmp / MANIFEST_FILE, json_safe(scorer.manifest))
    return target


def read_manifest(model_dir: str | Path) -> dict[str, Any]:
    """The manifest of a model folder, its format and version checked (the model file is not read)."""
    # deferred: heavy optional import (scikit-learn, ~1 s), only needed when a scorer is trained or its manifest read
    from sklearn import __version__ as sklearn_version

    path = Path(model_dir) / MANIFEST_FILE
    if not path.is_file():
        raise WorkbenchError(f"{model_dir} is not a scorer folder: no {MANIFEST_FILE}")
    manifest = read_json(path)
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise WorkbenchError(f"{path}: not a scorer manifest (format {FORMAT!r} expected)")
    if manifest.get("format_version") != FORMAT_VERSION:
        raise WorkbenchError(f"{path}: scorer format version {manifest.get('format_version')!r}, this workbench reads "
                             f"version {FORMAT_VERSION} (format 1 kept a pickle, which is never loaded); retrain with "
                             "`python -m core scorer train`")
    if manifest.get("kind") not in SCORER_KINDS:
        raise DataError(f"unknown scorer kind {manifest.get('kind')!r}; valid: {', '.join(SCORER_KINDS.names())}",
                        path=path, field="kind")
    if manifest.get("sklearn_version") != sklearn_version:
        raise WorkbenchError(f"{path}: written with scikit-learn {manifest.get('sklearn_version')}, this is "
                             f"{sklearn_version}; retrain with `python -m core scorer train`")
    return manifest


def load(model_dir: str | Path) -> TrainedScorer:
    """Load a model folder: the manifest, then ``model.json``'s arrays set on a pipeline this
    module builds (:func:`rebuild`); nothing in the folder is unpickled or run."""
    manifest = read_manifest(model_dir)
    path = Path(model_dir) / MODEL_FILE
    expected = (manifest.get("files") or {}).get(MODEL_FILE)
    if not path.is_file() or not expected or sha256_file(path) != expected:
        raise WorkbenchError(f"{path}: missing or changed since it was written (its sha256 differs from the "
                             f"manifest's); retrain with `python -m core scorer train`")
    seed = (manifest.get("config") or {}).get("seed", DEFAULT_SEED)
    return TrainedScorer(rebuild(manifest["kind"], seed if isinstance(seed, int) else DEFAULT_SEED, read_json(path),
                                 path), manifest)


def json_safe(obj: Any) -> Any:
    """NaN/inf → None, numpy scalars → Python (strict JSON)."""
    if isinstance(obj, dict):
        return {k: json_safe(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [json_safe(v) for v in obj]
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float) and not np.isfinite(obj):
        return None
    return obj


def summary_line(manifest: dict[str, Any]) -> dict[str, Any]:
    """The figures ``scorer train``/``evaluate`` print: n_train, n_test, mae, rmse, pearson,
    spearman, ccc and the human ceiling on the same items."""
    m, c = manifest["metrics"], manifest["human_ceiling"]
    return {"kind": manifest["kind"], "n_train": manifest["n_train"], "n_test": manifest["n_test"],
            **{k: m.get(k) for k in ("mae", "rmse", "pearson", "spearman", "ccc")},
            "human_ceiling": {k: c.get(k) for k in ("n_items", "n_pairs", "mae", "rmse", "pearson", "spearman", "ccc")}}


def to_json(obj: Any) -> str:
    """Strict JSON text of ``obj``."""
    return json.dumps(json_safe(obj), indent=2, ensure_ascii=False)

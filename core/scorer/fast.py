"""A vectorised scoring path for linear TF-IDF scorers (``tfidf-ridge``), in polars.

A fitted ``TfidfVectorizer`` (word n-grams, l2 norm, idf, optional sublinear tf) followed by a
linear regressor scores a text as

    score = b + Σ_t w_t · v_t / sqrt(Σ_t v_t²),   v_t = tf'_t · idf_t,   tf' = 1 + ln tf (sublinear) or tf

over the text's n-grams t that are in the vocabulary. Written as polars expressions (Rust regex
tokenisation with scikit-learn's default token pattern, n-grams, a hash lookup of each n-gram's
vocabulary column) feeding one sparse matrix, this is several times faster than scikit-learn's
Python tokeniser. :func:`compile_linear` returns None for any pipeline it does not reproduce exactly
(other analyzers, tokenizers, stop words, accents, norms), which then goes through scikit-learn;
tests check both paths give the same scores.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

DEFAULT_TOKEN_PATTERN = r"(?u)\b\w\w+\b"


@dataclass(frozen=True)
class FastLinear:
    """The vocabulary (term → column), idf and weight per column, the intercept and the n-gram settings."""

    terms: pl.Series  # vocabulary terms
    columns: pl.Series  # their column numbers 0 … V-1
    idf: np.ndarray
    coef: np.ndarray
    intercept: float
    max_n: int
    sublinear: bool

    def columns_of(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """(text number, vocabulary column) of every in-vocabulary n-gram occurrence."""
        tokens = (pl.DataFrame({"doc": np.arange(len(texts), dtype=np.int64), "text": texts})
                  .select("doc", pl.col("text").str.to_lowercase().str.extract_all(r"\b\w\w+\b").alias("g"))
                  .explode("g").drop_nulls("g"))
        grams = tokens
        if self.max_n == 2:
            same_text = pl.col("doc") == pl.col("doc").shift(-1)
            bigrams = tokens.select("doc", pl.when(same_text).then(pl.col("g") + " " + pl.col("g").shift(-1)).alias("g"))
            grams = pl.concat([tokens, bigrams.drop_nulls("g")])
        found = grams.select("doc", pl.col("g").replace_strict(self.terms, self.columns, default=None,
                                                               return_dtype=pl.Int64).alias("col")).drop_nulls("col")
        return found["doc"].to_numpy(), found["col"].to_numpy()

    def predict(self, texts: list[str]) -> np.ndarray:
        """Unclipped scores, identical (to float rounding) to the pipeline's ``predict``."""
        import scipy.sparse as sp

        if not texts:
            return np.zeros(0)
        docs, cols = self.columns_of(texts)
        x = sp.csr_matrix((np.ones(len(docs)), (docs, cols)), shape=(len(texts), len(self.idf)))
        x.sum_duplicates()  # term counts
        x.data = ((np.log(x.data) + 1.0) if self.sublinear else x.data) * self.idf[x.indices]
        norms = np.sqrt(np.asarray(x.multiply(x).sum(axis=1)).ravel())
        return self.intercept + (x @ self.coef) / np.where(norms == 0, 1.0, norms)


def compile_linear(pipeline: Any) -> FastLinear | None:
    """The fast path of a ``TfidfVectorizer`` → linear model pipeline, or None when it does not apply."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    steps = getattr(pipeline, "steps", None)
    if not steps or len(steps) != 2:
        return None
    vec, reg = steps[0][1], steps[1][1]
    plain = (isinstance(vec, TfidfVectorizer) and vec.analyzer == "word" and vec.lowercase
             and vec.token_pattern == DEFAULT_TOKEN_PATTERN and vec.tokenizer is None and vec.preprocessor is None
             and vec.stop_words is None and vec.strip_accents is None and vec.norm == "l2" and vec.use_idf
             and tuple(vec.ngram_range) in ((1, 1), (1, 2)) and vec.vocabulary is None and not vec.binary)
    coef = getattr(reg, "coef_", None)
    if not plain or coef is None or np.ndim(coef) != 1 or not hasattr(reg, "intercept_"):
        return None
    terms = list(vec.vocabulary_)
    columns = np.fromiter((vec.vocabulary_[t] for t in terms), dtype=np.int64, count=len(terms))
    return FastLinear(pl.Series(terms, dtype=pl.String), pl.Series(columns), vec.idf_.astype(np.float64),
                      np.asarray(coef, dtype=np.float64), float(reg.intercept_), int(vec.ngram_range[1]),
                      bool(vec.sublinear_tf))

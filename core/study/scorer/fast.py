"""A vectorised scoring path for linear TF-IDF scorers (``tfidf-ridge``), in polars.

A fitted ``TfidfVectorizer`` (word n-grams, l2 norm, idf, optional sublinear tf) followed by a
linear regressor scores a text as

    score = b + Σ_t w_t · v_t / sqrt(Σ_t v_t²),   v_t = tf'_t · idf_t,   tf' = 1 + ln tf (sublinear) or tf

over the text's n-grams t that are in the vocabulary. Written as polars expressions (Rust regex
tokenisation with scikit-learn's default token pattern, a hash lookup of each word's number, bigrams
as integer pairs of adjacent known words) feeding one sparse matrix, this is several times faster than scikit-learn's
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
    """Unigrams (word → number), bigram keys (two word numbers → column), idf and weight per
    column, the intercept and the tf setting."""

    words: pl.Series  # the vocabulary's unigrams
    word_numbers: pl.Series  # 0 … U-1
    word_columns: np.ndarray  # column of unigram u
    bigram_keys: pl.Series  # u1 · U + u2 of each vocabulary bigram
    bigram_columns: pl.Series
    idf: np.ndarray
    coef: np.ndarray
    intercept: float
    sublinear: bool

    def columns_of(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """(text number, vocabulary column) of every in-vocabulary n-gram occurrence."""
        n_words = len(self.words)
        tokens = (pl.DataFrame({"doc": np.arange(len(texts), dtype=np.int64), "text": texts})
                  .select("doc", pl.col("text").str.to_lowercase().str.extract_all(r"\b\w\w+\b").alias("g"))
                  .explode("g").drop_nulls("g")
                  .select("doc", pl.col("g").replace_strict(self.words, self.word_numbers, default=-1,
                                                            return_dtype=pl.Int64).alias("u")))
        known = tokens.filter(pl.col("u") >= 0)
        docs, cols = [known["doc"].to_numpy()], [self.word_columns[known["u"].to_numpy()]]
        if len(self.bigram_keys):
            pairs = (
                tokens.with_columns(pl.col("u").shift(-1).alias("v"), pl.col("doc").shift(-1).alias("next_doc"))
                .filter((pl.col("doc") == pl.col("next_doc")) & (pl.col("u") >= 0) & (pl.col("v") >= 0))
                .select("doc", (pl.col("u") * n_words + pl.col("v")).replace_strict(
                    self.bigram_keys, self.bigram_columns, default=None, return_dtype=pl.Int64).alias("col"))
                .drop_nulls("col"))
            docs.append(pairs["doc"].to_numpy())
            cols.append(pairs["col"].to_numpy())
        return np.concatenate(docs), np.concatenate(cols)

    def predict(self, texts: list[str]) -> np.ndarray:
        """Unclipped scores, identical (to float rounding) to the pipeline's ``predict``."""
        # deferred: heavy optional import (scipy.sparse, ~150 ms), only needed when a scorer predicts
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
    # deferred: heavy optional import (scikit-learn, ~1 s), only needed when a scorer is compiled
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
    # Bigrams are looked up by their two words' numbers, so every bigram's words must be unigrams of
    # the vocabulary: true unless max_df or max_features pruned a word but kept a bigram with it.
    words = {t: c for t, c in vec.vocabulary_.items() if " " not in t}
    number = {w: i for i, w in enumerate(words)}
    keys, columns = [], []
    for term, column in vec.vocabulary_.items():
        if " " in term:
            first, second = term.split(" ")
            if first not in number or second not in number:
                return None
            keys.append(number[first] * len(words) + number[second])
            columns.append(column)
    return FastLinear(pl.Series(list(words), dtype=pl.String), pl.Series(np.arange(len(words), dtype=np.int64)),
                      np.fromiter(words.values(), dtype=np.int64, count=len(words)),
                      pl.Series(keys, dtype=pl.Int64), pl.Series(columns, dtype=pl.Int64),
                      vec.idf_.astype(np.float64), np.asarray(coef, dtype=np.float64), float(reg.intercept_),
                      bool(vec.sublinear_tf))

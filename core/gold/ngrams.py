"""Character n-gram counts of many texts at once, vectorised with numpy.

The same counts as scikit-learn's ``CountVectorizer(analyzer="char_wb", lowercase=True)``, whose
n-gram extraction is a Python loop (about 20 s for 10,000 answer pairs on this machine's cores),
computed over one array of code points instead. ``char_wb`` pads each whitespace-separated word
with one space and takes the n-grams inside it; in the text ``" w1 w2 "`` (words joined by single
spaces and padded) those are exactly the windows with no space strictly inside them. Each n-gram
is encoded as an exact integer (its characters' ranks in the alphabet of the texts, base
alphabet size + 1, so there are no collisions), given a column by hashing (``pandas.factorize``,
no sort) and counted by scipy's summing of duplicate entries.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp

SENTINEL = "\x00"  # separates documents; no window may contain it
CHUNK_DOCS = 512


def char_wb_counts(texts: Sequence[str], ngrams: tuple[int, int]) -> tuple[sp.csr_matrix, np.ndarray] | None:
    """(documents × n-gram counts as CSR, the n-gram code of each column), or None when the
    alphabet is too large for exact 64-bit codes (the caller then uses scikit-learn's analyzer).

    >>> counts, codes = char_wb_counts(["ab", "b"], (3, 3))
    >>> counts.toarray().tolist()  # columns in order of first appearance: ' ab', 'ab ', ' b '
    [[1.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    """
    import pandas as pd

    lo, hi = ngrams
    if lo < 3:
        raise ValueError(f"char_wb_counts needs n-grams of at least 3 characters, got {lo}")
    docs = [(" " + " ".join(t.lower().split()) + " ") if t.split() else "" for t in texts]
    joined = SENTINEL.join(docs) + SENTINEL
    points = np.frombuffer(joined.encode("utf-32-le"), dtype=np.uint32)
    present = np.zeros(int(points.max()) + 1 if len(points) else 1, dtype=bool)
    present[points] = True
    base = int(present.sum()) + 1
    if base ** hi >= 2 ** 62:
        return None
    rank = np.cumsum(present)  # 1..base-1 for the characters present: lengths never collide
    lengths = np.array([len(d) + 1 for d in docs], dtype=np.int64)  # + the sentinel
    doc_start = np.concatenate([[0], np.cumsum(lengths)])
    all_codes, all_docs = [], []
    for first in range(0, len(docs), CHUNK_DOCS):  # chunks of documents keep the arrays in cache
        last = min(first + CHUNK_DOCS, len(docs))
        chunk = points[int(doc_start[first]):int(doc_start[last])]
        size = len(chunk)
        digits = rank[chunk].astype(np.int64)
        space_cum = np.concatenate([[0], np.cumsum(chunk == ord(" "), dtype=np.int32)])
        sentinel_cum = np.concatenate([[0], np.cumsum(chunk == ord(SENTINEL), dtype=np.int32)])
        doc_of = np.repeat(np.arange(first, last, dtype=np.int64), lengths[first:last])
        code = np.zeros(size, dtype=np.int64)
        for n in range(1, hi + 1):  # code of the n-gram starting at each position, built by slices
            code = code[: size - n + 1] * base + digits[n - 1:]
            if n < lo:
                continue
            windows = size - n + 1
            ok = (space_cum[n - 1:n - 1 + windows] == space_cum[1:1 + windows]) & (
                sentinel_cum[n:n + windows] == sentinel_cum[:windows])
            all_codes.append(code[ok])
            all_docs.append(doc_of[:windows][ok])
    codes = np.concatenate(all_codes) if all_codes else np.zeros(0, dtype=np.int64)
    doc_ids = np.concatenate(all_docs) if all_docs else np.zeros(0, dtype=np.int64)
    order = np.argsort(doc_ids, kind="stable")  # rows in order (radix sort of small integers)
    codes, doc_ids = codes[order], doc_ids[order]
    cols, vocab = pd.factorize(codes, sort=False)
    n_vocab = max(len(vocab), 1)
    pair_labels, pairs = pd.factorize(doc_ids * n_vocab + cols, sort=False)  # first appearance: rows stay sorted
    counts = np.bincount(pair_labels, minlength=len(pairs)).astype(np.float64)
    rows, pair_cols = np.divmod(np.asarray(pairs), n_vocab)
    indptr = np.searchsorted(rows, np.arange(len(texts) + 1))
    matrix = sp.csr_matrix((counts, pair_cols, indptr), shape=(len(texts), len(vocab)))
    return matrix, np.asarray(vocab)

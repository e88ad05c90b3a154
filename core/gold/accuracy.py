"""Accuracy methods of SPEC §8: semantic similarity of an answer to the expected output, in [0, 1].

One registry (:data:`ACCURACY_METHODS`); each method scores a whole set at once:
``method.fn(predicted, expected, context) -> AccuracyResult``.

* ``jaccard``: lower-cased whitespace token sets, |A∩B| / |A∪B| (0 when either is empty),
  exactly the reference harness's ``simple_semantic_similarity``.
* ``tfidf`` (default): cosine of TF-IDF vectors of character n-grams (3–4 within word bounds,
  sublinear tf), which work for Norwegian compounds and inflections. The vocabulary and IDF are
  fitted on the set's expected outputs, so an answer's score depends on the set only, never on
  the other answers being scored.
* ``embedding``: cosine of embeddings from an OpenAI-compatible ``/embeddings`` endpoint, or of a
  local sentence-transformers model (``local:NAME``) when that package is installed; negative
  cosines count as 0.
* ``llm-judge``: a model grades semantic equivalence against a rubric through :mod:`core.llm`
  (cached), answering ``{score, reasoning}``; the reasoning is kept on the sample.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from core.base.errors import WorkbenchError
from core.base.progress import Progress, no_progress
from core.base.registry import Registry
from core.base.settings import env
from core.llm import describe_error, parse_json_content

DEFAULT_EMBEDDING_MODEL = "text-embedding-3-small"
DEFAULT_JUDGE_MODEL = "gpt-4o-mini"
EMBED_BATCH = 128
TFIDF_NGRAMS = (3, 4)


@dataclass
class AccuracyContext:
    """What a method may need beyond the two texts: questions, the set's expected outputs, clients."""

    questions: Sequence[str] = ()
    reference: Sequence[str] | None = None  # the set's expected outputs (tfidf's fit); default: expected
    llm: Any = None  # core.llm.SyncLLM for llm-judge
    embedder: Any = None  # an Embedder for embedding
    progress: Progress = no_progress


@dataclass
class AccuracyResult:
    """Scores in [0, 1] per answer, with the judge's reasoning and any error per answer."""

    scores: list[float]
    reasoning: list[str | None] = field(default_factory=list)
    errors: list[str | None] = field(default_factory=list)

    def __post_init__(self) -> None:
        n = len(self.scores)
        self.reasoning = self.reasoning or [None] * n
        self.errors = self.errors or [None] * n


@dataclass(frozen=True)
class AccuracyMethod:
    """One registered accuracy method."""

    name: str
    description: str
    fn: Callable[[Sequence[str], Sequence[str], AccuracyContext], AccuracyResult]
    needs: str = "nothing"  # "nothing", "embeddings" or "llm"


ACCURACY_METHODS: Registry[AccuracyMethod] = Registry("accuracy method")


def _check_pairs(predicted: Sequence[str], expected: Sequence[str]) -> None:
    if len(predicted) != len(expected):
        raise ValueError(f"predicted and expected differ in length: {len(predicted)} != {len(expected)}")


# --- jaccard --------------------------------------------------------------------------------------

def jaccard_similarity(predicted: str, expected: str) -> float:
    """|A∩B| / |A∪B| of the lower-cased whitespace token sets; 0.0 when either is empty.

    >>> jaccard_similarity("Konto 1500 er kundefordringer", "kundefordringer er konto 1500")
    1.0
    >>> jaccard_similarity("a b c", "b c d")  # {b, c} / {a, b, c, d}
    0.5
    >>> jaccard_similarity("", "a")
    0.0
    """
    a, b = set(predicted.lower().split()), set(expected.lower().split())
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)


def _jaccard(predicted: Sequence[str], expected: Sequence[str], ctx: AccuracyContext) -> AccuracyResult:
    _check_pairs(predicted, expected)
    return AccuracyResult([jaccard_similarity(p, e) for p, e in zip(predicted, expected, strict=True)])


# --- tfidf ----------------------------------------------------------------------------------------

def tfidf_vectorizer() -> Any:
    """The unfitted scikit-learn vectorizer ``tfidf`` uses (char_wb 3–4-grams, sublinear tf, L2)."""
    # deferred: heavy optional import (scikit-learn, ~1 s), only needed when the tfidf accuracy is computed
    from sklearn.feature_extraction.text import TfidfVectorizer

    return TfidfVectorizer(analyzer="char_wb", ngram_range=TFIDF_NGRAMS, lowercase=True, sublinear_tf=True,
                           norm="l2", dtype=np.float64)


def tfidf_similarity(predicted: Sequence[str], expected: Sequence[str], *,
                     fit_on: Sequence[str] | None = None) -> np.ndarray:
    """Row-wise cosine of char n-gram TF-IDF vectors, fitted on ``fit_on`` (default ``expected``).

    The counts are :func:`core.gold.ngrams.char_wb_counts` (scikit-learn's ``char_wb`` n-grams,
    vectorised); scikit-learn's ``TfidfTransformer`` fitted on the corpus gives the weights
    (smooth IDF, sublinear tf, L2 rows), and n-grams outside the corpus's vocabulary are dropped,
    exactly as ``tfidf_vectorizer().fit(corpus)`` would. Rows are L2-normalised, so the cosine is
    the sum of the element-wise product of the two rows.

    >>> s = tfidf_similarity(["Kundefordringer føres på konto 1500.", "Helt annet"],
    ...                      ["Kundefordringer føres på konto 1500.", "Konto 1500 er kundefordringer."])
    >>> round(float(s[0]), 6), bool(s[1] < 0.2)
    (1.0, True)
    """
    # deferred: heavy optional import (scikit-learn, ~1 s), only needed when the tfidf accuracy is computed
    from sklearn.feature_extraction.text import TfidfTransformer

    # deferred: core.gold.ngrams pulls in scipy (~200 ms), only needed when tfidf_similarity() runs
    from core.gold.ngrams import char_wb_counts

    _check_pairs(predicted, expected)
    if not predicted:
        return np.zeros(0)
    corpus = [t for t in (fit_on if fit_on is not None else expected) if t.strip()]
    if not corpus:
        return np.zeros(len(predicted))
    n = len(predicted)
    texts = [*predicted, *expected, *(corpus if fit_on is not None else ())]
    fit_rows = (range(2 * n, len(texts)) if fit_on is not None
                else [n + i for i, t in enumerate(expected) if t.strip()])
    built = char_wb_counts(texts, TFIDF_NGRAMS, vocab_rows=fit_rows)
    if built is None:  # an alphabet too large for exact codes: scikit-learn's own analyzer
        vec = tfidf_vectorizer().fit(corpus)
        p, e = vec.transform(predicted), vec.transform(expected)
    else:
        counts = built[0]  # columns: the corpus's n-grams (its vocabulary), as a fitted CountVectorizer
        transformer = TfidfTransformer(sublinear_tf=True, norm="l2", smooth_idf=True).fit(counts[list(fit_rows)])
        p, e = transformer.transform(counts[:n]), transformer.transform(counts[n:2 * n])
    sims = np.asarray(p.multiply(e).sum(axis=1)).ravel()
    return np.clip(np.round(sims, 12), 0.0, 1.0)  # identical texts: 1.0, not 0.9999999999999987


def tfidf_similarity_sklearn(predicted: Sequence[str], expected: Sequence[str], *,
                             fit_on: Sequence[str] | None = None) -> np.ndarray:
    """The same scores with scikit-learn's ``TfidfVectorizer`` end to end (its Python analyzer; slower)."""
    _check_pairs(predicted, expected)
    corpus = [t for t in (fit_on if fit_on is not None else expected) if t.strip()]
    if not predicted or not corpus:
        return np.zeros(len(predicted))
    vec = tfidf_vectorizer().fit(corpus)
    sims = np.asarray(vec.transform(predicted).multiply(vec.transform(expected)).sum(axis=1)).ravel()
    return np.clip(np.round(sims, 12), 0.0, 1.0)


def char_wb_ngrams(text: str, ngrams: tuple[int, int] = TFIDF_NGRAMS) -> list[str]:
    """scikit-learn's ``char_wb`` n-grams of lower-cased ``text``, in plain Python.

    >>> char_wb_ngrams("NS 41", (3, 3))
    [' ns', 'ns ', ' 41', '41 ']
    """
    lo, hi = ngrams
    out: list[str] = []
    for word in " ".join(text.lower().split()).split():
        w = f" {word} "
        for n in range(lo, hi + 1):
            offset = 0
            out.append(w[offset:offset + n])
            while offset + n < len(w):
                offset += 1
                out.append(w[offset:offset + n])
            if offset == 0:  # a word shorter than n counts once
                break
    return out


def tfidf_similarity_python(predicted: Sequence[str], expected: Sequence[str], *,
                            fit_on: Sequence[str] | None = None) -> list[float]:
    """The same scores as :func:`tfidf_similarity`, computed with dicts in a plain loop.

    The slow reference of the tests and the baseline of ``bench/gold.py``: smooth IDF
    ``ln((1 + n) / (1 + df)) + 1`` over ``fit_on``, sublinear tf ``1 + ln(tf)``, L2 norm, dot product.
    """
    corpus = [t for t in (fit_on if fit_on is not None else expected) if t.strip()]
    df: Counter[str] = Counter()
    for text in corpus:
        df.update(set(char_wb_ngrams(text)))
    idf = {g: math.log((1 + len(corpus)) / (1 + d)) + 1 for g, d in df.items()}

    def vector(text: str) -> dict[str, float]:
        v = {g: (1 + math.log(c)) * idf[g] for g, c in Counter(char_wb_ngrams(text)).items() if g in idf}
        norm = math.sqrt(sum(x * x for x in v.values()))
        return {g: x / norm for g, x in v.items()} if norm else {}

    out = []
    for p, e in zip(predicted, expected, strict=True):
        vp, ve = vector(p), vector(e)
        out.append(min(1.0, max(0.0, round(sum(x * ve.get(g, 0.0) for g, x in vp.items()), 12))))
    return out


def _tfidf(predicted: Sequence[str], expected: Sequence[str], ctx: AccuracyContext) -> AccuracyResult:
    sims = tfidf_similarity(predicted, expected, fit_on=ctx.reference)
    return AccuracyResult([float(s) for s in sims])


# --- embedding ------------------------------------------------------------------------------------

class OpenAIEmbedder:
    """Embeddings from an OpenAI-compatible endpoint, in batches, through
    :meth:`core.llm.AsyncLLM.embed`: the one embedding call of the workbench (rag runs use it too),
    with its retry policy, cost count and response-cache key.

    With a ``cache`` (:class:`core.llm.ResponseCache`) every batch's vectors are stored as soon as
    they arrive: a scoring killed half-way, or run again, pays for no batch twice. ``client`` is an
    ``openai`` client (sync or async) for a given endpoint; None: the configured endpoint.
    """

    def __init__(self, client: Any, model: str, cache: Any = None) -> None:
        self.client, self.model, self.cache = client, model, cache

    def _async_client(self) -> Any:
        if self.client is None:
            return None
        import openai  # an endpoint is called: the client is loaded anyway

        if isinstance(self.client, openai.AsyncOpenAI):
            return self.client
        return openai.AsyncOpenAI(base_url=str(self.client.base_url), api_key=self.client.api_key,
                                  timeout=self.client.timeout, max_retries=0)

    async def _embed(self, texts: Sequence[str], progress: Progress) -> list[list[float]]:
        from core.llm import AsyncLLM  # core.llm loads the openai client: only when an endpoint is used

        client = self._async_client()
        llm = AsyncLLM(self.model, cache=self.cache, client=client)
        rows: list[list[float]] = []
        try:
            for start in range(0, len(texts), EMBED_BATCH):
                chunk = [t if t.strip() else " " for t in texts[start:start + EMBED_BATCH]]
                rows.extend(await llm.embed(chunk, self.model))
                progress(min(start + EMBED_BATCH, len(texts)), len(texts), "embeddings")
        finally:
            if client is not self.client:  # made here: closed here; a caller's async client stays theirs
                await llm.aclose()
        return rows

    def embed(self, texts: Sequence[str], progress: Progress = no_progress) -> np.ndarray:
        return np.asarray(asyncio.run(self._embed(texts, progress)), dtype=np.float64)


class LocalEmbedder:
    """A local sentence-transformers model (only when that package is installed)."""

    def __init__(self, name: str) -> None:
        try:
            from sentence_transformers import SentenceTransformer  # type: ignore[import-not-found]
        except ImportError:
            raise WorkbenchError(
                f"local embedding model {name!r} needs the sentence-transformers package, which is not installed; "
                "use an OpenAI-compatible endpoint (--accuracy-model MODEL) instead"
            ) from None
        self.model = SentenceTransformer(name)

    def embed(self, texts: Sequence[str], progress: Progress = no_progress) -> np.ndarray:
        out = np.asarray(self.model.encode(list(texts), batch_size=32), dtype=np.float64)
        progress(len(texts), len(texts), "embeddings")
        return out


def make_embedder(model: str | None = None, *, client: Any = None, cache: Any = None) -> Any:
    """``local:NAME`` → :class:`LocalEmbedder`; else an endpoint model (default ``$WORKBENCH_EMBEDDING_MODEL``)
    whose answers go to ``cache`` (a :class:`core.llm.ResponseCache`, None: not kept)."""
    name = model or env("WORKBENCH_EMBEDDING_MODEL", DEFAULT_EMBEDDING_MODEL) or DEFAULT_EMBEDDING_MODEL
    if name.startswith("local:"):
        return LocalEmbedder(name.removeprefix("local:"))
    return OpenAIEmbedder(client, name, cache)


def cosine_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cosine of two matrices; 0 for a zero row.

    >>> cosine_rows(np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 0.0]]), np.array([[2.0, 0.0], [1.0, 0.0], [1.0, 0.0]]))
    array([1.        , 0.70710678, 0.        ])
    """
    na, nb = np.linalg.norm(a, axis=1), np.linalg.norm(b, axis=1)
    denom = na * nb
    dots = np.einsum("ij,ij->i", a, b)
    return np.divide(dots, denom, out=np.zeros_like(dots), where=denom > 0)


def _embedding(predicted: Sequence[str], expected: Sequence[str], ctx: AccuracyContext) -> AccuracyResult:
    _check_pairs(predicted, expected)
    if ctx.embedder is None:
        raise WorkbenchError("the embedding method needs an embedding model (--accuracy-model)")
    if not predicted:
        return AccuracyResult([])
    vectors = ctx.embedder.embed([*predicted, *expected], ctx.progress)
    sims = cosine_rows(vectors[: len(predicted)], vectors[len(predicted):])
    scores = [0.0 if not p.strip() else float(min(1.0, max(0.0, s))) for p, s in zip(predicted, sims, strict=True)]
    return AccuracyResult(scores)


# --- llm-judge ------------------------------------------------------------------------------------

JUDGE_RUBRIC = """You grade an answer to a question against a reference answer written by an expert.
Judge semantic equivalence only: the same facts, conditions, numbers and legal references, in any wording or language.
Score from 0 to 1:
1.0 = says the same as the reference (wording may differ);
0.7-0.99 = the main points, with small omissions or extra details that are correct;
0.4-0.69 = related but misses key information or is partly wrong;
0.0-0.39 = wrong, irrelevant or empty.
Ignore style and length. Answer in JSON: {"score": number, "reasoning": "one or two sentences"}."""

JUDGE_SCHEMA = {
    "type": "json_schema",
    "json_schema": {
        "name": "gold_accuracy",
        "strict": True,
        "schema": {
            "type": "object",
            "properties": {"score": {"type": "number"}, "reasoning": {"type": "string"}},
            "required": ["score", "reasoning"],
            "additionalProperties": False,
        },
    },
}


def judge_messages(question: str, expected: str, predicted: str) -> list[dict[str, str]]:
    """The judge's request: the rubric as system message; question, reference and answer as user message."""
    user = f"Question:\n{question}\n\nReference answer:\n{expected}\n\nAnswer to grade:\n{predicted}"
    return [{"role": "system", "content": JUDGE_RUBRIC}, {"role": "user", "content": user}]


def parse_judge_answer(content: str) -> tuple[float, str]:
    """(score clipped to [0, 1], reasoning) from the judge's JSON; ValueError when malformed.

    >>> parse_judge_answer('{"score": 1.3, "reasoning": "same"}')
    (1.0, 'same')
    """
    data, error = parse_json_content(content)
    if error is not None:
        raise ValueError(error)
    if not isinstance(data, dict) or isinstance(data.get("score"), bool) or not isinstance(data.get("score"), (int, float)):
        raise ValueError(f"expected {{score: number, reasoning: string}}, got {json.dumps(data)[:80]}")
    return float(min(1.0, max(0.0, data["score"]))), str(data.get("reasoning") or "")


def _llm_judge(predicted: Sequence[str], expected: Sequence[str], ctx: AccuracyContext) -> AccuracyResult:
    _check_pairs(predicted, expected)
    if ctx.llm is None:
        raise WorkbenchError("the llm-judge method needs a judge model (--accuracy-model)")
    questions = list(ctx.questions) or [""] * len(predicted)
    result = AccuracyResult([0.0] * len(predicted))
    for i, (p, e) in enumerate(zip(predicted, expected, strict=True)):
        try:
            completion = ctx.llm.complete(judge_messages(questions[i], e, p), response_format=JUDGE_SCHEMA)
            result.scores[i], result.reasoning[i] = parse_judge_answer(completion.content)
        except ValueError as exc:
            result.errors[i] = f"judge answer unusable: {exc}"
        except Exception as exc:  # noqa: BLE001 - an API failure is recorded on its sample
            result.errors[i] = f"judge failed: {describe_error(exc)}"
        ctx.progress(i + 1, len(predicted), "judged")
    return result


ACCURACY_METHODS.add(AccuracyMethod(
    "jaccard", "word-set overlap |A∩B|/|A∪B| of lower-cased whitespace tokens (the reference harness)", _jaccard))
ACCURACY_METHODS.add(AccuracyMethod(
    "tfidf", "cosine of character 3-4-gram TF-IDF vectors fitted on the set's expected answers (default)", _tfidf))
ACCURACY_METHODS.add(AccuracyMethod(
    "embedding", "cosine of embeddings (OpenAI-compatible endpoint, or local:NAME sentence-transformers)",
    _embedding, needs="embeddings"))
ACCURACY_METHODS.add(AccuracyMethod(
    "llm-judge", "a model grades semantic equivalence against a rubric and gives its reasoning", _llm_judge,
    needs="llm"))

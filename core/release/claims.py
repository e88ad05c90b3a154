"""Claims that check themselves: a short statement with its inputs pinned, and its encoding.

A claim is a JSON object (format version :data:`CLAIM_VERSION`)::

    {"v": 1, "kind": "paired" | "score" | "gt",
     "metric": "ordinal_auprc" | "process_score" | "consistency_score" | "accuracy",   (paired, score)
     "runs": [RUN_ID, ...],            paired: [baseline, run]; score: [run]
     "dataset", "task", "definition", "k",
     "figure": {...},                  paired: {difference, low, high, n_common}; score: {value, low, high, total};
                                       gt: {counts: {verdict: n}, total}
     "n_boot", "seed",                 paired: the resampling that made the interval
     "inputs": {"runs": {RUN_ID: answers sha256}, "gt": {version, sha256, dataset_sha256,
                "definition_sha256", "judge", "n_overrides"}}}

It travels as base64url (no padding) of its compact JSON, in a link ``/results?claim=…`` or alone.
:func:`decode` takes the token, the link, or a Markdown text holding the link. ``claim check``
(:mod:`core.release.claim_check`) recomputes the figure from the workspace.
"""

from __future__ import annotations

import base64
import binascii
import re
import urllib.parse
from collections.abc import Mapping
from typing import Any

import orjson

from core.base.errors import WorkbenchError
from core.workspace import check_name

CLAIM_VERSION = 1
KINDS = ("paired", "score", "gt")
METRICS = ("ordinal_auprc", "process_score", "consistency_score", "accuracy")
METRIC_WORDS = {"ordinal_auprc": "ordinal AUPRC", "process_score": "process score",
                "consistency_score": "consistency score", "accuracy": "accuracy"}
PERCENT_METRICS = ("process_score", "consistency_score")  # 0–100; the others are shares 0–1
MAX_TOKEN = 16_000
_TOKEN = re.compile(r"claim=([A-Za-z0-9_-]+)")


def encode(claim: Mapping[str, Any]) -> str:
    """base64url (no padding) of the claim's compact JSON, keys sorted."""
    raw = orjson.dumps(dict(claim), option=orjson.OPT_SORT_KEYS)
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def _token(text: str) -> str:
    text = text.strip()
    found = _TOKEN.findall(text)
    if found:
        return found[-1]
    if "?" in text:
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(text).query)
        if query.get("claim"):
            return query["claim"][0]
    return text


def decode(text: str) -> dict[str, Any]:
    """The claim in a token, a link with ``claim=``, or a Markdown text holding such a link.

    >>> c = {"v": 1, "kind": "gt", "dataset": "demo", "task": "G1a", "definition": "v1", "k": 25,
    ...      "figure": {"counts": {"Low Risk": 3}, "total": 3}, "inputs": {"gt": {}}}
    >>> decode("see [the claim](https://x.org/results?claim=" + encode(c) + ")") == c
    True
    """
    token = _token(text)
    if not token or len(token) > MAX_TOKEN or not re.fullmatch(r"[A-Za-z0-9_-]+", token):
        raise WorkbenchError("not a claim: expected a claim token or a link with claim=…")
    try:
        data = orjson.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
    except (binascii.Error, ValueError, orjson.JSONDecodeError):
        raise WorkbenchError("not a claim: the token is not base64url of a JSON object") from None
    return validate(data)


def _need(data: Mapping[str, Any], key: str, kind: type | tuple[type, ...]) -> Any:
    value = data.get(key)
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        raise WorkbenchError(f"claim: field {key!r} is missing or of the wrong type")
    return value


def validate(data: Any) -> dict[str, Any]:
    """The claim if it is one this version reads (names checked), else a WorkbenchError naming the field."""
    if not isinstance(data, dict):
        raise WorkbenchError("not a claim: expected a JSON object")
    if data.get("v") != CLAIM_VERSION:
        raise WorkbenchError(f"claim: format version {data.get('v')!r} is not one this workbench reads ({CLAIM_VERSION})")
    kind = _need(data, "kind", str)
    if kind not in KINDS:
        raise WorkbenchError(f"claim: field 'kind' must be one of {', '.join(KINDS)}, not {kind!r}")
    _need(data, "figure", dict)
    _need(data, "inputs", dict)
    check_name("dataset", _need(data, "dataset", str))
    check_name("task", _need(data, "task", str))
    if kind == "gt":
        _need(data, "definition", str)
        if data.get("k") is not None:
            _need(data, "k", int)
        return data
    if _need(data, "metric", str) not in METRICS:
        raise WorkbenchError(f"claim: field 'metric' must be one of {', '.join(METRICS)}")
    runs = _need(data, "runs", list)
    if len(runs) != (2 if kind == "paired" else 1):
        raise WorkbenchError(f"claim: a {kind} claim names {2 if kind == 'paired' else 1} run(s)")
    for r in runs:
        check_name("run", r)
    return data


def number(metric: str, value: float | None) -> str:
    """A metric's value as a claim writes it: shares with 2 decimals, percentages with 1.

    >>> number("ordinal_auprc", 0.1234), number("process_score", 81.26), number("accuracy", None)
    ('0.12', '81.3', 'N/A')
    """
    if value is None:
        return "N/A"
    return f"{value:.1f}" if metric in PERCENT_METRICS else f"{value:.2f}"


def _interval(metric: str, low: float | None, high: float | None) -> str:
    return f"[{number(metric, low)}, {number(metric, high)}]"


def _k(k: Any) -> str:
    return "all reviews" if k is None else f"K={k}"


def figure_text(claim: Mapping[str, Any], figure: Mapping[str, Any] | None = None) -> str:
    """The claim's figure (or another figure of the same claim, e.g. recomputed) in words."""
    f = figure if figure is not None else claim["figure"]
    kind = claim["kind"]
    if kind == "gt":
        counts = f.get("counts") or {}
        return ", ".join(f"{n} {v}" for v, n in counts.items()) + f" of {f.get('total')}"
    metric = claim["metric"]
    if kind == "score":
        return f"{number(metric, f.get('value'))} {METRIC_WORDS[metric]} {_interval(metric, f.get('low'), f.get('high'))}"
    diff = f.get("difference")
    sign = "+" if diff is not None and diff >= 0 else ""
    return f"{sign}{number(metric, diff)} {METRIC_WORDS[metric]} {_interval(metric, f.get('low'), f.get('high'))}"


def statement(claim: Mapping[str, Any]) -> str:
    """The claim in one sentence with its pinned inputs, e.g. "amos (demo-amos-K25) beats direct
    (demo-direct-K25) by 0.12 ordinal AUPRC [0.05, 0.19] at K=25 …; GT sha256 2e02ccf934fd…, runs …"."""
    f, kind, gt = claim["figure"], claim["kind"], claim["inputs"].get("gt") or {}
    pinned = f"GT sha256 {str(gt.get('sha256') or '?')[:12]}… (version {gt.get('version')})"
    if kind == "gt":
        return (f"Under {claim['definition']} at {_k(claim.get('k'))}, {figure_text(claim)} restaurants of "
                f"{claim['dataset']} ({claim['task']}; {gt.get('judge')} judgments, {gt.get('n_overrides', 0)} "
                f"overrides); {pinned}")
    runs = claim["inputs"].get("runs") or {}
    pins = ", ".join(f"{r} answers {str(runs.get(r))[:12]}…" for r in claim["runs"])
    metric = claim["metric"]
    if kind == "score":
        run = claim["runs"][0]
        return (f"{claim.get('labels', {}).get(run, run)} scores {figure_text(claim)} at {_k(claim.get('k'))} on "
                f"{f.get('total')} restaurants; {pinned}; run {pins}")
    base, other = claim["runs"]
    labels = claim.get("labels") or {}
    diff, low, high = f.get("difference"), f.get("low"), f.get("high")
    if diff is not None and low is not None and high is not None and (low > 0 or high < 0):
        verb = "beats" if diff > 0 else "trails"
        body = f"{verb} {labels.get(base, base)} by {number(metric, abs(diff))} {METRIC_WORDS[metric]} {_interval(metric, low, high)}"
    else:
        body = f"is not distinguishable from {labels.get(base, base)}: {figure_text(claim)}"
    return (f"{labels.get(other, other)} {body} at {_k(claim.get('k'))} ({f.get('n_common')} restaurants paired); "
            f"{pinned}; runs {pins}")


def link(claim: Mapping[str, Any], base_url: str | None) -> str:
    """The Results page link of a claim (``{base}/results?claim=…``; relative without a base URL)."""
    return f"{(base_url or '').rstrip('/')}/results?claim={encode(claim)}"


def markdown(claim: Mapping[str, Any], base_url: str | None) -> str:
    """The claim as Markdown: the statement and its link (check it with ``workbench claim check``)."""
    return f"{statement(claim)} ([check this claim]({link(claim, base_url)}))"

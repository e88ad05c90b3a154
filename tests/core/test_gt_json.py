"""GT documents written column by column (:mod:`core.ground_truth.gt_json`) are the bytes of the
dict path (``json_document(xnot_payload(...))`` / ``addm_payload``), which are json.dumps' bytes."""

from __future__ import annotations

import json
import math

import polars as pl
import pytest

from core.base.files import json_document
from core.ground_truth import addm_payload, compute_gt_frame, compute_policy_gt_frame, xnot_payload
from core.ground_truth.coverage import with_review_counts
from core.ground_truth.export import with_addm_columns
from core.ground_truth.gt_json import gt_document, json_texts
from core.ground_truth.policies.loader import get_policy
from tests.helpers.formula_cases import CASE, RESTAURANTS

AT = "2026-01-01T00:00:00"
KS = [25, 2, None]
LINEAGE = {"lineage": {"origin": "computed", "version": "ab" * 8, "k": 25, "override_ids": []}}
REST = RESTAURANTS.with_columns(pl.Series("n_reviews", [7, 3, 1]))
ODD_NAMES = ['Quote "Q" & back\\slash', "Tab\tnew\nline \x01\x7f", "Café 東京 😀 \u2028"]


def _dict_path(frame: pl.DataFrame, layout: str, k: int | None, policy, extra=None) -> bytes:
    if layout == "addm":
        doc = addm_payload(frame, k=k, policy=policy, computed_at=AT)
    else:
        doc = xnot_payload(frame, task_id="G1a", k=k, policy=policy, computed_at=AT)
    doc.update(extra or {})
    data = json_document(doc)
    assert data == (json.dumps(doc, indent=2, ensure_ascii=False, default=str) + "\n").encode()
    return data


def _same(frame: pl.DataFrame, layout: str, policy=None, extra=None, ks=tuple(KS)) -> None:
    for k in ks:
        parts, header, n = gt_document(frame, layout=layout, task="G1a", k=k, policy=policy, extra=extra, computed_at=AT)
        assert b"".join(parts) == _dict_path(frame, layout, k, policy, extra), (layout, k)
        assert header["restaurants"] == {}
        assert n == len(json.loads(b"".join(parts))["restaurants"]), (layout, k)


def _frames() -> list[tuple[str, pl.DataFrame, str, object]]:
    out = []
    for formula in ("v1", "v2"):
        frame = compute_gt_frame(CASE, REST, formula, KS)
        out += [(f"{formula}-xnot", frame, "xnot", None),
                (f"{formula}-xnot-stored", with_review_counts(frame, REST), "xnot", None),
                (f"{formula}-addm", with_addm_columns(frame, CASE, REST, formula, KS), "addm", None)]
    for name in ("G1_allergy_V0", "G1_allergy_V1", "G1_allergy_V2", "G1_allergy_V3"):
        policy = get_policy(name, None)
        frame = with_review_counts(compute_policy_gt_frame(CASE, REST, policy, KS, reference_year=2025), REST)
        out += [(f"{name}-addm", frame, "addm", policy), (f"{name}-xnot", frame, "xnot", policy)]
    return out


@pytest.mark.parametrize(("label", "frame", "layout", "policy"), _frames(), ids=lambda v: v if isinstance(v, str) else "")
def test_the_bytes_of_the_dict_path(label, frame, layout, policy):
    _same(frame, layout, policy)
    _same(frame, layout, policy, extra=LINEAGE)
    odd = frame.with_columns(pl.col("name").replace_strict(["Alpha Thai", "Beta Pizza", "Gamma"], ODD_NAMES))
    if "categories" in odd.columns:
        odd = odd.with_columns(pl.lit('a "b"\n, é').alias("categories"))
    _same(odd, layout, policy)


@pytest.mark.parametrize("layout", ["xnot", "addm"])
def test_odd_numbers_repeated_names_and_nulls(layout):
    policy = get_policy("G1_allergy_V2", None)
    frame = compute_policy_gt_frame(CASE, REST, policy, KS)
    n = frame.height
    weird = [math.nan, -0.0, 1e-05, math.inf, -math.inf, 1e16, 2.5, None, 0.1 + 0.2]
    frame = frame.with_columns(
        pl.Series("score", (weird * n)[:n], dtype=pl.Float64),
        pl.lit("Same name").alias("name"),  # repeated: xnot keys them "Same name [id]"
        pl.Series("triggered_rule", ([None, "r1 \"x\""] * n)[:n], dtype=pl.String),
    )
    _same(frame, layout, policy)
    v1 = compute_gt_frame(CASE, REST, "v1", KS).with_columns(
        pl.Series("final_risk_score", (weird * 9)[:9], dtype=pl.Float64),
        pl.Series("incident_age", ([None, 3] * 9)[:9], dtype=pl.Int64))
    _same(v1 if layout == "xnot" else with_addm_columns(v1, CASE, REST, "v1", KS), layout)


def test_keys_that_collide_take_the_dict_path():
    frame = compute_gt_frame(CASE, REST, "v1", [25])
    # "Gamma [c]"-like: a name equal to another's disambiguated key: the dict keeps one entry
    frame = frame.with_columns(pl.Series("name", ["X", "X", "X [a]"]))
    _same(frame, "xnot", ks=[25])
    addm = with_addm_columns(frame, CASE, REST, "v1", [25])
    _same(addm.with_columns(pl.lit("b").alias("business_id")), "addm", ks=[25])
    empty = addm.head(0)
    parts, _, n = gt_document(empty, layout="addm", task="G1a", k=25, computed_at=AT)
    assert n == 0
    assert b"".join(parts) == _dict_path(empty, "addm", 25, None)


def test_json_texts_of_each_kind():
    values = {
        pl.Int64: [1, None, -3], pl.Boolean: [True, None, False], pl.Float64: [0.5, None, math.nan],
        pl.String: ['a"b', None, "é\n"], pl.List(pl.String): [["x"], None, []],
    }
    for dtype, vals in values.items():
        s = pl.Series("x", vals, dtype=dtype)
        want = [json.dumps(v, indent=2, ensure_ascii=False).replace("\n", "\n      ") for v in vals]
        assert json_texts(s, 3).to_list() == want, dtype


@pytest.mark.parametrize("layout", ["xnot", "addm"])
def test_incident_lists_with_nulls(layout):
    policy = get_policy("G1_allergy_V2", None)
    frame = compute_policy_gt_frame(CASE, REST, policy, [25])
    incidents = frame["incidents"].to_list()
    first = incidents[0]
    assert first, "the case has a restaurant with incidents"
    odd = [[{**first[0], "modifiers": None, "base_points": 2.5}, *first[1:]], None, []]
    frame = frame.with_columns(pl.Series("incidents", odd, dtype=frame.schema["incidents"]))
    _same(frame, layout, policy, ks=[25])
    with_null_item = frame.with_columns(pl.Series("incidents", [[None, *first], None, []], dtype=frame.schema["incidents"]))
    if layout == "xnot":  # addm_payload cannot write a null incident (it reads its fields)
        _same(with_null_item, layout, policy, ks=[25])

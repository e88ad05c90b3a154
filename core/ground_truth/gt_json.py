"""GT documents as bytes, written column by column (150,000 restaurants in well under a second).

:func:`gt_document` gives exactly the bytes :func:`core.base.files.json_document` gives for the
document of :func:`~core.ground_truth.gt_files.xnot_payload` or
:func:`~core.ground_truth.gt_files.addm_payload` (``json.dumps(doc, indent=2, ensure_ascii=False,
default=str) + "\\n"``), without one dict per restaurant: each record field is encoded once per
column (integers cast, floats by their distinct bit patterns, strings by json's own encoder, nested
values by ``json.dumps`` re-indented), and the records are concatenated by polars. The document
around the records (summary, provenance, lineage) is written by ``json_document`` with an empty
``restaurants`` object that the records then fill in.

A frame whose records would collide as keys (a repeated key, a null name) takes the dict path, as
before: a dict keeps one entry per key, which the column-wise text cannot.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Mapping, Sequence
from json.encoder import encode_basestring  # type: ignore[attr-defined]
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl

from core.base.files import json_document
from core.ground_truth.coverage import STORED, reviews_used
from core.ground_truth.formulas import get_formula
from core.ground_truth.gt_files import _num, _single_k, addm_payload, xnot_payload

if TYPE_CHECKING:
    from core.ground_truth.policies import Policy

_PLACEHOLDER = b'\n  "restaurants": {}'
_INTEGERS = (pl.Int8, pl.Int16, pl.Int32, pl.Int64, pl.UInt8, pl.UInt16, pl.UInt32, pl.UInt64)


def gt_document(frame: pl.DataFrame, *, layout: str, task: str, k: int | None, policy: Policy | None = None,
                extra: Mapping[str, Any] | None = None,
                computed_at: str | None = None) -> tuple[list[bytes | memoryview], dict[str, Any], int]:
    """(the file's bytes in parts, document without its restaurants, how many restaurants it holds)
    of one K of ``frame`` in ``layout``.

    The parts joined are the bytes of ``json_document`` of the full payload (``gt_payload`` plus ``extra``,
    e.g. the lineage, appended at the end); the returned document has ``restaurants`` empty (its
    summary is the full one)."""
    rows = _single_k(frame, k)
    if layout == "addm":
        header = addm_payload(rows, k=k, policy=policy, records=False, computed_at=computed_at)
        body = _addm_body(rows)
    else:
        header = xnot_payload(rows, task_id=task, k=k, policy=policy, records=False, computed_at=computed_at)
        body = _xnot_body(rows)
    header.update(extra or {})
    if body is None:  # keys that collide: the dict path
        at = header["computed_at"]
        full = (addm_payload(rows, k=k, policy=policy, computed_at=at) if layout == "addm"
                else xnot_payload(rows, task_id=task, k=k, policy=policy, computed_at=at))
        full.update(extra or {})
        return [json_document(full)], header, len(full["restaurants"])
    data = json_document(header)
    if not body:
        return [data], header, 0
    at = data.index(_PLACEHOLDER) + len(_PLACEHOLDER) - 1  # between the braces of "restaurants": {}
    return [data[:at], b"\n", body, b"\n  ", data[at:]], header, rows.height


# -- one column as JSON text ------------------------------------------------------------------------

def _float_texts(s: pl.Series, convert: Callable[[float], Any]) -> pl.Series:
    """json's text of each float, ``convert`` applied (by distinct bit pattern: -0.0, NaN kept apart)."""
    bits = s.cast(pl.Float64).fill_null(0.0).to_numpy().view(np.int64)
    distinct, inverse = np.unique(bits, return_inverse=True)
    texts = pl.Series(s.name, [json.dumps(convert(float(v))) for v in distinct.view(np.float64)], dtype=pl.String)
    out = texts.gather(pl.Series(inverse.reshape(-1), dtype=pl.UInt32))
    return out if not s.null_count() else pl.select(pl.when(s.is_null()).then(pl.lit("null")).otherwise(out)).to_series()


def json_texts(s: pl.Series, depth: int, *, num: bool = False) -> pl.Series:
    """The text ``json.dumps(.., indent=2, ensure_ascii=False, default=str)`` gives each value of
    ``s`` when it sits ``depth`` levels deep in a document (``num``: integral floats as ints, as
    :func:`~core.ground_truth.gt_files._num` makes them)."""
    dtype = s.dtype
    if dtype == pl.Null:
        return pl.Series(s.name, ["null"] * s.len(), dtype=pl.String)
    if dtype in _INTEGERS:
        return s.cast(pl.String).fill_null("null")
    if dtype == pl.Boolean:
        return pl.select(pl.when(s.is_null()).then(pl.lit("null")).when(s).then(pl.lit("true"))
                         .otherwise(pl.lit("false"))).to_series().alias(s.name)
    if dtype in (pl.Float64, pl.Float32):
        return _float_texts(s, _num if num else float)
    if dtype == pl.String:
        return pl.Series(s.name, ["null" if v is None else encode_basestring(v) for v in s.to_list()], dtype=pl.String)
    if isinstance(dtype, pl.List) and isinstance(dtype.inner, pl.Struct):
        done = struct_list_texts(s, depth)
        if done is not None:
            return done
    pad = "\n" + "  " * depth
    return pl.Series(s.name, ["[]" if isinstance(v, list) and not v else
                              json.dumps(v, indent=2, ensure_ascii=False, default=str).replace("\n", pad)
                              for v in s.to_list()], dtype=pl.String)


def struct_list_texts(s: pl.Series, depth: int, fields: Sequence[tuple[str, bool]] | None = None, *,
                      addm: bool = False) -> pl.Series | None:
    """:func:`json_texts` of a column of lists of structs, item by item in columns; ``fields``: (struct
    field, integral floats as ints) written, in order (default: every field as it is). ``addm``: a null
    list or a null field of a list type is written ``[]`` (as ``addm_payload`` writes incidents). None
    when an item is null (json writes it ``null``, not an object): the caller encodes value by value."""
    lens = s.list.len().fill_null(0)
    items = pl.DataFrame({"_row": pl.int_range(s.len(), eager=True, dtype=pl.UInt32), "_l": s}).filter(lens > 0)
    items = items.explode("_l")
    if items["_l"].null_count():
        return None
    inner = items["_l"].struct
    names = list(fields or [(f.name, False) for f in s.dtype.inner.fields])  # type: ignore[attr-defined]
    cols = {}
    for i, (name, num) in enumerate(names):
        value = inner.field(name)
        text = json_texts(value, depth + 2, num=num)
        if addm and isinstance(value.dtype, pl.List) and value.null_count():
            text = pl.select(pl.when(value.is_null()).then(pl.lit("[]")).otherwise(text)).to_series()
        cols[f"_{i}"] = text
    pad = "\n" + "  " * (depth + 1)
    objects = pl.DataFrame({"_row": items["_row"], **cols}).select(
        "_row", _object([(name, pl.col(f"_{i}")) for i, (name, _) in enumerate(names)], depth + 1).alias("_o"))
    lists = objects.group_by("_row", maintain_order=True).agg(pl.col("_o").str.join("," + pad))
    texts = lists.select(pl.concat_str(pl.lit("[" + pad), "_o", pl.lit("\n" + "  " * depth + "]"))).to_series()
    empty = (pl.Series(s.name, ["[]"] * s.len(), dtype=pl.String) if addm else
             pl.select(pl.when(s.is_null()).then(pl.lit("null")).otherwise(pl.lit("[]")).alias(s.name)).to_series())
    return empty.scatter(lists["_row"], texts)


def _object(fields: list[tuple[str, pl.Expr]], depth: int, key: pl.Expr | None = None) -> pl.Expr:
    """``{fields}`` at ``depth``, as a record ``    key: {fields}`` when ``key`` (encoded keys) is given."""
    inner = "\n" + "  " * (depth + 1)
    parts: list[pl.Expr] = [pl.lit("  " * depth), key, pl.lit(": {")] if key is not None else [pl.lit("{")]
    for n, (name, text) in enumerate(fields):
        parts += [pl.lit(("," if n else "") + inner + encode_basestring(name) + ": "), text]
    parts.append(pl.lit("\n" + "  " * depth + "}"))
    return pl.concat_str(parts)


def _join(records: pl.Series) -> bytes | memoryview:
    """The records, each on its lines, separated by ",\\n" (written by polars: no Python string of them)."""
    if records.len() == 0:
        return b""
    if records.null_count():
        raise ValueError("a GT record encoded as null")  # never: every part of a record is text
    buf = io.BytesIO()
    frame = records.alias("r").to_frame()
    frame.head(-1).write_csv(buf, include_header=False, quote_style="never", line_terminator=",\n")
    frame.tail(1).write_csv(buf, include_header=False, quote_style="never", line_terminator="")
    return buf.getbuffer()


# -- the two layouts ------------------------------------------------------------------------------------

def _xnot_body(rows: pl.DataFrame) -> bytes | memoryview | None:
    """The records of :func:`xnot_payload` at depth 2, or None when two would share a key."""
    if rows.height == 0:
        return b""
    if rows["name"].null_count():
        return None
    if "policy_id" in rows.columns:
        fields: tuple[str, ...] = ("verdict", "score", "n_incidents", "cuisine_modifier", "triggered_rule", "incidents")
    else:
        fields = get_formula(rows["formula_version"][0].split("+")[0]).record_fields
    keyed = rows.select(pl.when(pl.col("name").is_duplicated())
                        .then(pl.format("{} [{}]", "name", "business_id")).otherwise(pl.col("name")).alias("key"))
    if keyed["key"].null_count() or keyed["key"].n_unique() != rows.height:
        return None
    columns = {f: json_texts(rows[f], 3) for f in fields}
    if STORED in rows.columns:
        columns["n_reviews"] = json_texts(rows.select(reviews_used(rows)).to_series(), 3)
    texts = pl.DataFrame({"_key": json_texts(keyed["key"], 2), **{f"_{i}": c for i, c in enumerate(columns.values())}})
    fields_expr = [(name, pl.col(f"_{i}")) for i, name in enumerate(columns)]
    records = texts.select(_object(fields_expr, 2, pl.col("_key"))).to_series()
    return _join(records)


_ADDM_INCIDENT = (("review_id", False), ("severity", False), ("base_points", True), ("modifiers", False),
                  ("total_points", True))


def _incidents_texts(s: pl.Series) -> pl.Series:
    """The ADDM ``incidents`` list of each record at depth 4 (review_id, severity, points as
    :func:`_num` writes them, modifiers), ``[]`` for none."""
    if isinstance(s.dtype, pl.List) and isinstance(s.dtype.inner, pl.Struct):
        done = struct_list_texts(s, 4, _ADDM_INCIDENT, addm=True)
        if done is not None:
            return done
    out = []
    for incs in s.to_list():
        if not incs:
            out.append("[]")
            continue
        items = [{"review_id": i["review_id"], "severity": i["severity"], "base_points": _num(i["base_points"]),
                  "modifiers": list(i["modifiers"] or []), "total_points": _num(i["total_points"])} for i in incs]
        out.append(json.dumps(items, indent=2, ensure_ascii=False, default=str).replace("\n", "\n" + "  " * 4))
    return pl.Series(s.name, out, dtype=pl.String)


def _addm_body(rows: pl.DataFrame) -> bytes | memoryview | None:
    """The records of :func:`addm_payload` at depth 2, or None when two would share a key."""
    if rows.height == 0:
        return b""
    is_policy = "policy_id" in rows.columns

    def col(name: str, *alternatives: str) -> pl.Series:
        present = [c for c in (name, *alternatives) if c in rows.columns]
        return rows[present[0]] if present else pl.Series(name, [None] * rows.height)

    bids = col("business_id")
    if bids.dtype != pl.String or bids.null_count() or bids.n_unique() != rows.height:
        return None
    definition = rows["policy_id"][0] if is_policy else rows["formula_version"][0]
    cuisine = col("cuisine_modifier")
    if not is_policy:
        if cuisine.null_count() or not cuisine.dtype.is_numeric() or (cuisine.dtype.is_float() and cuisine.is_nan().any()):
            return None  # bool(x > 1.0) of a null raises, of NaN is False: the dict path says so
        cuisine = cuisine > 1.0
    incidents = col("incidents")
    n_incidents = incidents.list.len().fill_null(0) if isinstance(incidents.dtype, pl.List) else None
    if n_incidents is None:
        if incidents.null_count() != rows.height:
            return None
        n_incidents = pl.Series([0] * rows.height, dtype=pl.Int64)
    gt = [("verdict", json_texts(col("verdict"), 4)),
          ("score", json_texts(col("score" if is_policy else "final_risk_score"), 4, num=True)),
          ("n_incidents", json_texts(n_incidents, 4)), ("incidents", _incidents_texts(incidents)),
          ("cuisine_modifier", json_texts(cuisine, 4)),
          ("policy_id", json_texts(pl.Series([definition] * rows.height, dtype=pl.String), 4))]
    if is_policy:
        gt.append(("matched_rule", json_texts(col("triggered_rule"), 4)))
    top = [("name", json_texts(col("name"), 3)), ("categories", json_texts(col("categories"), 3)),
           ("n_reviews", json_texts(col("n_reviews"), 3)),
           ("n_judgments", json_texts(col("n_judgments", "n_allergy_reviews"), 3))]
    names = [n for n, _ in top] + [n for n, _ in gt]
    texts = pl.DataFrame({"_key": json_texts(bids, 2), **{f"_{i}": t for i, (_, t) in enumerate(top + gt)}})
    exprs = [pl.col(f"_{i}") for i in range(len(names))]
    inner = _object(list(zip(names[len(top):], exprs[len(top):], strict=True)), 3)
    fields = [*zip(names[:len(top)], exprs[:len(top)], strict=True), ("ground_truth", inner)]
    records = texts.select(_object(fields, 2, pl.col("_key"))).to_series()
    return _join(records)

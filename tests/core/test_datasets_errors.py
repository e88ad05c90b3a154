"""Bad inputs to ``import_dataset``: each is a DataError naming file, line and field, and the
workspace is left exactly as it was (no dataset folder, no temporary leftovers)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import polars as pl
import pytest

from core.base.errors import DataError
from core.datasets import read_lock, verify_dataset
from core.datasets.importer import import_dataset

GOOD_DATE = "2021-06-01 12:00:00"


def review(rid: str, bid: str = "A", **extra) -> dict:
    return {"review_id": rid, "business_id": bid, "user_id": "u", "stars": 4.0, "useful": 0, "funny": 0,
            "cool": 0, "text": f"text {rid}", "date": GOOD_DATE, **extra}


def business(bid: str = "A", **extra) -> dict:
    return {"business_id": bid, "name": f"Place {bid}", "categories": "Thai", "stars": 4.0, **extra}


def restaurant(bid: str, reviews: list[dict], **extra) -> dict:
    return {"business_id": bid, "business": business(bid), "reviews": reviews, **extra}


def lines(*rows) -> bytes:
    """JSONL bytes; a row given as bytes/str is written verbatim (a broken line)."""
    out = b""
    for row in rows:
        if isinstance(row, bytes):
            out += row + b"\n"
        elif isinstance(row, str):
            out += row.encode() + b"\n"
        else:
            out += json.dumps(row).encode() + b"\n"
    return out


def flat(reviews: bytes, businesses: bytes | None = None):
    """A builder writing review.json (+ business.json) into the source folder."""
    def build(src: Path):
        (src / "review.json").write_bytes(reviews)
        (src / "business.json").write_bytes(businesses if businesses is not None else lines(business("A"), business("B")))
        return src / "review.json", src / "business.json"
    return build


def scale(content: bytes):
    def build(src: Path):
        (src / "scale.jsonl").write_bytes(content)
        return src / "scale.jsonl", None
    return build


def parquet_reviews(frame: pl.DataFrame):
    def build(src: Path):
        frame.write_parquet(src / "review.parquet")
        (src / "business.json").write_bytes(lines(business("A")))
        return src / "review.parquet", src / "business.json"
    return build


def raw_file(name: str, content: bytes, business_path: bool = False):
    def build(src: Path):
        (src / name).write_bytes(content)
        if business_path:
            (src / "business.json").write_bytes(lines(business("A")))
            return src / name, src / "business.json"
        return src / name, None
    return build


R1, R2, R3 = review("r1"), review("r2"), review("r3")
# (id, builder, file, line, field, message pattern)
CASES = [
    ("truncated line", flat(lines(R1, R2, '{"review_id": "r3", "business_id": "A", "te')),
     "review.json", 3, None, "truncated JSON"),
    ("invalid JSON", flat(lines(R1, "{'review_id': 'r2'}")), "review.json", 2, None, "not valid JSON"),
    ("not an object", flat(lines(R1, "[1, 2]")), "review.json", 2, None, "expected a JSON object, got list"),
    ("stars 'five'", flat(lines(R1, review("r2", stars="five"))), "review.json", 2, "stars",
     "expected a number, got string"),
    ("text is a number", flat(lines(review("r1", text=5), R2)), "review.json", 1, "text",
     "expected a string, got number 5"),
    ("review_id is a list", flat(lines(R1, review(["r2"]))), "review.json", 2, "review_id", "expected a string, got list"),
    ("missing review_id", flat(lines(R1, {k: v for k, v in R2.items() if k != "review_id"})),
     "review.json", 2, "review_id", "missing"),
    ("missing business_id", flat(lines({k: v for k, v in R1.items() if k != "business_id"})),
     "review.json", 1, "business_id", "missing"),
    ("null text", flat(lines(R1, R2, review("r3", text=None))), "review.json", 3, "text", "is null"),
    ("missing date", flat(lines(R1, {k: v for k, v in R2.items() if k != "date"})), "review.json", 2, "date", "missing"),
    ("bad date format", flat(lines(R1, review("r2", date="2021/06/01 12:00:00"))), "review.json", 2, "date",
     "bad date '2021/06/01 12:00:00'"),
    ("impossible date", flat(lines(review("r1", date="2021-02-30 10:00:00"))), "review.json", 1, "date", "bad date"),
    ("stars out of range", flat(lines(R1, R2, R3, review("r4", stars=6))), "review.json", 4, "stars",
     r"out of range \[0, 5\]"),
    ("negative useful", flat(lines(review("r1", useful=-2))), "review.json", 1, "useful", "negative"),
    ("useful beyond 64 bits", flat(lines(R1, review("r2", cool=2**64))), "review.json", 2, "cool", "too large"),
    ("useful not an integer", flat(lines(review("r1", useful=1.5))), "review.json", 1, "useful", "expected an integer"),
    ("duplicate review_id", flat(lines(R1, R2, R3, review("r2", text="again"))), "review.json", 4, "review_id",
     "duplicate review_id 'r2': also at line 2"),
    ("review of unknown business", flat(lines(R1, R2, review("r3", bid="Z"))), "review.json", 3, "business_id",
     "'Z' has no row in business.json"),
    ("non-UTF-8 review", flat(lines(R1, R2, b'{"review_id": "r3", "text": "caf\xe9"}')), "review.json", 3, None,
     "not valid UTF-8"),
    ("non-UTF-8 business", flat(lines(R1), lines(business("A"), b'{"business_id": "B", "name": "\xff"}')),
     "business.json", 2, None, "not valid UTF-8"),
    ("duplicate business_id", flat(lines(R1), lines(business("A"), business("B"), business("A"))),
     "business.json", 3, "business_id", "duplicate business_id 'A': also at line 1"),
    ("business without name", flat(lines(R1), lines({"business_id": "A"})), "business.json", 1, "name", "missing"),
    ("latitude not a number", flat(lines(R1), lines(business("A", latitude="north"))), "business.json", 1,
     "latitude", "expected a number"),
    ("empty review file", flat(b""), "review.json", None, None, "empty file"),
    ("blank-only review file", flat(b"\n  \n\n"), "review.json", None, None, "empty file"),
    ("empty business file", flat(lines(R1), b""), "business.json", None, None, "empty file"),
    ("unknown layout (JSON)", flat(lines({"id": 1, "body": "x"})), "review.json", 1, None, "unknown layout"),
    ("unknown layout (CSV)", raw_file("reviews.csv", b"review_id,text\nr1,hi\n"), "reviews.csv", None, None,
     "unknown layout"),
    ("flat without business file", raw_file("review.json", lines(R1)), "review.json", None, None,
     "pass its business file too"),
    ("business file given as PATH", raw_file("business.json", lines(business("A"))), "business.json", None, None,
     "this is a business file"),
    ("SCALE reviews not a list", scale(lines(restaurant("A", [R1]), restaurant("B", {"r": 1}))), "scale.jsonl", 2,
     "reviews", "expected a list"),
    ("SCALE missing review_id", scale(lines(restaurant("A", [R1, R2, R3, {"business_id": "A", "text": "x", "date": GOOD_DATE}]))),
     "scale.jsonl", 1, "reviews[3].review_id", "missing"),
    ("SCALE review of another business", scale(lines(restaurant("A", [R1]), restaurant("B", [review("r2", bid="B"), review("r3", bid="A")]))),
     "scale.jsonl", 2, "reviews[1].business_id", "differs from its restaurant's business_id 'B'"),
    ("SCALE duplicate review_id", scale(lines(restaurant("A", [R1, R2]), restaurant("B", [review("r5", bid="B"), review("r2", bid="B")]))),
     "scale.jsonl", 2, "reviews[1].review_id", r"duplicate review_id 'r2': also at line 1 \(reviews\[1\]\)"),
    ("SCALE duplicate business_id", scale(lines(restaurant("A", [R1]), restaurant("A", [R2]))), "scale.jsonl", 2,
     "business_id", "duplicate business_id 'A': also at line 1"),
    ("SCALE top-level id differs", scale(lines({**restaurant("A", [R1]), "business_id": "Q"})), "scale.jsonl", 1,
     "business_id", "differs from business.business_id 'A'"),
    ("SCALE missing business", scale(lines({"business_id": "A", "reviews": [R1]})), "scale.jsonl", 1, "business",
     "missing"),
    ("SCALE business name wrong type", scale(lines({**restaurant("A", [R1]), "business": business("A", name=7)})),
     "scale.jsonl", 1, "business.name", "expected a string"),
    ("SCALE stars below 0", scale(lines(restaurant("A", [R1, review("r2", stars=-0.5)]))), "scale.jsonl", 1,
     "reviews[1].stars", "out of range"),
    ("SCALE truncated last line", scale(lines(restaurant("A", [R1])) + b'{"business_id": "B", "business": {'),
     "scale.jsonl", 2, None, "truncated JSON"),
    ("Parquet stars as strings", parquet_reviews(pl.DataFrame([{**R1, "stars": "4"}, {**R2, "stars": "five"}])),
     "review.parquet", 1, "stars", "expected a number, got string"),
    ("Parquet null review_id", parquet_reviews(pl.DataFrame([R1, R2, {**R3, "review_id": None}])),
     "review.parquet", 3, "review_id", "is null"),
    ("Parquet without text column", parquet_reviews(pl.DataFrame([R1]).drop("text")), "review.parquet", 1, "text",
     "missing"),
    ("corrupt Parquet", raw_file("review.parquet", b"PAR1 this is not really parquet PAR1", business_path=True),
     "review.parquet", None, None, "cannot read Parquet"),
    ("missing file", lambda src: (src / "nowhere.jsonl", None), "nowhere.jsonl", None, None, "no such file"),
]


def snapshot(root: Path) -> list[tuple[str, int]]:
    return sorted((str(p.relative_to(root)), p.stat().st_size if p.is_file() else -1) for p in root.rglob("*"))


@pytest.mark.parametrize(("builder", "file", "line", "field", "pattern"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_names_the_place_and_changes_nothing(workspace, tmp_path, builder, file, line, field, pattern):
    src = tmp_path / "src"
    src.mkdir()
    path, business_path = builder(src)
    before = snapshot(workspace.root)
    with pytest.raises(DataError) as info:
        import_dataset(workspace, "bad", path, business_path=business_path)
    err = info.value
    assert Path(err.path).name == file, str(err)
    assert (err.line, err.field) == (line, field), str(err)
    assert re.search(pattern, err.message), str(err)
    assert str(err).startswith(str(err.path) + (f":{line}" if line else "")), str(err)
    assert snapshot(workspace.root) == before  # no dataset folder, no temporary folder, nothing
    assert not (workspace.root / "datasets").exists()


def test_failed_replace_keeps_the_old_dataset(workspace, tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    good, business_path = flat(lines(R1, R2))(src)
    import_dataset(workspace, "d", good, business_path=business_path)
    lock = read_lock(workspace, "d")
    before = snapshot(workspace.root)
    bad = tmp_path / "bad.json"
    bad.write_bytes(lines(R1, review("r2", stars="five")))
    with pytest.raises(DataError, match="stars"):
        import_dataset(workspace, "d", bad, business_path=business_path, replace=True)
    assert snapshot(workspace.root) == before and read_lock(workspace, "d") == lock
    assert verify_dataset(workspace, "d")["tables"] == {"restaurants.parquet": "ok", "reviews.parquet": "ok"}


def test_bad_dataset_name_writes_nothing(workspace, tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    path, business_path = flat(lines(R1))(src)
    before = snapshot(workspace.root)
    with pytest.raises(ValueError, match="invalid dataset name"):
        import_dataset(workspace, "../escape", path, business_path=business_path)
    assert snapshot(workspace.root) == before

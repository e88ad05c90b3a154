"""Dataset import (SCALE fixtures, flat JSONL/Parquet), lock, verify, write_dataset, CLI."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.base.errors import DataError, LockError, UnknownNameError, WorkbenchError
from core.base.files import sha256_file
from core.cli import main
from core.datasets import (
    LOCK_NAME,
    dataset_info,
    list_datasets,
    read_lock,
    require_verified,
    scan_restaurants,
    scan_reviews,
    verify_dataset,
    write_dataset,
)
from core.datasets import flat as flat_module
from core.datasets import lock as lock_module
from core.datasets.db import Database
from core.datasets.flat import read_flat
from core.datasets.importer import import_dataset
from core.datasets.sources import JSONL

FIXTURE_SUBSETS = [("xnot", "xnot/dataset_K25_subset.jsonl", 6), ("addm", "dev-ADDM/dataset_K25_subset.jsonl", 5)]


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def business(bid: str, name: str = "Place", **extra) -> dict:
    return {"business_id": bid, "name": name, "categories": "Thai, Restaurants", "city": "Philadelphia",
            "stars": 4.0, "review_count": 10, "is_open": 1, "attributes": {"WiFi": "free"}, **extra}


def review(rid: str, bid: str, date: str, **extra) -> dict:
    return {"review_id": rid, "business_id": bid, "user_id": "u1", "stars": 4.0, "useful": 1, "funny": 0,
            "cool": 0, "text": f"text of {rid}", "date": date, **extra}


# Flat sample: business A has a date tie (a2, a3 on the same second; review_id breaks it), C has no review.
FLAT_BUSINESSES = [business("A", "Alpha"), business("B", "Beta"), business("C", "Gamma")]
FLAT_REVIEWS = [
    review("a1", "A", "2019-05-01 10:00:00"),
    review("b1", "B", "2020-01-01 00:00:00"),
    review("a3", "A", "2021-03-03 08:00:00"),
    review("a2", "A", "2021-03-03 08:00:00"),
    review("a4", "A", "2022-12-31 23:59:59"),
]
# Expected idx per review: newest first, ties by review_id ascending.
FLAT_EXPECTED = {"a4": 0, "a2": 1, "a3": 2, "a1": 3, "b1": 0}


def flat_sources(folder: Path, reviews=FLAT_REVIEWS, businesses=FLAT_BUSINESSES) -> tuple[Path, Path]:
    return write_jsonl(folder / "review.json", reviews), write_jsonl(folder / "business.json", businesses)


# -- SCALE fixtures ------------------------------------------------------------------------------
@pytest.mark.fixtures
@pytest.mark.parametrize(("name", "relpath", "n_restaurants"), FIXTURE_SUBSETS)
def test_import_fixture_subset(workspace, fixtures_dir, name, relpath, n_restaurants):
    source = fixtures_dir / relpath
    result = import_dataset(workspace, name, source)
    assert result["counts"] == {"restaurants": n_restaurants, "reviews": n_restaurants * 25}
    assert result["layout"] == "scale" and result["format"] == "jsonl" and result["warnings"] == []

    reviews = scan_reviews(workspace, name).collect()
    restaurants = scan_restaurants(workspace, name).collect()
    assert reviews.height == n_restaurants * 25 and restaurants.height == n_restaurants
    assert set(reviews["dataset"]) == {name} and reviews["idx"].dtype == pl.Int32
    assert reviews.select(["business_id", "idx"]).equals(reviews.select(["business_id", "idx"]).sort(["business_id", "idx"]))
    lines = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines()]
    for rec in lines:
        mine = reviews.filter(pl.col("business_id") == rec["business_id"]).sort("idx")
        # idx order is the file's order, and that order is newest first
        assert mine["review_id"].to_list() == [r["review_id"] for r in rec["reviews"]]
        assert mine["idx"].to_list() == list(range(25))
        assert mine["date"].to_list() == sorted(mine["date"].to_list(), reverse=True)
        assert mine["text"].to_list() == [r["text"] for r in rec["reviews"]]
        row = restaurants.filter(pl.col("business_id") == rec["business_id"]).row(0, named=True)
        assert row["name"] == rec["business"]["name"] and row["n_reviews"] == 25
        assert row["categories"] == rec["business"]["categories"]
        assert json.loads(row["attributes"]) == {k: v for k, v in rec["business"]["attributes"].items() if v is not None}

    lock = json.loads((workspace.dataset_dir(name) / LOCK_NAME).read_text())
    assert lock["sources"] == [{"path": str(source.resolve()), "sha256": sha256_file(source), "bytes": source.stat().st_size}]
    for table, digest in lock["tables"].items():
        assert sha256_file(workspace.dataset_dir(name) / table) == digest
    assert verify_dataset(workspace, name)["ok"] is True


@pytest.mark.fixtures
def test_scale_parquet_equals_scale_jsonl(workspace, fixtures_dir, tmp_path):
    source = fixtures_dir / FIXTURE_SUBSETS[0][1]
    pl.read_ndjson(source, infer_schema_length=None).write_parquet(tmp_path / "scale.parquet")
    import_dataset(workspace, "j", source)
    result = import_dataset(workspace, "p", tmp_path / "scale.parquet")
    assert (result["layout"], result["format"]) == ("scale", "parquet")
    assert scan_reviews(workspace, "j").collect().drop("dataset").equals(scan_reviews(workspace, "p").collect().drop("dataset"))
    j, p = (scan_restaurants(workspace, n).collect().drop("dataset") for n in ("j", "p"))
    assert j.drop("attributes", "hours").equals(p.drop("attributes", "hours"))
    # Parquet structs carry every key of every row; the keys a restaurant lacks are dropped again
    for column in ("attributes", "hours"):
        assert [json.loads(v) for v in j[column]] == [json.loads(v) for v in p[column]]


def test_scale_keeps_file_order_and_warns_when_not_newest_first(workspace, tmp_path):
    rows = [{"business_id": "A", "business": business("A"),
             "reviews": [review("r1", "A", "2020-01-01 00:00:00"), review("r2", "A", "2021-01-01 00:00:00")]}]
    progress_calls = []
    result = import_dataset(workspace, "s", write_jsonl(tmp_path / "s.jsonl", rows),
                            progress=lambda done, total, msg: progress_calls.append((done, total, msg)))
    assert "not newest first" in result["warnings"][0]
    assert scan_reviews(workspace, "s").collect()["review_id"].to_list() == ["r1", "r2"]
    assert progress_calls and progress_calls[-1][0] == progress_calls[-1][1]


@pytest.mark.fixtures
def test_fixtures_side_by_side_in_duckdb_views(workspace, fixtures_dir):
    for name, relpath, _ in FIXTURE_SUBSETS:
        import_dataset(workspace, name, fixtures_dir / relpath)
    db = Database(workspace.root)
    counts = db.query("SELECT dataset, count(*) AS n FROM reviews GROUP BY dataset ORDER BY dataset").rows()
    assert counts == [("addm", 125), ("xnot", 150)]
    page = db.query(
        "SELECT idx FROM reviews WHERE dataset = $d AND business_id = $b ORDER BY idx LIMIT 5",
        {"d": "xnot", "b": "wUnLSg_GKfEIQ5CQQ770_g"},
    )
    assert page["idx"].to_list() == [0, 1, 2, 3, 4]
    assert [d["name"] for d in list_datasets(workspace)] == ["addm", "xnot"]
    db.close()


@pytest.mark.fixtures
def test_tampered_table_fails_verify(workspace, fixtures_dir):
    import_dataset(workspace, "xnot", fixtures_dir / FIXTURE_SUBSETS[0][1])
    require_verified(workspace, "xnot")
    path = workspace.dataset_dir("xnot") / "reviews.parquet"
    frame = pl.read_parquet(path).with_columns(text=pl.col("text").str.replace("the", "teh"))
    frame.write_parquet(path)
    with pytest.raises(LockError, match="reviews.parquet changed since import"):
        verify_dataset(workspace, "xnot")
    with pytest.raises(LockError, match="reviews.parquet changed since import"):
        require_verified(workspace, "xnot")
    listed = list_datasets(workspace)[0]
    assert listed["verified"] is False and "changed" in listed["problem"]
    with pytest.raises(LockError):
        scan_reviews(workspace, "xnot")


# -- flat layout ---------------------------------------------------------------------------------
def test_flat_jsonl_sorts_newest_first_with_ties(workspace, tmp_path):
    review_path, business_path = flat_sources(tmp_path / "src")
    result = import_dataset(workspace, "flat", review_path, business_path=business_path)
    assert result["layout"] == "flat" and result["counts"] == {"restaurants": 3, "reviews": 5}
    reviews = scan_reviews(workspace, "flat").collect()
    assert dict(zip(reviews["review_id"], reviews["idx"], strict=True)) == FLAT_EXPECTED
    assert reviews["review_id"].to_list() == ["a4", "a2", "a3", "a1", "b1"]  # sorted by (business_id, idx)
    restaurants = scan_restaurants(workspace, "flat").collect()
    assert dict(zip(restaurants["business_id"], restaurants["n_reviews"], strict=True)) == {"A": 4, "B": 1, "C": 0}
    assert json.loads(restaurants["attributes"][0]) == {"WiFi": "free"}
    assert [s["path"] for s in read_lock(workspace, "flat")["sources"]] == [
        str(review_path.resolve()), str(business_path.resolve())
    ]


def test_flat_parquet_equals_jsonl(workspace, tmp_path):
    review_path, business_path = flat_sources(tmp_path / "src")
    pl.read_ndjson(review_path).write_parquet(tmp_path / "src" / "review.parquet")
    pl.DataFrame(FLAT_BUSINESSES).drop("attributes").write_parquet(tmp_path / "src" / "business.parquet")
    import_dataset(workspace, "j", review_path, business_path=business_path)
    result = import_dataset(workspace, "p", tmp_path / "src" / "review.parquet",
                            business_path=tmp_path / "src" / "business.parquet")
    assert result["format"] == "parquet"
    j = scan_reviews(workspace, "j").collect().drop("dataset")
    p = scan_reviews(workspace, "p").collect().drop("dataset")
    assert j.equals(p)


def test_flat_folder_and_magic_detection(workspace, tmp_path):
    review_path, business_path = flat_sources(tmp_path / "yelp")
    result = import_dataset(workspace, "folder", tmp_path / "yelp")  # finds review.json + business.json
    assert result["counts"]["reviews"] == 5
    odd = tmp_path / "odd"
    odd.mkdir()
    pl.read_ndjson(review_path).write_parquet(odd / "reviews.data")  # no suffix hint: PAR1 magic
    (odd / "biz.txt").write_bytes(business_path.read_bytes())  # no suffix hint: starts with "{"
    result = import_dataset(workspace, "magic", odd / "reviews.data", business_path=odd / "biz.txt")
    assert result["format"] == "parquet" and result["counts"]["reviews"] == 5


def test_text_that_looks_like_a_number_takes_the_checked_path(workspace, tmp_path, monkeypatch):
    # polars would read {"text": 5} as "5" too, so the fast path doubts it and the Python loop decides
    calls = []
    real = flat_module._checked_frame
    monkeypatch.setattr(flat_module, "_checked_frame", lambda *a: calls.append(a) or real(*a))
    rows = [review("a1", "A", "2020-01-01 00:00:00", text="5"), review("a2", "A", "2020-01-02 00:00:00", text="[sic]")]
    review_path, business_path = flat_sources(tmp_path / "src", reviews=rows)
    import_dataset(workspace, "d", review_path, business_path=business_path)
    assert scan_reviews(workspace, "d").collect()["text"].to_list() == ["[sic]", "5"]
    assert len(calls) == 1
    clean_reviews, clean_business = flat_sources(tmp_path / "clean")
    import_dataset(workspace, "clean", clean_reviews, business_path=clean_business)
    assert len(calls) == 1  # a clean file never enters the Python loop


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(st.sampled_from(["A", "B", "C", "D"]),
                  st.sampled_from(["2019-01-01 00:00:00", "2020-06-15 12:30:00", "2020-06-15 12:30:01", "2023-02-28 23:59:59"])),
        min_size=1, max_size=40,
    ),
    st.randoms(use_true_random=False),
)
def test_property_idx_is_a_newest_first_permutation(pairs, rnd):
    ids = [f"r{i:03d}" for i in range(len(pairs))]
    rnd.shuffle(ids)
    rows = [review(rid, b, d) for rid, (b, d) in zip(ids, pairs, strict=True)]
    with tempfile.TemporaryDirectory() as tmp:
        review_path, business_path = flat_sources(Path(tmp), reviews=rows,
                                                  businesses=[business(b) for b in "ABCD"])
        _, fast = read_flat(review_path, JSONL, business_path, JSONL)
        _, checked = read_flat(review_path, JSONL, business_path, JSONL, checked=True)
    assert fast.equals(checked)  # the fast polars path and the checked Python loop agree
    for (_bid,), group in fast.group_by(["business_id"]):
        group = group.sort("idx")
        assert group["idx"].to_list() == list(range(group.height))
        keys = list(zip(group["date"], group["review_id"], strict=True))
        # newest first; on equal dates review_id ascending
        assert all((d1 > d2) or (d1 == d2 and r1 < r2) for (d1, r1), (d2, r2) in zip(keys, keys[1:], strict=False))


# -- write_dataset -------------------------------------------------------------------------------
def test_write_dataset_from_judgments_only(workspace, tmp_path):
    source = write_jsonl(tmp_path / "judgments.json", [{"x": 1}])
    restaurants = pl.DataFrame({"business_id": ["B", "A"], "name": ["Bee", "Ay"], "categories": ["Thai", None]})
    reviews = pl.DataFrame({"business_id": ["A", "A", "B"], "review_id": ["r9", "r1", "r5"], "idx": [39, 3, 0],
                            "date": ["2020-01-01 00:00:00", "2021-01-01 00:00:00", None], "stars": [1, 5, None]})
    result = write_dataset(workspace, "judged", restaurants, reviews, sources=[source], layout="judgments")
    assert result["counts"] == {"restaurants": 2, "reviews": 3} and result["layout"] == "judgments"
    stored = scan_reviews(workspace, "judged").collect()
    assert stored.columns == ["dataset", "business_id", "review_id", "idx", "date", "stars", "useful", "funny",
                              "cool", "text", "user_id", "text_hash"]
    assert stored["review_id"].to_list() == ["r1", "r9", "r5"] and stored["text"].null_count() == 3
    assert stored["text_hash"].null_count() == 3  # no text, no hash
    assert stored.schema["idx"] == pl.Int32 and stored.schema["stars"] == pl.Float64
    rest = scan_restaurants(workspace, "judged").collect()
    assert rest["business_id"].to_list() == ["A", "B"] and rest["n_reviews"].to_list() == [2, 1]
    assert verify_dataset(workspace, "judged")["sources"][0]["status"] == "ok"


@pytest.mark.parametrize(
    ("restaurants", "reviews", "error", "match"),
    [
        ({"business_id": ["A"], "colour": ["red"]}, {"business_id": ["A"], "review_id": ["r"], "idx": [0]},
         ValueError, "unknown column.*colour"),
        ({"name": ["A"]}, {"business_id": ["A"], "review_id": ["r"], "idx": [0]}, ValueError, "required column"),
        ({"business_id": ["A", "A"]}, {"business_id": ["A"], "review_id": ["r"], "idx": [0]}, DataError,
         "duplicate business_id A"),
        ({"business_id": ["A"]}, {"business_id": ["A", "A"], "review_id": ["r", "r"], "idx": [0, 1]}, DataError,
         "duplicate review_id r"),
        ({"business_id": ["A"]}, {"business_id": ["A", "A"], "review_id": ["r", "s"], "idx": [0, 0]}, DataError,
         "idx repeats"),
        ({"business_id": ["A"]}, {"business_id": ["Z"], "review_id": ["r"], "idx": [0]}, DataError,
         "business_id Z has no restaurant"),
        ({"business_id": ["A"]}, {"business_id": ["A"], "review_id": ["r"], "idx": [-1]}, DataError, "idx must be"),
        ({"business_id": ["A"]}, {"business_id": ["A"], "review_id": ["r"], "idx": [0], "date": ["2020-1-1"]},
         DataError, "bad date"),
        ({"business_id": ["A"]}, {"business_id": ["A"], "review_id": ["r"], "idx": [0], "stars": [7.0]},
         DataError, "out of range"),
        ({"business_id": ["A"]}, {"business_id": ["A"], "review_id": ["r"], "idx": ["zero"]}, DataError,
         "wrong type"),
    ],
)
def test_write_dataset_rejects_broken_frames(workspace, restaurants, reviews, error, match):
    before = sorted(p.relative_to(workspace.root) for p in workspace.root.rglob("*"))
    with pytest.raises(error, match=match):
        write_dataset(workspace, "bad", pl.DataFrame(restaurants), pl.DataFrame(reviews), sources=[], layout="t")
    assert sorted(p.relative_to(workspace.root) for p in workspace.root.rglob("*")) == before


def test_replace_and_exists(workspace, tmp_path):
    review_path, business_path = flat_sources(tmp_path / "src")
    import_dataset(workspace, "d", review_path, business_path=business_path)
    with pytest.raises(WorkbenchError, match="already exists"):
        import_dataset(workspace, "d", review_path, business_path=business_path)
    smaller, _ = flat_sources(tmp_path / "src2", reviews=FLAT_REVIEWS[:2])
    result = import_dataset(workspace, "d", smaller, business_path=business_path, replace=True)
    assert result["counts"]["reviews"] == 2 and verify_dataset(workspace, "d")["ok"]
    assert sorted(p.name for p in (workspace.root / "datasets").iterdir()) == ["d"]  # no temp or old folder left


# -- lock ----------------------------------------------------------------------------------------
def test_source_moved_is_a_warning_and_changed_source_an_error(workspace, tmp_path):
    review_path, business_path = flat_sources(tmp_path / "src")
    import_dataset(workspace, "d", review_path, business_path=business_path)
    business_path.rename(tmp_path / "moved.json")
    result = verify_dataset(workspace, "d")
    assert [s["status"] for s in result["sources"]] == ["ok", "moved"]
    assert "source moved" in result["warnings"][0]
    review_path.write_text(review_path.read_text().replace("text of a1", "text of A1"))
    with pytest.raises(LockError, match="source .*review.json changed since import"):
        verify_dataset(workspace, "d")
    require_verified(workspace, "d")  # the tables later steps read are intact


def test_require_verified_is_cached_per_file_state(workspace, tmp_path, monkeypatch):
    review_path, business_path = flat_sources(tmp_path / "src")
    import_dataset(workspace, "d", review_path, business_path=business_path)
    calls = []
    real = lock_module.sha256_file
    monkeypatch.setattr(lock_module, "sha256_file", lambda p: calls.append(p) or real(p))
    lock_module._verified_lock.cache_clear()
    first = require_verified(workspace, "d")
    assert len(calls) == 2  # both tables hashed once
    first["counts"]["reviews"] = -1  # callers get a copy: mutating it does not poison the cache
    for _ in range(50):
        assert require_verified(workspace, "d")["counts"]["reviews"] == 5
    assert len(calls) == 2
    restaurants = workspace.dataset_dir("d") / "restaurants.parquet"
    restaurants.write_bytes(restaurants.read_bytes() + b"\0")
    with pytest.raises(LockError, match="restaurants.parquet changed"):
        require_verified(workspace, "d")


def test_missing_lock_and_unknown_dataset(workspace, tmp_path):
    review_path, business_path = flat_sources(tmp_path / "src")
    import_dataset(workspace, "d", review_path, business_path=business_path)
    with pytest.raises(UnknownNameError, match="unknown dataset 'nope'; valid: d"):
        verify_dataset(workspace, "nope")
    (workspace.dataset_dir("d") / LOCK_NAME).unlink()
    with pytest.raises(LockError, match="has no dataset.lock.json"):
        require_verified(workspace, "d")
    assert list_datasets(workspace)[0]["verified"] is False
    (workspace.dataset_dir("d") / LOCK_NAME).write_text("{not json")
    with pytest.raises(LockError, match="unreadable"):
        verify_dataset(workspace, "d")


def test_dataset_info(workspace, tmp_path):
    review_path, business_path = flat_sources(tmp_path / "src")
    import_dataset(workspace, "d", review_path, business_path=business_path)
    info = dataset_info(workspace, "d")
    assert info["verified"] is True and info["layout"] == "flat"
    assert (info["date_min"], info["date_max"], info["n_with_text"]) == ("2019-05-01 10:00:00", "2022-12-31 23:59:59", 5)


# -- CLI -----------------------------------------------------------------------------------------
def test_cli_import_list_verify_show(workspace, tmp_path, capsys):
    review_path, business_path = flat_sources(tmp_path / "src")
    ws = ["--workspace", str(workspace.root)]
    code = main([*ws, "--json", "--no-progress", "datasets", "import", str(review_path),
                 "--business", str(business_path), "--name", "d"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert out["counts"] == {"restaurants": 3, "reviews": 5} and out["name"] == "d"

    assert main([*ws, "--json", "datasets", "list"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [(d["name"], d["n_reviews"], d["verified"]) for d in listed] == [("d", 5, True)]

    assert main([*ws, "datasets", "verify", "d"]) == 0
    assert "tables match the lock" in capsys.readouterr().out

    assert main([*ws, "--json", "datasets", "show", "d", "--business-id", "A"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert [r["review_id"] for r in shown["reviews"]] == ["a4", "a2", "a3", "a1"]
    assert main([*ws, "datasets", "show", "d"]) == 0
    assert "Alpha" in capsys.readouterr().out


def test_cli_errors_are_one_line_exit_1(workspace, tmp_path, capsys):
    review_path, business_path = flat_sources(tmp_path / "src")
    ws = ["--workspace", str(workspace.root)]
    assert main([*ws, "--no-progress", "datasets", "import", str(review_path), "--name", "d"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "--business" in err and "review.json" in err
    assert main([*ws, "datasets", "verify", "nope"]) == 1
    assert capsys.readouterr().err.startswith("error: unknown dataset")
    assert main([*ws, "--no-progress", "datasets", "import", str(review_path), "--business", str(business_path),
                 "--name", "d"]) == 0
    (workspace.dataset_dir("d") / "reviews.parquet").write_bytes(b"PAR1 broken")
    capsys.readouterr()
    assert main([*ws, "datasets", "verify", "d"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "reviews.parquet changed since import" in err
    assert main([*ws, "datasets", "show", "d", "--business-id", "A"]) == 1  # refuses to read changed data
    assert "changed since import" in capsys.readouterr().err
